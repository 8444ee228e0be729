"""The measuring half of benches/compare.sh: generates the inputs, runs memscope and the Python
anchors side by side and prints tables of times, peak memory and ratios.

Sections (--sections, default both):
- tokens: tokenizer start-up and `memscope tokens` against Python tiktoken;
- history: `memscope history` against Dify's history path in Python (benches/dify_history.py)
  on a 10,000-message conversation, at several budgets, with the kept messages checked equal.

Python's side of `memscope tokens` is what the OpenAI plugin computes (memscope's default
counter): the messages' role, name and text joined by newlines, encoded once, plus 3 per
message and 3 per list. Both totals are printed and must agree.
"""

import argparse
import json
import os
import random
import sys

import compare_history
from measuring import measure

ENCODINGS = ["cl100k_base", "o200k_base", "p50k_base", "r50k_base"]

WORDS = (
    "the memory of a conversation is pruned when it grows beyond budget tokens model answer "
    "question user we should check window history because message thread branch regenerated "
    "quickly database every night Alice Bob José Zoë Müller O'Brien don't it's we'll they've "
    "42 3.14 2024 1,000,000 99% $12.50 😀 🎉 👍 🔥 🚀 internationalization"
).split()
CODE_LINES = [
    "fn main() {",
    "    let counts: Vec<u32> = messages.iter().map(|m| m.len() as u32).collect();",
    "    if total > limit { return Err(Error::OverBudget(total)); }",
    "def prune(messages, limit):",
    "    while sum(count(m) for m in messages) > limit:",
    "        messages.pop(0)",
    "const rows = await db.query(`SELECT id, role FROM messages WHERE conv = $1`, [id]);",
    "SELECT conversation_id, COUNT(*) AS n FROM messages GROUP BY 1 ORDER BY n DESC;",
    '{"tool": "search", "arguments": {"query": "weather in Paris", "limit": 5}}',
    "}",
]
CJK_RANGES = [(0x4E00, 0x9FFF), (0x3040, 0x30FF), (0xAC00, 0xD7A3)]


def prose(rng, n_chars):
    out, size = [], 0
    while size < n_chars:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 18)))
        sentence = sentence[0].upper() + sentence[1:] + rng.choice([". ", "! ", "? ", ".\n", ".\n\n"])
        out.append(sentence)
        size += len(sentence)
    return "".join(out)


def code(rng, n_chars):
    out, size = [], 0
    while size < n_chars:
        line = rng.choice(CODE_LINES) + "\n"
        out.append(line)
        size += len(line)
    return "".join(out)


def cjk(rng, n_chars):
    out = []
    low, high = rng.choice(CJK_RANGES)
    for _ in range(n_chars):
        r = rng.random()
        if r < 0.05:
            out.append(rng.choice("。、！？"))
        elif r < 0.06:
            out.append("\n")
        elif r < 0.07:
            out.append(rng.choice(["😀", "👍", " ", "2024", "AI"]))
        else:
            out.append(chr(rng.randint(low, high)))
    return "".join(out)


def mixed(rng, n_chars):
    kind = rng.random()
    if kind < 0.6:
        return prose(rng, n_chars)
    if kind < 0.85:
        return code(rng, n_chars)
    return cjk(rng, n_chars)


def messages(rng, total_bytes, make, sizes):
    out, size = [], 0
    while size < total_bytes:
        text = make(rng, rng.randint(*sizes))
        out.append({"role": "user" if len(out) % 2 == 0 else "assistant", "content": text})
        size += len(text.encode())
    return out


def shapes(scale):
    mb = int(1_000_000 * scale)
    rng = random.Random(42)
    big = "".join(mixed(rng, 20_000) for _ in range(max(1, 20 * mb // 20_000)))
    return {
        "one big text": [{"role": "user", "content": big}],
        "short messages": messages(rng, 20 * mb, prose, (20, 60)),
        "CJK": messages(rng, 10 * mb, cjk, (200, 2000)),
        "code": messages(rng, 10 * mb, code, (200, 4000)),
    }


PY_COUNT = """
import json, sys, tiktoken
messages = json.load(open(sys.argv[1], encoding="utf-8"))
enc = tiktoken.get_encoding(sys.argv[2])
parts = []
for m in messages:
    parts += [m["role"], m.get("name") or "", m["content"]]
print(len(enc.encode_ordinary("\\n".join(parts))) + 3 * len(messages) + 3 if messages else 0)
"""
PY_START = """
import sys, tiktoken
print(len(tiktoken.get_encoding(sys.argv[1]).encode_ordinary("hello world")))
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--memscope", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sections", default="tokens,history")
    parser.add_argument("--criterion-dir", default="target/criterion")
    args = parser.parse_args()
    sections = args.sections.split(",")
    if "tokens" in sections:
        compare_tokens(args)
    if "history" in sections:
        print()
        compare_history.run(args.memscope, args.work, args.runs, args.criterion_dir)


def compare_tokens(args):
    py = sys.executable
    ms = args.memscope

    tiny = os.path.join(args.work, "tiny.json")
    with open(tiny, "w") as f:
        json.dump([{"role": "user", "content": "hello world"}], f)
    # Start-up runs are short and the machine is shared: many runs steady the median.
    runs = max(20, 4 * args.runs)
    print(f"start-up, median of {runs} runs (extra: over `memscope --version`)")
    print(f"{'encoding':<12} {'memscope':>9} {'extra':>8} {'extra MiB':>9} {'python':>9} {'ratio':>7}")
    base_t, base_m, _ = measure([ms, "--version"], runs)
    for enc in ENCODINGS:
        t, m, _ = measure([ms, "tokens", "--input", tiny, "--counter", "raw", "--encoding", enc], runs)
        pt, _, _ = measure([py, "-c", PY_START, enc], runs)
        print(f"{enc:<12} {t*1e3:7.1f}ms {(t-base_t)*1e3:6.1f}ms {m-base_m:9.1f} {pt*1e3:7.1f}ms {pt/t:6.1f}x")

    print()
    print(f"memscope tokens (plugin counter), median of {args.runs} runs")
    print(f"{'shape':<15} {'encoding':<12} {'input':>8} {'memscope':>9} {'peak':>9} {'python':>9} {'ratio':>7}  total")
    for name, msgs in shapes(args.scale).items():
        path = os.path.join(args.work, name.replace(" ", "_") + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(msgs, f, ensure_ascii=False)
        size = os.path.getsize(path) / 2**20
        for enc in ["cl100k_base", "o200k_base"]:
            t, m, out = measure([ms, "--json", "tokens", "--input", path, "--counter", "plugin", "--encoding", enc], args.runs)
            pt, _, pout = measure([py, "-c", PY_COUNT, path, enc], args.runs)
            total, expected = json.loads(out)["total"], int(pout)
            same = "=" if total == expected else f"!= python {expected}"
            print(f"{name:<15} {enc:<12} {size:6.1f}MiB {t:8.2f}s {m:6.0f}MiB {pt:8.2f}s {pt/t:6.2f}x  {total} {same}")


if __name__ == "__main__":
    main()
