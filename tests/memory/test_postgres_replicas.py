"""Memory on the production tier with real `statekeeper serve` processes:
two replicas on one database stay in sync through the LISTEN/NOTIFY change
feed, and kill -9 loses nothing because the indexes are rebuilt from
PostgreSQL.

Each test runs on a fresh database of the test server and a Redis prefix of
its own (tests.harness.backends), and is skipped, with the reason printed,
when the services are not configured.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest

from statekeeper_client.v1 import memory_pb2 as pb
from statekeeper_client.v1 import memory_pb2_grpc
from tests.harness import backends
from tests.harness.backends import Production
from tests.harness.deadlines import wait_until
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.memory import auth
from tests.harness.servers import ServerProcess
from tests.memory.data import gaussian
from tests.memory.test_restart import recall_all

QUERY = pb.RecallRequest(user_id="u1", query_vector=pb.QueryVector(values=[0.0, 1.0]))


@pytest.fixture
def where() -> Iterator[Production]:
    with backends.production("memory") as fresh:
        yield fresh


def replica_server(where: Production, tmp_path: Path) -> ServerProcess:
    """A production `statekeeper serve` on `where` (not started)."""
    return ServerProcess(tmp_path, extra_args=[*where.serve_args(), *key_args(API_KEYS)])


@contextmanager
def replica(where: Production, tmp_path: Path) -> Iterator[memory_pb2_grpc.MemoryServiceStub]:
    """A replica serving on `where`, killed on exit."""
    server = replica_server(where, tmp_path)
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            yield memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
    finally:
        server.kill()


def wait_for(stub: memory_pb2_grpc.MemoryServiceStub, want: list[str]) -> None:
    """Polls Recall of QUERY until it returns the episodes `want` (by user
    message, in any order); fails, saying what it returned, if it never does
    within a load-scaled deadline. How fast is bench/'s business."""
    found: list[str] = []

    def arrived() -> bool:
        found[:] = [r.episode.user_message for r in stub.Recall(QUERY, metadata=auth()).results]
        return sorted(found) == sorted(want)

    wait_until(arrived, 10, f"replica recalls {want}", lambda: f"it recalls {found}")


def test_a_change_on_one_replica_reaches_the_other(where: Production, tmp_path: Path) -> None:
    with replica(where, tmp_path / "one") as one, replica(where, tmp_path / "two") as two:
        # Replica two loads u1's (empty) index before the write happens, so
        # only the change feed can bring the episode to it.
        assert list(two.Recall(QUERY, metadata=auth()).results) == []
        recorded = one.RecordEpisode(
            pb.RecordEpisodeRequest(user_id="u1", user_message="x", embedding=[0.1, 1.0]),
            metadata=auth(),
        )
        wait_for(two, ["x"])
        two.RecordEpisode(
            pb.RecordEpisodeRequest(user_id="u1", user_message="y", embedding=[1.0, 0.2]),
            metadata=auth(),
        )
        wait_for(one, ["x", "y"])
        one.DeleteEpisode(pb.DeleteEpisodeRequest(episode_id=recorded.episode.id), metadata=auth())
        wait_for(two, ["y"])


def test_recall_is_the_same_after_kill_9_on_postgres(where: Production, tmp_path: Path) -> None:
    server = replica_server(where, tmp_path)
    vectors = gaussian(200, 32, seed=31)
    queries = gaussian(8, 32, seed=32)
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
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
        server.restart()  # kill -9, start again on the same database
        with grpc.insecure_channel(server.address) as channel:
            stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
            after = recall_all(stub, queries)
            stats = stub.GetIndexStats(pb.GetIndexStatsRequest(user_id="u1"), metadata=auth())
    finally:
        server.kill()
    assert after == before  # same episodes, same similarities
    assert all(len(answer) == 10 for answer in after)
    assert doomed not in {i for answer in after for i, _ in answer}
    assert stats.stats.vector_count == 199 and stats.stats.state == pb.INDEX_STATE_READY
