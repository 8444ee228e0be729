#!/usr/bin/env bash
# The 1,000,000-message scale, through the release binary: `demo --scale large` (time and bytes
# written), then `doctor` against the sqlite3 shell running the same scan query.
#
#   benches/scale_io.sh [DIR]      (DIR: where the database goes, default a temporary directory)
#
# RUNS=n repeats each timed command (default 5); MEMSCOPE=path picks the binary (default
# target/release/memscope, built if missing); KEEP=1 reuses DIR/large.db instead of regenerating.
# Bytes written are the process's own `wchar` (every write() and pwrite() it made) and
# `write_bytes` (what reached the block layer), sampled from /proc until it exits.
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
MEMSCOPE=${MEMSCOPE:-target/release/memscope}
if [[ ! -x $MEMSCOPE ]]; then
    cargo build --release --bin memscope
fi
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 shell (apt-get install sqlite3)" >&2; exit 2; }
DIR=${1:-$(mktemp -d)}
mkdir -p "$DIR/home"
DB="$DIR/large.db"
URL="sqlite://$DB"
export XDG_DATA_HOME="$DIR/home/data" XDG_CONFIG_HOME="$DIR/home/config"
unset MEMSCOPE_DATABASE_URL

# Runs "$@", prints "seconds wchar write_bytes" (the last /proc sample before it exited).
measure_io() {
    local start end io="" line
    start=$(date +%s.%N)
    "$@" >/dev/null &
    local pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        line=$(cat "/proc/$pid/io" 2>/dev/null || true)
        [[ -n $line ]] && io=$line
        sleep 0.05
    done
    wait "$pid"
    end=$(date +%s.%N)
    local wchar write_bytes
    wchar=$(awk '/^wchar/ {print $2}' <<<"$io")
    write_bytes=$(awk '/^write_bytes/ {print $2}' <<<"$io")
    echo "$(echo "$end - $start" | bc) ${wchar:-0} ${write_bytes:-0}"
}

# min / median / max of the numbers on stdin.
summary() {
    sort -g | awk '{v[NR]=$1} END {printf "min %.2f  median %.2f  max %.2f", v[1], v[int((NR+1)/2)], v[NR]}'
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ ${KEEP:-0} != 1 || ! -f $DB ]]; then
    demo_times=()
    for _ in $(seq "$RUNS"); do
        rm -f "$DB" "$DB-wal" "$DB-shm"
        read -r seconds wchar write_bytes < <(measure_io "$MEMSCOPE" demo --scale large --db "$URL")
        size=$(stat -c %s "$DB")
        demo_times+=("$seconds")
        echo "demo --scale large: ${seconds} s, database $((size / 1000000)) MB, wchar $((wchar / 1000000)) MB ($(echo "scale=2; $wchar / $size" | bc) per byte), write_bytes $((write_bytes / 1000000)) MB ($(echo "scale=2; $write_bytes / $size" | bc) per byte)"
    done
    echo "demo --scale large seconds: $(printf '%s\n' "${demo_times[@]}" | summary)"
fi

# The SQLite text of doctor's scan on memscope's schema (it has no `is_deleted`: none is deleted).
SCAN_SQL="SELECT m.id AS id, m.conversation_id AS conversation_id, m.parent_message_id AS parent_message_id, m.query, m.answer, m.message_tokens AS message_tokens, m.answer_tokens AS answer_tokens, m.status, m.error, m.invoke_from, m.workflow_run_id AS workflow_run_id, m.created_at FROM messages m WHERE m.conversation_id NOT IN (SELECT c.id FROM conversations c WHERE false) ORDER BY m.conversation_id, m.created_at, m.id"
shell_times=() doctor_times=()
for _ in $(seq "$RUNS"); do
    s=$(date +%s.%N); sqlite3 "$DB" "$SCAN_SQL" >/dev/null; e=$(date +%s.%N)
    shell_times+=("$(echo "$e - $s" | bc)")
    s=$(date +%s.%N)
    rss=$( { /usr/bin/time -f %M "$MEMSCOPE" doctor --json --db "$URL" >/dev/null; } 2>&1 || true)
    e=$(date +%s.%N)
    doctor_times+=("$(echo "$e - $s" | bc)")
    echo "sqlite3 scan ${shell_times[-1]} s, doctor ${doctor_times[-1]} s (peak $((${rss##*$'\n'} / 1024)) MiB)"
done
shell_median=$(printf '%s\n' "${shell_times[@]}" | summary)
doctor_median=$(printf '%s\n' "${doctor_times[@]}" | summary)
echo "sqlite3 shell, same scan: $shell_median"
echo "doctor:                   $doctor_median"
