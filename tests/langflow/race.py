#!/usr/bin/env python3
"""Langflow 1.13.0's own flush of one memory-base session, timed against memscope's sync of it.

    race.py (--sqlite PATH | --postgres URL) --kb-dir DIR --base NAME --session ID
            (--hold-until FILE | --start-when FILE)

The flush is the one Langflow's flush endpoint makes (``MemoryBaseService.trigger_ingestion``:
its dedupe key, its job, its task in langflow/services/memory_base/task.py with its per-session
lock, its storage fence and its source check before every write), with the oracle's embedder.

* ``--hold-until FILE``: Langflow flushes at once, and its task stops inside its embedding call
  (job created and in progress, its per-session lock held, nothing written yet), prints
  ``holding`` and waits there until FILE exists.
* ``--start-when FILE``: Langflow starts, prints ``ready``, and flushes once FILE exists (memscope
  is then syncing the session).

Its last line on stdout is one JSON object: the flush's job and status, or the error Langflow's
endpoint would answer with (``DuplicateJobError``: HTTP 409).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lfbase  # noqa: E402


def parse_args():
    p = lfbase.argument_parser(__doc__, sqlite_help="path of the SQLite database file",
                               postgres_help="URL of the PostgreSQL database")
    p.add_argument("--base", required=True, help="the memory base's name")
    p.add_argument("--session", required=True, help="the session to flush")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--hold-until", help="hold inside the embedding call until this file exists")
    g.add_argument("--start-when", help="flush once this file exists")
    return p.parse_args()


def say(line: str) -> None:
    print(line, flush=True)


async def wait_for(path: Path, timeout: float = 300.0) -> None:
    deadline = asyncio.get_event_loop().time() + timeout
    while not path.exists():
        if asyncio.get_event_loop().time() > deadline:
            msg = f"{path} never appeared"
            raise TimeoutError(msg)
        await asyncio.sleep(0.05)


def install_holding_embedder(release: Path | None) -> None:
    """The oracle's embedder, stopping at its first call until ``release`` exists."""
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langflow.api.utils.kb_helpers import KBIngestionHelper

    class Holding(DeterministicFakeEmbedding):
        async def aembed_documents(self, texts):
            if release is not None and not release.exists():
                say("holding")
                await wait_for(release)
            return self.embed_documents(texts)

    async def build_embeddings(provider, model, current_user):  # noqa: ARG001 - same signature
        return Holding(size=lfbase.EMBEDDING_DIM)

    KBIngestionHelper.build_embeddings = staticmethod(build_embeddings)


async def flush(args) -> dict:
    from langflow.services.database.models.jobs.model import Job
    from langflow.services.database.models.memory_base.model import MemoryBase
    from langflow.services.deps import get_memory_base_service, session_scope
    from langflow.services.jobs import DuplicateJobError
    from sqlmodel import select

    async with session_scope() as db:
        mb = (await db.exec(select(MemoryBase).where(MemoryBase.name == args.base))).one()
    try:
        job_id = await get_memory_base_service().trigger_ingestion(mb.id, mb.user_id, mb.user_id, args.session)
    except DuplicateJobError as exc:
        return {"refused": "DuplicateJobError", "message": str(exc)}
    await lfbase.wait_for_jobs(timeout=600)
    async with session_scope() as db:
        job = (await db.exec(select(Job).where(Job.job_id == __import__("uuid").UUID(job_id)))).one()
    return {"job_id": job_id, "status": lfbase.jsonable(job.status), "error": lfbase.jsonable(job.error)}


async def main() -> int:
    args = parse_args()
    lfbase.configure_env(args)
    install_holding_embedder(Path(args.hold_until) if args.hold_until else None)
    await lfbase.start_langflow()
    try:
        if args.start_when:
            say("ready")
            await wait_for(Path(args.start_when))
        result = await flush(args)
    finally:
        await lfbase.stop_langflow()
    say(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
