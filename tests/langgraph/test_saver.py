"""StatekeeperSaver behaviour beyond the conformance suite: what pruning
keeps, late writes after a delete, ownership, writes racing their
checkpoint's put, and the sync API."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import Checkpoint, empty_checkpoint

from statekeeper_client.langgraph import OwnershipLostError, StatekeeperSaver
from tests.langgraph.conftest import API_KEY
from tests.langgraph.graph_app import INPUT, Behaviour, compiled
from tests.langgraph.harness import CheckpointServer


@pytest.fixture
def saver(checkpoint_server: CheckpointServer) -> Any:
    with StatekeeperSaver(checkpoint_server.address, api_key=API_KEY) as created:
        yield created


def config(thread_id: str, checkpoint_id: str | None = None, ns: str = "") -> dict[str, Any]:
    configurable = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def checkpoint(values: dict[str, Any], versions: dict[str, str]) -> Checkpoint:
    made = empty_checkpoint()
    made["channel_values"] = values
    made["channel_versions"] = versions
    return made


def put_chain(saver: StatekeeperSaver, thread_id: str) -> list[dict[str, Any]]:
    """Three checkpoints: `big` is sent once with the first and then only
    named by version; `counter` changes every time."""
    stored: list[dict[str, Any]] = []
    parent: str | None = None
    for step in range(3):
        values = {"big": "x" * 10_000, "counter": step}
        versions = {"big": "1", "counter": str(step + 1)}
        new = {"big": "1", "counter": str(step + 1)} if step == 0 else {"counter": str(step + 1)}
        saved = saver.put(
            config(thread_id, parent), checkpoint(values, versions), {"step": step}, new
        )
        parent = saved["configurable"]["checkpoint_id"]
        stored.append(saved)
    return stored


def test_prune_keeps_the_values_the_kept_checkpoint_needs(saver: StatekeeperSaver) -> None:
    thread = uuid.uuid4().hex
    stored = put_chain(saver, thread)
    saver.prune([thread], strategy="keep_latest")
    kept = list(saver.list(config(thread)))
    assert [t.config["configurable"]["checkpoint_id"] for t in kept] == [
        stored[-1]["configurable"]["checkpoint_id"]
    ]
    assert kept[0].checkpoint["channel_values"] == {"big": "x" * 10_000, "counter": 2}
    assert kept[0].metadata["step"] == 2 and isinstance(kept[0].metadata["step"], int)
    # A graph continues from the kept checkpoint, naming `big` by version only.
    nxt = saver.put(
        stored[-1],
        checkpoint({"big": "x" * 10_000, "counter": 3}, {"big": "1", "counter": "4"}),
        {"step": 3},
        {"counter": "4"},
    )
    got = saver.get_tuple(nxt)
    assert got is not None and got.checkpoint["channel_values"]["big"] == "x" * 10_000


def test_a_value_the_server_no_longer_has_is_resent(saver: StatekeeperSaver) -> None:
    thread = uuid.uuid4().hex
    stored = put_chain(saver, thread)
    saver.prune([thread], strategy="delete")
    # The server lost every value; the saver still names `big` by version.
    saved = saver.put(
        stored[-1],
        checkpoint({"big": "y", "counter": 9}, {"big": "1", "counter": "9"}),
        {"step": 9},
        {"counter": "9"},
    )
    got = saver.get_tuple(saved)
    assert got is not None and got.checkpoint["channel_values"] == {"big": "y", "counter": 9}


def test_late_writes_after_delete_are_refused_and_dropped(saver: StatekeeperSaver) -> None:
    thread = uuid.uuid4().hex
    stored = put_chain(saver, thread)
    saver.delete_thread(thread)
    # A worker that still holds the deleted checkpoint writes late: no
    # exception (LangGraph expects none), and nothing comes back to life.
    saver.put_writes(stored[-1], [("counter", 99)], "task-late")
    late = saver.put(stored[-1], checkpoint({"counter": 5}, {"counter": "5"}), {}, {"counter": "5"})
    assert saver.get_tuple(late) is None
    assert list(saver.list(config(thread))) == []
    fresh = saver.put(
        config(thread), checkpoint({"counter": 0}, {"counter": "1"}), {}, {"counter": "1"}
    )
    assert saver.get_tuple(fresh) is not None, "a parentless checkpoint starts afresh"


def test_a_superseded_owner_cannot_write(checkpoint_server: CheckpointServer) -> None:
    thread = uuid.uuid4().hex
    with (
        StatekeeperSaver(checkpoint_server.address, api_key=API_KEY) as first,
        StatekeeperSaver(checkpoint_server.address, api_key=API_KEY) as second,
    ):
        first.claim(thread)
        saved = first.put(config(thread), checkpoint({}, {}), {}, {})
        second.claim(thread)
        with pytest.raises(OwnershipLostError):
            first.put(saved, checkpoint({}, {}), {}, {})
        with pytest.raises(OwnershipLostError):
            first.put_writes(saved, [("a", 1)], "task")
        second.put(saved, checkpoint({}, {}), {}, {})


def test_writes_wait_for_their_checkpoint_in_flight(saver: StatekeeperSaver) -> None:
    thread = uuid.uuid4().hex
    made = checkpoint({}, {})
    target = config(thread, made["id"])
    writer = threading.Thread(target=saver.put_writes, args=(target, [("a", 1)], "task"))
    writer.start()
    time.sleep(0.1)  # the writes arrive first and find no checkpoint yet
    saver.put(config(thread), made, {}, {})
    writer.join(timeout=10)
    got = saver.get_tuple(target)
    assert got is not None and got.pending_writes == [("task", "a", 1)]


async def test_async_list_filters_and_bounds(saver: StatekeeperSaver) -> None:
    thread = uuid.uuid4().hex
    stored = put_chain(saver, thread)
    newest_first = [
        t.config["configurable"]["checkpoint_id"] async for t in saver.alist(config(thread))
    ]
    assert newest_first == [s["configurable"]["checkpoint_id"] for s in reversed(stored)]
    by_step = [t.metadata["step"] async for t in saver.alist(config(thread), filter={"step": 1})]
    assert by_step == [1]
    before = [
        t.metadata["step"] async for t in saver.alist(config(thread), before=stored[2], limit=1)
    ]
    assert before == [1]
    everywhere = [t async for t in saver.alist(None, filter={"step": 2}, limit=500)]
    assert thread in {t.config["configurable"]["thread_id"] for t in everywhere}


def test_sync_graph_run_and_fork(saver: StatekeeperSaver, tmp_path: Path) -> None:
    graph = compiled(Behaviour(tmp_path), saver)
    graph.invoke(INPUT, config("sync-run"))
    history = list(graph.get_state_history(config("sync-run")))
    assert history[0].values["log"] == ["start", "left", "right", "join", "finish"]
    saver.copy_thread("sync-run", "sync-fork")
    forked = graph.get_state(config("sync-fork"))
    assert forked.values == history[0].values
    assert len(list(graph.get_state_history(config("sync-fork")))) == len(history)
