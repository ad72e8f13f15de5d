"""A real LangGraph graph, interrupted mid-run, resumes from its checkpoint on
the server and ends in the same final state as an uninterrupted run.

Two interruptions: a node that raises (in process, async API), and a worker
process killed with SIGKILL while a node runs (sync API). In both, the
parallel node that had finished before the crash is not run again: its
writes were saved as pending writes and are replayed on resume.
"""

from __future__ import annotations

import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from statekeeper_client.langgraph import StatekeeperSaver
from tests.harness import processes
from tests.harness.deadlines import scaled, wait_until
from tests.langgraph.conftest import API_KEY
from tests.langgraph.graph_app import INPUT, Behaviour, compiled
from tests.langgraph.harness import CheckpointServer

EXPECTED_LOG = ["start", "left", "right", "join", "finish"]


def config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def reference_state(server: CheckpointServer, workdir: Path) -> dict[str, Any]:
    """The final state of an uninterrupted run, on its own thread."""
    workdir.mkdir()
    thread_id = f"reference-{uuid.uuid4().hex}"
    with StatekeeperSaver(server.address, api_key=API_KEY) as saver:
        graph = compiled(Behaviour(workdir), saver)
        graph.invoke(INPUT, config(thread_id))
        return dict(graph.get_state(config(thread_id)).values)


async def test_a_node_that_raises_resumes_from_the_checkpoint(
    checkpoint_server: CheckpointServer, tmp_path: Path
) -> None:
    expected = reference_state(checkpoint_server, tmp_path / "reference")
    behaviour = Behaviour(tmp_path, crash_mode="raise")
    async with StatekeeperSaver(checkpoint_server.address, api_key=API_KEY) as saver:
        graph = compiled(behaviour, saver)
        with pytest.raises(RuntimeError, match="simulated crash"):
            await graph.ainvoke(INPUT, config("raises"))
        stuck = await graph.aget_state(config("raises"))
        assert stuck.next == ("right",), "the failed superstep is where it stopped"

    # A new saver (a new process would do the same): resume with no input.
    async with StatekeeperSaver(checkpoint_server.address, api_key=API_KEY) as saver:
        graph = compiled(behaviour, saver)
        await graph.ainvoke(None, config("raises"))
        final = await graph.aget_state(config("raises"))

    assert final.next == ()
    assert dict(final.values) == expected
    assert expected["log"] == EXPECTED_LOG and expected["total"] == (3 * 7 + 103) * 2
    assert behaviour.executions().count("left") == 1, "left's saved writes were replayed"
    assert behaviour.executions().count("right") == 2


def test_a_killed_worker_process_resumes_from_the_checkpoint(
    checkpoint_server: CheckpointServer, tmp_path: Path
) -> None:
    expected = reference_state(checkpoint_server, tmp_path / "reference")
    thread_id = "killed"
    worker = processes.spawn(
        processes.python_module(
            "tests.langgraph.graph_app",
            *(checkpoint_server.address, API_KEY, thread_id, str(tmp_path)),
        ),
        tmp_path / "worker.log",
    )
    try:
        with StatekeeperSaver(checkpoint_server.address, api_key=API_KEY) as saver:
            wait_until_left_is_saved(saver, thread_id, tmp_path, worker)
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=scaled(30))
    finally:
        if worker.poll() is None:
            processes.kill(worker)
    assert worker.returncode == -signal.SIGKILL

    behaviour = Behaviour(tmp_path)
    with StatekeeperSaver(checkpoint_server.address, api_key=API_KEY) as saver:
        graph = compiled(behaviour, saver)
        assert graph.get_state(config(thread_id)).next == ("right",)
        graph.invoke(None, config(thread_id))
        final = graph.get_state(config(thread_id))

    assert final.next == ()
    assert dict(final.values) == expected
    runs = behaviour.executions()
    assert runs.count("left") == 1 and runs.count("start") == 1
    assert runs.count("right") == 2, "killed once, then run to completion"


def wait_until_left_is_saved(
    saver: StatekeeperSaver, thread_id: str, workdir: Path, worker: subprocess.Popen[bytes]
) -> None:
    """Waits until `right` hangs and `left`'s write is stored on the server,
    so the kill lands mid-superstep with one parallel task done."""

    def left_is_saved() -> bool:
        assert worker.poll() is None, "the worker exited before it could be killed"
        if not (workdir / "right-started").exists():
            return False
        latest = saver.get_tuple(config(thread_id))
        writes = latest.pending_writes if latest else None
        return bool(writes) and any(
            value == ["left"] for _, channel, value in writes or [] if channel == "log"
        )

    wait_until(
        left_is_saved,
        60,
        "left's pending write on the server",
        lambda: processes.log_tail(workdir / "worker.log"),
    )
