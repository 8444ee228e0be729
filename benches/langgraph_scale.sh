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
#   checkpoints prune/restore  of `long`, keeping its newest 10 (the data is put back)
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
# shellcheck source=benches/side_by_side.sh
. "$ROOT/benches/side_by_side.sh"

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

# `checkpoints prune --keep-last 10` of thread `long` (1,290 checkpoints and their writes
# archived, then deleted in one transaction) and the `restore` that puts them back, so the data
# is unchanged for the next run; PRUNE_RUNS (3) cycles, min/median/max of each.
prune_cycle() {
    local url=$1 prunes=() restores=()
    for _ in $(seq "${PRUNE_RUNS:-3}"); do
        rm -f "$WORK/prune.archive"
        local t0=$(date +%s%N)
        "$MEMSCOPE" --db "$url" --write checkpoints prune --thread "$THREAD" --keep-last 10 \
            --archive "$WORK/prune.archive" --yes >/dev/null
        local t1=$(date +%s%N)
        "$MEMSCOPE" --db "$url" --write checkpoints restore "$WORK/prune.archive" --yes >/dev/null
        local t2=$(date +%s%N)
        prunes+=($(((t1 - t0) / 1000000)))
        restores+=($(((t2 - t1) / 1000000)))
    done
    local p=($(printf '%s\n' "${prunes[@]}" | sort -n)) r=($(printf '%s\n' "${restores[@]}" | sort -n))
    printf '%-26s %6s %6s %6s ms | archive %s\n' "prune $THREAD --keep-last 10" "${p[0]}" \
        "${p[$((${#p[@]} / 2))]}" "${p[-1]}" "$(du -h "$WORK/prune.archive" | cut -f1)"
    printf '%-26s %6s %6s %6s ms | %s\n' "restore" "${r[0]}" "${r[$((${#r[@]} / 2))]}" \
        "${r[-1]}" "$(load)"
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
prune_cycle "$SQLITE_FILE"

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
    prune_cycle "$PG_URL"
fi
