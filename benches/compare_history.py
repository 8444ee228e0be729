"""The history section of benches/compare.py: `memscope history` against Dify's history path.

Both read one SQLite database: memscope creates it (`init`), benches/dify_history.py fills it
with the 10,000-message conversation of the criterion bench `history`. For each budget the kept
messages (row id and role, oldest first) of `memscope --json history` and of the Python path
must be identical, else the run stops. Times are whole processes, start-up included, and, for
context, the Python path's per-call time in a warm process; with criterion's estimates of
`history_10k_plugin` (memscope's steady state) the in-process ratio is printed too.
"""

import json
import os
import statistics
import subprocess
import sys

from dify_history import CONVERSATION_ID
from measuring import measure_all, spread

BUDGETS = [2_000, 16_000, 32_000, 128_000]
MODEL = "gpt-4o"
HERE = os.path.dirname(os.path.abspath(__file__))
ANCHOR = os.path.join(HERE, "dify_history.py")


def memscope_kept(report):
    return [(line["source_id"], line["role"]) for line in report["messages"] if line["kept"]]


def python_kept(output):
    return [(m["source_id"], m["role"]) for m in json.loads(output)["kept"]]


def check_same(budget, ours, theirs):
    if ours == theirs:
        return
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                 min(len(ours), len(theirs)))
    sys.exit(
        f"KEPT MESSAGES DIFFER at budget {budget}: memscope keeps {len(ours)}, Dify's path "
        f"{len(theirs)}; first difference at kept message {first}: memscope "
        f"{ours[first] if first < len(ours) else None}, Dify "
        f"{theirs[first] if first < len(theirs) else None}"
    )


def criterion_median(criterion_dir, budget):
    """memscope's in-process median seconds from `cargo bench --bench history`, if it ran."""
    path = os.path.join(criterion_dir, "history_10k_plugin", str(budget), "new", "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["median"]["point_estimate"] / 1e9
    except FileNotFoundError:
        return None


def run(memscope, work, runs, criterion_dir):
    py = sys.executable
    path = os.path.join(work, "history.db")
    url = f"sqlite://{path}"
    subprocess.run([memscope, "--db", url, "--write", "init"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([py, ANCHOR, "fixture", "--db", path], check=True)
    conversation = CONVERSATION_ID

    print(f"memscope history vs Dify's Python path, 10,000-message conversation, {MODEL}, "
          f"plugin counter; ms min / median / max of {runs} runs; cpu: user + system median")
    print(f"{'budget':>7} {'kept':>5} {'memscope process':>22} {'cpu':>6} "
          f"{'Dify path process':>26} {'cpu':>7} {'ratio':>6} {'cpu':>6} "
          f"{'Dify path per call':>26} {'cpu':>6} {'memscope per call':>18} {'ratio':>7}")
    for budget in BUDGETS:
        ours = measure_all(
            [memscope, "--db", url, "--json", "history", conversation, "--max-tokens", str(budget),
             "--counter", "plugin", "--model", MODEL, "--message-limit", "500"], runs)
        theirs = measure_all(
            [py, ANCHOR, "anchor", "--db", path, "--conversation", conversation,
             "--max-tokens", str(budget), "--model", MODEL], runs)
        kept = memscope_kept(json.loads(ours.output))
        check_same(budget, kept, python_kept(theirs.output))
        # The per-call times: the same path called again in one warm process.
        warm = subprocess.run(
            [py, ANCHOR, "anchor", "--db", path, "--conversation", conversation,
             "--max-tokens", str(budget), "--model", MODEL, "--repeat", str(runs)],
            check=True, capture_output=True, text=True)
        calls = json.loads(warm.stdout)
        calls, calls_cpu = calls["seconds"], calls["cpu_seconds"]
        median = statistics.median
        steady = criterion_median(criterion_dir, budget)
        if steady:
            steady_text = f"{steady*1e3:.2f}"
            steady_ratio = f"{median(calls_cpu)/steady:.0f}x"
        else:
            # Without the bench, memscope's whole process (CPU) bounds its per-call time from
            # above, so the ratio is a lower bound.
            steady_text = "(no bench)"
            steady_ratio = f">={median(calls_cpu)/median(ours.cpu):.0f}x"
        print(f"{budget:>7} {len(kept):>5} {spread(ours.wall):>22} {median(ours.cpu)*1e3:6.0f} "
              f"{spread(theirs.wall):>26} {median(theirs.cpu)*1e3:7.0f} "
              f"{median(theirs.wall)/median(ours.wall):5.0f}x "
              f"{median(theirs.cpu)/median(ours.cpu):5.0f}x "
              f"{spread(calls):>26} {median(calls_cpu)*1e3:6.0f} {steady_text:>18} "
              f"{steady_ratio:>7}")
        print(f"{'':>13} peak {ours.peak_mib:.0f} MiB {'':>24} peak {theirs.peak_mib:.0f} MiB")
    print("kept messages identical at every budget")
