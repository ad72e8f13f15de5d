"""A LangGraph graph checkpointed in statekeeper: it pauses for a human's
approval (`interrupt()`), and a second saver, as a restarted process would
have, resumes it where it stopped; then the thread's history is listed.

    pip install "statekeeper-client[langgraph]" langgraph
    STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev python examples/langgraph_saver.py
"""

from __future__ import annotations

import os
import uuid
from typing import TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from statekeeper_client.langgraph import StatekeeperSaver


class State(TypedDict, total=False):
    request: str
    plan: str
    approved: bool
    result: str


def make_plan(state: State) -> dict[str, str]:
    return {"plan": f"1. look up '{state['request']}' 2. summarise it"}


def ask_human(state: State) -> dict[str, bool]:
    answer = interrupt({"question": "Run this plan?", "plan": state["plan"]})
    return {"approved": answer == "yes"}


def execute(state: State) -> dict[str, str]:
    return {"result": f"done: {state['plan']}" if state["approved"] else "cancelled"}


def graph(saver: BaseCheckpointSaver[str]) -> CompiledStateGraph[State, None, State, State]:
    builder = StateGraph(State)
    builder.add_node("make_plan", make_plan)
    builder.add_node("ask_human", ask_human)
    builder.add_node("execute", execute)
    builder.add_edge(START, "make_plan")
    builder.add_edge("make_plan", "ask_human")
    builder.add_edge("ask_human", "execute")
    builder.add_edge("execute", END)
    return builder.compile(checkpointer=saver)


def main() -> None:
    target = os.environ.get("STATEKEEPER_ADDR", "127.0.0.1:50051")
    api_key = os.environ.get("STATEKEEPER_API_KEY")
    config: RunnableConfig = {"configurable": {"thread_id": f"approval-{uuid.uuid4().hex[:8]}"}}

    with StatekeeperSaver(target, api_key=api_key) as saver:
        start: State = {"request": "statekeeper"}
        paused = graph(saver).invoke(start, config)
        print("paused at:", paused["__interrupt__"][0].value)

    # A new saver (a restarted process) picks the thread up from the server.
    with StatekeeperSaver(target, api_key=api_key) as saver:
        app = graph(saver)
        print("next node:", app.get_state(config).next)
        approve: Command[str] = Command(resume="yes")
        final = app.invoke(approve, config)
        print("result:", final["result"])
        history = list(app.get_state_history(config))
        print("checkpoints in the thread:", len(history))
        assert final["result"].startswith("done:")


if __name__ == "__main__":
    main()
