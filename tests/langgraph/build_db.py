"""Builds a LangGraph checkpoint database with LangGraph's own graphs and savers, and dumps what
LangGraph itself reads back from it, as the oracle memscope's LangGraph reader is compared with.

Every node is deterministic (no model): an agent that calls a tool, then answers; a tool node; a
node that deletes old messages with RemoveMessage; a subgraph. The stories:
- thread `agent`: two turns of a tool-using agent, then a time-travel branch (a new input sent
  from a past checkpoint), then an operator's `update_state` as the agent;
- thread `pruned`: a graph whose last node keeps only the two newest messages (RemoveMessage);
- thread `nested`: a graph with a subgraph node, whose checkpoints live in their own namespace;
- thread `secret`: the agent on a saver with EncryptedSerializer.from_pycryptodome_aes.

Usage (the SQLite file must not exist; the PostgreSQL database must exist and be empty):
    python build_db.py --sqlite PATH --out ORACLE.json
    python build_db.py --postgres URL --out ORACLE.json
The AES key is --aes-key (UTF-8, 16/24/32 bytes), as LANGGRAPH_AES_KEY would give it.
"""

import argparse
import json
import sqlite3
import sys
from contextlib import ExitStack

from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.graph import END, START, MessagesState, StateGraph


def agent(state: MessagesState):
    """Calls the `lookup` tool for a new question, answers once the tool replied."""
    last = state["messages"][-1]
    if isinstance(last, ToolMessage):
        return {
            "messages": [
                AIMessage(
                    content=f"The answer is {last.content}.",
                    usage_metadata={"input_tokens": 42, "output_tokens": 7, "total_tokens": 49},
                    response_metadata={"model_name": "deterministic"},
                )
            ]
        }
    question = last.content if isinstance(last.content, str) else last.content[0]["text"]
    return {
        "messages": [
            AIMessage(
                content="",
                tool_calls=[{"id": f"call_{len(state['messages'])}", "name": "lookup", "args": {"query": question, "limit": 3}}],
            )
        ]
    }


def tools(state: MessagesState):
    call = state["messages"][-1].tool_calls[0]
    return {
        "messages": [
            ToolMessage(
                content=f"{len(call['args']['query'])} chars",
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


def echo(state: MessagesState):
    return {"messages": [AIMessage(content=f"echo: {state['messages'][-1].content}", name="echo")]}


def forget(state: MessagesState):
    """Keeps the two newest messages, as a summarising or trimming node would."""
    return {"messages": [RemoveMessage(id=m.id) for m in state["messages"][:-2]]}


def pruning_graph(checkpointer):
    g = StateGraph(MessagesState)
    g.add_node("echo", echo)
    g.add_node("forget", forget)
    g.add_edge(START, "echo")
    g.add_edge("echo", "forget")
    g.add_edge("forget", END)
    return g.compile(checkpointer=checkpointer)


def nested_graph(checkpointer):
    inner = StateGraph(MessagesState)
    inner.add_node("research", lambda s: {"messages": [AIMessage(content="notes from the subgraph")]})
    inner.add_node("summarise", lambda s: {"messages": [AIMessage(content="summary from the subgraph")]})
    inner.add_edge(START, "research")
    inner.add_edge("research", "summarise")
    inner.add_edge("summarise", END)
    outer = StateGraph(MessagesState)
    outer.add_node("plan", lambda s: {"messages": [AIMessage(content="plan: ask the subgraph")]})
    outer.add_node("worker", inner.compile())
    outer.add_edge(START, "plan")
    outer.add_edge("plan", "worker")
    outer.add_edge("worker", END)
    return outer.compile(checkpointer=checkpointer)


def config(thread_id, checkpoint_id=None, ns=None):
    c = {"thread_id": thread_id}
    if checkpoint_id is not None:
        c["checkpoint_id"] = checkpoint_id
    if ns is not None:
        c["checkpoint_ns"] = ns
    return {"configurable": c}


def run_agent(graph, thread_id):
    graph.invoke(
        {"messages": [SystemMessage(content="You answer with the lookup tool."), HumanMessage(content="How long is this question?", name="ada")]},
        config(thread_id),
    )
    graph.invoke(
        {"messages": [HumanMessage(content=[{"type": "text", "text": "And this one?"}, {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}])]},
        config(thread_id),
    )


def build(saver, encrypted_saver):
    graph = agent_graph(saver)
    run_agent(graph, "agent")
    # Time travel: a new question sent from the checkpoint where the first turn ended.
    history = list(graph.get_state_history(config("agent")))
    first_turn_end = next(
        s for s in reversed(history)
        if s.values.get("messages") and isinstance(s.values["messages"][-1], AIMessage)
        and not s.values["messages"][-1].tool_calls
    )
    graph.invoke({"messages": [HumanMessage(content="A different second question")]}, first_turn_end.config)
    # An operator's edit, written as the agent.
    graph.update_state(config("agent"), {"messages": [AIMessage(content="Edited by an operator.")]}, as_node="agent")

    pruner = pruning_graph(saver)
    # A user pasted a credential: `export` must remove it.
    for text in ("one", "two", "three: postgres://ops:hunter2@db.internal/app"):
        pruner.invoke({"messages": [HumanMessage(content=text)]}, config("pruned"))

    nested_graph(saver).invoke({"messages": [HumanMessage(content="research this")]}, config("nested"))

    run_agent(agent_graph(encrypted_saver), "secret")


def message_json(m):
    return {
        "type": m.type,
        "class": type(m).__name__,
        "content": m.content,
        "id": m.id,
        "name": m.name,
        "tool_calls": [{"id": c["id"], "name": c["name"], "args": c["args"]} for c in getattr(m, "tool_calls", [])],
        "tool_call_id": getattr(m, "tool_call_id", None),
        "usage_metadata": getattr(m, "usage_metadata", None),
    }


def values_json(values):
    out = {}
    for key, value in values.items():
        if key == "messages":
            out[key] = [message_json(m) for m in value]
        else:
            out[key] = repr(value)
    return out


def dump(saver, encrypted_saver):
    return dump_threads({
        "agent": (agent_graph(saver), saver),
        "pruned": (pruning_graph(saver), saver),
        "nested": (nested_graph(saver), saver),
        "secret": (agent_graph(encrypted_saver), encrypted_saver),
    })


def dump_threads(threads):
    """What LangGraph reads of each thread (`{thread_id: (graph, saver)}`): every checkpoint
    tuple of every namespace, and get_state / get_state_history on the root namespace."""
    out = {"threads": {}}
    for thread_id, (graph, reader) in threads.items():
        checkpoints = []
        for t in reader.list(config(thread_id)):
            checkpoints.append({
                "checkpoint_ns": t.config["configurable"]["checkpoint_ns"],
                "checkpoint_id": t.config["configurable"]["checkpoint_id"],
                "parent_checkpoint_id": t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None,
                "metadata": t.metadata,
                "v": t.checkpoint["v"],
                "ts": t.checkpoint["ts"],
                "channel_versions": {k: str(v) for k, v in t.checkpoint["channel_versions"].items()},
                "versions_seen": {n: {k: str(v) for k, v in seen.items()} for n, seen in t.checkpoint["versions_seen"].items()},
                "updated_channels": t.checkpoint.get("updated_channels"),
                "channel_values": values_json(t.checkpoint["channel_values"]),
                "pending_writes": [
                    {"task_id": task_id, "channel": channel, "value": [message_json(m) for m in value] if channel == "messages" and isinstance(value, list) else repr(value)}
                    for task_id, channel, value in t.pending_writes or []
                ],
            })
        state = graph.get_state(config(thread_id))
        history = [
            {
                "checkpoint_id": s.config["configurable"]["checkpoint_id"],
                "parent_checkpoint_id": s.parent_config["configurable"]["checkpoint_id"] if s.parent_config else None,
                "metadata": s.metadata,
                "next": list(s.next),
                "tasks": sorted({t.name for t in s.tasks}),
                "messages": [message_json(m) for m in s.values.get("messages", [])],
            }
            for s in graph.get_state_history(config(thread_id))
        ]
        out["threads"][thread_id] = {
            "checkpoints": checkpoints,
            "state": {
                "checkpoint_id": state.config["configurable"]["checkpoint_id"],
                "parent_checkpoint_id": state.parent_config["configurable"]["checkpoint_id"] if state.parent_config else None,
                "metadata": state.metadata,
                "next": list(state.next),
                "messages": [message_json(m) for m in state.values.get("messages", [])],
            },
            "history": history,
        }
    return out


def main():
    parser = argparse.ArgumentParser()
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--sqlite")
    where.add_argument("--postgres")
    parser.add_argument("--out", required=True)
    parser.add_argument("--aes-key", default="memscope-test-key-0123456789abcd")
    args = parser.parse_args()
    encrypted = EncryptedSerializer.from_pycryptodome_aes(key=args.aes_key.encode())
    with ExitStack() as stack:
        if args.sqlite:
            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = stack.enter_context(sqlite3.connect(args.sqlite, check_same_thread=False))
            saver = SqliteSaver(conn)
            encrypted_saver = SqliteSaver(conn, serde=encrypted)
        else:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg import Connection
            from psycopg.rows import dict_row

            conn = stack.enter_context(Connection.connect(args.postgres, autocommit=True, prepare_threshold=0, row_factory=dict_row))
            saver = PostgresSaver(conn)
            saver.setup()
            encrypted_saver = PostgresSaver(conn, serde=encrypted)
        build(saver, encrypted_saver)
        oracle = dump(saver, encrypted_saver)
    with open(args.out, "w") as f:
        json.dump(oracle, f, indent=1, sort_keys=True, default=str)
    print(f"{sum(len(t['checkpoints']) for t in oracle['threads'].values())} checkpoints in {len(oracle['threads'])} threads", file=sys.stderr)


if __name__ == "__main__":
    main()
