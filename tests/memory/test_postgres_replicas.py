"""Memory on PostgreSQL with real server processes: two replicas on one
database stay in sync through the LISTEN/NOTIFY change feed, and kill -9
loses nothing because the indexes are rebuilt from PostgreSQL.

Each test runs on a fresh database of the test server (tests/services.py)
and is skipped, with the reason printed, when the server is not configured.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest

from statekeeper_client.v1 import memory_pb2 as pb
from statekeeper_client.v1 import memory_pb2_grpc
from tests.e2e.conftest import free_port
from tests.memory.data import gaussian
from tests.memory.helpers import auth
from tests.memory.test_restart import recall_all
from tests.services import configured, fresh_database, reachable

ROOT = Path(__file__).resolve().parents[2]
QUERY = pb.RecallRequest(user_id="u1", query_vector=pb.QueryVector(values=[0.0, 1.0]))


@pytest.fixture
async def dsn() -> AsyncIterator[str]:
    services = configured()
    await reachable(services)
    async with fresh_database(services) as database:
        yield database


def start(dsn: str, port: int) -> subprocess.Popen[str]:
    """A memory server process on PostgreSQL, once it prints READY."""
    command = [sys.executable, "-m", "tests.memory.serve_memory", "--postgres-dsn", dsn]
    process = subprocess.Popen(
        [*command, "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # bounded: the server prints READY or exits
        line = process.stdout.readline()
        if line.strip() == "READY":
            return process
        if not line and process.poll() is not None:
            break
    process.kill()
    raise RuntimeError("memory server did not start")


@contextmanager
def replica(dsn: str) -> Iterator[memory_pb2_grpc.MemoryServiceStub]:
    process = start(dsn, port := free_port())
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
    finally:
        process.kill()
        process.wait(timeout=10)


def wait_for(stub: memory_pb2_grpc.MemoryServiceStub, want: list[str]) -> float:
    """Seconds until Recall of QUERY returns the episodes `want` (by user
    message, in any order), polling for at most 1 s; raises if it never does."""
    started = time.monotonic()
    while True:  # bounded by the 1 s deadline below
        found = stub.Recall(QUERY, metadata=auth())
        elapsed = time.monotonic() - started
        if sorted(r.episode.user_message for r in found.results) == sorted(want):
            return elapsed
        assert elapsed < 1.0, f"still {[r.episode.user_message for r in found.results]}"
        time.sleep(0.01)


def test_a_change_on_one_replica_reaches_the_other_within_a_second(dsn: str) -> None:
    with replica(dsn) as one, replica(dsn) as two:
        # Replica two loads u1's (empty) index before the write happens, so
        # only the change feed can bring the episode to it.
        assert list(two.Recall(QUERY, metadata=auth()).results) == []
        recorded = one.RecordEpisode(
            pb.RecordEpisodeRequest(user_id="u1", user_message="x", embedding=[0.1, 1.0]),
            metadata=auth(),
        )
        added = wait_for(two, ["x"])
        two.RecordEpisode(
            pb.RecordEpisodeRequest(user_id="u1", user_message="y", embedding=[1.0, 0.2]),
            metadata=auth(),
        )
        back = wait_for(one, ["x", "y"])
        one.DeleteEpisode(pb.DeleteEpisodeRequest(episode_id=recorded.episode.id), metadata=auth())
        removed = wait_for(two, ["y"])
    print(
        f"replica lag: add {added * 1000:.0f} ms, back {back * 1000:.0f} ms,"
        f" delete {removed * 1000:.0f} ms"
    )


def test_recall_is_the_same_after_kill_9_on_postgres(dsn: str) -> None:
    port = free_port()
    vectors = gaussian(200, 32, seed=31)
    queries = gaussian(8, 32, seed=32)
    process = start(dsn, port)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
            for row, vector in enumerate(vectors):
                stub.RecordEpisode(
                    pb.RecordEpisodeRequest(
                        user_id="u1", user_message=f"m{row}", embedding=vector.tolist()
                    ),
                    metadata=auth(),
                )
            doomed = recall_all(stub, queries[:1])[0][0][0]
            stub.DeleteEpisode(pb.DeleteEpisodeRequest(episode_id=doomed), metadata=auth())
            before = recall_all(stub, queries)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        process = start(dsn, port)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
            after = recall_all(stub, queries)
            stats = stub.GetIndexStats(pb.GetIndexStatsRequest(user_id="u1"), metadata=auth())
    finally:
        process.kill()
        process.wait(timeout=10)
    assert after == before  # same episodes, same similarities
    assert all(len(answer) == 10 for answer in after)
    assert doomed not in {i for answer in after for i, _ in answer}
    assert stats.stats.vector_count == 199 and stats.stats.state == pb.INDEX_STATE_READY
