#!/usr/bin/env python3
"""Build a Langflow 1.13.0 database of chat sessions with Langflow's own message functions, and
write what its Agent's chat memory reads from it.

    agent_history_db.py (--sqlite PATH | --postgres URL) --kb-dir DIR --out ORACLE.json

Messages are stored through ``langflow.memory.astore_message`` and ``aadd_messages`` (the error
flag set the way Langflow sets it: the stored message sent again). The oracle holds, for each
argument combination in ``CASES``, the list ``aget_agent_chat_history`` (lfx
``components/models_and_agents/memory.py``, what the Agent's ``get_memory_data`` calls) returns:
ids and texts, in its order.

What the database holds:

* two flows of the owner, "Support Chat" and "Sales Chat", both with a session "New Session 0"
  (the playground's default name, issue #13059), and a flow of a second user with that session too;
* "long": 130 messages, one second apart, some sharing a timestamp (ties across the window's edge);
* error rows: category ``error`` with the flag false (fed to the model) and with it true (not);
* context ids on part of "New Session 0" of "Support Chat";
* a message of the second user in the owner's flow and session.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lfbase  # noqa: E402

T0 = datetime(2026, 1, 5, 9, 0, 0, tzinfo=timezone.utc)
SHARED = "New Session 0"


def parse_args():
    p = lfbase.argument_parser(__doc__, sqlite_help="path of the SQLite database file to create",
                               postgres_help="URL of an empty PostgreSQL database the caller created")
    p.add_argument("--out", required=True, help="where to write the oracle JSON")
    p.add_argument("--seed", type=int, default=2626, help="seed for Langflow's uuid4 ids")
    return p.parse_args()


async def build() -> dict:
    from langflow.initial_setup.setup import get_or_create_default_folder
    from langflow.memory import aadd_messages, astore_message
    from langflow.schema.message import Message
    from langflow.services.auth.utils import get_password_hash
    from langflow.services.database.models.flow.model import Flow
    from langflow.services.database.models.user.model import User, UserCreate
    from langflow.services.deps import session_scope
    from lfx.components.models_and_agents.memory import aget_agent_chat_history

    await lfbase.start_langflow()

    async def add_user(username: str):
        async with session_scope() as db:
            user = User.model_validate(UserCreate(username=username, password="oracle-pass"), from_attributes=True)
            user.password = get_password_hash("oracle-pass")
            user.is_active = True
            db.add(user)
            await db.commit()
            await db.refresh(user)
            folder = await get_or_create_default_folder(db, user.id)
            return user.id, folder.id

    async def add_flow(name: str, owner, folder):
        async with session_scope() as db:
            flow = Flow(name=name, data={"nodes": [], "edges": []}, user_id=owner, folder_id=folder)
            db.add(flow)
            await db.commit()
            await db.refresh(flow)
            return flow.id

    owner, owner_folder = await add_user("history-owner")
    other, other_folder = await add_user("history-other")
    support = await add_flow("Support Chat", owner, owner_folder)
    sales = await add_flow("Sales Chat", owner, owner_folder)
    theirs = await add_flow("Their Chat", other, other_folder)

    clock = {"t": T0}

    def tick(step: float = 1.0) -> datetime:
        clock["t"] = clock["t"] + timedelta(seconds=step)
        return clock["t"]

    def message(session_id: str, text: str, *, sender="User", ts=None, category="message", context_id=None):
        return Message(
            text=text,
            sender=sender,
            sender_name="User" if sender == "User" else "AI",
            session_id=session_id,
            context_id=context_id,
            timestamp=(ts or tick()).strftime("%Y-%m-%d %H:%M:%S.%f UTC"),
            category=category,
        )

    async def store(msg, *, flow_id, user_id, run_id=None, error=False) -> None:
        rows = await astore_message(msg, flow_id=flow_id, run_id=run_id, user_id=user_id)
        if error:
            # MessageTable.from_message drops ``error``: Langflow sets it when the stored message
            # is sent again (Component.send_message -> astore_message with an id).
            stored = rows[0]
            stored.error = True
            await astore_message(stored, flow_id=flow_id, run_id=run_id, user_id=user_id)

    import uuid as _uuid

    # ---- "New Session 0" in Support Chat: runs, error rows, context ids, another owner's row
    for turn in range(3):
        run = _uuid.uuid4()
        await store(message(SHARED, f"support question {turn}"), flow_id=support, user_id=owner, run_id=run)
        await store(message(SHARED, f"support answer {turn}", sender="Machine"), flow_id=support, user_id=owner,
                    run_id=run)
    run = _uuid.uuid4()
    await store(message(SHARED, "Error: rate limited", sender="Machine", category="error"),
                flow_id=support, user_id=owner, run_id=run)
    await store(message(SHARED, "Error building Component: boom", sender="Machine", category="error"),
                flow_id=support, user_id=owner, run_id=run, error=True)
    await store(message(SHARED, "Traceback: flagged but not an error category", sender="Machine"),
                flow_id=support, user_id=owner, run_id=run, error=True)
    for turn, ctx in enumerate(["ctx-a", "ctx-b", "ctx-a"]):
        await store(message(SHARED, f"in {ctx} #{turn}", context_id=ctx), flow_id=support, user_id=owner)
    await store(message(SHARED, "the other user's words in the owner's flow"), flow_id=support, user_id=other)
    # equal timestamps: three rows at one instant, written in one call
    same = tick()
    await aadd_messages([message(SHARED, f"tied {n}", ts=same) for n in range(3)], flow_id=support, user_id=owner)

    # ---- "New Session 0" in Sales Chat and in the second user's flow: must never leak
    for turn in range(2):
        await store(message(SHARED, f"sales question {turn}"), flow_id=sales, user_id=owner)
    await store(message(SHARED, "their question"), flow_id=theirs, user_id=other)

    # ---- "long": 130 messages of Sales Chat, every tenth pair sharing a timestamp
    ts = None
    for n in range(130):
        ts = ts if (n % 10 == 1 and ts is not None) else tick()
        await store(message("long", f"long {n}", sender="User" if n % 2 == 0 else "Machine", ts=ts),
                    flow_id=sales, user_id=owner)

    cases = [
        {"name": "support default", "session_id": SHARED, "flow": support, "n_messages": 100},
        {"name": "support window 4", "session_id": SHARED, "flow": support, "n_messages": 4},
        {"name": "support window 2 (inside the tie)", "session_id": SHARED, "flow": support, "n_messages": 2},
        {"name": "support memory off", "session_id": SHARED, "flow": support, "n_messages": 0},
        {"name": "support unset window", "session_id": SHARED, "flow": support, "n_messages": None},
        {"name": "support ctx-a", "session_id": SHARED, "flow": support, "n_messages": 100, "context_id": "ctx-a"},
        {"name": "support ctx-b", "session_id": SHARED, "flow": support, "n_messages": 100, "context_id": "ctx-b"},
        {"name": "support empty context", "session_id": SHARED, "flow": support, "n_messages": 100,
         "context_id": ""},
        {"name": "support as the other user", "session_id": SHARED, "flow": support, "n_messages": 100,
         "user": other},
        {"name": "sales shared session", "session_id": SHARED, "flow": sales, "n_messages": 100},
        {"name": "their shared session", "session_id": SHARED, "flow": theirs, "n_messages": 100, "user": other},
        {"name": "long default", "session_id": "long", "flow": sales, "n_messages": 100},
        {"name": "long window 9 (edge inside a tie)", "session_id": "long", "flow": sales, "n_messages": 9},
        {"name": "long window 130", "session_id": "long", "flow": sales, "n_messages": 130},
        {"name": "long window 500", "session_id": "long", "flow": sales, "n_messages": 500},
        {"name": "long in the wrong flow", "session_id": "long", "flow": support, "n_messages": 100},
    ]
    results = []
    for case in cases:
        user = case.get("user", owner)
        got = await aget_agent_chat_history(
            session_id=case["session_id"],
            flow_id=str(case["flow"]),
            context_id=case.get("context_id"),
            n_messages=case["n_messages"],
            user_id=str(user),
        )
        results.append({
            "name": case["name"],
            "session_id": case["session_id"],
            "flow_id": str(case["flow"]),
            "user_id": str(user),
            "context_id": case.get("context_id"),
            "n_messages": case["n_messages"],
            "ids": [str(m.id) for m in got],
            "texts": [m.text for m in got],
        })
    return {
        "langflow_version": "1.13.0",
        "users": {"owner": str(owner), "other": str(other)},
        "flows": {"Support Chat": str(support), "Sales Chat": str(sales), "Their Chat": str(theirs)},
        "cases": results,
    }


async def main() -> int:
    args = parse_args()
    lfbase.configure_env(args)
    lfbase.seed_uuid4(args.seed)
    t0 = time.time()
    try:
        oracle = await build()
    finally:
        await lfbase.stop_langflow()
    oracle["database"] = "sqlite" if args.sqlite else "postgresql"
    oracle["build_seconds"] = round(time.time() - t0, 1)
    lfbase.dump(oracle, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
