"""The same real graph on StatekeeperSaver and on LangGraph's InMemorySaver
must give the same states and histories, sync and async, on each backend.

The graph has parallel branches, a subgraph that calls `interrupt()`, a
resume, a fork through `update_state` and a replay from the checkpoint
before the subgraph. That replay is what once failed: LangGraph loads the
subgraph's checkpoint by listing the subgraph's namespace `before` the
parent's checkpoint id, an id the subgraph's namespace does not hold
(ListCheckpoints used to answer NOT_FOUND instead of comparing ids).

Ids differ between the two savers (they are made from the clock), and
InMemorySaver's channel versions carry a random part, so the comparison
replaces each id by its order of first appearance and leaves the versions
out; everything else (values, next nodes, tasks, interrupts, metadata,
pending writes, namespaces, parents) must be equal.
"""

from __future__ import annotations

import operator
import re
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt, StateSnapshot, interrupt

from statekeeper_client.langgraph import StatekeeperSaver
from tests.langgraph.conftest import API_KEY
from tests.langgraph.harness import CheckpointServer

# ----- the graph -----------------------------------------------------------------------


class State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    approval: str


def _appender(name: str) -> Any:
    def node(state: State) -> State:
        return {"log": [f"{name}:{len(state.get('log', []))}"]}

    return node


def _review(state: State) -> State:
    """Asks a human; on resume, records the answer."""
    answer = interrupt({"question": "approve?", "seen": len(state.get("log", []))})
    return {"log": [f"review:{answer}"], "approval": str(answer)}


def build_graph(checkpointer: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """start -> (left, right) -> sub[prepare -> review (interrupt) -> seal] -> finish"""
    sub = StateGraph(State)
    sub.add_node("prepare", _appender("prepare"))
    sub.add_node("review", _review)
    sub.add_node("seal", _appender("seal"))
    sub.add_edge(START, "prepare")
    sub.add_edge("prepare", "review")
    sub.add_edge("review", "seal")
    sub.add_edge("seal", END)

    parent = StateGraph(State)
    parent.add_node("start", _appender("start"))
    parent.add_node("left", _appender("left"))
    parent.add_node("right", _appender("right"))
    # The subgraph inherits the parent's checkpointer: its checkpoints live
    # in the namespace "sub:<task id>" of the same thread.
    parent.add_node("sub", sub.compile())
    parent.add_node("finish", _appender("finish"))
    parent.add_edge(START, "start")
    parent.add_edge("start", "left")
    parent.add_edge("start", "right")
    parent.add_edge(["left", "right"], "sub")
    parent.add_edge("sub", "finish")
    parent.add_edge("finish", END)
    return parent.compile(checkpointer=checkpointer)


# ----- normalising ids -----------------------------------------------------------------

_IDS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{32}\b")


class IdNames:
    """Names each id (UUID, or 32 hex digits as interrupt ids) by the order
    it first appears in, so two runs compare equal when their structures are,
    whatever ids their savers made."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    def _name(self, match: re.Match[str]) -> str:
        return self._names.setdefault(match.group(0), f"<id{len(self._names)}>")

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return _IDS.sub(self._name, value)
        if isinstance(value, Interrupt):
            return {"interrupt": self(value.id), "value": self(value.value)}
        if isinstance(value, dict):
            return {self(key): self(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self(item) for item in value]
        return value


def snapshot_view(snapshot: StateSnapshot, names: IdNames) -> Any:
    """What a user sees of a state (created_at is the clock's)."""
    return names(
        {
            "values": snapshot.values,
            "next": snapshot.next,
            "config": snapshot.config,
            "parent": snapshot.parent_config,
            "metadata": snapshot.metadata,
            "tasks": [
                {
                    "id": task.id,
                    "name": task.name,
                    "path": task.path,
                    "error": repr(task.error),
                    "interrupts": list(task.interrupts),
                    "state": snapshot_view(task.state, names)
                    if isinstance(task.state, StateSnapshot)
                    else task.state,
                    "result": task.result,
                }
                for task in snapshot.tasks
            ],
            "interrupts": list(snapshot.interrupts),
        }
    )


def tuple_view(saved: CheckpointTuple) -> Any:
    """A stored checkpoint without what legitimately differs between savers:
    the channel versions (InMemorySaver's have a random part) and the
    timestamp."""
    checkpoint = saved.checkpoint
    return {
        "config": saved.config,
        "parent": saved.parent_config,
        "metadata": saved.metadata,
        "values": checkpoint["channel_values"],
        "channels": sorted(checkpoint["channel_versions"]),
        "updated": checkpoint.get("updated_channels"),
        # Their order is the saver's (LangGraph sorts them itself): by what
        # was written, since task ids differ between savers.
        "writes": sorted(
            (channel, repr(value), task_id)
            for task_id, channel, value in saved.pending_writes or ()
        ),
    }


def stored_view(tuples: list[CheckpointTuple]) -> Any:
    """Every checkpoint of a thread in every namespace, in creation order
    (LangGraph's ids sort by time in both savers; listing orders differ
    across namespaces)."""
    ordered = sorted(tuples, key=lambda saved: saved.config["configurable"]["checkpoint_id"])
    return IdNames()([tuple_view(saved) for saved in ordered])


# ----- the scenario --------------------------------------------------------------------


def config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def resume(answer: str) -> Command[Any]:
    return Command(resume=answer)


def before_sub(history: list[StateSnapshot]) -> StateSnapshot:
    (found,) = [snapshot for snapshot in history if snapshot.next == ("sub",)]
    return found


def run_sync(graph: CompiledStateGraph[Any, Any, Any, Any], thread_id: str) -> list[Any]:
    """Every observable state of the scenario, in order."""
    names = IdNames()
    thread = config(thread_id)
    seen: list[Any] = [names(graph.invoke(State(log=[]), thread))]
    seen.append(snapshot_view(graph.get_state(thread, subgraphs=True), names))
    seen.append(names(graph.invoke(resume("yes"), thread)))
    history = list(graph.get_state_history(thread))
    seen.append([snapshot_view(snapshot, names) for snapshot in history])

    fork = graph.update_state(before_sub(history).config, {"log": ["edited"]}, as_node="right")
    seen.append(names(graph.invoke(None, fork)))
    seen.append(snapshot_view(graph.get_state(thread, subgraphs=True), names))
    seen.append(names(graph.invoke(resume("no"), thread)))

    # Replay from before the subgraph (of the first run's history).
    seen.append(names(graph.invoke(None, before_sub(history).config)))
    seen.append(snapshot_view(graph.get_state(thread, subgraphs=True), names))
    seen.append(names(graph.invoke(resume("again"), thread)))
    seen.append([snapshot_view(s, names) for s in graph.get_state_history(thread)])
    seen.append(stored_view(list(graph.checkpointer.list(config(thread_id)))))  # type: ignore[union-attr]
    return seen


async def run_async(graph: CompiledStateGraph[Any, Any, Any, Any], thread_id: str) -> list[Any]:
    """`run_sync` through the async API."""
    names = IdNames()
    thread = config(thread_id)
    seen: list[Any] = [names(await graph.ainvoke(State(log=[]), thread))]
    seen.append(snapshot_view(await graph.aget_state(thread, subgraphs=True), names))
    seen.append(names(await graph.ainvoke(resume("yes"), thread)))
    history = [snapshot async for snapshot in graph.aget_state_history(thread)]
    seen.append([snapshot_view(snapshot, names) for snapshot in history])

    fork = await graph.aupdate_state(
        before_sub(history).config, {"log": ["edited"]}, as_node="right"
    )
    seen.append(names(await graph.ainvoke(None, fork)))
    seen.append(snapshot_view(await graph.aget_state(thread, subgraphs=True), names))
    seen.append(names(await graph.ainvoke(resume("no"), thread)))

    seen.append(names(await graph.ainvoke(None, before_sub(history).config)))
    seen.append(snapshot_view(await graph.aget_state(thread, subgraphs=True), names))
    seen.append(names(await graph.ainvoke(resume("again"), thread)))
    seen.append([snapshot_view(s, names) async for s in graph.aget_state_history(thread)])
    saver = graph.checkpointer
    assert isinstance(saver, BaseCheckpointSaver)
    seen.append(stored_view([saved async for saved in saver.alist(config(thread_id))]))
    return seen


# ----- tests ---------------------------------------------------------------------------


@pytest.fixture
def saver(checkpoint_server: CheckpointServer) -> Iterator[StatekeeperSaver]:
    with StatekeeperSaver(checkpoint_server.address, api_key=API_KEY) as created:
        yield created


def assert_replayed_the_subgraph(seen: list[Any]) -> None:
    """The scenario did what it claims (so equality is not of two failures).
    The subgraph returns its whole `log`, which the parent's reducer appends:
    hence the repeated head."""
    head = ["start:0", "left:1", "right:1"]
    question = {"question": "approve?", "seen": 4}
    assert seen[0] == {"log": head, "__interrupt__": [{"interrupt": "<id0>", "value": question}]}
    assert seen[2]["log"] == [*head, *head, "prepare:3", "review:yes", "seal:5", "finish:9"]
    forked = [*head, "edited"]
    assert seen[4]["__interrupt__"][0]["value"] == {"question": "approve?", "seen": 5}
    assert seen[6]["log"] == [*forked, *forked, "prepare:4", "review:no", "seal:6", "finish:11"]
    # The replay runs the subgraph afresh: it asks again, from the same state.
    assert seen[7]["log"] == head
    assert seen[7]["__interrupt__"][0]["value"] == question
    assert seen[9] == {
        "log": [*head, *head, "prepare:3", "review:again", "seal:5", "finish:9"],
        "approval": "again",
    }


def test_sync_run_matches_in_memory_saver(saver: StatekeeperSaver) -> None:
    thread = f"travel-{uuid.uuid4().hex}"
    expected = run_sync(build_graph(InMemorySaver()), thread)
    assert_replayed_the_subgraph(expected)
    assert run_sync(build_graph(saver), thread) == expected


async def test_async_run_matches_in_memory_saver(saver: StatekeeperSaver) -> None:
    thread = f"travel-{uuid.uuid4().hex}"
    expected = await run_async(build_graph(InMemorySaver()), thread)
    assert_replayed_the_subgraph(expected)
    assert await run_async(build_graph(saver), thread) == expected
