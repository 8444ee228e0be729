#!/usr/bin/env bash
# Google ADK at scale: memscope's reads of a SqliteSessionService file against the cheapest read
# the database itself can do and against ADK's own read, side by side in one run.
#
# The data is written by ADK's own Runner and session service (benches/adk_data.py, a scripted
# model, no network): session `long` of TURNS turns (default 150) repeated REPEATS times (6),
# 3,150 events, then copied COPIES times (49): 50 sessions, 157,500 events, all on the first page
# of the list. The file is kept and reused by later runs; DROP=1 deletes it at the end.
#
# Measured:
#   conversations --limit 50  vs  SELECT session_id, COUNT(*) FROM events GROUP BY session_id
#                             and ADK's get_session of every session list_sessions names
#   history long              vs  ADK's get_session of `long`
#
#   benches/adk_scale.sh
#   MEMSCOPE=/path/to/an/older/memscope benches/adk_scale.sh   # the same figures for another build
#
# Environment: DATA_DIR (/work/bench-data), TURNS, REPEATS, COPIES, RUNS (5; ADK's own reads run
# RUNS_SLOW=3 times), MEMSCOPE (the binary; default: built here with `cargo build --release`),
# MEMSCOPE_ADK_PYTHON (a Python with google-adk, as .ci/adk installs). Needs sqlite3.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA_DIR=${DATA_DIR:-/work/bench-data}
TURNS=${TURNS:-150}
REPEATS=${REPEATS:-6}
COPIES=${COPIES:-49}
RUNS=${RUNS:-5}
RUNS_SLOW=${RUNS_SLOW:-3}
PYTHON=${MEMSCOPE_ADK_PYTHON:?set MEMSCOPE_ADK_PYTHON to a Python with google-adk}
DATA=$ROOT/benches/adk_data.py
FILE=$DATA_DIR/adk-$TURNS-$REPEATS-$COPIES.db

if [ -z "${MEMSCOPE:-}" ]; then
    (cd "$ROOT" && cargo build --release --bin memscope)
    MEMSCOPE=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/memscope
fi
# No user configuration: the defaults are what is measured.
export XDG_CONFIG_HOME=$(mktemp -d) XDG_DATA_HOME=$(mktemp -d)
WORK=$(mktemp -d)
# shellcheck source=benches/side_by_side.sh
. "$ROOT/benches/side_by_side.sh"

cleanup() {
    rm -rf "$WORK"
    if [ -n "${DROP:-}" ]; then
        rm -f "$FILE"
        echo "deleted $FILE"
    fi
}
trap cleanup EXIT

# A half-written file from an interrupted run is generated again.
if [ ! -e "$FILE" ]; then
    mkdir -p "$DATA_DIR"
    rm -f "$FILE.part"
    start=$(date +%s)
    "$PYTHON" "$DATA" generate "$FILE.part" "$TURNS" "$REPEATS" "$COPIES"
    mv "$FILE.part" "$FILE"
    echo "generated in $(($(date +%s) - start)) s (load $(load))"
fi

echo "machine: $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), $RUNS runs each ($RUNS_SLOW of ADK's own reads)"
echo "memscope: $MEMSCOPE"
echo "sqlite: $FILE, $(du -h "$FILE" | cut -f1)," \
    "$(sqlite3 "$FILE" "SELECT COUNT(DISTINCT session_id) || ' sessions, ' || COUNT(*) || \
    ' events' FROM events")"
header "SqliteSessionService"
base_label="sqlite3 group by"
row "conversations --limit 50" "" "$RUNS" "$MEMSCOPE" --db "$FILE" conversations --limit 50 -- \
    sqlite3 "$FILE" "SELECT session_id, COUNT(*) FROM events GROUP BY session_id"
base_label="ADK get_session, every one"
row "conversations --limit 50" "" "$RUNS_SLOW" "$MEMSCOPE" --db "$FILE" conversations --limit 50 \
    -- "$PYTHON" "$DATA" read "$FILE" --all
base_label="ADK get_session long"
row "history long" "" "$RUNS_SLOW" "$MEMSCOPE" --db "$FILE" history long -- \
    "$PYTHON" "$DATA" read "$FILE" long
