"""Builds OpenAI Agents SDK session databases with the SDK's own Runner, a scripted model
(`agents.testing.ScriptedModel`) and the SDK's session classes, and records, as the oracle
memscope's `history` is compared with, exactly what the Runner sends the model of each session on
the next turn under several `SessionSettings(limit=N)`.

The stories (SQLiteSession, and SQLAlchemySession on PostgreSQL, where the newest row of `tools`
is then dated an hour back, as a writer whose clock lagged leaves it):
- `tools`: two turns; the first calls the `lookup` tool (a reasoning item, the call, its output,
  the answer);
- `approval`: a turn whose tool call waits for an approval that never comes: the call is stored
  without its output, as a run that died leaves it;
- `long`: 24 turns, a tool call every third one, and one row that is not JSON (written by hand, as
  a damaged row would be), so windows start inside a call and widen past the bad row;
- `legacy`: items written with `add_items` as older SDKs and other writers left them: the
  internal metadata keys, a duplicated tool output, a reasoning item before a call that has no
  output, a compaction item;
- `secret`: `tools` through an EncryptedSession (ttl 600 s) over SQLiteSession, then one envelope
  sealed an hour ago and one plaintext item, both of which it skips (SQLite only);
- in a second SQLite file, AdvancedSQLiteSession `branched`: three turns with usage stored, a
  branch from turn 2 with two turns of its own, then one more turn on `main`.

The oracle's next turn reads the session through a wrapper whose writes do nothing, so every limit
sees the same stored session; the turn's own input (the last item, "NEXT") is taken off.

With --read FILE it builds nothing: it records the same oracle for every session of an existing
file (memscope's demo file), through SQLiteSession, or AdvancedSQLiteSession for each branch of a
session with structure rows.

Usage (SQLite files must not exist; the PostgreSQL database must exist and be empty):
    python build_sessions.py --sqlite PATH --advanced PATH --out ORACLE.json
    python build_sessions.py --postgres URL --out ORACLE.json
    python build_sessions.py --read FILE --out ORACLE.json
"""

import argparse
import asyncio
import json
import sqlite3
import sys
import time

from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
from agents.extensions.memory import AdvancedSQLiteSession, EncryptedSession, SQLAlchemySession
from agents.extensions.memory.encrypt_session import (
    _derive_session_fernet_key,
    _ensure_fernet_key_bytes,
)
from agents.memory import SessionABC, SessionSettings
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.usage import Usage
from openai.types.responses import ResponseReasoningItem
from sqlalchemy import text as sql_text

LIMITS = [None, 0, 1, 2, 3, 4, 5, 7, 10, 25, 1000]
# The master key of `secret`, as SESSION_ENCRYPTION_KEY gives it.
ENCRYPTION_KEY = "memscope-test-master-key"
TTL = 600
NEXT = "NEXT"


@function_tool
def lookup(query: str) -> str:
    """Looks a fact up."""
    return f"fact about {query}"


@function_tool(needs_approval=True)
def transfer(amount: int) -> str:
    """Moves money; a person must approve it."""
    return f"moved {amount}"


def scripted(steps, tokens=0):
    """A scripted model whose every reply reports `tokens` in and a tenth of them out."""
    usage = Usage(requests=1, input_tokens=tokens, output_tokens=tokens // 10, total_tokens=tokens + tokens // 10)
    return ScriptedModel(steps, default_usage=usage)


def reasoning(item_id):
    return ResponseReasoningItem(id=item_id, summary=[], type="reasoning")


def agent(model):
    return Agent(name="assistant", model=model, tools=[lookup, transfer])


async def tool_turn(session, question, call_id):
    model = scripted(
        [
            [reasoning(f"rs_{call_id}"), function_call("lookup", {"query": question}, call_id=call_id)],
            [assistant_message(f"Here is what I found on {question}.", item_id=f"msg_{call_id}")],
        ],
        tokens=100 + len(question),
    )
    return await Runner.run(agent(model), question, session=session)


async def plain_turn(session, question, answer_id):
    model = scripted([[assistant_message(f"Answer to {question}.", item_id=answer_id)]], 50 + len(question))
    return await Runner.run(agent(model), question, session=session)


async def approval_turn(session, call_id):
    model = ScriptedModel(
        [[reasoning(f"rs_{call_id}"), function_call("transfer", {"amount": 100}, call_id=call_id)]]
    )
    result = await Runner.run(agent(model), "Send 100 to Bob", session=session)
    assert result.interruptions, "the transfer should wait for an approval"


async def tools_story(session):
    await tool_turn(session, "the capital of France", "call_tools_1")
    await plain_turn(session, "thanks", "msg_tools_2")


async def approval_story(session):
    await plain_turn(session, "hello", "msg_approval_1")
    await approval_turn(session, "call_approval_2")


async def long_story(session):
    for turn in range(1, 25):
        if turn % 3 == 0:
            await tool_turn(session, f"topic {turn}", f"call_long_{turn}")
        else:
            await plain_turn(session, f"question {turn}", f"msg_long_{turn}")


async def legacy_story(session):
    await session.add_items(
        [
            {"role": "user", "content": "What is in the file?"},
            {
                "type": "function_call",
                "call_id": "call_legacy_1",
                "name": "lookup",
                "arguments": "{\"query\": \"file\"}",
                "id": "fc_legacy_1",
                "_agents_tool_description": "Looks a fact up.",
                "_agents_tool_title": "Lookup",
                "created_by": "assistant",
            },
            {"type": "function_call_output", "call_id": "call_legacy_1", "output": "first"},
            {"type": "function_call_output", "call_id": "call_legacy_1", "output": "second"},
            {"type": "reasoning", "id": "rs_legacy_2", "summary": []},
            {
                "type": "function_call",
                "call_id": "call_legacy_2",
                "name": "lookup",
                "arguments": "{}",
                "id": "fc_legacy_2",
            },
            {"type": "compaction", "id": "cmp_legacy", "encrypted_content": "opaque"},
            {"role": "developer", "content": "Be brief."},
            {"role": "system", "content": "You are helpful."},
            {
                "type": "message",
                "role": "assistant",
                "id": "msg_legacy",
                "content": [{"type": "output_text", "text": "It holds two facts.", "annotations": []}],
            },
        ]
    )


class ReadOnly(SessionABC):
    """The session as the Runner reads it; its writes go nowhere."""

    def __init__(self, session, branch=None):
        self.session = session
        self.session_id = session.session_id
        self.session_settings = None
        self.branch = branch

    async def get_items(self, limit=None):
        if self.branch is not None:
            return await self.session.get_items(limit, branch_id=self.branch)
        return await self.session.get_items(limit)

    async def add_items(self, items):
        return None

    async def pop_item(self):
        return None

    async def clear_session(self):
        return None


async def model_input(session, limit, branch=None):
    """What the Runner sends the model of `session` on the next turn, under `limit`."""
    model = ScriptedModel([[assistant_message("ok", item_id="msg_next")]])
    config = RunConfig(session_settings=SessionSettings(limit=limit))
    await Runner.run(agent(model), NEXT, session=ReadOnly(session, branch), run_config=config)
    sent = model.first_call.input
    assert sent[-1] == {"content": NEXT, "role": "user"}, sent[-1]
    return sent[:-1]


async def record(oracle, session, name, branch=None):
    key = name if branch is None else f"{name}@{branch}"
    oracle["inputs"][key] = {
        "session": name,
        "branch": branch,
        "limits": [
            {"limit": limit, "input": await model_input(session, limit, branch)}
            for limit in LIMITS
        ],
        "stored": len(await session.get_items(branch_id=branch) if branch else await session.get_items()),
        "items": await session.get_items(branch_id=branch) if branch else await session.get_items(),
    }


def corrupt_one_row(path, session_id):
    """Writes one row that is not JSON into `session_id`, among its newest items."""
    db = sqlite3.connect(path)
    (target,) = db.execute(
        "SELECT id FROM agent_messages WHERE session_id = ? ORDER BY id DESC LIMIT 1 OFFSET 5",
        (session_id,),
    ).fetchone()
    db.execute("UPDATE agent_messages SET message_data = ? WHERE id = ?", ("{not json", target))
    db.commit()
    db.close()


STORIES = {"tools": tools_story, "approval": approval_story, "long": long_story, "legacy": legacy_story}


async def build_sqlite(path, oracle):
    sessions = {name: SQLiteSession(name, path) for name in STORIES}
    for name, story in STORIES.items():
        await story(sessions[name])
    corrupt_one_row(path, "long")
    for name, session in sessions.items():
        await record(oracle, session, name)
        session.close()
    oracle["unreadable"] = {"long": 1}
    await build_encrypted(path, oracle)


async def build_encrypted(path, oracle):
    underlying = SQLiteSession("secret", path)
    secret = EncryptedSession("secret", underlying, ENCRYPTION_KEY, ttl=TTL)
    await tools_story(secret)
    cipher = _derive_session_fernet_key(_ensure_fernet_key_bytes(ENCRYPTION_KEY), "secret")
    old = json.dumps({"role": "user", "content": "sealed an hour ago"}).encode()
    token = cipher.encrypt_at_time(old, int(time.time()) - 3600).decode()
    await underlying.add_items(
        [
            {"__enc__": 1, "v": 1, "kid": "hkdf-v1", "payload": token},
            {"role": "user", "content": "written in plaintext"},
        ]
    )
    await record(oracle, secret, "secret")
    oracle["inputs"]["secret"]["ttl"] = TTL
    oracle["inputs"]["secret"]["json_rows"] = len(await underlying.get_items())
    underlying.close()


async def build_advanced(path, oracle):
    session = AdvancedSQLiteSession(session_id="branched", db_path=path, create_tables=True)
    usage = {}
    for run in [
        lambda: tool_turn(session, "the weather", "call_adv_1"),
        lambda: plain_turn(session, "and tomorrow?", "msg_adv_2"),
        lambda: plain_turn(session, "thanks", "msg_adv_3"),
    ]:
        result = await run()
        await session.store_run_usage(result)
    branch = await session.create_branch_from_turn(2, "retry")
    for run in [
        lambda: plain_turn(session, "and next week?", "msg_retry_2"),
        lambda: tool_turn(session, "the pressure", "call_retry_3"),
    ]:
        result = await run()
        await session.store_run_usage(result)
    await session.switch_to_branch("main")
    result = await plain_turn(session, "bye", "msg_adv_4")
    await session.store_run_usage(result)
    for branch_id in ["main", branch]:
        await record(oracle, session, "branched", branch_id)
        usage[branch_id] = await session.get_session_usage(branch_id)
    oracle["branches"] = await session.list_branches()
    oracle["usage"] = {
        "branches": usage,
        "turns": {b: await session.get_turn_usage(branch_id=b) for b in ["main", branch]},
    }
    session.close()


async def build_postgres(url, oracle):
    url = url.replace("postgres://", "postgresql+asyncpg://", 1)
    sessions = {
        name: SQLAlchemySession.from_url(name, url=url, create_tables=True) for name in STORIES
    }
    for name, story in STORIES.items():
        await story(sessions[name])
    # A writer whose clock lagged: SQLAlchemySession orders by created_at before id.
    async with sessions["tools"].engine.begin() as connection:
        await connection.execute(
            sql_text(
                "UPDATE agent_messages SET created_at = created_at - interval '1 hour' "
                "WHERE id = (SELECT max(id) FROM agent_messages WHERE session_id = 'tools')"
            )
        )
    for name, session in sessions.items():
        await record(oracle, session, name)
        await session.engine.dispose()


async def read_postgres(url, oracle):
    """Records the oracle of every session of the PostgreSQL database at `url`, changing nothing."""
    url = url.replace("postgres://", "postgresql+asyncpg://", 1)
    probe = SQLAlchemySession.from_url("probe", url=url)
    async with probe.engine.connect() as connection:
        rows = await connection.execute(sql_text("SELECT session_id FROM agent_sessions ORDER BY 1"))
        names = [row[0] for row in rows]
    await probe.engine.dispose()
    for name in names:
        session = SQLAlchemySession.from_url(name, url=url)
        await record(oracle, session, name)
        await session.engine.dispose()


async def read_existing(path, oracle):
    """Records the oracle of every session of the file at `path`, changing nothing in it."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    sessions = [row[0] for row in db.execute("SELECT session_id FROM agent_sessions ORDER BY 1")]
    has_structure = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'message_structure'"
    ).fetchone()
    advanced = {
        row[0]: [b[0] for b in db.execute(
            "SELECT DISTINCT branch_id FROM message_structure WHERE session_id = ?", (row[0],)
        )]
        for row in (db.execute("SELECT DISTINCT session_id FROM message_structure") if has_structure else [])
    }
    db.close()
    for name in sessions:
        if name in advanced:
            session = AdvancedSQLiteSession(session_id=name, db_path=path)
            for branch in advanced[name]:
                await record(oracle, session, name, branch)
            oracle.setdefault("branches_of", {})[name] = await session.list_branches()
        else:
            session = SQLiteSession(name, path)
            await record(oracle, session, name)
        session.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sqlite")
    parser.add_argument("--advanced")
    parser.add_argument("--postgres")
    parser.add_argument("--read")
    parser.add_argument("--read-postgres")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    oracle = {"inputs": {}, "limits": LIMITS}
    if args.sqlite:
        asyncio.run(build_sqlite(args.sqlite, oracle))
    if args.advanced:
        asyncio.run(build_advanced(args.advanced, oracle))
    if args.postgres:
        asyncio.run(build_postgres(args.postgres, oracle))
    if args.read:
        asyncio.run(read_existing(args.read, oracle))
    if args.read_postgres:
        asyncio.run(read_postgres(args.read_postgres, oracle))
    with open(args.out, "w") as out:
        json.dump(oracle, out, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
