"""RecordEpisodes over real gRPC on both backends: one result per item in
request order (created, duplicate, error), a bad item failing only itself,
and the created episodes found by Recall."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from statekeeper.core.audit.models import AuditFilter
from statekeeper_client.v1 import common_pb2 as common_pb
from statekeeper_client.v1 import memory_pb2 as pb
from statekeeper_client.v1 import memory_pb2_grpc
from tests.harness.memory import Backend, auth
from tests.memory.test_memory_grpc import expect_error

ONLY_SIMILARITY = pb.RecallWeights(similarity=1.0, recency=0.0, importance=0.0)
CREATED = pb.RECORD_EPISODE_STATUS_CREATED
DUPLICATE = pb.RECORD_EPISODE_STATUS_DUPLICATE
ERROR = pb.RECORD_EPISODE_STATUS_ERROR


@pytest.fixture
def memory(backend: Backend) -> memory_pb2_grpc.MemoryServiceStub:
    return backend.memory


def item(
    text: str, vector: list[float], user: str = "u1", **fields: Any
) -> pb.RecordEpisodeRequest:
    return pb.RecordEpisodeRequest(
        user_id=user, user_message=text, assistant_response="ok", embedding=vector, **fields
    )


async def test_mixed_batch_reports_each_item_in_order(
    memory: memory_pb2_grpc.MemoryServiceStub,
) -> None:
    stored = await memory.RecordEpisode(item("stored before", [1.0, 0.0, 0.0]), metadata=auth())
    batch = [
        item("about cats", [0.0, 1.0, 0.0]),  # created
        item("STORED  before", [0.0, 0.0, 1.0]),  # exact duplicate of the stored one
        item("bad importance", [0.0, 1.0, 1.0], importance=1.5),  # error
        item("about dogs", [0.0, 0.0, 1.0], metadata={"k": "v"}),  # created
        item("about cats", [0.0, 1.0, 0.0]),  # exact duplicate of item 0
        item("wrong dimension", [1.0, 1.0]),  # error
        item("", [1.0, 0.0, 1.0]),  # created: the response alone is enough
        pb.RecordEpisodeRequest(user_id="", user_message="no user"),  # error
        item("cats again", [0.0, 0.999, 0.01]),  # near duplicate of item 0
    ]
    response = await memory.RecordEpisodes(
        pb.RecordEpisodesRequest(episodes=batch), metadata=auth()
    )
    statuses = [r.status for r in response.results]
    assert statuses == [
        CREATED,
        DUPLICATE,
        ERROR,
        CREATED,
        DUPLICATE,
        ERROR,
        CREATED,
        ERROR,
        DUPLICATE,
    ]
    results = response.results
    assert (response.created_count, response.duplicate_count, response.error_count) == (3, 3, 3)
    cats = results[0].result.episode
    assert cats.id and not results[0].result.duplicate and cats.user_message == "about cats"
    assert results[1].result.duplicate_of == stored.episode.id
    assert results[1].result.duplicate_kind == pb.DUPLICATE_KIND_EXACT
    assert results[2].error_field == "episodes[2].importance"
    assert results[2].error_reason == common_pb.ERROR_REASON_INVALID_FIELD
    assert "episodes[2].importance" in results[2].error_message
    assert results[3].result.episode.metadata["k"] == "v"
    assert results[4].result.duplicate_of == cats.id
    assert results[4].result.duplicate_kind == pb.DUPLICATE_KIND_EXACT
    assert results[5].error_field == "episodes[5].embedding"
    assert results[5].error_reason == common_pb.ERROR_REASON_DIMENSION_MISMATCH
    assert results[7].error_field == "episodes[7].user_id"
    assert results[8].result.duplicate_of == cats.id
    assert results[8].result.duplicate_kind == pb.DUPLICATE_KIND_NEAR
    assert results[8].result.duplicate_similarity > 0.99
    found = await memory.Recall(
        pb.RecallRequest(
            user_id="u1",
            query_vector=pb.QueryVector(values=[0.0, 0.0, 1.0]),
            weights=ONLY_SIMILARITY,
        ),
        metadata=auth(),
    )
    ids = [r.episode.id for r in found.results]
    assert ids[0] == results[3].result.episode.id
    assert {cats.id, results[6].result.episode.id, stored.episode.id} <= set(ids)
    assert len(ids) == 4
    lexical = await memory.Recall(
        pb.RecallRequest(user_id="u1", query_text="dogs"), metadata=auth()
    )
    assert [r.episode.id for r in lexical.results][:1] == [results[3].result.episode.id]


async def test_each_created_episode_is_audited_as_recorded(backend: Backend) -> None:
    batch = [item("one", [1.0, 0.0]), item("one", [1.0, 0.0]), item("two", [0.0, 1.0])]
    response = await backend.memory.RecordEpisodes(
        pb.RecordEpisodesRequest(episodes=batch), metadata=auth()
    )
    created = [r.result.episode.id for r in response.results if r.status == CREATED]
    records = await backend.app.storage.audit.list_audit("alpha", AuditFilter(), 0, 100)
    trail = [(r.method, r.entity_type, r.entity_id, r.summary) for r in reversed(records)]
    assert trail == [("RecordEpisodes", "episode", e, "recorded") for e in created]


async def test_batches_of_several_users_without_vectors(
    memory: memory_pb2_grpc.MemoryServiceStub,
) -> None:
    batch = [
        pb.RecordEpisodeRequest(user_id=f"user{n % 3}", user_message=f"note number {n}")
        for n in range(30)
    ]
    response = await memory.RecordEpisodes(
        pb.RecordEpisodesRequest(episodes=batch), metadata=auth()
    )
    assert response.created_count == 30
    listed = await memory.ListEpisodes(pb.ListEpisodesRequest(user_id="user1"), metadata=auth())
    assert len(listed.episodes) == 10


async def test_whole_request_errors(memory: memory_pb2_grpc.MemoryServiceStub) -> None:
    too_many = [item(f"n{n}", [1.0, float(n)]) for n in range(1001)]
    info = await expect_error(
        memory.RecordEpisodes(pb.RecordEpisodesRequest(episodes=too_many), metadata=auth()),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    )
    assert info.metadata["field"] == "episodes" and info.metadata["limit"] == "1000"
    info = await expect_error(
        memory.RecordEpisodes(pb.RecordEpisodesRequest(), metadata=auth()),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert info.metadata["field"] == "episodes"
