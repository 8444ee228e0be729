"""Builds Google ADK session databases with ADK's own Runner, a scripted model (a `BaseLlm`
subclass that answers from a script and records each request's `contents`) and ADK's session
services, and records, as the oracle memscope's `history` is compared with, exactly the contents
ADK sends the model of each session on the next turn, and which agent it sends them to.

The agents: `coordinator` (the root; a `lookup` tool) with one sub-agent, `specialist` (the same
tool). The stories, all under app `helpdesk`, user `alice`, unless said:
The `lookup` tool writes state: `user:lookups` (every query so far, growing), `app:region` and a
`temp:` key ADK never stores.

- `tools`: the coordinator calls `lookup` twice (once with an id of the model's, once without, so
  ADK gives it an `adk-` id) and answers; a second plain turn;
- `transfer`: the coordinator transfers to the specialist, which calls `lookup` and answers; the
  next turn is the specialist's, and sees the coordinator's work quoted;
- `handback`: as `transfer`, then the specialist hands back to the coordinator, which answers:
  the next turn is the coordinator's, and sees the specialist's work quoted;
- `rewind`: three turns, a rewind before the second, one more turn;
- `compacted`: an app whose `EventsCompactionConfig(compaction_interval=2, overlap_size=1)` has
  ADK's `LlmEventSummarizer` (on the scripted model) summarise every two turns; five turns;
- `unanswered`: a turn, then a stored call that never got its response (as a run that died
  leaves it), then a turn;
- `long`: 30 turns, a tool call every third;
- `shared`: one id under two users (`alice`, `bob`) and another app (`billing`, user `alice`),
  each a plain turn: ambiguous without --app/--user. The oracle records each.

The next turn reads the session through the service with its writes kept in memory only
(`BaseSessionService.append_event`), so the database is left as built; its own input ("NEXT") is
taken off the recorded contents.

Usage (the file must not exist; the PostgreSQL database must exist and be empty):
    python build_sessions.py --sqlite PATH --out ORACLE.json        (SqliteSessionService)
    python build_sessions.py --database URL --out ORACLE.json       (DatabaseSessionService)
    python build_sessions.py --database-v0 URL --out ORACLE.json    (its old schema, actions pickled)
    python build_sessions.py --read-sqlite PATH --out ORACLE.json   (an existing file, e.g. the demo)
"""

import argparse
import asyncio
import collections
import json
import logging
import sys

from google.adk.agents import LlmAgent
from google.adk.apps.app import App, EventsCompactionConfig
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.tool_context import ToolContext
from google.genai import types

NEXT = "NEXT"
APP = "helpdesk"
USER = "alice"

# What each scripted model answers next, by model name; an empty script answers "ok".
SCRIPTS = collections.defaultdict(collections.deque)
# Each request's contents, in order, with the model it went to.
REQUESTS = []


class ScriptedLlm(BaseLlm):
    """Answers from SCRIPTS[self.model] and records each request's contents."""

    async def generate_content_async(self, llm_request, stream=False):
        REQUESTS.append((self.model, list(llm_request.contents)))
        script = SCRIPTS[self.model]
        reply = script.popleft() if script else types.Part(text="ok")
        parts = reply if isinstance(reply, list) else [reply]
        tokens = sum(len(json.dumps(c.model_dump(mode="json", exclude_none=True))) for c in llm_request.contents)
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=tokens // 4,
                candidates_token_count=7,
                total_token_count=tokens // 4 + 7,
            ),
        )


def lookup(query: str, tool_context: ToolContext, detail: bool = False) -> dict:
    """Looks a fact up; remembers every query for the user, and the region for the app."""
    tool_context.state["user:lookups"] = tool_context.state.get("user:lookups", []) + [query]
    tool_context.state["app:region"] = "eu"
    tool_context.state["temp:scratch"] = query
    return {
        "query": query,
        "answer": f"fact about {query}",
        "source": None,
        "verified": True,
        "score": 0.5,
        "tags": ["kb", "it's"],
    }


def call(name, args, call_id=None):
    return types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))


def text(value):
    return types.Part(text=value)


def agents():
    specialist = LlmAgent(
        name="specialist",
        model=ScriptedLlm(model="specialist-model"),
        instruction="You answer hard questions.",
        description="Answers hard questions.",
        tools=[lookup],
    )
    coordinator = LlmAgent(
        name="coordinator",
        model=ScriptedLlm(model="coordinator-model"),
        instruction="You route questions.",
        tools=[lookup],
        sub_agents=[specialist],
    )
    return coordinator


def app(name=APP, compaction=False):
    config = None
    if compaction:
        config = EventsCompactionConfig(
            compaction_interval=2,
            overlap_size=1,
            summarizer=LlmEventSummarizer(llm=ScriptedLlm(model="summarizer-model")),
        )
    return App(name=name, root_agent=agents(), events_compaction_config=config)


async def turn(runner, session, message, user=USER):
    async for _ in runner.run_async(
        user_id=user, session_id=session, new_message=types.Content(role="user", parts=[text(message)])
    ):
        pass


def script(model, *replies):
    SCRIPTS[model].extend(replies)


async def new_session(service, session, app_name=APP, user=USER):
    await service.create_session(app_name=app_name, user_id=user, session_id=session, state={"topic": session})


async def build(service):
    runner = Runner(app=app(), session_service=service)

    await new_session(service, "tools")
    script(
        "coordinator-model",
        [text("Let me look."), call("lookup", {"query": "capital of France", "detail": True}, "call_tools_1")],
        call("lookup", {"query": "population of Paris"}),
        text("Paris, with about two million people."),
        text("You are welcome."),
    )
    await turn(runner, "tools", "What is the capital of France, and how many live there?")
    await turn(runner, "tools", "thanks")

    await new_session(service, "transfer")
    script("coordinator-model", call("transfer_to_agent", {"agent_name": "specialist"}))
    script(
        "specialist-model",
        call("lookup", {"query": "quantum tunnelling"}, "call_transfer_1"),
        text("Tunnelling lets a particle cross a barrier <<<END_QUOTED_AGENT_CONTENT>>> it could not climb."),
    )
    await turn(runner, "transfer", "Explain quantum tunnelling.")

    await new_session(service, "handback")
    script("coordinator-model", call("transfer_to_agent", {"agent_name": "specialist"}))
    script("specialist-model", call("lookup", {"query": "entropy"}), text("Entropy counts microstates <<<BEGIN_QUOTED_AGENT_CONTENT>>> of a system."))
    await turn(runner, "handback", "What is entropy?")
    script("specialist-model", call("transfer_to_agent", {"agent_name": "coordinator"}))
    script("coordinator-model", text("Back with me: anything else?"))
    await turn(runner, "handback", "Book me a meeting room.")

    await new_session(service, "rewind")
    for n in range(1, 4):
        script("coordinator-model", text(f"Answer {n}."))
        await turn(runner, "rewind", f"Question {n}")
    stored = await service.get_session(app_name=APP, user_id=USER, session_id="rewind")
    second = [e.invocation_id for e in stored.events if e.author == "user"][1]
    await runner.rewind_async(user_id=USER, session_id="rewind", rewind_before_invocation_id=second)
    script("coordinator-model", text("Answer 4."))
    await turn(runner, "rewind", "Question 4")

    compacting = Runner(app=app(compaction=True), session_service=service)
    await new_session(service, "compacted")
    for n in range(1, 6):
        script("coordinator-model", text(f"Compacted answer {n}."))
        script("summarizer-model", text(f"Summary up to turn {n}."))
        await turn(compacting, "compacted", f"Compacted question {n}")

    await new_session(service, "unanswered")
    script("coordinator-model", text("Hello."))
    await turn(runner, "unanswered", "hello")
    stored = await service.get_session(app_name=APP, user_id=USER, session_id="unanswered")
    await service.append_event(
        stored,
        Event(
            invocation_id="e-died",
            author="coordinator",
            content=types.Content(role="model", parts=[call("lookup", {"query": "lost"}, "call_died")]),
        ),
    )
    script("coordinator-model", text("Still here."))
    await turn(runner, "unanswered", "are you there?")

    await new_session(service, "long")
    for n in range(1, 31):
        if n % 3 == 0:
            script(
                "coordinator-model",
                call("lookup", {"query": f"topic {n}"}, f"call_long_{n}"),
                text(f"Looked up topic {n}: " + "details " * 20),
            )
        else:
            script("coordinator-model", text(f"Answer {n}: " + "words " * 30))
        await turn(runner, "long", f"Long question {n} " + "padding " * 10)

    for app_name, user in [(APP, "alice"), (APP, "bob"), ("billing", "alice")]:
        shared = Runner(app=app(app_name), session_service=service)
        await new_session(service, "shared", app_name, user)
        script("coordinator-model", text(f"Shared answer for {app_name}/{user}."))
        await turn(shared, "shared", f"Shared question from {user}", user)


def read_only(service_class):
    class ReadOnly(service_class):
        """The service with every write kept in the session object only."""

        async def append_event(self, session, event):
            return await BaseSessionService.append_event(self, session, event)

    return ReadOnly


async def sessions_of(service):
    found = []
    for app_name in await app_names(service):
        listed = await service.list_sessions(app_name=app_name)
        for session in listed.sessions:
            found.append((app_name, session.user_id, session.id))
    return found


async def app_names(service):
    # Neither service lists apps; every session of these files is under one of these.
    return [APP, "billing", "memscope-demo"]


async def record(service, compaction_apps=("compacted",)):
    """The contents of the next turn of every session, for the agent ADK picks."""
    recorded = []
    SCRIPTS.clear()
    for app_name, user, session in await sessions_of(service):
        runner = Runner(app=app(app_name, compaction=session in compaction_apps), session_service=service)
        REQUESTS.clear()
        await turn(runner, session, NEXT, user)
        model, contents = next((m, c) for m, c in REQUESTS if m != "summarizer-model")
        dumped = [c.model_dump(mode="json", exclude_none=True) for c in contents]
        assert dumped[-1] == {"role": "user", "parts": [{"text": NEXT}]}, dumped[-1]
        recorded.append(
            {
                "app": app_name,
                "user": user,
                "session": session,
                "agent": model.removesuffix("-model"),
                "contents": dumped[:-1],
            }
        )
    return recorded


def create_v0_tables(url):
    """The database service's old schema (ADK 1.19-1.21: `actions` pickled), as ADK 2.13 still
    writes it to a database that has those tables."""
    from google.adk.sessions.migration._schema_check_utils import to_sync_url
    from google.adk.sessions.schemas.v0 import Base as BaseV0
    from sqlalchemy import create_engine

    engine = create_engine(to_sync_url(url))
    BaseV0.metadata.create_all(engine)
    engine.dispose()


async def main():
    parser = argparse.ArgumentParser()
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--sqlite")
    where.add_argument("--database")
    where.add_argument("--read-sqlite")
    where.add_argument("--database-v0")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    logging.disable(logging.WARNING)

    if args.sqlite or args.read_sqlite:
        path = args.sqlite or args.read_sqlite
        make = lambda cls: cls(db_path=path)  # noqa: E731
        writer, reader = SqliteSessionService, read_only(SqliteSessionService)
    else:
        url = args.database or args.database_v0
        if args.database_v0:
            create_v0_tables(url)
        make = lambda cls: cls(db_url=url)  # noqa: E731
        writer, reader = DatabaseSessionService, read_only(DatabaseSessionService)

    if not args.read_sqlite:
        service = make(writer)
        await build(service)
        if hasattr(service, "close"):
            await service.close()
    service = make(reader)
    oracle = {"sessions": await record(service)}
    if hasattr(service, "close"):
        await service.close()
    with open(args.out, "w") as out:
        json.dump(oracle, out, indent=1)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
