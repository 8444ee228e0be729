"""Shared set-up for the real-Langflow oracle scripts (build_db.py, verify_db.py).

Everything here drives Langflow 1.13.0's own code, installed by `.ci/langflow`. The only things
replaced are the ones that would reach outside this machine:

* the embedding model: ``KBIngestionHelper.build_embeddings`` (the call every Memory Base
  ingestion goes through, langflow/api/utils/kb_helpers.py) returns langchain-core's offline
  ``DeterministicFakeEmbedding`` of ``EMBEDDING_DIM`` dimensions instead of an OpenAI client;
* its failure modes, to record a FAILED and a CANCELLED ingestion job (see ``EmbedderMode``).

The settings are pointed at the caller's database and a caller-given knowledge-bases dir through
Langflow's own environment variables, before Langflow is imported, so nothing is written to $HOME.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path

EMBEDDING_DIM = 16
EMBEDDING_PROVIDER = "OpenAI"
EMBEDDING_MODEL = "text-embedding-3-small"


def argument_parser(doc: str, *, sqlite_help: str, postgres_help: str):
    """The options both scripts share: which database, Langflow's knowledge-bases and config dirs."""
    import argparse

    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--sqlite", help=sqlite_help)
    g.add_argument("--postgres", help=postgres_help)
    p.add_argument("--pg-pooled", action="store_true",
                   help="keep Langflow's default connection pool on PostgreSQL (see configure_env)")
    p.add_argument("--kb-dir", required=True, help="Langflow's knowledge-bases dir (LANGFLOW_KNOWLEDGE_BASES_DIR)")
    p.add_argument("--config-dir", help="LANGFLOW_CONFIG_DIR (default: beside --kb-dir)")
    p.add_argument("--pgvector", help="PGVECTOR_CONNECTION_STRING: the database of Langflow's postgres (pgvector) "
                   "knowledge-base backend (its `vector` extension created by the caller)")
    return p


def sqlalchemy_url(args) -> str:
    """The database URL as Langflow's settings take it (LANGFLOW_DATABASE_URL)."""
    if args.sqlite:
        return f"sqlite:///{Path(args.sqlite).absolute()}"
    url = args.postgres
    # Langflow normalizes postgres:// and postgresql:// to its async driver itself.
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    return url


def configure_env(args) -> None:
    """Point Langflow at the caller's database and knowledge-bases dir. Call before importing it."""
    kb_dir = Path(args.kb_dir).absolute()
    kb_dir.mkdir(parents=True, exist_ok=True)
    config_dir = Path(getattr(args, "config_dir", None) or (kb_dir.parent / (kb_dir.name + ".langflow-config")))
    config_dir.mkdir(parents=True, exist_ok=True)
    env = {
        "LANGFLOW_DATABASE_URL": sqlalchemy_url(args),
        "LANGFLOW_CONFIG_DIR": str(config_dir),
        "LANGFLOW_KNOWLEDGE_BASES_DIR": str(kb_dir),
        "LANGFLOW_AUTO_LOGIN": "false",
        "LANGFLOW_ALEMBIC_LOG_TO_STDOUT": "false",
        "LANGFLOW_ALEMBIC_LOG_FILE": str(config_dir / "alembic.log"),
        "LANGFLOW_LOG_LEVEL": os.environ.get("LANGFLOW_LOG_LEVEL", "error"),
        "LANGFLOW_STORE": "false",
        "DO_NOT_TRACK": "true",
        # Langflow's postgres KB backend reads only this variable (lfx .../backends/postgres.py), and
        # becomes the default backend of new KBs when it is set: only --pgvector sets it.
        "PGVECTOR_CONNECTION_STRING": getattr(args, "pgvector", None) or "",
        "OPENSEARCH_URL": "",
    }
    if getattr(args, "postgres", None) and not getattr(args, "pg_pooled", False):
        # Langflow 1.13 takes its per-session ingestion lock with pg_try_advisory_lock on whatever
        # pooled connection ``db.connection()`` returns (memory_base/task.py _pg_advisory_lock),
        # but the task commits in between (_advance_cursor), so the unlock can run on another
        # pooled connection and the session-level lock stays held by an idle pooled connection:
        # the next ingestion of the same (memory base, session) in this process waits until
        # max_ingestion_timeout_secs and ends TIMED_OUT. With Langflow's own NullPool setting
        # a returned connection is closed, which releases the lock. See the facts file.
        env["LANGFLOW_DB_CONNECTION_SETTINGS"] = '{"poolclass": "NullPool"}'
    for key, value in env.items():
        if value == "":
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def seed_uuid4(seed: int) -> None:
    """Make ``uuid.uuid4`` draw from a seeded generator, so ids repeat from build to build.

    Langflow generates every id with uuid4 (message, job, memory base, knowledge base, chunk
    ids, the 8 hex of ``kb_name``). Seeding it keeps them valid version-4 UUIDs while making the
    id tie-break between messages with equal timestamps the same on every run and on both
    databases. Must run before Langflow is imported (models capture ``uuid4`` as their
    default factory at import time).
    """
    import random

    rng = random.Random(seed)
    real_uuid4 = uuid.uuid4

    def uuid4() -> uuid.UUID:
        return uuid.UUID(int=rng.getrandbits(128), version=4)

    uuid4.__doc__ = real_uuid4.__doc__
    uuid.uuid4 = uuid4


class EmbedderMode:
    """How the patched embedder behaves for the next ingestion(s)."""

    mode = "ok"  # "ok" | "fail" | "cancel"


def install_fake_embedder() -> None:
    """Replace the provider client with langchain-core's DeterministicFakeEmbedding."""
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langflow.api.utils.kb_helpers import KBIngestionHelper

    async def build_embeddings(provider, model, current_user):  # noqa: ARG001 - same signature
        if EmbedderMode.mode == "fail":
            msg = "oracle: the embedding provider is unreachable"
            raise RuntimeError(msg)
        if EmbedderMode.mode == "cancel":
            # What the user's "cancel" does (langflow/api/v1/knowledge_bases.py, cancel endpoint):
            # JobService.update_job_status(job_id, CANCELLED). The running task sees it before its
            # first vector batch (KBIngestionHelper.write_documents_to_backend) and ends CANCELLED.
            from langflow.services.database.models.jobs.model import Job, JobStatus, JobType
            from langflow.services.deps import get_job_service, session_scope
            from sqlmodel import select

            async with session_scope() as db:
                rows = (
                    await db.exec(
                        select(Job).where(Job.type == JobType.INGESTION).where(Job.status == JobStatus.IN_PROGRESS)
                    )
                ).all()
                ids = [row.job_id for row in rows]
            for job_id in ids:
                await get_job_service().update_job_status(job_id, JobStatus.CANCELLED)
        return DeterministicFakeEmbedding(size=EMBEDDING_DIM)

    KBIngestionHelper.build_embeddings = staticmethod(build_embeddings)


async def start_langflow() -> None:
    """Langflow's start-up path for the database: create tables, run Alembic, hydrate policies."""
    from langflow.services.utils import initialize_services

    await initialize_services(skip_superuser_setup=True)


async def stop_langflow() -> None:
    from langflow.services.utils import teardown_services

    try:
        await teardown_services()
    except Exception:  # noqa: BLE001 - best effort at exit
        pass


def jsonable(value):
    """UUIDs and datetimes as Langflow prints them (str(uuid) = hyphenated; isoformat)."""
    import datetime as _dt
    import enum

    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


async def wait_for_jobs(timeout: float = 120.0) -> None:
    """Wait until no ingestion job is QUEUED or IN_PROGRESS (the background task finished)."""
    from langflow.services.database.models.jobs.model import Job, JobStatus, JobType
    from langflow.services.deps import session_scope
    from sqlmodel import func, select

    deadline = asyncio.get_event_loop().time() + timeout
    while True:
        async with session_scope() as db:
            active = (
                await db.exec(
                    select(func.count())
                    .select_from(Job)
                    .where(Job.type == JobType.INGESTION)
                    .where(Job.status.in_([JobStatus.QUEUED, JobStatus.IN_PROGRESS]))  # type: ignore[union-attr]
                )
            ).one()
        if active == 0:
            # Let the task's own finally-blocks (lock release, keep-alive stop) run out.
            await asyncio.sleep(0.3)
            return
        if asyncio.get_event_loop().time() > deadline:
            msg = f"{active} ingestion job(s) still active after {timeout}s"
            raise TimeoutError(msg)
        await asyncio.sleep(0.2)


# --------------------------------------------------------------------------------------------- #
#  What Langflow's own functions say about the database                                          #
# --------------------------------------------------------------------------------------------- #


async def observe(*, probe_flush: bool) -> dict:
    """One JSON-able picture of the memory bases, computed with Langflow's own functions."""
    from langflow.memory import aget_messages
    from langflow.services.database.models.jobs.model import Job
    from langflow.services.database.models.memory_base.model import MemoryBase, MemoryBaseSession
    from langflow.services.database.models.message.model import MessageTable
    from langflow.services.deps import get_memory_base_service, session_scope
    from langflow.services.knowledge_base_storage.runtime import backend_for_name, storage_root
    from langflow.services.memory_base.ingestion import count_pending_messages
    from langflow.services.memory_base.task import _fetch_pending_messages
    from lfx.base.knowledge_bases.backends.sqlite import SQLiteStorageContext
    from sqlmodel import col, select

    from langflow.api.utils import knowledge_base_service

    svc = get_memory_base_service()
    out: dict = {"memory_bases": [], "jobs": [], "messages": []}
    async with session_scope() as db:
        bases = list((await db.exec(select(MemoryBase).order_by(col(MemoryBase.name)))).all())
        jobs = list((await db.exec(select(Job).order_by(col(Job.created_timestamp), col(Job.job_id)))).all())
        owners_flows = sorted(
            {(m.user_id, m.flow_id, m.session_id) for m in (await db.exec(select(MessageTable))).all()},
            key=lambda t: (str(t[0]), str(t[1]), t[2]),
        )

    for mb in bases:
        kb = await knowledge_base_service.get_by_user_and_name(mb.user_id, mb.kb_name)
        entry: dict = {
            "id": str(mb.id),
            "name": mb.name,
            "flow_id": str(mb.flow_id),
            "user_id": str(mb.user_id),
            "threshold": mb.threshold,
            "auto_capture": mb.auto_capture,
            "kb_name": mb.kb_name,
            "embedding_model": mb.embedding_model,
            "preprocessing": mb.preprocessing,
            "knowledge_base": None,
            "vectors_path": None,
            "chunk_count": None,
            "check_mismatch": await svc.check_mismatch(mb.id, mb.user_id),
            "sessions": [],
        }
        if kb is not None:
            entry["knowledge_base"] = jsonable(kb.model_dump())
            if kb.backend_type == "sqlite":
                ctx = SQLiteStorageContext(storage_root(), kb.user_id, kb.id, kb.storage_generation)
                entry["vectors_path"] = str(ctx.database_path)
            try:
                backend = await backend_for_name(mb.user_id, mb.kb_name, embedding_function=None)
                try:
                    await backend.ensure_ready()
                    entry["chunk_count"] = await backend.count()
                finally:
                    await backend.teardown()
            except Exception as exc:  # noqa: BLE001 - reported, not fatal
                entry["chunk_count_error"] = f"{type(exc).__name__}: {exc}"
            if entry["chunk_count"]:
                entry["search"] = await search_every_chunk(mb, entry["chunk_count"])
        async with session_scope() as db:
            sessions = list(
                (
                    await db.exec(
                        select(MemoryBaseSession)
                        .where(MemoryBaseSession.memory_base_id == mb.id)
                        .order_by(col(MemoryBaseSession.session_id))
                    )
                ).all()
            )
            for mbs in sessions:
                pending_runs = await count_pending_messages(db, mb, mbs)
                pending = await _fetch_pending_messages(
                    db, flow_id=mb.flow_id, session_id=mbs.session_id, cursor_id=mbs.cursor_id
                )
                entry["sessions"].append(
                    {
                        "id": str(mbs.id),
                        "session_id": mbs.session_id,
                        "cursor_id": str(mbs.cursor_id) if mbs.cursor_id else None,
                        "total_processed": mbs.total_processed,
                        "last_sync_at": jsonable(mbs.last_sync_at),
                        "purge_pending": getattr(mbs, "purge_pending", None),
                        "pending_runs": pending_runs,
                        "pending_message_ids": [str(m.id) for m in pending],
                    }
                )
        if probe_flush:
            for s in entry["sessions"]:
                s["can_start_flush"] = await probe_flush_job(mb, s["session_id"])
        out["memory_bases"].append(entry)

    out["jobs"] = [
        {
            "job_id": str(j.job_id),
            "status": jsonable(j.status),
            "type": jsonable(j.type),
            "flow_id": str(j.flow_id) if j.flow_id else None,
            "user_id": str(j.user_id) if j.user_id else None,
            "asset_id": str(j.asset_id) if j.asset_id else None,
            "asset_type": j.asset_type,
            "dedupe_key": j.dedupe_key,
            "finished": j.finished_timestamp is not None,
        }
        for j in jobs
    ]
    # What Langflow's start-up orphan sweep (JobService.sweep_orphans) would do with each active job:
    # an in_progress job whose heartbeat is absent or older than background_lease_ttl_s is failed
    # (worker_lost); queued jobs are left alone (workflow ones are re-enqueued).
    from langflow.services.deps import get_settings_service
    from langflow.services.jobs.service import JobService

    ttl = get_settings_service().settings.background_lease_ttl_s
    by_id = {str(j.job_id): j for j in jobs}
    out["jobs_left_active"] = []
    for entry in out["jobs"]:
        if entry["status"] not in ("queued", "in_progress"):
            continue
        job = by_id[entry["job_id"]]
        stale = JobService.is_lease_stale(job, lease_ttl_s=ttl)
        entry = dict(entry, heartbeat_at=(job.job_metadata or {}).get("heartbeat_at"),
                     startup_sweep_would_fail=bool(entry["status"] == "in_progress" and stale))
        out["jobs_left_active"].append(entry)

    # The owner-scoped read (langflow/memory.py aget_messages): flow + owner + session, error rows
    # excluded, newest first (its defaults).
    for user_id, flow_id, session_id in owners_flows:
        if user_id is None or flow_id is None:
            continue
        msgs = await aget_messages(session_id=session_id, flow_id=flow_id, user_id=user_id)
        out["messages"].append(
            {
                "user_id": str(user_id),
                "flow_id": str(flow_id),
                "session_id": session_id,
                "order": "timestamp DESC (aget_messages defaults)",
                "ids": [str(m.id) for m in msgs],
                "texts": [m.text for m in msgs],
            }
        )
    return out


async def search_every_chunk(mb, count: int) -> dict:
    """Langflow's similarity search over the whole knowledge base (k = its chunk count), with the
    build's embedder: the message ids and job ids of the chunks it returns."""
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langflow.services.knowledge_base_storage.runtime import backend_for_name

    try:
        backend = await backend_for_name(
            mb.user_id, mb.kb_name, embedding_function=DeterministicFakeEmbedding(size=EMBEDDING_DIM)
        )
        try:
            await backend.ensure_ready()
            hits = await backend.similarity_search("memory", count, with_scores=True)
        finally:
            await backend.teardown()
    except Exception as exc:  # noqa: BLE001 - reported, not fatal
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {
        "hits": len(hits),
        "message_ids": sorted({doc.metadata.get("message_id", "") for doc, _ in hits}),
        "job_ids": sorted({doc.metadata.get("job_id", "") for doc, _ in hits}),
    }


async def probe_flush_job(mb, session_id: str) -> dict:
    """Would Langflow accept a new flush (ingestion job) for this session right now?

    Runs Langflow's own trigger path up to the job insert (session row, dedupe key from the latest
    pending workflow run, JobService.create_job with its dedupe check) inside one transaction that
    is rolled back, so nothing is left behind: ``create_job`` is called on a JobService whose
    ``session_scope`` is this transaction's session (its DuplicateJobError check is what decides).
    """
    from contextlib import asynccontextmanager

    import langflow.services.jobs.service as jobs_service_mod
    from langflow.services.database.models.jobs.model import JobType
    from langflow.services.database.models.memory_base.model import MemoryBaseSession
    from langflow.services.deps import get_db_service, get_job_service
    from langflow.services.jobs import DuplicateJobError
    from langflow.services.memory_base.ingestion import _get_latest_pending_workflow_job_id
    from sqlmodel import select
    from sqlmodel.ext.asyncio.session import AsyncSession

    engine = get_db_service().engine
    async with engine.connect() as conn:
        trans = await conn.begin()
        session = AsyncSession(bind=conn, expire_on_commit=False, join_transaction_mode="create_savepoint")
        try:
            mbs = (
                await session.exec(
                    select(MemoryBaseSession)
                    .where(MemoryBaseSession.memory_base_id == mb.id)
                    .where(MemoryBaseSession.session_id == session_id)
                )
            ).first()
            if mbs is None:
                mbs = MemoryBaseSession(memory_base_id=mb.id, session_id=session_id)
            latest = await _get_latest_pending_workflow_job_id(session, mb, mbs)
            dedupe_key = f"ingestion:{mb.id}:{session_id}:{latest}" if latest is not None else None

            @asynccontextmanager
            async def same_session():
                yield session

            original = jobs_service_mod.session_scope
            jobs_service_mod.session_scope = same_session
            try:
                await get_job_service().create_job(
                    job_id=uuid.uuid4(),
                    flow_id=mb.flow_id,
                    user_id=mb.user_id,
                    job_type=JobType.INGESTION,
                    asset_id=mb.id,
                    asset_type="memory_base",
                    dedupe_key=dedupe_key,
                    heartbeat=True,
                )
                result = {"ok": True, "dedupe_key": dedupe_key}
            except DuplicateJobError as exc:
                result = {"ok": False, "error": "DuplicateJobError", "message": str(exc), "dedupe_key": dedupe_key}
            finally:
                jobs_service_mod.session_scope = original
        finally:
            await session.close()
            await trans.rollback()
    return result


def startup_model_check(database_url: str) -> dict:
    """Langflow's start-up "mismatch between the models and the database" check.

    DatabaseService._run_migrations (langflow/services/database/service.py) runs Alembic's
    ``command.check`` with Langflow's migration environment; AutogenerateDiffsDetected there is
    the RuntimeError "There's a mismatch between the models and the database." This runs exactly
    that ``command.check`` (without the upgrade before it, so a DB that is merely behind is
    reported rather than migrated) and reports the diff message.
    """
    from alembic import command, util
    from alembic.config import Config
    from langflow.services.deps import get_db_service

    db_service = get_db_service()
    cfg = Config(stdout=open(os.devnull, "w"))  # noqa: SIM115
    cfg.set_main_option("script_location", str(db_service.script_location))
    cfg.set_main_option("sqlalchemy.url", db_service.database_url.replace("%", "%%"))
    try:
        command.check(cfg)
        return {"ok": True, "message": None}
    except util.exc.AutogenerateDiffsDetected as exc:
        return {"ok": False, "message": f"There's a mismatch between the models and the database.\n{exc}"}
    except Exception as exc:  # noqa: BLE001 - e.g. "Target database is not up to date."
        return {"ok": False, "message": f"{type(exc).__name__}: {exc}"}


def schema_health() -> dict:
    """DatabaseService.check_schema_health (start-up, before migrations)."""
    from langflow.services.deps import get_db_service

    async def run():
        db_service = get_db_service()
        async with db_service.engine.begin() as conn:
            return await conn.run_sync(db_service._check_schema_health)  # noqa: SLF001

    return run


def dump(obj, path: str | None) -> None:
    text = json.dumps(obj, indent=2, sort_keys=False, default=str)
    if path:
        Path(path).write_text(text + "\n")
    else:
        sys.stdout.write(text + "\n")
