"""Memory and checkpoints through `statekeeper serve` on the production tier:
what one replica writes, another serves, and both survive a kill -9."""

from __future__ import annotations

import time

import grpc
import pytest

from statekeeper_client.v1 import checkpoint_pb2 as cp
from statekeeper_client.v1 import common_pb2, memory_pb2
from statekeeper_client.v1.checkpoint_pb2_grpc import CheckpointServiceStub
from statekeeper_client.v1.memory_pb2_grpc import MemoryServiceStub
from tests.integration.conftest import ServerFactory

DIMENSION = 8


def vector(seed: int) -> list[float]:
    """Nearly orthogonal vectors, so no two are near-duplicates."""
    return [1.0 if i == seed else 0.05 for i in range(DIMENSION)]


def recall_ids(address: str, seed: int) -> list[str]:
    with grpc.insecure_channel(address) as channel:
        reply = MemoryServiceStub(channel).Recall(
            memory_pb2.RecallRequest(
                user_id="ada",
                query_vector=memory_pb2.QueryVector(values=vector(seed)),
                top_k=3,
            )
        )
    return [result.episode.id for result in reply.results]


@pytest.mark.usefixtures("services")
def test_memory_and_checkpoints_across_replicas_and_restart(
    production_server: ServerFactory,
) -> None:
    first = production_server()
    second = production_server()
    with grpc.insecure_channel(first.address) as channel:
        memory = MemoryServiceStub(channel)
        recorded = [
            memory.RecordEpisode(
                memory_pb2.RecordEpisodeRequest(
                    user_id="ada",
                    user_message=f"question {seed}",
                    assistant_response=f"answer {seed}",
                    embedding=vector(seed),
                )
            ).episode.id
            for seed in range(5)
        ]
        assert len(set(recorded)) == 5, "episodes were merged as duplicates"
        CheckpointServiceStub(channel).SaveCheckpoint(
            cp.SaveCheckpointRequest(
                checkpoint=cp.Checkpoint(
                    execution_id="run-1",
                    checkpoint_id="0001",
                    step=1,
                    state=common_pb2.Payload(content_type="application/json", data=b'{"n":1}'),
                )
            )
        )
    # The other replica recalls the new episodes (index synced through the
    # change feed) and reads the checkpoint.
    deadline = time.monotonic() + 5
    while recall_ids(second.address, 3)[:1] != [recorded[3]] and time.monotonic() < deadline:
        time.sleep(0.05)
    before = recall_ids(second.address, 3)
    assert before[0] == recorded[3]
    with grpc.insecure_channel(second.address) as channel:
        got = CheckpointServiceStub(channel).GetCheckpoint(
            cp.GetCheckpointRequest(execution_id="run-1")
        )
    assert got.checkpoint.checkpoint_id == "0001" and got.checkpoint.state.data == b'{"n":1}'
    # kill -9 and restart: indexes are rebuilt from PostgreSQL.
    second.restart()
    assert recall_ids(second.address, 3) == before
