"""Episodic memory in process on the real embedded store and real FAISS:
dedup, recall scoring and filters, deletions, forgetting, consolidation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from statekeeper.core.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    StorageUnavailableError,
)
from statekeeper.core.memory.config import IndexConfig
from statekeeper.core.memory.episodes import EpisodeDraft, RecallQuery, WeightOverrides
from statekeeper.core.memory.forgetting import ConsolidationRequest
from statekeeper.core.memory.models import (
    DimensionMismatchError,
    DuplicateKind,
    EpisodeFilter,
    FactOrigin,
    FactQuery,
    Ranking,
    ValueSource,
)
from statekeeper.memory_app import MemoryApp, ModelEndpoints
from tests.fakes.clock import FakeClock
from tests.fakes.openai_server import FakeOpenAI
from tests.memory.helpers import memory_app, quiet_config

T = "tenant-a"
DAY = 86_400.0
ONLY_SIMILARITY = WeightOverrides(similarity=1.0, recency=0.0, importance=0.0)


@pytest.fixture
async def app(tmp_path: Path, clock: FakeClock) -> AsyncIterator[MemoryApp]:
    async with memory_app(tmp_path, clock=clock) as (memory, _):
        yield memory


def basis(index: int, dimension: int = 8, noise: float = 0.0, seed: int = 0) -> list[float]:
    vector = np.zeros(dimension, dtype=np.float32)
    vector[index] = 1.0
    if noise:
        vector += np.random.default_rng(seed).normal(0, noise, dimension).astype(np.float32)
    return [float(v) for v in vector]


def draft(text: str, vector: list[float] | None = None, **kw: object) -> EpisodeDraft:
    return EpisodeDraft(
        user_id=str(kw.pop("user_id", "u1")),
        user_message=text,
        assistant_response=f"answer to {text}",
        embedding=vector or (),
        **kw,  # type: ignore[arg-type]
    )


async def test_exact_then_near_duplicates_store_nothing(app: MemoryApp) -> None:
    episodes = app.domain.episodes
    first = await episodes.record(T, draft("Where is my car?", basis(0)))
    assert not first.duplicate
    exact = await episodes.record(T, draft("  where IS my   car? ", basis(3)))
    assert exact.duplicate_kind == DuplicateKind.EXACT
    assert exact.episode.episode_id == first.episode.episode_id
    near = await episodes.record(T, draft("Where did I park?", basis(0, noise=0.01)))
    assert near.duplicate_kind == DuplicateKind.NEAR
    assert near.episode.episode_id == first.episode.episode_id and near.similarity > 0.95
    kept = await episodes.record(
        T, draft("Where did I park?", basis(0, noise=0.01), near_duplicate_threshold=1.0)
    )
    assert not kept.duplicate  # threshold 1 keeps only exact deduplication
    listed, _ = await episodes.list_episodes(T, "u1", EpisodeFilter(), 0, "", False)
    assert len(listed) == 2


async def test_wrong_dimension_is_invalid_argument_naming_the_field(app: MemoryApp) -> None:
    episodes = app.domain.episodes
    await episodes.record(T, draft("first", basis(0)))
    with pytest.raises(DimensionMismatchError) as raised:
        await episodes.record(T, draft("second", basis(0, dimension=5)))
    assert raised.value.reason == "DIMENSION_MISMATCH" and raised.value.field == "embedding"
    with pytest.raises(DimensionMismatchError) as raised:
        await episodes.recall(T, RecallQuery("u1", query_vector=[1.0, 0.0]))
    assert raised.value.field == "query_vector.values"
    # Another user has an index of its own, of any dimension.
    await episodes.record(T, draft("other", basis(0, dimension=5), user_id="u2"))
    with pytest.raises(InvalidArgumentError) as bad:
        await episodes.record(T, draft("nan", [float("nan")] * 8))
    assert bad.value.field == "embedding"


async def test_recall_combines_similarity_recency_and_importance(
    app: MemoryApp, clock: FakeClock
) -> None:
    episodes = app.domain.episodes
    old = await episodes.record(
        T, draft("old", basis(0), occur_time=clock.now - 60 * DAY, importance=0.9)
    )
    new = await episodes.record(T, draft("new", basis(0, noise=0.2, seed=1), importance=0.1))
    query = basis(0)
    by_similarity = await episodes.recall(
        T, RecallQuery("u1", query_vector=query, weights=ONLY_SIMILARITY)
    )
    assert by_similarity.results[0].episode.episode_id == old.episode.episode_id
    by_recency = await episodes.recall(
        T, RecallQuery("u1", query_vector=query, weights=WeightOverrides(0.1, 1.0, 0.0))
    )
    assert by_recency.results[0].episode.episode_id == new.episode.episode_id
    score = by_recency.results[1].score
    assert score.recency == pytest.approx(0.5 ** (60 / 30))  # default half-life 30 days
    assert score.combined == pytest.approx((0.1 * score.similarity + score.recency) / 1.1)
    assert by_recency.ranking == Ranking.VECTOR and by_recency.index_type == "Flat"
    high_bar = await episodes.recall(
        T, RecallQuery("u1", query_vector=query, min_score=0.99, weights=ONLY_SIMILARITY)
    )
    assert [r.episode.episode_id for r in high_bar.results] == [old.episode.episode_id]
    with pytest.raises(InvalidArgumentError) as raised:
        await episodes.recall(
            T, RecallQuery("u1", query_vector=query, weights=WeightOverrides(0.0, 0.0, 0.0))
        )
    assert raised.value.field == "weights"


async def test_recall_filters_by_session_time_metadata_and_importance(
    app: MemoryApp, clock: FakeClock
) -> None:
    episodes = app.domain.episodes
    await episodes.record(T, draft("a", basis(0), session_id="s1", metadata={"k": "x"}))
    await episodes.record(
        T,
        draft(
            "b",
            basis(1),
            session_id="s2",
            metadata={"k": "y"},
            occur_time=clock.now - 10 * DAY,
            importance=0.05,
        ),
    )
    query = RecallQuery("u1", query_vector=basis(0))

    async def texts(episode_filter: EpisodeFilter) -> list[str]:
        outcome = await episodes.recall(
            T, RecallQuery("u1", query_vector=query.query_vector, episode_filter=episode_filter)
        )
        return sorted(r.episode.user_message for r in outcome.results)

    assert await texts(EpisodeFilter()) == ["a", "b"]
    assert await texts(EpisodeFilter(session_id="s2")) == ["b"]
    assert await texts(EpisodeFilter(metadata={"k": "x"})) == ["a"]
    assert await texts(EpisodeFilter(end_time=clock.now - DAY)) == ["b"]
    assert await texts(EpisodeFilter(min_importance=0.2)) == ["a"]
    assert await texts(EpisodeFilter(metadata={"k": "nope"})) == []


async def test_without_embedder_text_recall_is_lexical(app: MemoryApp) -> None:
    episodes = app.domain.episodes
    await episodes.record(T, draft("I adore green tea in the morning"))
    await episodes.record(T, draft("The stock market fell today"))
    outcome = await episodes.recall(T, RecallQuery("u1", query_text="green tea"))
    assert outcome.ranking == Ranking.LEXICAL and outcome.index_type == ""
    assert [r.episode.user_message for r in outcome.results] == ["I adore green tea in the morning"]
    assert outcome.results[0].score.similarity == pytest.approx(1.0)
    stored = outcome.results[0].episode
    assert stored.embedding_source == ValueSource.NONE
    assert stored.summary_source == ValueSource.FALLBACK and stored.summary.startswith("User:")


async def test_configured_embedder_and_its_outage(tmp_path: Path) -> None:
    fake = FakeOpenAI().start()
    try:
        endpoints = ModelEndpoints(embedder_url=fake.base_url, embedder_model="fake-embed")
        async with memory_app(tmp_path, endpoints=endpoints) as (app, _):
            episodes = app.domain.episodes
            recorded = await episodes.record(T, draft("green tea every morning"))
            assert recorded.episode.embedding_source == ValueSource.MODEL
            assert recorded.episode.embedding_model == "fake-embed"
            await episodes.record(T, draft("quarterly tax report"))
            outcome = await episodes.recall(T, RecallQuery("u1", query_text="green tea"))
            assert outcome.ranking == Ranking.HYBRID
            assert outcome.results[0].episode.user_message == "green tea every morning"
            stats = await episodes.index_stats(T, "u1")
            assert stats.embedding_model == "fake-embed" and stats.vector_count == 2
            fake.fail_with = 500
            with pytest.raises(StorageUnavailableError) as raised:
                await episodes.recall(T, RecallQuery("u1", query_text="tea"))
            assert raised.value.metadata["dependency"] == "embedder"
    finally:
        fake.stop()


async def test_deletion_leaves_flat_and_hnsw_indexes(tmp_path: Path) -> None:
    for kind in ("flat", "hnsw"):
        config = quiet_config(index=IndexConfig(kind=kind))
        async with memory_app(tmp_path / kind, config=config) as (app, _):
            episodes = app.domain.episodes
            ids = [
                (
                    await episodes.record(
                        T,
                        draft(
                            f"t{i}", basis(i % 8, noise=0.1, seed=i), near_duplicate_threshold=1.0
                        ),
                    )
                ).episode
                for i in range(20)
            ]
            target = ids[0]
            await episodes.delete(T, target.episode_id)
            with pytest.raises(NotFoundError):
                await episodes.get(T, target.episode_id, False)
            outcome = await episodes.recall(
                T, RecallQuery("u1", query_vector=basis(0), top_k=20, weights=ONLY_SIMILARITY)
            )
            assert target.episode_id not in {r.episode.episode_id for r in outcome.results}
            assert len(outcome.results) == 19
            stats = await episodes.index_stats(T, "u1")
            assert stats.vector_count == 19
            assert stats.tombstone_count == (1 if kind == "hnsw" else 0)
            rebuilt = await episodes.rebuild_index(T, "u1")
            assert rebuilt.tombstone_count == 0 and rebuilt.vector_count == 19


async def test_forgetting_deletes_decayed_episodes_and_they_leave_the_index(
    app: MemoryApp, clock: FakeClock
) -> None:
    episodes, forgetting = app.domain.episodes, app.domain.forgetting
    stale = await episodes.record(
        T, draft("stale", basis(0), occur_time=clock.now - 400 * DAY, importance=0.5)
    )
    fresh = await episodes.record(T, draft("fresh", basis(0, noise=0.3, seed=2)))
    dry = await forgetting.run(T, dry_run=True)
    assert dry.deleted_episode_ids == [stale.episode.episode_id]
    await episodes.get(T, stale.episode.episode_id, False)  # a dry run deletes nothing
    report = await forgetting.run(T)
    assert report.episodes_scanned == 2 and report.episodes_deleted == 1
    assert report.decay_rate == pytest.approx(0.01) and report.threshold == pytest.approx(0.05)
    with pytest.raises(NotFoundError):
        await episodes.get(T, stale.episode.episode_id, False)
    outcome = await episodes.recall(T, RecallQuery("u1", query_vector=basis(0)))
    assert [r.episode.episode_id for r in outcome.results] == [fresh.episode.episode_id]
    assert (await episodes.index_stats(T, "u1")).vector_count == 1
    with pytest.raises(InvalidArgumentError) as raised:
        await forgetting.run(T, decay_rate=-1.0)
    assert raised.value.field == "decay_rate"


async def test_consolidation_turns_a_cluster_into_a_fact_and_demotes_it(
    app: MemoryApp,
) -> None:
    episodes, consolidation = app.domain.episodes, app.domain.consolidation
    similar = [
        (
            await episodes.record(
                T,
                draft(
                    f"I love hiking {i}",
                    basis(0, noise=0.05, seed=i),
                    near_duplicate_threshold=1.0,
                    importance=0.5,
                ),
            )
        ).episode
        for i in range(3)
    ]
    other = [
        (await episodes.record(T, draft(f"tax {i}", basis(i + 1), importance=0.5))).episode
        for i in range(2)
    ]
    dry = await consolidation.run(T, ConsolidationRequest(dry_run=True))
    assert dry.cluster_count == 1 and dry.episodes_demoted == 0
    report = await consolidation.run(T, ConsolidationRequest())
    assert report.cluster_count == 1 and report.facts_created == 1
    assert report.episodes_demoted == 3
    [cluster] = report.clusters
    assert set(cluster.episode_ids) == {e.episode_id for e in similar}
    [result] = cluster.facts
    assert result.fact.origin == FactOrigin.CONSOLIDATION
    assert set(result.fact.source_episode_ids) == set(cluster.episode_ids)
    for episode in similar:
        after = await episodes.get(T, episode.episode_id, False)
        assert after.importance == pytest.approx(0.5 * 0.3)
        assert after.derived_fact_ids == (result.fact.fact_id,)
    for episode in other:
        assert (await episodes.get(T, episode.episode_id, False)).importance == pytest.approx(0.5)
    facts, _ = await app.domain.semantic.list_facts(T, FactQuery(user_id="u1"), 0, "")
    assert [f.fact_id for f in facts] == [result.fact.fact_id]
    # The index ranks with the demoted importance too.
    ranked = await episodes.recall(T, RecallQuery("u1", query_vector=basis(0)))
    assert ranked.results[0].score.importance == pytest.approx(0.15)
    again = await consolidation.run(T, ConsolidationRequest())
    assert again.cluster_count == 0  # consolidated episodes are not clustered twice


async def test_overlapping_runs_are_refused(app: MemoryApp) -> None:
    forgetting = app.domain.forgetting
    guard = forgetting._guard  # the running state is internal; hold it as a run would
    async with guard.hold(T, ""):
        with pytest.raises(FailedPreconditionError) as raised:
            await forgetting.run(T, user_id="u1")
        assert raised.value.metadata["condition"] == "RUN_IN_PROGRESS"
    await asyncio.wait_for(forgetting.run(T, user_id="u1"), 5)
