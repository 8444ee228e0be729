"""A LangGraph checkpoint database at scale for benches/langgraph_scale.sh, written by LangGraph's
own savers, and LangGraph's own read of one thread to measure memscope against.

`generate` runs a deterministic tool-using agent (no model) on SqliteSaver or PostgresSaver:
- thread `long`: 400 turns; every eighth turn calls a tool (human, AI tool call, tool result, AI
  answer: four messages, five checkpoints), the others answer directly (two messages, three
  checkpoints): 900 messages in 1,300 checkpoints, each holding the whole message list again;
- threads `short-01` .. `short-SHORT`: 2 to 40 turns each, run round-robin with `long` so that
  their checkpoints interleave in time as a deployment's do.
Then LangGraph's rows of those threads are copied COPIES times under new thread ids
(`<thread>-copy-NN`) with INSERT ... SELECT, as a database that served many users looks.

`history` is what an operator runs without memscope: LangGraph's `get_state_history` over every
checkpoint of a thread, through the compiled graph, as one process.

Usage:
    python langgraph_data.py generate --sqlite PATH [--copies 20]
    python langgraph_data.py generate --postgres URL [--copies 4]
    python langgraph_data.py history (--sqlite PATH | --postgres URL) --thread ID
"""

import argparse
import sqlite3
import sys
from contextlib import ExitStack

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

LONG_TURNS = 400
TOOL_EVERY = 8
# A paragraph of the length a chat answer has; turns vary it so no two messages are equal.
FILLER = (
    "The retention policy keeps a project's history for ninety days after it is archived; "
    "exports made before that stay in the bucket the operator configured, and a restore "
    "brings the conversations back with their attachments and their audit trail. "
)


def agent(state: MessagesState):
    """Calls `lookup` for a question that asks for it, answers once the tool replied."""
    messages = state["messages"]
    last = messages[-1]
    n = len(messages)
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(id=f"ai-{n}", content=f"From the records: {last.content} {FILLER}")]}
    if "[lookup]" in last.content:
        call = {"id": f"call-{n}", "name": "lookup", "args": {"query": last.content[:60], "limit": 3}}
        return {"messages": [AIMessage(id=f"ai-{n}", content="", tool_calls=[call])]}
    return {
        "messages": [
            AIMessage(
                id=f"ai-{n}",
                content=f"Answer {n}: {FILLER[: n % 90]}",
                usage_metadata={"input_tokens": 40 * n, "output_tokens": 90, "total_tokens": 40 * n + 90},
                response_metadata={"model_name": "deterministic"},
            )
        ]
    }


def tools(state: MessagesState):
    call = state["messages"][-1].tool_calls[0]
    return {
        "messages": [
            ToolMessage(
                id=f"tool-{len(state['messages'])}",
                content=f"project {len(call['args']['query'])} archived 2026-03-0{call['args']['limit']}",
                tool_call_id=call["id"],
                name=call["name"],
            )
        ]
    }


def route(state: MessagesState):
    return "tools" if state["messages"][-1].tool_calls else END


def agent_graph(checkpointer):
    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", tools)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["tools", END])
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)


def question(thread: str, turn: int) -> HumanMessage:
    lookup = " [lookup]" if turn % TOOL_EVERY == TOOL_EVERY - 1 else ""
    return HumanMessage(
        id=f"{thread}-human-{turn}",
        content=f"Question {turn}{lookup}: retention of project {turn * 7 % 101}?",
    )


def saver_of(args, stack: ExitStack):
    if args.sqlite:
        from langgraph.checkpoint.sqlite import SqliteSaver

        # A sqlite3 connection's `with` commits but does not close it.
        conn = sqlite3.connect(args.sqlite, check_same_thread=False)
        stack.callback(conn.close)
        return SqliteSaver(conn)
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import dict_row

    conn = stack.enter_context(
        Connection.connect(args.postgres, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    )
    saver = PostgresSaver(conn)
    saver.setup()
    return saver


def generate(args):
    turns = {"long": LONG_TURNS}
    for i in range(1, args.short + 1):
        turns[f"short-{i:02d}"] = 2 + (i * 13) % 39
    with ExitStack() as stack:
        graph = agent_graph(saver_of(args, stack))
        for turn in range(max(turns.values())):
            for thread, count in turns.items():
                if turn < count:
                    config = {"configurable": {"thread_id": thread}}
                    graph.invoke({"messages": [question(thread, turn)]}, config)
            if turn % 50 == 49:
                print(f"turn {turn + 1} of {LONG_TURNS}", file=sys.stderr)
    copy_threads(args)


# Every column of each table, the thread id replaced by the copy's.
SQLITE_TABLES = {
    "checkpoints": "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata",
    "writes": "checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path",
}
POSTGRES_TABLES = {
    "checkpoints": "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata",
    "checkpoint_blobs": "checkpoint_ns, channel, version, type, blob",
    "checkpoint_writes": "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob",
}


def copy_threads(args):
    if args.sqlite:
        conn = sqlite3.connect(args.sqlite)
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        tables, mark = SQLITE_TABLES, "?"
    else:
        from psycopg import Connection

        conn = Connection.connect(args.postgres)
        tables, mark = POSTGRES_TABLES, "%s"
    for copy in range(1, args.copies + 1):
        suffix = f"-copy-{copy:02d}"
        for table, columns in tables.items():
            conn.execute(
                f"INSERT INTO {table} (thread_id, {columns}) "
                f"SELECT thread_id || {mark}, {columns} FROM {table} "
                f"WHERE thread_id NOT LIKE {mark}",
                (suffix, "%-copy-%"),
            )
        conn.commit()
        print(f"copy {copy} of {args.copies}", file=sys.stderr)
    if args.postgres:
        conn.autocommit = True
        conn.execute("VACUUM ANALYZE")
    conn.close()


def history(args):
    with ExitStack() as stack:
        graph = agent_graph(saver_of(args, stack))
        config = {"configurable": {"thread_id": args.thread}}
        states = sum(1 for _ in graph.get_state_history(config))
    print(f"{states} checkpoints")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["generate", "history"])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--sqlite")
    where.add_argument("--postgres")
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--short", type=int, default=29, help="short threads beside `long`")
    parser.add_argument("--thread")
    args = parser.parse_args()
    if args.command == "generate":
        generate(args)
    else:
        history(args)


if __name__ == "__main__":
    main()
