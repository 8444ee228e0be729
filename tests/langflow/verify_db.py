#!/usr/bin/env python3
"""Print what Langflow 1.13.0's own code says NOW about a database (one JSON object on stdout).

    verify_db.py (--sqlite PATH | --postgres URL) --kb-dir DIR [--out FILE]

Meant to run after memscope wrote to a database build_db.py made. It never migrates or writes:

* ``startup_model_check``: Alembic ``command.check`` with Langflow's migration environment, the
  check whose failure is Langflow's start-up error "There's a mismatch between the models and the
  database" (DatabaseService._run_migrations); run first, before anything else touches the DB;
* ``schema_health``: DatabaseService._check_schema_health (start-up, before migrations);
* ``alembic_version``: the revision rows, and the head of Langflow's migration scripts;
* per memory base: ``MemoryBaseService.check_mismatch``, chunk count from the vector store,
  per session the pending workflow runs (``count_pending_messages``), the pending message ids
  (``task._fetch_pending_messages`` from the stored cursor) and ``can_start_flush``: Langflow's
  JobService.create_job for the next ingestion job, with the dedupe key trigger_ingestion builds,
  inside a transaction that is rolled back (ok, or DuplicateJobError);
* ``messages``: the owner-scoped read (``langflow.memory.aget_messages``) per (owner, flow, session);
* ``jobs`` and ``jobs_left_active``: queued / in_progress jobs, each with ``heartbeat_at`` and
  ``startup_sweep_would_fail`` (JobService.is_lease_stale with background_lease_ttl_s: Langflow's
  start-up sweep fails such an in_progress job with worker_lost; queued ones it leaves alone).

Langflow's full start-up (``initialize_services``) is NOT run here: it would migrate the database
and could mask what memscope left behind. Only the settings and service registry are set up.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lfbase  # noqa: E402


def parse_args():
    p = lfbase.argument_parser(__doc__, sqlite_help="path of the SQLite database file",
                               postgres_help="URL of the PostgreSQL database")
    p.add_argument("--out", help="also write the JSON here")
    p.add_argument("--no-flush-probe", action="store_true", help="skip the rolled-back create_job probe")
    return p.parse_args()


def alembic_facts() -> dict:
    from alembic.script import ScriptDirectory
    from alembic.config import Config
    from langflow.services.deps import get_db_service
    import sqlalchemy as sa
    from langflow.services.database.service import _normalize_sync_postgres_url

    db_service = get_db_service()
    cfg = Config()
    cfg.set_main_option("script_location", str(db_service.script_location))
    heads = sorted(ScriptDirectory.from_config(cfg).get_heads())
    engine = sa.create_engine(_normalize_sync_postgres_url(db_service.database_url))
    try:
        with engine.connect() as conn:
            current = sorted(conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars())
    except Exception as exc:  # noqa: BLE001
        current = [f"error: {exc}"]
    finally:
        engine.dispose()
    return {"script_heads": heads, "database": current, "at_head": current == heads}


async def main() -> int:
    args = parse_args()
    lfbase.configure_env(args)
    from langflow.services.utils import register_all_service_factories

    register_all_service_factories()
    from langflow.services.deps import get_db_service

    get_db_service()  # builds the engine from LANGFLOW_DATABASE_URL
    result: dict = {"langflow_version": "1.13.0", "database": "sqlite" if args.sqlite else "postgresql"}
    # The start-up model check first, on the database exactly as it was handed over.
    result["startup_model_check"] = await asyncio.to_thread(lfbase.startup_model_check, None)
    result["alembic_version"] = await asyncio.to_thread(alembic_facts)
    try:
        result["schema_health"] = {"ok": bool(await lfbase.schema_health()())}
    except Exception as exc:  # noqa: BLE001
        result["schema_health"] = {"ok": False, "message": f"{type(exc).__name__}: {exc}"}
    try:
        result.update(await lfbase.observe(probe_flush=not args.no_flush_probe))
    except Exception as exc:  # noqa: BLE001 - report, do not crash: the caller compares JSON
        import traceback

        result["observe_error"] = f"{type(exc).__name__}: {exc}"
        result["observe_traceback"] = traceback.format_exc()
    finally:
        await lfbase.stop_langflow()
    lfbase.dump(result, None)
    if args.out:
        lfbase.dump(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
