#!/usr/bin/env bash
# memscope against its Python anchors, side by side, one run: tokenizer start-up for each
# encoding and `memscope tokens` on four shapes of input against Python tiktoken, then
# `memscope history` against Dify's history path (benches/dify_history.py) on a 10,000-message
# conversation at four budgets, the kept messages checked identical. Prints each ratio.
#
#   benches/compare.sh                     # sizes as in the README's tables
#   SCALE=0.1 benches/compare.sh           # a tenth of the token inputs, for a quick look
#   SECTIONS=history benches/compare.sh    # one section (tokens, history)
#   CRITERION=1 benches/compare.sh         # also run the criterion bench `history_10k_plugin`
#                                          # first, for the in-process (steady-state) ratio
#
# tiktoken, SQLAlchemy and pydantic are installed from the package registry into a venv
# outside the tree, cached under $HOME/.cache/memscope-ci. tiktoken downloads its rank files at
# run time; its cache is seeded from tiktoken-rs's copies (byte-identical to OpenAI's), so it
# runs offline.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${MEMSCOPE_CI_CACHE:-$HOME/.cache/memscope-ci}
VENV=$CACHE/python-anchors
PINS=(tiktoken==0.14.0 SQLAlchemy==2.0.58 pydantic==2.14.3)
TIKTOKEN_CACHE=$CACHE/tiktoken-ranks
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
# Already satisfied pins need no network.
"$VENV/bin/pip" install --quiet "${PINS[@]}"
# memscope runs with its defaults, whatever the user's configuration says.
export XDG_CONFIG_HOME=$WORK/config XDG_DATA_HOME=$WORK/data

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

SECTIONS=${SECTIONS:-tokens,history}
if [ -n "${CRITERION:-}" ] && [[ $SECTIONS == *history* ]]; then
    cargo bench --bench history -- history_10k_plugin --warm-up-time 1 --measurement-time 5
fi

TIKTOKEN_CACHE_DIR=$TIKTOKEN_CACHE "$VENV/bin/python" "$ROOT/benches/compare.py" \
    --memscope "$BIN" --work "$WORK" --scale "${SCALE:-1}" --runs "${RUNS:-5}" \
    --sections "$SECTIONS" --criterion-dir "$TARGET_DIR/criterion"
