"""proto <-> domain conversions for memory. Translation only, plus the checks
that only make sense on the wire (field presence, oneofs)."""

from __future__ import annotations

import array
from collections.abc import Callable, Iterable

import numpy as np
from google.protobuf import duration_pb2, timestamp_pb2

from statekeeper.api.convert import timestamp
from statekeeper.core.errors import InvalidArgumentError
from statekeeper.core.memory.context import BuiltContext, ContextTokens
from statekeeper.core.memory.episodes import (
    EpisodeDraft,
    Score,
    WeightOverrides,
    Weights,
)
from statekeeper.core.memory.models import (
    EntityNode,
    Episode,
    EpisodeFilter,
    Fact,
    FactDraft,
    FactResult,
    Predicate,
)
from statekeeper.core.memory.vector_index import IndexStats
from statekeeper_client.v1 import memory_pb2 as pb


def seconds(stamp: timestamp_pb2.Timestamp) -> float:
    return stamp.seconds + stamp.nanos / 1e9


def optional_seconds(message: object, field: str) -> float | None:
    """The timestamp field as seconds, or None when unset."""
    if not message.HasField(field):  # type: ignore[attr-defined]
        return None
    return seconds(getattr(message, field))


def duration(value: float) -> duration_pb2.Duration:
    result = duration_pb2.Duration()
    result.FromNanoseconds(round(value * 1e9))
    return result


def episode_draft(request: pb.RecordEpisodeRequest) -> EpisodeDraft:
    return EpisodeDraft(
        user_id=request.user_id,
        session_id=request.session_id,
        user_message=request.user_message,
        assistant_response=request.assistant_response,
        summary=request.summary,
        embedding=float32s(request.embedding),
        importance=request.importance if request.HasField("importance") else None,
        metadata=dict(request.metadata),
        occur_time=optional_seconds(request, "occur_time"),
        near_duplicate_threshold=(
            request.near_duplicate_threshold
            if request.HasField("near_duplicate_threshold")
            else None
        ),
    )


def float32s(values: Iterable[float]) -> array.array[float]:
    """A repeated float field as packed float32s (its values exactly): numpy
    reads the field through its array interface in one pass (3 us for 384
    floats, against 30 us for a list of Python floats), and the domain reads
    the packed buffer without a copy."""
    return array.array("f", np.asarray(values, dtype=np.float32).tobytes())


def episode_filter(message: pb.EpisodeFilter) -> EpisodeFilter:
    if not message.ListFields():  # no filter (most reads): nothing to convert
        return EpisodeFilter()
    return EpisodeFilter(
        session_id=message.session_id,
        start_time=optional_seconds(message, "start_time"),
        end_time=optional_seconds(message, "end_time"),
        metadata=dict(message.metadata),
        min_importance=message.min_importance,
    )


def weight_overrides(message: pb.RecallWeights) -> WeightOverrides:
    half_life = None
    if message.HasField("recency_half_life"):
        value = message.recency_half_life
        half_life = value.seconds + value.nanos / 1e9
        if half_life <= 0:
            raise InvalidArgumentError("weights.recency_half_life", "must be positive")
    return WeightOverrides(
        similarity=message.similarity if message.HasField("similarity") else None,
        recency=message.recency if message.HasField("recency") else None,
        importance=message.importance if message.HasField("importance") else None,
        half_life_seconds=half_life,
    )


def weights_to_proto(weights: Weights) -> pb.RecallWeights:
    return pb.RecallWeights(
        similarity=weights.similarity,
        recency=weights.recency,
        importance=weights.importance,
        recency_half_life=duration(weights.half_life_seconds),
    )


def score_to_proto(score: Score) -> pb.RecallScore:
    return pb.RecallScore(
        similarity=score.similarity,
        recency=score.recency,
        importance=score.importance,
        combined=score.combined,
    )


def episode_to_proto(episode: Episode, decayed: float, with_embedding: bool = True) -> pb.Episode:
    message = pb.Episode()
    fill_episode(message, episode, decayed, with_embedding)
    return message


def fill_episode(
    message: pb.Episode, episode: Episode, decayed: float, with_embedding: bool = True
) -> None:
    """Sets the fields of `message`, an empty Episode, to the episode's. In
    place: an episode built apart and handed to its parent (a response's
    result) would be copied into it; a recall of 10 builds its response in
    half the time this way. Empty repeated and map fields (most episodes')
    are not touched."""
    message.id = episode.episode_id
    message.user_id = episode.user_id
    message.session_id = episode.session_id
    message.user_message = episode.user_message
    message.assistant_response = episode.assistant_response
    message.summary = episode.summary
    message.summary_source = int(episode.summary_source)  # type: ignore[assignment]
    if with_embedding and episode.embedding is not None:
        message.embedding.extend(episode.embedding.tolist())
    message.embedding_source = int(episode.embedding_source)  # type: ignore[assignment]
    message.embedding_model = episode.embedding_model
    message.importance = episode.importance
    message.decayed_importance = decayed
    if episode.metadata:
        message.metadata.update(episode.metadata)
    set_timestamp(message.occur_time, episode.occur_time)
    set_timestamp(message.create_time, episode.create_time)
    if episode.consolidate_time is not None:
        set_timestamp(message.consolidate_time, episode.consolidate_time)
    if episode.derived_fact_ids:
        message.derived_fact_ids.extend(episode.derived_fact_ids)


def set_timestamp(target: timestamp_pb2.Timestamp, seconds: float) -> None:
    """`target` (a field of a message being built) set to `timestamp(seconds)`."""
    stamp = timestamp(seconds)
    if stamp is not None:  # always, for a number
        target.CopyFrom(stamp)


def fill_score(message: pb.RecallScore, score: Score) -> None:
    message.similarity = score.similarity
    message.recency = score.recency
    message.importance = score.importance
    message.combined = score.combined


def fact_input(message: pb.FactInput) -> FactDraft:
    return FactDraft(
        subject=message.subject,
        predicate=message.predicate,
        object=message.object,
        source=message.source,
        confidence=message.confidence if message.HasField("confidence") else 1.0,
        valid_from=optional_seconds(message, "valid_from"),
        valid_to=optional_seconds(message, "valid_to"),
    )


def fact_input_to_proto(draft: FactDraft) -> pb.FactInput:
    return pb.FactInput(
        subject=draft.subject,
        predicate=draft.predicate,
        object=draft.object,
        source=draft.source,
        confidence=draft.confidence,
        valid_from=timestamp(draft.valid_from),
        valid_to=timestamp(draft.valid_to),
    )


def fact_to_proto(fact: Fact) -> pb.Fact:
    return pb.Fact(
        id=fact.fact_id,
        user_id=fact.user_id,
        subject=fact.subject,
        predicate=fact.predicate,
        object=fact.object,
        source=fact.source,
        confidence=fact.confidence,
        valid_from=timestamp(fact.valid_from),
        valid_to=timestamp(fact.valid_to),
        origin=int(fact.origin),  # type: ignore[arg-type]
        source_episode_ids=list(fact.source_episode_ids),
        create_time=timestamp(fact.create_time),
        invalidate_time=timestamp(fact.invalidate_time),
        invalidated_by=fact.invalidated_by,
        invalidation_reason=fact.invalidation_reason,
    )


def fact_results_to_proto(results: Iterable[FactResult]) -> list[pb.FactResult]:
    return [
        pb.FactResult(
            fact=fact_to_proto(r.fact),
            outcome=int(r.outcome),  # type: ignore[arg-type]
            invalidated_fact_ids=list(r.invalidated_fact_ids),
        )
        for r in results
    ]


def node_to_proto(node: EntityNode) -> pb.EntityNode:
    return pb.EntityNode(name=node.name, depth=node.depth)


def predicate_to_proto(predicate: Predicate) -> pb.Predicate:
    return pb.Predicate(
        name=predicate.name,
        single_valued=predicate.single_valued,
        description=predicate.description,
        create_time=timestamp(predicate.create_time),
        update_time=timestamp(predicate.update_time),
    )


def stats_to_proto(stats: IndexStats) -> pb.MemoryIndexStats:
    return pb.MemoryIndexStats(
        user_id=stats.user_id,
        state=int(stats.state),  # type: ignore[arg-type]
        index_type=stats.index_type,
        dimension=stats.dimension,
        vector_count=stats.vector_count,
        tombstone_count=stats.tombstone_count,
        last_rebuild_time=timestamp(stats.last_rebuild_time),
        embedding_model=stats.embedding_model,
    )


def built_context_to_proto(
    built: BuiltContext, episode_to: Callable[[Episode], pb.Episode]
) -> pb.BuildContextResponse:
    return pb.BuildContextResponse(
        working_messages=[
            pb.MemoryContextMessage(
                message_id=m.message_id,
                role=int(m.role),  # type: ignore[arg-type]
                text=m.text,
                token_count=m.token_count,
            )
            for m in built.working
        ],
        episodes=[
            pb.MemoryContextEpisode(
                episode=episode_to(e.episode.evolve(embedding=None)),
                score=score_to_proto(e.score),
                text=e.text,
                token_count=e.token_count,
            )
            for e in built.episodes
        ],
        facts=[
            pb.MemoryContextFact(fact=fact_to_proto(f.fact), text=f.text, token_count=f.token_count)
            for f in built.facts
        ],
        markdown=built.markdown,
        tokens=tokens_to_proto(built.tokens),
        omitted_messages=built.omitted_messages,
        omitted_episodes=built.omitted_episodes,
        omitted_facts=built.omitted_facts,
        ranking=int(built.ranking),  # type: ignore[arg-type]
    )


def tokens_to_proto(tokens: ContextTokens) -> pb.MemoryContextTokens:
    return pb.MemoryContextTokens(
        budget=tokens.budget,
        reserved_output=tokens.reserved_output,
        overhead=tokens.overhead,
        working=tokens.working,
        episodes=tokens.episodes,
        facts=tokens.facts,
        total=tokens.total,
        remaining=tokens.remaining,
    )
