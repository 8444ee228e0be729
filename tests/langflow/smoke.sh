#!/usr/bin/env bash
# Smoke test of the real-Langflow oracle: builds a database with Langflow 1.13's own code on SQLite
# and on PostgreSQL, runs verify_db.py on each, and checks that verify_db.py sees two kinds of
# damage the way Langflow does: an extra column (start-up model check fails) and workflow runs
# un-stamped after a completed flush (the next flush is a DuplicateJobError).
# Usage: tests/langflow/smoke.sh [sqlite|postgres|both]   (PG at 127.0.0.1:5432, trust, user postgres)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PY="$("$here/../../.ci/langflow" | tail -1)"
which="${1:-both}"
work="$(mktemp -d)"
db="memscope_lfsmoke_$$"
cleanup() {
    rm -rf "$work"
    if [ "$which" != sqlite ]; then dropdb -h 127.0.0.1 -U postgres --if-exists "$db" </dev/null || true; fi
}
trap cleanup EXIT

check() { # check NAME PY-EXPR-on-json FILE
    if "$PY" -c "import json,sys; o=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$3"; then
        echo "ok: $1"
    else
        echo "FAILED: $1"; exit 1
    fi
}

run() { # run KIND DBARGS...
    local kind="$1"; shift
    local t0=$(date +%s)
    "$PY" "$here/build_db.py" "$@" --kb-dir "$work/$kind-kb" --out "$work/$kind-oracle.json" 2>"$work/$kind-build.log" ||
        { tail -30 "$work/$kind-build.log"; exit 1; }
    echo "$kind: build_db.py took $(( $(date +%s) - t0 ))s"
    check "$kind oracle has 3 memory bases" "len(o['memory_bases']) == 3" "$work/$kind-oracle.json"
    check "$kind oracle: completed, failed, cancelled ingestion jobs" \
        "{'completed','failed','cancelled'} <= {j['status'] for j in o['jobs'] if j['type']=='ingestion'}" "$work/$kind-oracle.json"
    "$PY" "$here/verify_db.py" "$@" --kb-dir "$work/$kind-kb" >"$work/$kind-verify.json" 2>"$work/$kind-verify.log" ||
        { tail -30 "$work/$kind-verify.log"; exit 1; }
    check "$kind verify: start-up model check passes" "o['startup_model_check']['ok']" "$work/$kind-verify.json"
    check "$kind verify: no mismatch, no active job" \
        "not any(m['check_mismatch'] for m in o['memory_bases']) and not o['jobs_left_active']" "$work/$kind-verify.json"
    check "$kind verify: every session may flush" \
        "all(s['can_start_flush']['ok'] for m in o['memory_bases'] for s in m['sessions'])" "$work/$kind-verify.json"
    check "$kind verify agrees with the oracle on pending messages" \
        "[[s['pending_message_ids'] for s in m['sessions']] for m in o['memory_bases']] == [[s['pending_message_ids'] for s in m['sessions']] for m in json.load(open('$work/$kind-oracle.json'))['memory_bases']]" \
        "$work/$kind-verify.json"
}

if [ "$which" != postgres ]; then
    run sqlite --sqlite "$work/lf.db"
    cp "$work/lf.db" "$work/lf-dup.db"
    sqlite3 "$work/lf-dup.db" "UPDATE memory_base_workflow_run SET ingestion_job_id = NULL WHERE ingestion_job_id IN (SELECT job_id FROM job WHERE dedupe_key IS NOT NULL AND status = 'completed')"
    "$PY" "$here/verify_db.py" --sqlite "$work/lf-dup.db" --kb-dir "$work/sqlite-kb" >"$work/dup.json" 2>/dev/null
    check "sqlite: re-opened runs of a completed flush -> DuplicateJobError" \
        "any(s['can_start_flush'].get('error') == 'DuplicateJobError' for m in o['memory_bases'] for s in m['sessions'])" "$work/dup.json"
    cp "$work/lf.db" "$work/lf-col.db"
    sqlite3 "$work/lf-col.db" "ALTER TABLE memory_base ADD COLUMN memscope_note TEXT"
    "$PY" "$here/verify_db.py" --sqlite "$work/lf-col.db" --kb-dir "$work/sqlite-kb" --no-flush-probe >"$work/col.json" 2>/dev/null
    check "sqlite: an extra column fails Langflow's start-up model check" \
        "not o['startup_model_check']['ok'] and 'mismatch between the models and the database' in o['startup_model_check']['message']" "$work/col.json"
fi
if [ "$which" != sqlite ]; then
    createdb -h 127.0.0.1 -U postgres "$db" </dev/null
    run postgres --postgres "postgresql://postgres@127.0.0.1:5432/$db"
fi
if [ "$which" = both ]; then
    check "same seed: SQLite and PostgreSQL oracles agree on ids, pending messages and reads" \
        "(lambda p: [[s['pending_message_ids'] for s in m['sessions']] for m in o['memory_bases']] == [[s['pending_message_ids'] for s in m['sessions']] for m in p['memory_bases']] and [m['ids'] for m in o['messages']] == [m['ids'] for m in p['messages']] and [j['job_id'] for j in o['jobs']] == [j['job_id'] for j in p['jobs']])(json.load(open('$work/postgres-oracle.json')))" \
        "$work/sqlite-oracle.json"
fi
echo "langflow oracle smoke: all checks passed"
