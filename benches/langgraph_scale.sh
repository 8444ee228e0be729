#!/usr/bin/env bash
# LangGraph at scale: memscope's reads of a checkpoint database against the cheapest read the
# database itself can do and against LangGraph's own read, side by side in one run.
#
# The data is written by LangGraph's own savers (benches/langgraph_data.py: a deterministic
# tool-using agent, no model): thread `long` of 400 turns, 900 messages and 1,300 checkpoints,
# 29 short threads beside it, and their rows copied COPIES times (default 20) under new thread
# ids: 630 threads, 57,204 checkpoints. SqliteSaver's file is 3.5 GB (~40 s to generate);
# PostgresSaver's database ~500 MB, as PostgreSQL compresses the blobs (~3 min). Both are kept
# and reused by later runs; DROP=1 deletes them at the end.
#
# Measured, each on SQLite and on PostgreSQL:
#   conversations --limit 50   vs  SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY thread_id
#   history long               vs  reading `long`'s latest checkpoint (with its blobs on PostgreSQL)
#   thread long                vs  LangGraph's get_state_history over `long`, as a process
#
#   benches/langgraph_scale.sh                 # generate what is missing, measure
#   SKIP_POSTGRES=1 benches/langgraph_scale.sh # SQLite only
#
# Environment: DATA_DIR (/work/bench-data), COPIES (20), PG_COPIES (COPIES), PG_ADMIN_URL (default
# postgres://postgres@127.0.0.1:5432/postgres), DB_NAME (memscope_langgraph_scale), RUNS (5;
# LangGraph's own read runs RUNS_SLOW=2 times), MEMSCOPE (the binary; default: built here with
# `cargo build --release`), MEMSCOPE_LANGGRAPH_PYTHON (a Python with langgraph,
# langgraph-checkpoint-sqlite and -postgres, as .ci/langgraph installs). Uses hyperfine when
# installed (min/median/max from its JSON), else wall time of RUNS runs. Needs sqlite3 and psql.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA_DIR=${DATA_DIR:-/work/bench-data}
COPIES=${COPIES:-20}
PG_COPIES=${PG_COPIES:-$COPIES}
PG_ADMIN=${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}
DB_NAME=${DB_NAME:-memscope_langgraph_scale}
RUNS=${RUNS:-5}
RUNS_SLOW=${RUNS_SLOW:-2}
PYTHON=${MEMSCOPE_LANGGRAPH_PYTHON:?set MEMSCOPE_LANGGRAPH_PYTHON to a Python with langgraph}
DATA=$ROOT/benches/langgraph_data.py
SQLITE_FILE=$DATA_DIR/langgraph-$COPIES.sqlite
PG_URL=${PG_ADMIN%/*}/$DB_NAME
THREAD=long

if [ -z "${MEMSCOPE:-}" ]; then
    (cd "$ROOT" && cargo build --release --bin memscope)
    MEMSCOPE=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/memscope
fi
# No user configuration: the defaults are what is measured.
export XDG_CONFIG_HOME=$(mktemp -d) XDG_DATA_HOME=$(mktemp -d)
WORK=$(mktemp -d)

pg_admin() { psql "$PG_ADMIN" -v ON_ERROR_STOP=1 -qAt "$@"; }
pg() { psql "$PG_URL" -v ON_ERROR_STOP=1 -qAt "$@"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

cleanup() {
    rm -rf "$WORK"
    if [ -n "${DROP:-}" ]; then
        rm -f "$SQLITE_FILE"
        [ -n "${SKIP_POSTGRES:-}" ] || pg_admin -c "DROP DATABASE IF EXISTS $DB_NAME"
        echo "deleted $SQLITE_FILE and database $DB_NAME"
    fi
}
trap cleanup EXIT

# A half-written file or database from an interrupted run is generated again.
if [ ! -e "$SQLITE_FILE" ]; then
    mkdir -p "$DATA_DIR"
    rm -f "$SQLITE_FILE.part"
    start=$(date +%s)
    "$PYTHON" "$DATA" generate --sqlite "$SQLITE_FILE.part" --copies "$COPIES"
    mv "$SQLITE_FILE.part" "$SQLITE_FILE"
    echo "sqlite: generated in $(($(date +%s) - start)) s (load $(load))"
fi
# The database is complete once its `generated` row says how many copies it holds.
pg_ready() { pg -c "SELECT copies FROM generated" 2>/dev/null | grep -qx "$PG_COPIES"; }
if [ -z "${SKIP_POSTGRES:-}" ] && ! pg_ready; then
    pg_admin -c "DROP DATABASE IF EXISTS $DB_NAME"
    pg_admin -c "CREATE DATABASE $DB_NAME"
    start=$(date +%s)
    "$PYTHON" "$DATA" generate --postgres "$PG_URL" --copies "$PG_COPIES"
    pg -c "CREATE TABLE generated (copies int); INSERT INTO generated VALUES ($PG_COPIES)"
    echo "postgres: generated in $(($(date +%s) - start)) s (load $(load))"
fi

# min, median and max wall milliseconds of a command run N times: hyperfine's when installed.
measure() {
    local runs=$1
    shift
    if command -v hyperfine >/dev/null; then
        hyperfine --runs "$runs" --warmup 1 --export-json "$WORK/h.json" -N "$(printf '%q ' "$@")" \
            >/dev/null 2>"$WORK/h.err" || { cat "$WORK/h.err" >&2; return 1; }
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]
print("%.0f %.0f %.0f" % (r["min"]*1000, r["median"]*1000, r["max"]*1000))' "$WORK/h.json"
    else
        "$@" >/dev/null
        local times=()
        for _ in $(seq "$runs"); do
            local t0=$(date +%s%N)
            "$@" >/dev/null
            times+=($((($(date +%s%N) - t0) / 1000000)))
        done
        local sorted=($(printf '%s\n' "${times[@]}" | sort -n))
        echo "${sorted[0]} ${sorted[$((${#sorted[@]} / 2))]} ${sorted[-1]}"
    fi
}

# One line: a memscope read, what it is measured against, both figures and their ratio.
MEDIANS=()
row() {
    local label=$1 target=$2 runs_base=$3
    shift 3
    local split
    for ((split = 1; split <= $#; split++)); do [ "${!split}" = "--" ] && break; done
    local ours=("${@:1:split-1}") base=("${@:split+1}")
    read -r lo mid hi < <(measure "$RUNS" "${ours[@]}")
    read -r blo bmid bhi < <(measure "$runs_base" "${base[@]}")
    local ratio
    ratio=$(python3 -c "import sys; a, b = map(float, sys.argv[1:]); print(f'{a / b:.2f}x' if a >= b else f'1/{b / max(a, 1):.1f}')" "$mid" "$bmid")
    printf '%-26s %6s %6s %6s ms | %-30s %7s %7s %7s ms | %8s  %-12s %s\n' "$label" "$lo" \
        "$mid" "$hi" "${base_label}" "$blo" "$bmid" "$bhi" "$ratio" "$target" "$(load)"
}

header() {
    echo
    echo "== $1"
    printf '%-26s %20s    | %-30s %23s    | %8s  %-12s %s\n' "memscope" "min/median/max" \
        "against" "min/median/max" "ratio" "target" "load"
}

echo "machine: $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), $RUNS runs each" \
    "($RUNS_SLOW of LangGraph's own read)"

LATEST_SQL="SELECT checkpoint FROM checkpoints WHERE thread_id = '$THREAD' AND checkpoint_ns = '' \
ORDER BY checkpoint_id DESC LIMIT 1"
GROUP_SQL="SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY thread_id"

echo "sqlite: $SQLITE_FILE, $(du -h "$SQLITE_FILE" | cut -f1)," \
    "$(sqlite3 "$SQLITE_FILE" "SELECT COUNT(DISTINCT thread_id) || ' threads, ' || COUNT(*) || \
    ' checkpoints' FROM checkpoints"), thread $THREAD:" \
    "$(sqlite3 "$SQLITE_FILE" "SELECT COUNT(*) FROM checkpoints WHERE thread_id = '$THREAD'") checkpoints"
header "SqliteSaver"
base_label="sqlite3 group by"
row "conversations --limit 50" "<= 5x" "$RUNS" "$MEMSCOPE" --db "$SQLITE_FILE" conversations \
    --limit 50 -- sqlite3 "$SQLITE_FILE" "$GROUP_SQL"
base_label="sqlite3 latest checkpoint"
row "history $THREAD" "<= 5x" "$RUNS" "$MEMSCOPE" --db "$SQLITE_FILE" history "$THREAD" -- \
    sqlite3 "$SQLITE_FILE" "$LATEST_SQL"
base_label="LangGraph get_state_history"
row "thread $THREAD" ">= 100x less" "$RUNS_SLOW" "$MEMSCOPE" --db "$SQLITE_FILE" thread \
    "$THREAD" -- "$PYTHON" "$DATA" history --sqlite "$SQLITE_FILE" --thread "$THREAD"

if [ -z "${SKIP_POSTGRES:-}" ]; then
    echo
    echo "postgres: $PG_URL, $(pg -c "SELECT pg_size_pretty(pg_database_size(current_database()))")," \
        "$(pg -c "SELECT COUNT(DISTINCT thread_id) || ' threads, ' || COUNT(*) || ' checkpoints' \
        FROM checkpoints")"
    # PostgresSaver keeps the messages in checkpoint_blobs: its latest state is the row and the
    # blobs of the channel versions it names, as the saver's own SELECT joins them.
    PG_LATEST_SQL="SELECT c.checkpoint, bl.blob FROM (SELECT * FROM checkpoints \
WHERE thread_id = '$THREAD' AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1) c \
CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') v \
JOIN checkpoint_blobs bl ON bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns \
AND bl.channel = v.key AND bl.version = v.value"
    header "PostgresSaver"
    base_label="psql group by"
    row "conversations --limit 50" "<= 5x" "$RUNS" "$MEMSCOPE" --db "$PG_URL" conversations \
        --limit 50 -- psql "$PG_URL" -qAt -o /dev/null -c "$GROUP_SQL"
    base_label="psql latest checkpoint+blobs"
    row "history $THREAD" "<= 5x" "$RUNS" "$MEMSCOPE" --db "$PG_URL" history "$THREAD" -- \
        psql "$PG_URL" -qAt -o /dev/null -c "$PG_LATEST_SQL"
    base_label="LangGraph get_state_history"
    row "thread $THREAD" ">= 100x less" "$RUNS_SLOW" "$MEMSCOPE" --db "$PG_URL" thread \
        "$THREAD" -- "$PYTHON" "$DATA" history --postgres "$PG_URL" --thread "$THREAD"
fi
