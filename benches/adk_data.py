"""Writes a Google ADK session file at scale with ADK's own code: its Runner, a scripted model
(no network) and its SqliteSessionService, then copies the session's rows under new session ids
so that a page of the sessions list holds many long sessions, as a busy deployment's does.

Session `long` gets TURNS turns of the `coordinator` agent: every other turn it calls its
`lookup` tool once (a call event, the tool's response event, then its answer), else it answers
at once; every answer is a few hundred characters. The runner reads the whole session back on
every turn, so a long session is written once and then repeated: its events are appended again
REPEATS times after it, each with a new id and later instants (in the column and in the event's
JSON, with SQLite's `json_set`, which keeps the text's order and compact form). Its rows are
then copied COPIES times as `long-1`, `long-2`, … (event ids are unique per session in ADK's
tables, so they are kept).

`read` is ADK's own read, the reference memscope is measured against: `get_session` of one
session, or of every session `list_sessions` names (what a list of them with their events
costs ADK).

Usage: python adk_data.py generate PATH TURNS REPEATS COPIES    (PATH must not exist)
       python adk_data.py read PATH SESSION|--all
"""

import asyncio
import sqlite3
import sys

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

APP = "helpdesk"
USER = "alice"
ANSWER = (
    "Here is what the knowledge base says about it, with the caveats the team noted last week: "
    "the figures are from the quarterly report, the region is the one on the account, and the "
    "numbers were checked twice. If anything looks off, ask again with the order number. "
)


class ScriptedLlm(BaseLlm):
    """Calls `lookup` once on every other turn, then answers; answers at once on the others."""

    turn: int = 0

    async def generate_content_async(self, llm_request, stream=False):
        last = llm_request.contents[-1]
        answered_tool = any(p.function_response for p in last.parts or [])
        if not answered_tool and self.turn % 2 == 0:
            part = types.Part(
                function_call=types.FunctionCall(
                    name="lookup", args={"query": f"order {self.turn}", "detail": True}
                )
            )
        else:
            part = types.Part(text=f"({self.turn}) {ANSWER}")
        if not answered_tool:
            self.turn += 1
        yield LlmResponse(
            content=types.Content(role="model", parts=[part]),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=100, candidates_token_count=40, total_token_count=140
            ),
        )


def lookup(query: str, detail: bool = False) -> dict:
    """Looks an order up."""
    return {"query": query, "status": "shipped", "detail": detail, "items": [1, 2, 3]}


async def build(path, turns):
    service = SqliteSessionService(db_path=path)
    agent = LlmAgent(
        name="coordinator",
        model=ScriptedLlm(model="scripted"),
        instruction="You answer questions about orders.",
        tools=[lookup],
    )
    runner = Runner(app_name=APP, agent=agent, session_service=service)
    await service.create_session(app_name=APP, user_id=USER, session_id="long", state={"topic": "orders"})
    for n in range(turns):
        message = types.Content(role="user", parts=[types.Part(text=f"Where is order {n}? It was due last week.")])
        async for _ in runner.run_async(user_id=USER, session_id="long", new_message=message):
            pass


def copy(path, repeats, copies):
    db = sqlite3.connect(path)
    first, last = db.execute("SELECT MIN(timestamp), MAX(timestamp) FROM events").fetchone()
    span = last - first + 1.0
    for k in range(1, repeats + 1):
        db.execute(
            "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) "
            "SELECT id || '-r' || ?1, app_name, user_id, session_id, invocation_id || '-r' || ?1, "
            "timestamp + ?1 * ?2, json_set(event_data, '$.id', id || '-r' || ?1, "
            "'$.invocation_id', invocation_id || '-r' || ?1, '$.timestamp', timestamp + ?1 * ?2) "
            "FROM events WHERE session_id = 'long' AND id NOT LIKE '%-r%'",
            (k, span),
        )
    for table, column in (("sessions", "id"), ("events", "session_id")):
        names = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        chosen = ", ".join(f"{name} || '-' || ?" if name == column else name for name in names)
        for k in range(1, copies + 1):
            db.execute(
                f"INSERT INTO {table} ({', '.join(names)}) SELECT {chosen} FROM {table} WHERE {column} = 'long'",
                (k,),
            )
    db.commit()
    events = db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    sessions = db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    print(f"{path}: {sessions} sessions, {events} events")


async def read(path, which):
    service = SqliteSessionService(db_path=path)
    if which == "--all":
        listed = await service.list_sessions(app_name=APP, user_id=USER)
        ids = [session.id for session in listed.sessions]
    else:
        ids = [which]
    events = 0
    for session_id in ids:
        session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
        events += len(session.events)
    print(f"{len(ids)} sessions, {events} events")


def main():
    if sys.argv[1] == "generate":
        path, turns, repeats, copies = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
        asyncio.run(build(path, turns))
        copy(path, repeats, copies)
    else:
        asyncio.run(read(sys.argv[2], sys.argv[3]))


if __name__ == "__main__":
    main()
