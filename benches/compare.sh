#!/usr/bin/env bash
# memscope against Python tiktoken, side by side, one run: tokenizer start-up for each
# encoding, then `memscope tokens` on four shapes of input. Prints each ratio.
#
#   benches/compare.sh            # sizes as in the README's table
#   SCALE=0.1 benches/compare.sh  # a tenth of the input sizes, for a quick look
#
# Python tiktoken is installed from the package registry into a venv outside the tree,
# cached under $HOME/.cache/memscope-ci. tiktoken downloads its rank files at run time; its
# cache is seeded from tiktoken-rs's copies (byte-identical to OpenAI's), so it runs offline.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${MEMSCOPE_CI_CACHE:-$HOME/.cache/memscope-ci}
VENV=$CACHE/tiktoken-0.14.0
TIKTOKEN_CACHE=$CACHE/tiktoken-ranks
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet tiktoken==0.14.0
fi

cd "$ROOT"
cargo build --release --bin memscope
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
BIN=$TARGET_DIR/release/memscope

# tiktoken's cache file for an encoding is named by the sha1 of its download URL.
ASSETS=$(cargo metadata --format-version 1 | "$VENV/bin/python" -c '
import json, os, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "tiktoken-rs":
        print(os.path.join(os.path.dirname(p["manifest_path"]), "assets"))
        break')
mkdir -p "$TIKTOKEN_CACHE"
for enc in cl100k_base o200k_base p50k_base r50k_base; do
    key=$("$VENV/bin/python" -c "import hashlib; print(hashlib.sha1(b'https://openaipublic.blob.core.windows.net/encodings/$enc.tiktoken').hexdigest())")
    cp "$ASSETS/$enc.tiktoken" "$TIKTOKEN_CACHE/$key"
done

TIKTOKEN_CACHE_DIR=$TIKTOKEN_CACHE "$VENV/bin/python" "$ROOT/benches/compare.py" \
    --memscope "$BIN" --work "$WORK" --scale "${SCALE:-1}" --runs "${RUNS:-5}"
