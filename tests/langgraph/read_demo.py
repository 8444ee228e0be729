"""Reads the checkpoint file `memscope demo --langgraph` wrote with LangGraph's own SqliteSaver
and graphs of the demo's shapes (their nodes never run), and dumps what LangGraph reads back,
in build_db.py's oracle format.

Usage: python read_demo.py --sqlite PATH --out ORACLE.json
"""

import argparse
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from build_db import dump_threads  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402


def never(state: MessagesState):
    raise AssertionError("reading a thread runs no node")


def graph(saver, chain, subgraph=None):
    """START → chain[0] → … → END; `subgraph` = (node, inner chain) makes that node a subgraph."""
    g = StateGraph(MessagesState)
    for name in chain:
        if subgraph and name == subgraph[0]:
            g.add_node(name, graph(None, subgraph[1]))
        else:
            g.add_node(name, never)
    g.add_edge(START, chain[0])
    for a, b in zip(chain, chain[1:]):
        g.add_edge(a, b)
    g.add_edge(chain[-1], END)
    return g.compile(checkpointer=saver)


def agent_graph(saver):
    g = StateGraph(MessagesState)
    g.add_node("agent", never)
    g.add_node("tools", never)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", never, ["tools", END])
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=saver)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sqlite", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    # Read-only, as an operator inspecting the file would open it.
    conn = sqlite3.connect(f"file:{args.sqlite}?mode=ro", uri=True, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.is_setup = True
    threads = {
        "long-chat": (graph(saver, ["chat"]), saver),
        "notes-window": (graph(saver, ["chat", "forget"]), saver),
        "research-report": (graph(saver, ["plan", "researcher"], ("researcher", ["search", "summarise"])), saver),
        "trip-rewind": (graph(saver, ["planner"]), saver),
        "weather-agent": (agent_graph(saver), saver),
    }
    listed = sorted({t.config["configurable"]["thread_id"] for t in saver.list(None)})
    assert listed == sorted(threads), listed
    oracle = dump_threads(threads)
    with open(args.out, "w") as f:
        json.dump(oracle, f, indent=1, sort_keys=True, default=str)


if __name__ == "__main__":
    main()
