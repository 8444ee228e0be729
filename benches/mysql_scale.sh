#!/usr/bin/env bash
# Dify on MySQL against Dify on PostgreSQL, on the same rows: a fresh database of MESSAGES Dify
# messages (default 1,000,000) in Dify's own tables on each server, in the column types Dify's
# models give them there (CHAR(36) ids, LONGTEXT, DATETIME on MySQL; uuid, text, timestamp on
# PostgreSQL), generated in SQL with the same md5-derived ids on both, then measured with the
# release binary: the first page (`conversations --limit 50`), a deep conversation's `thread`,
# and `doctor` over every message. Both databases are dropped afterwards unless KEEP is set.
#
#   benches/mysql_scale.sh                   # generate on both, measure, drop
#   MESSAGES=200000 benches/mysql_scale.sh   # a smaller size
#   KEEP=1 benches/mysql_scale.sh            # keep both databases afterwards
#   SKIP_GENERATE=1 benches/mysql_scale.sh   # measure the databases kept earlier
#
# Environment: MYSQL_ADMIN_URL (default mysql://root@127.0.0.1:3306), PG_ADMIN_URL (default
# postgres://postgres@127.0.0.1:5432/postgres), DB_NAME (memscope_mysql_scale), RUNS (5),
# MEMSCOPE (the binary; default: built here with `cargo build --release`). Uses hyperfine when
# installed (min/median/max from its JSON), else wall time of RUNS runs. Needs mysql and psql.
# Each figure is printed with the load average at the time it was taken: on a shared machine
# the ratio between the two servers says more than either number.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
MYSQL_ADMIN=${MYSQL_ADMIN_URL:-mysql://root@127.0.0.1:3306}
PG_ADMIN=${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}
DB_NAME=${DB_NAME:-memscope_mysql_scale}
MESSAGES=${MESSAGES:-1000000}
RUNS=${RUNS:-5}
# Conversations of 1-99 messages (mean 50) and one deep conversation of 2,000.
DEEP_MESSAGES=2000
CONVERSATIONS=$(((MESSAGES - DEEP_MESSAGES) / 50))

if [ -z "${MEMSCOPE:-}" ]; then
    (cd "$ROOT" && cargo build --release --bin memscope)
    MEMSCOPE=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/memscope
fi
export XDG_CONFIG_HOME=$(mktemp -d) XDG_DATA_HOME=$(mktemp -d)

# mysql://user@host:port → the client's flags.
read -r MY_USER MY_HOST MY_PORT < <(python3 -c '
import sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
print(u.username or "root", u.hostname or "127.0.0.1", u.port or 3306)' "$MYSQL_ADMIN")
my() { mysql -u"$MY_USER" -h"$MY_HOST" -P"$MY_PORT" --batch --skip-column-names "$@"; }
pg_admin() { psql "$PG_ADMIN" -v ON_ERROR_STOP=1 -qAt "$@"; }
MYSQL_URL=$MYSQL_ADMIN/$DB_NAME
PG_URL=${PG_ADMIN%/*}/$DB_NAME
pg() { psql "$PG_URL" -v ON_ERROR_STOP=1 -qAt "$@"; }

drop_databases() {
    if [ -z "${KEEP:-}" ]; then
        my -e "DROP DATABASE IF EXISTS $DB_NAME"
        pg_admin -c "DROP DATABASE IF EXISTS $DB_NAME"
        echo "dropped database $DB_NAME on both servers"
    fi
}
trap drop_databases EXIT

load() { cut -d' ' -f1-3 /proc/loadavg; }

# The tables memscope reads, as Dify's models create them on each dialect.
schema() {
    local uuid=$1 text=$2 time=$3 bool=$4
    cat <<SQL
CREATE TABLE apps (id $uuid PRIMARY KEY, tenant_id $uuid NOT NULL, name varchar(255) NOT NULL,
    description $text, mode varchar(255) NOT NULL, icon varchar(255), app_model_config_id $uuid,
    workflow_id $uuid, status varchar(255) NOT NULL DEFAULT 'normal', enable_site $bool NOT NULL,
    enable_api $bool NOT NULL, created_at $time NOT NULL, updated_at $time NOT NULL);
CREATE TABLE conversations (id $uuid PRIMARY KEY, app_id $uuid NOT NULL, app_model_config_id $uuid,
    model_provider varchar(255), override_model_configs $text, model_id varchar(255),
    mode varchar(255) NOT NULL, name varchar(255) NOT NULL, summary $text, inputs $text,
    introduction $text, system_instruction $text, system_instruction_tokens int NOT NULL DEFAULT 0,
    status varchar(255) NOT NULL, invoke_from varchar(255), from_source varchar(255) NOT NULL,
    from_end_user_id $uuid, from_account_id $uuid, read_at $time, read_account_id $uuid,
    dialogue_count int NOT NULL DEFAULT 0, created_at $time NOT NULL, updated_at $time NOT NULL,
    is_deleted $bool NOT NULL DEFAULT false);
CREATE INDEX conversation_app_updated_at_idx ON conversations (app_id, updated_at);
CREATE INDEX conversation_updated_at_idx ON conversations (updated_at, id);
CREATE TABLE messages (id $uuid PRIMARY KEY, app_id $uuid NOT NULL, model_provider varchar(255),
    model_id varchar(255), override_model_configs $text, conversation_id $uuid NOT NULL,
    inputs $text, query $text NOT NULL, message $text, message_tokens int NOT NULL DEFAULT 0,
    message_unit_price numeric(10, 4) NOT NULL DEFAULT 0,
    message_price_unit numeric(10, 7) NOT NULL DEFAULT 0.001, answer $text NOT NULL,
    answer_tokens int NOT NULL DEFAULT 0, answer_unit_price numeric(10, 4) NOT NULL DEFAULT 0,
    answer_price_unit numeric(10, 7) NOT NULL DEFAULT 0.001, parent_message_id $uuid,
    provider_response_latency float NOT NULL DEFAULT 0, total_price numeric(10, 7),
    currency varchar(255) NOT NULL DEFAULT 'USD', status varchar(255) NOT NULL DEFAULT 'normal',
    error $text, message_metadata $text, invoke_from varchar(255),
    from_source varchar(255) NOT NULL DEFAULT 'api', from_end_user_id $uuid, from_account_id $uuid,
    created_at $time NOT NULL, updated_at $time NOT NULL, agent_based $bool NOT NULL DEFAULT false,
    workflow_run_id $uuid);
CREATE TABLE message_files (id $uuid PRIMARY KEY, message_id $uuid NOT NULL,
    type varchar(255) NOT NULL, transfer_method varchar(255) NOT NULL, url $text,
    belongs_to varchar(255), upload_file_id $uuid, created_by_role varchar(255) NOT NULL,
    created_by $uuid NOT NULL, created_at $time NOT NULL);
CREATE TABLE upload_files (id $uuid PRIMARY KEY, tenant_id $uuid NOT NULL,
    storage_type varchar(255) NOT NULL, \`key\` varchar(255) NOT NULL, name varchar(255) NOT NULL,
    size int NOT NULL, extension varchar(255) NOT NULL, mime_type varchar(255),
    created_by_role varchar(255) NOT NULL DEFAULT 'account', created_by $uuid NOT NULL,
    created_at $time NOT NULL, used $bool NOT NULL DEFAULT false, used_by $uuid, used_at $time,
    hash varchar(255), source_url $text);
CREATE TABLE workflow_runs (id $uuid PRIMARY KEY, tenant_id $uuid NOT NULL, app_id $uuid NOT NULL,
    sequence_number int NOT NULL DEFAULT 0, workflow_id $uuid NOT NULL, type varchar(255) NOT NULL,
    triggered_from varchar(255) NOT NULL, version varchar(255) NOT NULL, graph $text, inputs $text,
    status varchar(255) NOT NULL, outputs $text, error $text, elapsed_time float NOT NULL DEFAULT 0,
    total_tokens bigint NOT NULL DEFAULT 0, total_steps int DEFAULT 0,
    created_by_role varchar(255) NOT NULL, created_by $uuid NOT NULL, created_at $time NOT NULL,
    finished_at $time);
CREATE TABLE workflow_node_executions (id $uuid PRIMARY KEY, tenant_id $uuid NOT NULL,
    app_id $uuid NOT NULL, workflow_id $uuid NOT NULL, triggered_from varchar(255) NOT NULL,
    workflow_run_id $uuid, \`index\` int NOT NULL, predecessor_node_id varchar(255),
    node_execution_id varchar(255), node_id varchar(255) NOT NULL, node_type varchar(255) NOT NULL,
    title varchar(255) NOT NULL, inputs $text, process_data $text, outputs $text,
    status varchar(255) NOT NULL, error $text, elapsed_time float NOT NULL DEFAULT 0,
    execution_metadata $text, created_at $time NOT NULL, created_by_role varchar(255) NOT NULL,
    created_by $uuid NOT NULL, finished_at $time);
SQL
}

# Message k of conversation c: a chain whose every tenth turn (k >= 2) regenerates the one
# before (parent k-2); turns one minute apart; conversations started one minute apart.
# n(c) = 1 + (c * 7919) % 99, and conversation 0 is the deep one.
generate_mysql() {
    my -e "DROP DATABASE IF EXISTS $DB_NAME; CREATE DATABASE $DB_NAME CHARACTER SET utf8mb4"
    schema 'CHAR(36)' LONGTEXT DATETIME 'TINYINT(1)' | my "$DB_NAME"
    my "$DB_NAME" >/dev/null <<SQL
SET SESSION unique_checks = 0, foreign_key_checks = 0;
CREATE FUNCTION scale_uuid(kind CHAR(1), a BIGINT, b BIGINT) RETURNS CHAR(36) DETERMINISTIC
    RETURN (SELECT CONCAT(SUBSTR(h, 1, 8), '-', SUBSTR(h, 9, 4), '-', SUBSTR(h, 13, 4), '-',
                          SUBSTR(h, 17, 4), '-', SUBSTR(h, 21, 12))
            FROM (SELECT MD5(CONCAT(kind, a, '.', b)) AS h) AS hashed);
INSERT INTO apps (id, tenant_id, name, mode, enable_site, enable_api, created_at, updated_at)
SELECT scale_uuid('a', seq, 0), scale_uuid('t', seq % 5, 0), CONCAT('app ', seq),
       ELT(1 + seq % 3, 'chat', 'advanced-chat', 'agent-chat'), 1, 1,
       '2026-01-01 00:00:00', '2026-01-01 00:00:00'
FROM seq_0_to_99;
CREATE TABLE scale_sizes (c BIGINT PRIMARY KEY, n INT, started DATETIME)
SELECT seq AS c, IF(seq = 0, $DEEP_MESSAGES, 1 + (seq * 7919) % 99) AS n,
       '2026-07-01 00:00:00' + INTERVAL seq MINUTE AS started
FROM seq_0_to_$((CONVERSATIONS - 1));
INSERT INTO conversations (id, app_id, mode, name, status, from_source, dialogue_count,
                           created_at, updated_at)
SELECT scale_uuid('c', c, 0), scale_uuid('a', c % 100, 0),
       ELT(1 + (c % 100) % 3, 'chat', 'advanced-chat', 'agent-chat'),
       CONCAT('conversation ', c), 'normal', 'api', n, started,
       started + INTERVAL (n - 1) MINUTE
FROM scale_sizes;
INSERT INTO messages (id, app_id, conversation_id, parent_message_id, query, answer,
                      message_tokens, answer_tokens, invoke_from, created_at, updated_at)
SELECT scale_uuid('m', c, k.seq), scale_uuid('a', c % 100, 0), scale_uuid('c', c, 0),
       CASE WHEN k.seq = 0 THEN NULL
            WHEN k.seq >= 2 AND (k.seq + c) % 10 = 0 THEN scale_uuid('m', c, k.seq - 2)
            ELSE scale_uuid('m', c, k.seq - 1) END,
       CONCAT('Question ', k.seq, ': how does the retention policy apply to project ', c, '?'),
       CONCAT('Answer ', k.seq, ': archived projects keep their history for ninety days.'),
       12, 30, 'service-api', started + INTERVAL k.seq MINUTE, started + INTERVAL k.seq MINUTE
FROM scale_sizes JOIN seq_0_to_$((DEEP_MESSAGES - 1)) AS k ON k.seq < n;
CREATE INDEX message_conversation_id_idx ON messages (conversation_id);
CREATE INDEX message_created_at_id_idx ON messages (created_at, id);
DROP TABLE scale_sizes;
DROP FUNCTION scale_uuid;
ANALYZE TABLE apps, conversations, messages;
SQL
}

generate_postgres() {
    pg_admin -c "DROP DATABASE IF EXISTS $DB_NAME" 2>/dev/null
    pg_admin -c "CREATE DATABASE $DB_NAME"
    schema uuid text timestamp boolean | tr '`' '"' | pg
    pg <<SQL
SET synchronous_commit = off;
CREATE FUNCTION pg_temp.scale_uuid(kind text, a bigint, b bigint) RETURNS uuid
    LANGUAGE sql IMMUTABLE AS \$f\$ SELECT md5(kind || a || '.' || b)::uuid \$f\$;
INSERT INTO apps (id, tenant_id, name, mode, enable_site, enable_api, created_at, updated_at)
SELECT pg_temp.scale_uuid('a', a, 0), pg_temp.scale_uuid('t', a % 5, 0), 'app ' || a,
       (ARRAY['chat', 'advanced-chat', 'agent-chat'])[1 + a % 3], true, true,
       TIMESTAMP '2026-01-01', TIMESTAMP '2026-01-01'
FROM generate_series(0, 99) AS a;
CREATE TEMP TABLE scale_sizes AS
SELECT c, CASE WHEN c = 0 THEN $DEEP_MESSAGES ELSE 1 + (c * 7919) % 99 END AS n,
       TIMESTAMP '2026-07-01' + c * INTERVAL '1 minute' AS started
FROM generate_series(0, $CONVERSATIONS - 1) AS c;
INSERT INTO conversations (id, app_id, mode, name, status, from_source, dialogue_count,
                           created_at, updated_at)
SELECT pg_temp.scale_uuid('c', c, 0), pg_temp.scale_uuid('a', c % 100, 0),
       (ARRAY['chat', 'advanced-chat', 'agent-chat'])[1 + (c % 100) % 3],
       'conversation ' || c, 'normal', 'api', n, started, started + (n - 1) * INTERVAL '1 minute'
FROM scale_sizes;
INSERT INTO messages (id, app_id, conversation_id, parent_message_id, query, answer,
                      message_tokens, answer_tokens, invoke_from, created_at, updated_at)
SELECT pg_temp.scale_uuid('m', c, k), pg_temp.scale_uuid('a', c % 100, 0),
       pg_temp.scale_uuid('c', c, 0),
       CASE WHEN k = 0 THEN NULL
            WHEN k >= 2 AND (k + c) % 10 = 0 THEN pg_temp.scale_uuid('m', c, k - 2)
            ELSE pg_temp.scale_uuid('m', c, k - 1) END,
       'Question ' || k || ': how does the retention policy apply to project ' || c || '?',
       'Answer ' || k || ': archived projects keep their history for ninety days.',
       12, 30, 'service-api', started + k * INTERVAL '1 minute', started + k * INTERVAL '1 minute'
FROM scale_sizes, LATERAL generate_series(0, n - 1) AS k;
CREATE INDEX message_conversation_id_idx ON messages (conversation_id);
CREATE INDEX message_created_at_id_idx ON messages (created_at, id);
VACUUM ANALYZE;
SQL
}

if [ -z "${SKIP_GENERATE:-}" ]; then
    for server in mysql postgres; do
        start=$(date +%s)
        "generate_$server"
        echo "$server: generated in $(($(date +%s) - start)) s (load $(load))"
    done
fi
echo "rows: $(my "$DB_NAME" -e 'SELECT COUNT(*) FROM messages') messages in MySQL," \
    "$(pg -c 'SELECT COUNT(*) FROM messages') in PostgreSQL;" \
    "$(pg -c 'SELECT COUNT(*) FROM conversations') conversations"

DEEP=$(pg -c "SELECT md5('c0.0')::uuid")
WORK=$(mktemp -d)
# Median wall milliseconds of a command, with min and max: hyperfine's when installed.
measure() {
    if command -v hyperfine >/dev/null; then
        hyperfine --runs "$RUNS" --warmup 1 -i --export-json "$WORK/h.json" -N "$*" \
            >/dev/null 2>&1
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]
print("%.0f %.0f %.0f" % (r["min"]*1000, r["median"]*1000, r["max"]*1000))' "$WORK/h.json"
    else
        local times=()
        for _ in $(seq "$RUNS"); do
            local t0=$(date +%s%N)
            "$@" >/dev/null 2>&1 || true
            times+=($((($(date +%s%N) - t0) / 1000000)))
        done
        local sorted=($(printf '%s\n' "${times[@]}" | sort -n))
        echo "${sorted[0]} ${sorted[$((${#sorted[@]} / 2))]} ${sorted[-1]}"
    fi
}

echo "machine: $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), $RUNS runs each"
printf '%-34s %-10s %8s %8s %8s  %s\n' command server min median max "load (1/5/15 min)"
for read in "conversations --limit 50" "thread $DEEP" "doctor"; do
    for url in "$MYSQL_URL" "$PG_URL"; do
        server=${url%%:*}
        # shellcheck disable=SC2086
        read -r lo mid hi < <(measure "$MEMSCOPE" --db "$url" $read)
        printf '%-34s %-10s %6s ms %6s ms %6s ms  %s\n' "${read%% *}" "$server" "$lo" "$mid" \
            "$hi" "$(load)"
    done
done
rm -rf "$WORK"
