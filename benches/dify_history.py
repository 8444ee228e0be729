"""Dify's history path in Python, the anchor `memscope history` is measured against.

Re-expressed from Dify's `TokenBufferMemory.get_history_prompt_messages`
(api/core/memory/token_buffer_memory.py) and `extract_thread_messages`
(api/core/prompt/utils/extract_thread_messages.py), with the same steps and the same query:

1. SQLAlchemy ORM: `select(Message).where(conversation_id == ...)
   .order_by(created_at.desc()).limit(500)` (500: Dify's cap, and its default);
2. `extract_thread_messages` on those rows, newest first;
3. the placeholder pop: the newest thread row goes when its answer is empty and no answer
   tokens were recorded;
4. reversed to oldest first; one batched `MessageFile` query for the thread's rows (Dify's
   current code; the fixture has no files, so every row is plain text);
5. a `UserPromptMessage(query)` and an `AssistantPromptMessage(answer)` per row, as pydantic
   models like Dify's model-runtime entities;
6. the pruning loop: count the whole list; while over `max_token_limit` and more than one
   message is left, pop the oldest and count the whole list again.

The counter is the OpenAI plugin's estimate, memscope's default `plugin` counter: each message's
role, name (or "") and text joined by newlines over the whole list, encoded once with tiktoken
(o200k_base for gpt-4o), plus 3 per message and 3 per list. In Dify each count is a call into
the plugin daemon (an HTTP round-trip carrying the serialized list); here it is a plain function
call, which can only make Python faster than Dify really is.

Two ways to run it:
  fixture --db PATH          fill a database `memscope init` created with the bench conversation
  anchor --db PATH --conversation ID --max-tokens N [--repeat K]
                             print the kept messages as JSON (ids and roles, oldest first) and,
                             with --repeat, the in-process wall and CPU seconds of each of K
                             further calls
"""

import argparse
import enum
import json
import sqlite3
import sys
import time
from collections import defaultdict
from datetime import datetime, timedelta

MESSAGES = 10_000
UUID_NIL = "00000000-0000-0000-0000-000000000000"


def uuid(n):
    return f"00000000-0000-4000-8000-{n:012x}"


APP_ID = uuid(1_000_000)
CONVERSATION_ID = uuid(1_000_001)
TENANT_ID = uuid(1_000_002)


def fill_fixture(path):
    """The conversation of the criterion bench `history` (benches/history.rs): a chain where
    every fifth turn is regenerated once (hanging from the same parent as the turn before it),
    one second apart, with prose answers of varying length."""
    start = datetime(2026, 1, 1)
    stamp = lambda s: (start + timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S")
    db = sqlite3.connect(path)
    db.execute(
        "INSERT INTO apps (id, tenant_id, name, mode, memory_window, created_at) "
        "VALUES (?, ?, 'bench', 'chat', NULL, ?)",
        (APP_ID, TENANT_ID, stamp(0)),
    )
    db.execute(
        "INSERT INTO conversations (id, app_id, name, mode, status, from_source, "
        "dialogue_count, created_at, updated_at) "
        "VALUES (?, ?, 'ten thousand messages', 'chat', 'normal', 'api', 0, ?, ?)",
        (CONVERSATION_ID, APP_ID, stamp(0), stamp(MESSAGES)),
    )
    rows, parents, parent = [], [], None
    for i in range(MESSAGES):
        own_parent = parents[i - 1] if i % 5 == 4 else parent
        parents.append(own_parent)
        query = f"Question {i}: how does the retention policy apply to archived projects?"
        answer = (
            f"Answer {i}: archived projects keep their history for ninety days, then the "
            "summaries are kept and the raw messages are deleted. "
            + "Exports stay available to owners. " * (i % 7)
        )
        rows.append((uuid(i), APP_ID, CONVERSATION_ID, own_parent, query, answer,
                     len(query) // 4, len(answer) // 4, stamp(i)))
        parent = uuid(i)
    db.executemany(
        "INSERT INTO messages (id, app_id, conversation_id, parent_message_id, query, answer, "
        "message_tokens, answer_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    db.commit()
    db.close()


# --- Dify's models, the part the history path reads -------------------------------------------

from pydantic import BaseModel  # noqa: E402
from sqlalchemy import Integer, String, Text, create_engine, select  # noqa: E402
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column  # noqa: E402


class Base(DeclarativeBase):
    pass


class Message(Base):
    __tablename__ = "messages"
    id: Mapped[str] = mapped_column(String, primary_key=True)
    app_id: Mapped[str] = mapped_column(String)
    conversation_id: Mapped[str] = mapped_column(String)
    parent_message_id: Mapped[str | None] = mapped_column(String, nullable=True)
    query: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    message_tokens: Mapped[int] = mapped_column(Integer)
    answer_tokens: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    invoke_from: Mapped[str | None] = mapped_column(String, nullable=True)
    workflow_run_id: Mapped[str | None] = mapped_column(String, nullable=True)
    created_at: Mapped[str] = mapped_column(String)


class MessageFile(Base):
    __tablename__ = "message_files"
    id: Mapped[str] = mapped_column(String, primary_key=True)
    message_id: Mapped[str] = mapped_column(String)
    type: Mapped[str] = mapped_column(String)
    transfer_method: Mapped[str] = mapped_column(String)
    url: Mapped[str | None] = mapped_column(Text, nullable=True)
    belongs_to: Mapped[str | None] = mapped_column(String, nullable=True)
    upload_file_id: Mapped[str | None] = mapped_column(String, nullable=True)
    created_at: Mapped[str] = mapped_column(String)


class PromptMessageRole(enum.Enum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class PromptMessage(BaseModel):
    role: PromptMessageRole
    content: str | list | None = None
    name: str | None = None


class UserPromptMessage(PromptMessage):
    role: PromptMessageRole = PromptMessageRole.USER


class AssistantPromptMessage(PromptMessage):
    role: PromptMessageRole = PromptMessageRole.ASSISTANT
    tool_calls: list = []


# --- the path ----------------------------------------------------------------------------------


def extract_thread_messages(messages):
    thread_messages = []
    next_message = None
    for message in messages:
        if not message.parent_message_id:
            # A regenerated message without a parent starts a new thread.
            thread_messages.append(message)
            break
        if not next_message:
            thread_messages.append(message)
            next_message = message.parent_message_id
        elif message.id == next_message or next_message == UUID_NIL:
            thread_messages.append(message)
            next_message = message.parent_message_id
    return thread_messages


def plugin_num_tokens(encoding, prompt_messages):
    """The OpenAI plugin's estimate (memscope's `plugin` counter)."""
    if not prompt_messages:
        return 0
    parts = []
    for m in prompt_messages:
        text = m.content if isinstance(m.content, str) else "".join(
            c.get("data", "") for c in m.content or [] if isinstance(c, dict))
        parts += [m.role.value, m.name or "", text]
        if m.role == PromptMessageRole.ASSISTANT:
            for call in m.tool_calls:
                parts += [call.id, call.function.name, call.function.arguments]
    return len(encoding.encode("\n".join(parts))) + 3 * len(prompt_messages) + 3


def get_history_prompt_messages(session, encoding, conversation_id, max_token_limit,
                                message_limit=None):
    stmt = (select(Message).where(Message.conversation_id == conversation_id)
            .order_by(Message.created_at.desc()))
    if message_limit and message_limit > 0:
        message_limit = min(message_limit, 500)
    else:
        message_limit = 500
    messages = session.scalars(stmt.limit(message_limit)).all()

    thread_messages = extract_thread_messages(messages)
    # A newly created message has no answer yet: it is the current request, not memory.
    if thread_messages and not thread_messages[0].answer and thread_messages[0].answer_tokens == 0:
        thread_messages.pop(0)
    messages = list(reversed(thread_messages))

    # Dify batch-loads the thread's files in one query keyed by message id.
    files_by_message = defaultdict(list)
    message_ids = [message.id for message in messages]
    if message_ids:
        for message_file in session.scalars(
                select(MessageFile).where(MessageFile.message_id.in_(message_ids))):
            files_by_message[message_file.message_id].append(message_file)

    prompt_messages = []
    for message in messages:
        # With files the user message's content would be a list of parts; the fixture has none.
        if files_by_message.get(message.id):
            sys.exit("the fixture has message files; this anchor builds text-only prompts")
        prompt_messages.append(UserPromptMessage(content=message.query))
        prompt_messages.append(AssistantPromptMessage(content=message.answer))
    # Which row each prompt message came from, for the comparison with memscope only.
    sources = [(m.id, role) for m in messages for role in ("user", "assistant")]

    if not prompt_messages:
        return [], []
    curr_message_tokens = plugin_num_tokens(encoding, prompt_messages)
    if curr_message_tokens > max_token_limit:
        while curr_message_tokens > max_token_limit and len(prompt_messages) > 1:
            prompt_messages.pop(0)
            sources.pop(0)
            curr_message_tokens = plugin_num_tokens(encoding, prompt_messages)
    return prompt_messages, sources


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    fixture = sub.add_parser("fixture")
    fixture.add_argument("--db", required=True)
    anchor = sub.add_parser("anchor")
    anchor.add_argument("--db", required=True)
    anchor.add_argument("--conversation", default=CONVERSATION_ID)
    anchor.add_argument("--max-tokens", type=int, required=True)
    anchor.add_argument("--model", default="gpt-4o")
    anchor.add_argument("--repeat", type=int, default=0)
    args = parser.parse_args()
    if args.command == "fixture":
        fill_fixture(args.db)
        return

    import tiktoken

    encoding = tiktoken.encoding_for_model(args.model)
    engine = create_engine(f"sqlite:///{args.db}")
    with Session(engine) as session:
        _, kept = get_history_prompt_messages(session, encoding, args.conversation,
                                              args.max_tokens)
    seconds, cpu_seconds = [], []
    for _ in range(args.repeat):
        # A fresh session per call, as each Dify request has: no identity-map reuse.
        with Session(engine) as session:
            start, start_cpu = time.perf_counter(), time.process_time()
            get_history_prompt_messages(session, encoding, args.conversation, args.max_tokens)
            seconds.append(time.perf_counter() - start)
            cpu_seconds.append(time.process_time() - start_cpu)
    json.dump({"kept": [{"source_id": i, "role": r} for i, r in kept], "seconds": seconds,
               "cpu_seconds": cpu_seconds}, sys.stdout)


if __name__ == "__main__":
    main()
