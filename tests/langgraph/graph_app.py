"""A small real LangGraph graph with plain Python nodes, no LLM:

    start -> (left, right) -> join -> finish

`left` and `right` run in parallel in one superstep. Every node appends to a
journal file when it runs, so a test can count executions across a crash.
`right` misbehaves on purpose when told to: it raises (`crash_mode`
"raise") or blocks until its process is killed ("hang").

Run as a module, it is the worker process a test kills:
    python -m tests.langgraph.graph_app ADDRESS API_KEY THREAD_ID WORKDIR
"""

from __future__ import annotations

import operator
import sys
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from tests.harness.deadlines import scaled


class State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    total: int
    left_value: int
    right_value: int


class Behaviour:
    """Where to journal, and how `right` should fail (if at all)."""

    def __init__(self, workdir: Path, crash_mode: str = "") -> None:
        self.workdir = workdir
        self.crash_mode = crash_mode

    def journal(self, node: str) -> None:
        with open(self.workdir / "journal.txt", "a") as journal:
            journal.write(node + "\n")

    def executions(self) -> list[str]:
        path = self.workdir / "journal.txt"
        return path.read_text().split() if path.exists() else []

    def wait_for(self, node: str, timeout: float = 30.0) -> None:
        """Waits until `node` ran (a load-scaled deadline)."""
        deadline = time.monotonic() + scaled(timeout)
        while node not in self.executions():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{node} never ran")
            time.sleep(0.01)


def build(behaviour: Behaviour) -> StateGraph[State]:
    def start(state: State) -> dict[str, Any]:
        behaviour.journal("start")
        return {"log": ["start"], "total": 3}

    def left(state: State) -> dict[str, Any]:
        behaviour.journal("left")
        return {"log": ["left"], "left_value": state["total"] * 7}

    def right(state: State) -> dict[str, Any]:
        behaviour.journal("right")
        if behaviour.crash_mode == "raise":
            behaviour.crash_mode = ""  # the next attempt succeeds
            # Fail only once `left` has finished and LangGraph has had time to
            # save its writes: otherwise the crash cancels `left` too and the
            # superstep has nothing saved to resume from (a race, not a bug).
            behaviour.wait_for("left")
            time.sleep(1.0)
            raise RuntimeError("simulated crash in right")
        if behaviour.crash_mode == "hang":
            (behaviour.workdir / "right-started").touch()
            time.sleep(600)  # until the test kills this process
        return {"log": ["right"], "right_value": state["total"] + 100}

    def join(state: State) -> dict[str, Any]:
        behaviour.journal("join")
        return {"log": ["join"], "total": state["left_value"] + state["right_value"]}

    def finish(state: State) -> dict[str, Any]:
        behaviour.journal("finish")
        return {"log": ["finish"], "total": state["total"] * 2}

    graph = StateGraph(State)
    for node in (start, left, right, join, finish):
        graph.add_node(node.__name__, node)
    graph.add_edge(START, "start")
    graph.add_edge("start", "left")
    graph.add_edge("start", "right")
    graph.add_edge(["left", "right"], "join")
    graph.add_edge("join", "finish")
    graph.add_edge("finish", END)
    return graph


def compiled(behaviour: Behaviour, checkpointer: Any) -> CompiledStateGraph[Any, Any, Any, Any]:
    return build(behaviour).compile(checkpointer=checkpointer)


INPUT: State = {"log": [], "total": 0}


def main(argv: list[str]) -> None:
    from statekeeper_client.langgraph import StatekeeperSaver

    address, api_key, thread_id, workdir = argv
    with StatekeeperSaver(address, api_key=api_key) as saver:
        graph = compiled(Behaviour(Path(workdir), crash_mode="hang"), saver)
        graph.invoke(INPUT, {"configurable": {"thread_id": thread_id}})


if __name__ == "__main__":
    main(sys.argv[1:])
