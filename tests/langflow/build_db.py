#!/usr/bin/env python3
"""Build a Langflow 1.13.0 database with Langflow's own code and write the oracle JSON.

    build_db.py (--sqlite PATH | --postgres URL) --kb-dir DIR --out ORACLE.json

Run it with the venv `.ci/langflow` prints. The database must be new (an absent SQLite file or an
empty PostgreSQL database the caller created). Steps, each through Langflow's code:

1. start-up DB path: ``initialize_services`` -> ``initialize_database`` (create tables from the
   models, check_schema_health, Alembic ``upgrade head`` + ``check``);
2. a user as the admin "add user" endpoint makes it (User.model_validate, password hash, default
   folder via ``get_or_create_default_folder``), and a flow owned by it;
3. memory bases through ``MemoryBaseService.create`` (knowledge_base row + its KB store: SQLite, or
   with ``--kb-backend postgres --pgvector URL`` Langflow's pgvector backend in that database);
4. flow runs the way the v1 run endpoint records them: a WORKFLOW job (``JobService.create_job``),
   messages stored by ``langflow.memory.astore_message`` inside ``JobService.execute_with_status``,
   then the memory-base hook ``MemoryBaseService.on_flow_output`` (inserts
   ``memory_base_workflow_run`` rows and auto-triggers ingestion at the threshold);
5. manual flushes through ``MemoryBaseService.trigger_ingestion`` (the task in
   langflow/services/memory_base/task.py), one completed, one FAILED (embedder raises), one
   CANCELLED (cancelled the way the KB cancel endpoint does it).
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lfbase  # noqa: E402

# A fixed clock for message timestamps, so equal timestamps are exact and ordering is stable.
T0 = datetime(2026, 1, 5, 9, 0, 0, tzinfo=timezone.utc)


def parse_args():
    p = lfbase.argument_parser(__doc__, sqlite_help="path of the SQLite database file to create",
                               postgres_help="URL of an empty PostgreSQL database the caller created")
    p.add_argument("--out", required=True, help="where to write the oracle JSON")
    p.add_argument("--seed", type=int, default=1313, help="seed for Langflow's uuid4 ids (default 1313)")
    p.add_argument("--random-ids", action="store_true", help="leave uuid4 unseeded")
    p.add_argument("--kb-backend", choices=["sqlite", "postgres"], default="sqlite",
                   help="Langflow's knowledge-base backend of every memory base (postgres needs --pgvector)")
    args = p.parse_args()
    if args.kb_backend == "postgres" and not args.pgvector:
        p.error("--kb-backend postgres needs --pgvector")
    return args


class Clock:
    """Message timestamps: T0 + n seconds, one step per call unless told to repeat."""

    def __init__(self):
        self.t = T0

    def next(self, step: float = 1.0) -> datetime:
        self.t = self.t + timedelta(seconds=step)
        return self.t


async def build(args) -> dict:
    from langflow.initial_setup.setup import get_or_create_default_folder
    from langflow.memory import astore_message
    from langflow.schema.message import Message
    from langflow.services.auth.utils import get_password_hash
    from langflow.services.database.models.flow.model import Flow
    from langflow.services.database.models.jobs.model import JobType
    from langflow.services.database.models.memory_base.model import MemoryBaseCreate
    from langflow.services.database.models.user.model import User, UserCreate
    from langflow.services.deps import get_job_service, get_memory_base_service, session_scope

    log = {"steps": []}

    def step(msg: str) -> None:
        log["steps"].append(msg)
        print(f"[build_db] {msg}", file=sys.stderr)

    await lfbase.start_langflow()
    step("initialize_services: tables + alembic upgrade head")

    async def add_user(username: str, password: str):
        """A user as the admin "add user" endpoint (langflow/api/v1/users.py add_user) makes one."""
        async with session_scope() as db:
            user = User.model_validate(UserCreate(username=username, password=password), from_attributes=True)
            user.password = get_password_hash(password)
            user.is_active = True
            db.add(user)
            await db.commit()
            await db.refresh(user)
            folder = await get_or_create_default_folder(db, user.id)
            return user.id, folder.id

    user_id, folder_id = await add_user("oracle-owner", "oracle-pass-1")
    # a second user whose flow/messages must never show up in the owner's reads
    other_id, other_folder_id = await add_user("oracle-other", "oracle-pass-2")
    step(f"users {user_id} / {other_id}")

    async with session_scope() as db:
        flow = Flow(name="Support Chat", description="oracle flow", data={"nodes": [], "edges": []},
                    user_id=user_id, folder_id=folder_id)
        db.add(flow)
        other_flow = Flow(name="Other Chat", data={"nodes": [], "edges": []}, user_id=other_id, folder_id=other_folder_id)
        db.add(other_flow)
        await db.commit()
        await db.refresh(flow)
        await db.refresh(other_flow)
        flow_id, other_flow_id = flow.id, other_flow.id
    step(f"flows {flow_id} / {other_flow_id}")

    svc = get_memory_base_service()
    mb_support = await svc.create(
        MemoryBaseCreate(name="Support Memory", flow_id=flow_id, threshold=2, auto_capture=True,
                         embedding_model=lfbase.EMBEDDING_MODEL, embedding_provider=lfbase.EMBEDDING_PROVIDER,
                         backend_type=args.kb_backend),
        user_id,
    )
    mb_research = await svc.create(
        MemoryBaseCreate(name="Research Notes", flow_id=flow_id, threshold=3, auto_capture=True,
                         embedding_model=lfbase.EMBEDDING_MODEL, embedding_provider=lfbase.EMBEDDING_PROVIDER,
                         backend_type=args.kb_backend),
        user_id,
    )
    mb_manual = await svc.create(
        MemoryBaseCreate(name="Manual Archive", flow_id=flow_id, threshold=1, auto_capture=False,
                         embedding_model=lfbase.EMBEDDING_MODEL, embedding_provider=lfbase.EMBEDDING_PROVIDER,
                         backend_type=args.kb_backend),
        user_id,
    )
    step(f"memory bases {mb_support.id} {mb_research.id} {mb_manual.id}")

    job_service = get_job_service()
    clock = Clock()
    runs: list[dict] = []

    async def flow_run(session_id: str, turns: list[dict], *, owner=user_id, fid=flow_id, hook=True) -> str:
        """One completed flow run, recorded as the v1 run endpoint records it."""
        import uuid as _uuid

        run_id = _uuid.uuid4()
        await job_service.create_job(job_id=run_id, flow_id=fid, user_id=owner, job_type=JobType.WORKFLOW,
                                     heartbeat=True)
        stored: list[str] = []

        async def run_graph():
            for turn in turns:
                ts = turn.get("timestamp") or clock.next()
                msg = Message(
                    text=turn["text"],
                    sender=turn.get("sender", "User"),
                    sender_name=turn.get("sender_name", turn.get("sender", "User")),
                    session_id=session_id,
                    timestamp=ts.strftime("%Y-%m-%d %H:%M:%S.%f UTC"),
                    error=turn.get("error", False),
                    category=turn.get("category", "message"),
                )
                rows = await astore_message(msg, flow_id=fid, run_id=run_id, user_id=owner)
                if turn.get("error"):
                    # MessageTable.from_message does not carry ``error``: Langflow's error rows get
                    # it when the stored message is sent again (Component.send_message ->
                    # astore_message with an id -> aupdate_messages). Same path here.
                    stored_msg = rows[0]
                    stored_msg.error = True
                    rows = await astore_message(stored_msg, flow_id=fid, run_id=run_id, user_id=owner)
                stored.append(str(rows[0].id))
            return {"ok": True}

        await job_service.execute_with_status(run_id, run_graph, keep_alive=True)
        if hook:
            await svc.on_flow_output(flow_id=fid, session_id=session_id, job_id=run_id)
            await lfbase.wait_for_jobs()
        runs.append({"session_id": session_id, "workflow_job_id": str(run_id), "message_ids": stored})
        return str(run_id)

    async def manual_flush(session_id: str, embedder_mode: str) -> str:
        """A manual flush of Manual Archive (the flush endpoint's service call), awaited to its end."""
        lfbase.EmbedderMode.mode = embedder_mode
        try:
            job_id = await svc.trigger_ingestion(mb_manual.id, user_id, user_id, session_id)
            await lfbase.wait_for_jobs()
        finally:
            lfbase.EmbedderMode.mode = "ok"
        return job_id

    def qa(q: str, a: str, **kw) -> list[dict]:
        return [{"text": q, "sender": "User"}, {"text": a, "sender": "Machine", "sender_name": "AI", **kw}]

    # ---- session "support-synced": two runs reach Support Memory's threshold (2): auto ingestion
    await flow_run("support-synced", qa("How do I reset my password?", "Use the account page, then 'Reset'."))
    await flow_run("support-synced", qa("Is there 2FA?", "Yes: TOTP apps and WebAuthn keys."))
    step("support-synced: 2 runs, Support Memory auto-ingested")
    # a third run: Research Notes (threshold 3) now ingests; Support Memory has 1 pending run.
    # Its two messages share one timestamp, and an error row and a category='error' row ride along.
    same = clock.next()
    await flow_run("support-synced", [
        {"text": "Can I export my data?", "sender": "User", "timestamp": same},
        {"text": "Yes, as JSON or CSV from Settings.", "sender": "Machine", "sender_name": "AI", "timestamp": same},
        {"text": "Traceback: component failed", "sender": "Machine", "sender_name": "AI", "error": True},
        {"text": "Error: rate limited", "sender": "Machine", "sender_name": "AI", "category": "error"},
        # the shape of Langflow's ErrorMessage (lfx/schema/message.py): both flags
        {"text": "Error building Component: boom", "sender": "Machine", "sender_name": "AI",
         "category": "error", "error": True},
    ])
    step("support-synced: run 3 (equal timestamps, error rows); Research Notes auto-ingested")
    # a fourth run: Support Memory reaches 2 pending runs again and flushes runs 3 and 4 (the error
    # rows are skipped); Research Notes keeps it as 1 pending run.
    await flow_run("support-synced", [
        {"text": "And SSO?", "sender": "User"},
        {"text": "SAML and OIDC on the Business plan.", "sender": "Machine", "sender_name": "AI"},
    ])
    step("support-synced: run 4 pending; Support Memory re-ingested at 2 pending runs")

    # ---- session "support-never": one run, below every threshold: never synced
    await flow_run("support-never", qa("Where are invoices?", "Billing > Invoices."))
    step("support-never: 1 run, never synced")

    # ---- session "support-equal": equal timestamps across a run, then a manual flush of Manual Archive
    t = clock.next()
    await flow_run("support-equal", [
        {"text": "first at T", "sender": "User", "timestamp": t},
        {"text": "second at T", "sender": "Machine", "sender_name": "AI", "timestamp": t},
        {"text": "third at T", "sender": "User", "timestamp": t},
    ])
    job_manual_ok = await manual_flush("support-equal", "ok")
    # newer messages after the flush, one at the cursor's own timestamp (tie broken by id)
    await flow_run("support-equal", [
        {"text": "fourth at T (after flush)", "sender": "User", "timestamp": t},
        {"text": "fifth later", "sender": "Machine", "sender_name": "AI"},
    ])
    step(f"support-equal: manual flush {job_manual_ok} then 1 pending run")

    # ---- session "support-failed": manual flush whose embedder raises -> job FAILED, cursor stays
    await flow_run("support-failed", qa("Why was I charged twice?", "Refund issued; 3-5 days."))
    job_failed = await manual_flush("support-failed", "fail")
    step(f"support-failed: flush {job_failed} failed")

    # ---- session "support-cancelled": manual flush cancelled by the user -> job CANCELLED
    await flow_run("support-cancelled", qa("Cancel my plan", "Done; active until month end."))
    job_cancelled = await manual_flush("support-cancelled", "cancel")
    step(f"support-cancelled: flush {job_cancelled} cancelled")

    # ---- another user's run in a session with the same name: owner-scoped reads must not see it
    await flow_run("support-never", qa("other user's question", "other user's answer"), owner=other_id,
                   fid=other_flow_id, hook=False)
    step("other user's run in session 'support-never' on their own flow")

    oracle = await lfbase.observe(probe_flush=False)
    oracle["langflow_version"] = "1.13.0"
    oracle["uuid4_seed"] = None if args.random_ids else args.seed
    oracle["database"] = "sqlite" if args.sqlite else "postgresql"
    oracle["kb_backend"] = args.kb_backend
    oracle["kb_dir"] = str(Path(args.kb_dir).absolute())
    oracle["embedding"] = {"provider": lfbase.EMBEDDING_PROVIDER, "model": lfbase.EMBEDDING_MODEL,
                           "fake": "langchain_core DeterministicFakeEmbedding", "dimension": lfbase.EMBEDDING_DIM}
    oracle["users"] = {"owner": str(user_id), "other": str(other_id)}
    oracle["flows"] = {"owner": str(flow_id), "other": str(other_flow_id)}
    oracle["runs"] = runs
    oracle["manual_jobs"] = {"completed": job_manual_ok, "failed": job_failed, "cancelled": job_cancelled}
    oracle["steps"] = log["steps"]
    return oracle


async def main() -> int:
    args = parse_args()
    lfbase.configure_env(args)
    if not args.random_ids:
        lfbase.seed_uuid4(args.seed)
    t0 = time.time()
    lfbase.install_fake_embedder()

    def quiet_expected(loop, context):
        # The FAILED job's task re-raises the embedder's error into the job queue's fire-and-forget
        # task, which asyncio then reports as "never retrieved". That failure is intended.
        exc = context.get("exception")
        if isinstance(exc, RuntimeError) and "oracle: the embedding provider" in str(exc):
            return
        loop.default_exception_handler(context)

    asyncio.get_running_loop().set_exception_handler(quiet_expected)
    try:
        oracle = await build(args)
    finally:
        await lfbase.stop_langflow()
    oracle["build_seconds"] = round(time.time() - t0, 1)
    lfbase.dump(oracle, args.out)
    print(f"[build_db] wrote {args.out} in {oracle['build_seconds']}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
