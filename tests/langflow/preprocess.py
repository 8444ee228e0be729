#!/usr/bin/env python3
"""Add a memory base with preprocessing to a database build_db.py made, through Langflow's own
``MemoryBaseService.create`` (preprocessing can only be chosen when a base is made).

    preprocess.py (--sqlite PATH | --postgres URL) --kb-dir DIR --name NAME [--model MODEL]

Langflow checks that the preprocessing model's provider has an API key before it accepts the
base; a placeholder key is set for that check only: nothing here calls the model. Prints the new
base's id.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lfbase  # noqa: E402


def parse_args():
    p = lfbase.argument_parser(__doc__, sqlite_help="path of the SQLite database file",
                               postgres_help="URL of the PostgreSQL database")
    p.add_argument("--name", required=True, help="the new memory base's name")
    p.add_argument("--model", default="gpt-4o-mini", help="its preprocessing model (default gpt-4o-mini)")
    return p.parse_args()


async def main() -> int:
    args = parse_args()
    lfbase.configure_env(args)
    os.environ.setdefault("OPENAI_API_KEY", "sk-placeholder-never-called")
    await lfbase.start_langflow()
    try:
        from langflow.services.database.models.flow.model import Flow
        from langflow.services.database.models.memory_base.model import MemoryBaseCreate
        from langflow.services.deps import get_memory_base_service, session_scope
        from sqlmodel import select

        async with session_scope() as db:
            flow = (await db.exec(select(Flow).where(Flow.name == "Support Chat"))).one()
        base = await get_memory_base_service().create(
            MemoryBaseCreate(
                name=args.name,
                flow_id=flow.id,
                threshold=1,
                auto_capture=False,
                embedding_model=lfbase.EMBEDDING_MODEL,
                embedding_provider=lfbase.EMBEDDING_PROVIDER,
                preprocessing=True,
                preproc_model=args.model,
                preproc_instructions="Keep only the customer's account facts.",
            ),
            flow.user_id,
        )
        print(base.id, flush=True)
    finally:
        await lfbase.stop_langflow()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
