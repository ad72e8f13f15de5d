"""MemoryService over real gRPC (grpc.aio on 127.0.0.1, the real interceptor):
status codes and ErrorInfo, tenancy, model endpoints, replicas."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from statekeeper.core.audit.models import AuditFilter
from statekeeper.core.memory.vector_index import InProcessChangeFeed
from statekeeper.memory_app import ModelEndpoints
from statekeeper_client.v1 import memory_pb2 as pb
from tests.fakes.openai_server import FakeOpenAI
from tests.harness.deadlines import wait_until_async
from tests.memory.helpers import Served, auth, served_memory

ONLY_SIMILARITY = pb.RecallWeights(similarity=1.0, recency=0.0, importance=0.0)


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    async with served_memory(tmp_path) as handle:
        yield handle


def error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    raise AssertionError("no ErrorInfo")


async def expect_error(call: object, code: grpc.StatusCode) -> error_details_pb2.ErrorInfo:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call  # type: ignore[misc]
    assert raised.value.code() == code, raised.value.details()
    return error_info(raised.value)


async def test_record_recall_and_tenant_isolation(served: Served) -> None:
    memory = served.memory
    recorded = await memory.RecordEpisode(
        pb.RecordEpisodeRequest(
            user_id="u1",
            user_message="hi",
            assistant_response="hello",
            embedding=[1.0, 0.0, 0.0],
            importance=0.7,
        ),
        metadata=auth(),
    )
    episode_id = recorded.episode.id
    assert not recorded.duplicate and recorded.episode.importance == pytest.approx(0.7)
    again = await memory.RecordEpisode(
        pb.RecordEpisodeRequest(user_id="u1", user_message="HI", assistant_response=" hello"),
        metadata=auth(),
    )
    assert again.duplicate and again.duplicate_of == episode_id
    assert again.duplicate_kind == pb.DUPLICATE_KIND_EXACT
    found = await memory.Recall(
        pb.RecallRequest(
            user_id="u1",
            query_vector=pb.QueryVector(values=[1.0, 0.1, 0.0]),
            weights=ONLY_SIMILARITY,
        ),
        metadata=auth(),
    )
    assert [r.episode.id for r in found.results] == [episode_id]
    assert found.ranking == pb.RECALL_RANKING_VECTOR and found.index_type == "Flat"
    assert found.effective_weights.similarity == pytest.approx(1.0)
    # Tenant beta sees nothing of alpha's, whatever ids or users it names.
    await expect_error(
        memory.GetEpisode(pb.GetEpisodeRequest(episode_id=episode_id), metadata=auth("key-beta")),
        grpc.StatusCode.NOT_FOUND,
    )
    other = await memory.Recall(
        pb.RecallRequest(user_id="u1", query_vector=pb.QueryVector(values=[1.0, 0.0, 0.0])),
        metadata=auth("key-beta"),
    )
    assert list(other.results) == []
    await expect_error(
        memory.GetEpisode(pb.GetEpisodeRequest(episode_id=episode_id)),
        grpc.StatusCode.UNAUTHENTICATED,
    )


async def test_bad_input_is_invalid_argument_naming_the_field(served: Served) -> None:
    memory = served.memory
    info = await expect_error(
        memory.RecordEpisode(
            pb.RecordEpisodeRequest(user_id="u1", user_message="x", importance=1.5),
            metadata=auth(),
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert info.reason == "INVALID_FIELD" and info.metadata["field"] == "importance"
    await memory.RecordEpisode(
        pb.RecordEpisodeRequest(user_id="u1", user_message="x", embedding=[1.0, 2.0]),
        metadata=auth(),
    )
    info = await expect_error(
        memory.Recall(
            pb.RecallRequest(user_id="u1", query_vector=pb.QueryVector(values=[1.0, 2.0, 3.0])),
            metadata=auth(),
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert info.reason == "DIMENSION_MISMATCH"
    assert info.metadata["field"] == "query_vector.values"
    info = await expect_error(
        memory.Recall(pb.RecallRequest(user_id="u1"), metadata=auth()),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert info.metadata["field"] == "query"
    info = await expect_error(
        memory.AddFacts(
            pb.AddFactsRequest(
                facts=[
                    pb.FactInput(subject="a", predicate="b", object="c"),
                    pb.FactInput(subject="a", predicate="", object="c"),
                ]
            ),
            metadata=auth(),
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert info.metadata["field"] == "facts[1].predicate"
    info = await expect_error(
        memory.QueryEntity(pb.QueryEntityRequest(entity="a", depth=9), metadata=auth()),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert info.metadata["field"] == "depth"
    info = await expect_error(
        memory.RunConsolidation(pb.RunConsolidationRequest(min_cluster_size=1), metadata=auth()),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert info.metadata["field"] == "min_cluster_size"
    info = await expect_error(
        memory.ListEpisodes(pb.ListEpisodesRequest(page_token="garbage"), metadata=auth()),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert info.metadata["field"] == "page_token"
    stats = await memory.GetIndexStats(pb.GetIndexStatsRequest(user_id="nobody"), metadata=auth())
    assert stats.stats.state == pb.INDEX_STATE_ABSENT


async def test_model_endpoints_over_http(tmp_path: Path) -> None:
    fake = FakeOpenAI().start()
    try:
        endpoints = ModelEndpoints(embedder_url=fake.base_url, llm_url=fake.base_url)
        async with served_memory(tmp_path, endpoints=endpoints) as served:
            memory = served.memory
            fake.chat_replies.append(
                '{"facts": [{"subject": "Ada", "predicate": "works_at", "object": "Acme",'
                ' "confidence": 0.9}]}'
            )
            extracted = await memory.ExtractFacts(
                pb.ExtractFactsRequest(text="Ada joined Acme last week."), metadata=auth()
            )
            assert extracted.extractor == pb.MEMORY_VALUE_SOURCE_MODEL
            assert [r.fact.object for r in extracted.results] == ["Acme"]
            recorded = await memory.RecordEpisode(
                pb.RecordEpisodeRequest(user_id="u1", user_message="green tea please"),
                metadata=auth(),
            )
            assert recorded.episode.embedding_source == pb.MEMORY_VALUE_SOURCE_MODEL
            recalled = await memory.Recall(
                pb.RecallRequest(user_id="u1", query_text="tea"), metadata=auth()
            )
            assert recalled.ranking == 3  # HYBRID (text query with an embedder)
            assert [r.episode.id for r in recalled.results] == [recorded.episode.id]
            assert "/v1/embeddings" in fake.paths() and "/v1/chat/completions" in fake.paths()
            fake.fail_with = 502
            info = await expect_error(
                memory.Recall(pb.RecallRequest(user_id="u1", query_text="tea"), metadata=auth()),
                grpc.StatusCode.UNAVAILABLE,
            )
            assert info.metadata["dependency"] == "embedder"
    finally:
        fake.stop()


async def test_an_episode_recorded_on_one_replica_is_recalled_on_the_other(
    tmp_path: Path,
) -> None:
    feed = InProcessChangeFeed()
    query = pb.RecallRequest(user_id="u1", query_vector=pb.QueryVector(values=[0.0, 1.0]))
    async with (
        served_memory(tmp_path, feed=feed) as one,
        served_memory(tmp_path, feed=feed) as two,
    ):
        # Replica two loads u1's (empty) index before the write happens.
        assert list((await two.memory.Recall(query, metadata=auth())).results) == []
        await one.memory.RecordEpisode(
            pb.RecordEpisodeRequest(user_id="u1", user_message="x", embedding=[0.1, 1.0]),
            metadata=auth(),
        )

        async def recalled() -> list[str]:
            found = await two.memory.Recall(query, metadata=auth())
            return [r.episode.user_message for r in found.results]

        assert await wait_until_async(recalled, 10, "the other replica recalls x") == ["x"]


async def test_build_context_over_grpc(served: Served) -> None:
    memory = served.memory
    await memory.AddFacts(
        pb.AddFactsRequest(
            user_id="u1", facts=[pb.FactInput(subject="Ada", predicate="likes", object="chess")]
        ),
        metadata=auth(),
    )
    await memory.RecordEpisode(
        pb.RecordEpisodeRequest(user_id="u1", user_message="Ada played chess all day"),
        metadata=auth(),
    )
    built = await memory.BuildContext(
        pb.BuildContextRequest(user_id="u1", message="What does Ada like?", token_budget=300),
        metadata=auth(),
    )
    assert "## Known facts\n- Ada likes chess" in built.markdown
    assert built.ranking == pb.RECALL_RANKING_LEXICAL
    assert built.tokens.total <= 300 and built.tokens.budget == 300
    info = await expect_error(
        memory.BuildContext(
            pb.BuildContextRequest(user_id="u1", session_id="nope"), metadata=auth()
        ),
        grpc.StatusCode.NOT_FOUND,
    )
    assert info.reason == "NOT_FOUND"


async def test_every_mutation_leaves_an_audit_record(served: Served) -> None:
    memory = served.memory
    recorded = await memory.RecordEpisode(
        pb.RecordEpisodeRequest(user_id="u1", user_message="remember me"), metadata=auth()
    )
    await memory.DeclarePredicate(
        pb.DeclarePredicateRequest(name="lives_in", single_valued=True), metadata=auth()
    )
    first = await memory.AddFacts(
        pb.AddFactsRequest(
            facts=[pb.FactInput(subject="Ann", predicate="lives_in", object="Oslo")]
        ),
        metadata=auth(),
    )
    await memory.AddFacts(
        pb.AddFactsRequest(
            facts=[pb.FactInput(subject="Ann", predicate="lives_in", object="Rome")]
        ),
        metadata=auth(),
    )
    await memory.DeleteEpisode(
        pb.DeleteEpisodeRequest(episode_id=recorded.episode.id), metadata=auth()
    )
    records = await served.app.storage.audit.list_audit("alpha", AuditFilter(), 0, 100)
    trail = [(r.method, r.entity_type, r.entity_id, r.summary) for r in reversed(records)]
    oslo = first.results[0].fact.id
    assert trail[0] == ("RecordEpisode", "episode", recorded.episode.id, "recorded")
    assert trail[1] == ("DeclarePredicate", "predicate", "lives_in", "declared single-valued")
    assert trail[2] == ("AddFacts", "fact", oslo, "created")
    assert trail[3][:2] == ("AddFacts", "fact")  # Rome created ...
    assert trail[4][:3] == ("AddFacts", "fact", oslo)  # ... and Oslo contradicted, same call
    assert trail[4][3].startswith("contradicted by ")
    assert trail[5] == ("DeleteEpisode", "episode", recorded.episode.id, "deleted")
    assert all(r.principal and r.service == "statekeeper.v1.MemoryService" for r in records)
