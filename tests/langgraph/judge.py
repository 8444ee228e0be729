"""Judges a LangGraph database after memscope wrote to it, with LangGraph's own code: what
get_state and get_state_history read for a thread, the thread's latest checkpoint as the saver
loads it (normalised: the parts that differ between two runs of the same update, its id, time,
version suffixes, are blanked), and optionally one more turn of the thread's graph.

Usage:
    python judge.py (--sqlite PATH | --postgres URL) --thread T [--remove ID,ID] [--invoke TEXT]
        [--langgraph-prune] [--trim-messages N]
--langgraph-prune first prunes the thread with PostgresSaver's own prune (keep_latest).
--remove first applies LangGraph's own update_state(config, {"messages": [RemoveMessage(id), …]})
(so the same normalised dump of a database LangGraph trimmed can be compared with memscope's).
--invoke then sends a HumanMessage through the thread's graph (the graphs of build_db.py).
--trim-messages N: the ids of the state's messages LangChain's own trim_messages keeps with the
trim LangGraph recommends (strategy="last", start_on="human", include_system=True), max_tokens=N,
each message counting one (token_counter=len), as "trimmed".
Prints one JSON document.
"""

import argparse
import json
import sqlite3
import sys
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from build_db import agent_graph, config, message_json, nested_graph, pruning_graph  # noqa: E402
from langchain_core.messages import HumanMessage, RemoveMessage, trim_messages  # noqa: E402

GRAPHS = {"agent": agent_graph, "pruned": pruning_graph, "nested": nested_graph}


def snapshot(s):
    return {
        "checkpoint_id": s.config["configurable"]["checkpoint_id"],
        "parent_checkpoint_id": s.parent_config["configurable"]["checkpoint_id"] if s.parent_config else None,
        "metadata": s.metadata,
        "next": list(s.next),
        "messages": [message_json(m) for m in s.values.get("messages", [])],
    }


def version(v):
    return str(v).split(".")[0]


def normalised_latest(saver, thread_id):
    """The latest root checkpoint and the writes on its parent, as the saver loads them."""
    t = saver.get_tuple(config(thread_id))
    cp = t.checkpoint
    parent = saver.get_tuple(t.parent_config) if t.parent_config else None
    return {
        "metadata": {k: v for k, v in t.metadata.items() if k != "memscope"},
        "v": cp["v"],
        "id_clock_seq": cp["id"][19:23],
        "channel_versions": {k: version(v) for k, v in cp["channel_versions"].items()},
        "versions_seen": {n: {k: version(v) for k, v in s.items()} for n, s in cp["versions_seen"].items()},
        "updated_channels": cp.get("updated_channels"),
        "channel_values": {
            k: [message_json(m) for m in v] if k == "messages" else repr(v) for k, v in cp["channel_values"].items()
        },
        "parent_writes": [
            {"task_id": task_id, "channel": channel, "value": [message_json(m) for m in value] if isinstance(value, list) else repr(value)}
            for task_id, channel, value in (parent.pending_writes if parent else [])
        ],
        "pending_writes": [[task_id, channel] for task_id, channel, _ in t.pending_writes or []],
    }


def main():
    parser = argparse.ArgumentParser()
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--sqlite")
    where.add_argument("--postgres")
    parser.add_argument("--thread", required=True)
    parser.add_argument("--remove")
    parser.add_argument("--invoke")
    parser.add_argument("--langgraph-prune", action="store_true", help="PostgresSaver.prune([thread]) first")
    parser.add_argument("--trim-messages", type=int)
    args = parser.parse_args()
    with ExitStack() as stack:
        if args.sqlite:
            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = stack.enter_context(sqlite3.connect(args.sqlite, check_same_thread=False))
            saver = SqliteSaver(conn)
        else:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg import Connection
            from psycopg.rows import dict_row

            conn = stack.enter_context(Connection.connect(args.postgres, autocommit=True, prepare_threshold=0, row_factory=dict_row))
            saver = PostgresSaver(conn)
        graph = GRAPHS[args.thread](saver)
        if args.langgraph_prune:
            saver.prune([args.thread])
        if args.remove:
            graph.update_state(config(args.thread), {"messages": [RemoveMessage(id=i) for i in args.remove.split(",")]})
        out = {
            "state": snapshot(graph.get_state(config(args.thread))),
            "history": [snapshot(s) for s in graph.get_state_history(config(args.thread))],
            "latest": normalised_latest(saver, args.thread),
        }
        if args.trim_messages is not None:
            kept = trim_messages(
                graph.get_state(config(args.thread)).values["messages"],
                max_tokens=args.trim_messages,
                strategy="last",
                start_on="human",
                include_system=True,
                token_counter=len,
            )
            out["trimmed"] = [m.id for m in kept]
        if args.invoke:
            graph.invoke({"messages": [HumanMessage(content=args.invoke)]}, config(args.thread))
            out["after_invoke"] = snapshot(graph.get_state(config(args.thread)))
    json.dump(out, sys.stdout, indent=1, sort_keys=True, default=str)


if __name__ == "__main__":
    main()
