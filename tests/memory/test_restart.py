"""kill -9, restart: recall returns the same results, because the indexes are
rebuilt from the durable store (nothing about them is saved on the side)."""

from __future__ import annotations

from pathlib import Path

import grpc
import numpy as np

from statekeeper_client.v1 import memory_pb2 as pb
from statekeeper_client.v1 import memory_pb2_grpc
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.memory import auth
from tests.harness.servers import ServerProcess
from tests.memory.data import gaussian

ONLY_SIMILARITY = pb.RecallWeights(similarity=1.0, recency=0.0, importance=0.0)


def recall_all(
    stub: memory_pb2_grpc.MemoryServiceStub, queries: np.ndarray
) -> list[list[tuple[str, float]]]:
    answers = []
    for query in queries:
        reply = stub.Recall(
            pb.RecallRequest(
                user_id="u1",
                query_vector=pb.QueryVector(values=query.tolist()),
                top_k=10,
                weights=ONLY_SIMILARITY,
            ),
            metadata=auth(),
        )
        answers.append([(r.episode.id, r.score.similarity) for r in reply.results])
    return answers


def test_recall_is_the_same_after_kill_9(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, extra_args=key_args(API_KEYS))
    vectors = gaussian(300, 64, seed=21)
    queries = gaussian(10, 64, seed=22)
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
        server.restart()  # kill -9, start again on the same data
        with grpc.insecure_channel(server.address) as channel:
            stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
            after = recall_all(stub, queries)
            stats = stub.GetIndexStats(pb.GetIndexStatsRequest(user_id="u1"), metadata=auth())
    finally:
        server.kill()
    assert [[i for i, _ in answer] for answer in after] == [[i for i, _ in a] for a in before]
    assert all(len(answer) == 10 for answer in after)
    assert doomed not in {i for answer in after for i, _ in answer}
    assert stats.stats.vector_count == 299 and stats.stats.state == pb.INDEX_STATE_READY
