#!/usr/bin/env bash
# PostgreSQL at production size: a fresh database of ~10,000,000 messages over 200,000
# conversations in memscope's own schema, generated in SQL (INSERT ... SELECT over
# generate_series, indexes built after the load), then measured with the release binary:
# opening and listing the first page, opening a conversation deep in the table (`thread`,
# `history`), and `doctor` streaming through every message (peak RSS from GNU time).
#
#   benches/pg_scale.sh                         # generate, measure, drop the database
#   KEEP=1 benches/pg_scale.sh                  # keep the database afterwards
#   SKIP_GENERATE=1 KEEP=1 benches/pg_scale.sh  # measure a database kept earlier
#   SKIP_DOCTOR=1 ...                           # without the full scan (minutes at 10M)
#
# Environment: PG_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres), DB_NAME
# (default memscope_scale), CONVERSATIONS (200000), RUNS (7), MEMSCOPE (the binary; default:
# built here with `cargo build --release`). Needs psql and ~8 GB of free disk.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ADMIN_URL=${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}
DB_NAME=${DB_NAME:-memscope_scale}
DB_URL=${ADMIN_URL%/*}/$DB_NAME
CONVERSATIONS=${CONVERSATIONS:-200000}
RUNS=${RUNS:-7}

if [ -z "${MEMSCOPE:-}" ]; then
    (cd "$ROOT" && cargo build --release --bin memscope)
    MEMSCOPE=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/memscope
fi
# No user configuration: the defaults are what is measured.
export XDG_CONFIG_HOME=$(mktemp -d) XDG_DATA_HOME=$(mktemp -d)

admin() { psql "$ADMIN_URL" -v ON_ERROR_STOP=1 -qAt "$@"; }
db() { psql "$DB_URL" -v ON_ERROR_STOP=1 -qAt "$@"; }

drop_database() {
    if [ -z "${KEEP:-}" ]; then
        admin -c "DROP DATABASE IF EXISTS $DB_NAME"
        echo "dropped database $DB_NAME"
    fi
}

if [ -z "${SKIP_GENERATE:-}" ]; then
    admin -c "DROP DATABASE IF EXISTS $DB_NAME"
    admin -c "CREATE DATABASE $DB_NAME"
    trap drop_database EXIT
    # memscope creates its own schema, so the data lands in exactly what it migrates to.
    "$MEMSCOPE" --db "$DB_URL" --write init >/dev/null
    start=$(date +%s)
    # Each conversation c (0-based) has n(c) messages: 1-99 from a hash of c (mean 50), and
    # every 20,000th conversation 5,000, a few long ones. Message k of c is a turn of a chain:
    # its parent is message k-1, except for a regeneration (k >= 2, one turn in ten, never two
    # in a row), whose parent is k-2, that of the sibling it regenerates; the turn after it
    # continues from the regeneration. Turns are one minute apart; conversations start one minute apart
    # over the last ~4.6 months, so the table interleaves conversations as production does.
    # Ids are md5-derived UUIDs: random-looking, as Dify's uuid4 keys are.
    db <<SQL
\set ON_ERROR_STOP on
SET synchronous_commit = off;
SET maintenance_work_mem = '512MB';
CREATE TEMP TABLE scale_index_definitions AS
    SELECT indexdef FROM pg_indexes
    WHERE schemaname = 'public' AND tablename IN ('conversations', 'messages')
      AND indexname NOT LIKE '%_pkey';
DO \$\$
DECLARE def text;
BEGIN
    FOR def IN SELECT indexname FROM pg_indexes
               WHERE schemaname = 'public' AND tablename IN ('conversations', 'messages')
                 AND indexname NOT LIKE '%_pkey'
    LOOP EXECUTE 'DROP INDEX ' || quote_ident(def); END LOOP;
END \$\$;
ALTER TABLE messages DROP CONSTRAINT messages_conversation_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_pkey;

CREATE FUNCTION pg_temp.scale_uuid(kind text, a bigint, b bigint) RETURNS uuid
    LANGUAGE sql IMMUTABLE AS \$f\$ SELECT md5(kind || a || '.' || b)::uuid \$f\$;
CREATE FUNCTION pg_temp.scale_hash(a bigint, b bigint) RETURNS int
    LANGUAGE sql IMMUTABLE AS \$f\$ SELECT abs(hashint8(a * 1000003 + b)) \$f\$;

INSERT INTO apps (id, tenant_id, name, mode, memory_window, created_at)
SELECT pg_temp.scale_uuid('a', a, 0), pg_temp.scale_uuid('t', a % 5, 0), 'app ' || a,
       (ARRAY['chat', 'advanced-chat', 'agent-chat'])[1 + a % 3], NULL,
       TIMESTAMP '2026-01-01' + a * INTERVAL '1 hour'
FROM generate_series(0, 99) AS a;

CREATE TEMP TABLE scale_sizes AS
SELECT c, CASE WHEN c % 20000 = 7 THEN 5000 ELSE 1 + pg_temp.scale_hash(c, 0) % 99 END AS n,
       TIMESTAMP '2026-07-01' + c * INTERVAL '1 minute' AS started
FROM generate_series(0, $CONVERSATIONS - 1) AS c;

INSERT INTO conversations (id, app_id, name, mode, status, from_source, dialogue_count,
                           created_at, updated_at)
SELECT pg_temp.scale_uuid('c', c, 0), pg_temp.scale_uuid('a', c % 100, 0),
       'conversation ' || c || ' about ' ||
           (ARRAY['billing', 'retention', 'exports', 'onboarding', 'the API'])[1 + c % 5],
       (ARRAY['chat', 'advanced-chat', 'agent-chat'])[1 + (c % 100) % 3], 'normal', 'api', n,
       started, started + (n - 1) * INTERVAL '1 minute'
FROM scale_sizes;

INSERT INTO messages (id, app_id, conversation_id, parent_message_id, query, answer,
                      message_tokens, answer_tokens, status, invoke_from, created_at)
SELECT pg_temp.scale_uuid('m', c, k), pg_temp.scale_uuid('a', c % 100, 0),
       pg_temp.scale_uuid('c', c, 0),
       CASE WHEN k = 0 THEN NULL
            WHEN k >= 2 AND (k + c) % 10 = 0 THEN pg_temp.scale_uuid('m', c, k - 2)
            ELSE pg_temp.scale_uuid('m', c, k - 1) END,
       'Question ' || k || ': how does the retention policy apply to project ' || c || '?',
       'Answer ' || k || ': archived projects keep their history for ninety days, then the '
           'summaries are kept and the raw messages are deleted. '
           || repeat('Exports stay available to owners. ', pg_temp.scale_hash(c, k) % 12),
       12, 30 + pg_temp.scale_hash(c, k) % 12 * 7, 'normal', 'service-api',
       started + k * INTERVAL '1 minute'
FROM scale_sizes, LATERAL generate_series(0, n - 1) AS k;

ALTER TABLE messages ADD PRIMARY KEY (id);
ALTER TABLE messages ADD CONSTRAINT messages_conversation_id_fkey
    FOREIGN KEY (conversation_id) REFERENCES conversations (id);
DO \$\$
DECLARE def text;
BEGIN
    FOR def IN SELECT indexdef FROM scale_index_definitions LOOP EXECUTE def; END LOOP;
END \$\$;
VACUUM ANALYZE;
SQL
    echo "generated in $(($(date +%s) - start)) s:" \
        "$(db -c 'SELECT COUNT(*) FROM messages') messages," \
        "$(db -c 'SELECT COUNT(*) FROM conversations') conversations," \
        "$(db -c "SELECT pg_size_pretty(pg_database_size('$DB_NAME'))")"
else
    trap drop_database EXIT
fi

# min / median / max wall milliseconds, median CPU milliseconds (user + system, in GNU time's
# 10 ms steps) and max peak RSS of RUNS runs of a command. Exit code 1 is accepted where
# FINDINGS_OK is set (doctor's "found problems").
measure() {
    local label=$1
    shift
    local times=() cpus=() peak=0 rss
    for _ in $(seq "$RUNS"); do
        local t0 t1
        t0=$(date +%s%N)
        /usr/bin/time -f '%M %U %S' -o "$WORK/rss" "$@" >"$WORK/out" 2>"$WORK/err" || {
            [ $? -eq 1 ] && [ -n "${FINDINGS_OK:-}" ] || { cat "$WORK/err"; exit 1; }
        }
        t1=$(date +%s%N)
        times+=($(((t1 - t0) / 1000000)))
        read -r rss user system < <(tail -1 "$WORK/rss")
        cpus+=($(awk -v u="$user" -v s="$system" 'BEGIN { printf "%d", (u + s) * 1000 }'))
        [ "$rss" -gt "$peak" ] && peak=$rss
    done
    sorted=($(printf '%s\n' "${times[@]}" | sort -n))
    cpu=($(printf '%s\n' "${cpus[@]}" | sort -n))
    printf '%-44s %6s ms %6s ms %6s ms %6s ms %6s MiB\n' "$label" "${sorted[0]}" \
        "${sorted[$((${#sorted[@]} / 2))]}" "${sorted[-1]}" "${cpu[$((${#cpu[@]} / 2))]}" \
        "$((peak / 1024))"
}

WORK=$(mktemp -d)
# A conversation deep in the table: one of the last ones, started ~140 days in, and a long one.
DEEP=$(db -c "SELECT md5('c' || ($CONVERSATIONS - 3) || '.0')")
LONG=$(db -c "SELECT md5('c' || 7 || '.0')")
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)," \
    "load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-44s %9s %9s %9s %9s %10s\n' "command ($RUNS runs)" min median max "cpu" "peak RSS"
measure "--version" "$MEMSCOPE" --version
measure "conversations --limit 50 (first page)" "$MEMSCOPE" --db "$DB_URL" conversations --limit 50
measure "thread (deep, $(db -c "SELECT COUNT(*) FROM messages WHERE conversation_id = '$DEEP'") messages)" \
    "$MEMSCOPE" --db "$DB_URL" thread "$DEEP"
measure "history (deep)" "$MEMSCOPE" --db "$DB_URL" history "$DEEP"
measure "thread (long, 5,000 messages)" "$MEMSCOPE" --db "$DB_URL" thread "$LONG"
measure "history (long, 5,000 messages)" "$MEMSCOPE" --db "$DB_URL" history "$LONG"
[ -n "${SKIP_DOCTOR:-}" ] ||
    RUNS=${DOCTOR_RUNS:-1} FINDINGS_OK=1 measure "doctor (every message)" "$MEMSCOPE" --db "$DB_URL" doctor
rm -rf "$WORK"
