"""Memory: what the SQLite and PostgreSQL stores share."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from statekeeper.core.memory.models import (
    EntityNode,
    Episode,
    Fact,
    FactOrigin,
    Neighbourhood,
    NeighbourhoodQuery,
    Predicate,
    ValueSource,
    VectorBatch,
    VectorManifest,
)
from statekeeper.core.records import built, field_names
from statekeeper.storage.codec import dumps
from statekeeper.storage.sql import Row

_EPISODE_FIELDS = field_names(Episode)
EPISODE_COLUMNS = (
    "vector_key, episode_id, user_id, session_id, user_message, assistant_response, summary,"
    " summary_source, dimension, embedding_source, embedding_model, importance, metadata,"
    " occur_time, create_time, content_hash, consolidate_time, derived_fact_ids"
)


def episode_columns(include_embedding: bool) -> str:
    return EPISODE_COLUMNS + (", embedding" if include_embedding else "")


def episode_values(episode: Episode, terms: str) -> tuple[object, ...]:
    """An episode as both stores insert it (after the tenant): episode_id
    to derived_fact_ids, then its lexical `terms`. Empty metadata and fact
    ids (most episodes) skip the JSON encoder: 13 ms of a batch of 1,000."""
    blob: bytes | None = None
    if episode.embedding is not None:
        blob = np.asarray(episode.embedding, dtype="<f4").tobytes()
    return (
        episode.episode_id,
        episode.user_id,
        episode.session_id,
        episode.user_message,
        episode.assistant_response,
        episode.summary,
        int(episode.summary_source),
        blob,
        episode.dimension,
        int(episode.embedding_source),
        episode.embedding_model,
        episode.importance,
        dumps(episode.metadata) if episode.metadata else "{}",
        episode.occur_time,
        episode.create_time,
        episode.content_hash,
        episode.consolidate_time,
        dumps(list(episode.derived_fact_ids)) if episode.derived_fact_ids else "[]",
        terms,
    )


def episode_from_row(row: Row) -> Episode:
    # By name (callers select different column lists), from one dict: a
    # row's own lookup by name and Episode's __init__ took 7.5 us a row,
    # this 2 (a recall maps its top k, a listing a page of 100).
    values = dict(zip(row.keys(), row, strict=True))
    embedding = values.get("embedding")
    metadata, fact_ids = values["metadata"], values["derived_fact_ids"]
    return built(
        Episode,
        _EPISODE_FIELDS,
        {
            "episode_id": values["episode_id"],
            "user_id": values["user_id"],
            "session_id": values["session_id"],
            "user_message": values["user_message"],
            "assistant_response": values["assistant_response"],
            "summary": values["summary"],
            "summary_source": ValueSource(values["summary_source"]),
            "embedding_source": ValueSource(values["embedding_source"]),
            "embedding_model": values["embedding_model"],
            "importance": float(values["importance"]),
            "metadata": {} if metadata == "{}" else json.loads(metadata),
            "occur_time": float(values["occur_time"]),
            "create_time": float(values["create_time"]),
            "content_hash": values["content_hash"],
            "dimension": int(values["dimension"]),
            "vector_key": int(values["vector_key"]),
            "embedding": None
            if embedding is None
            else np.frombuffer(embedding, dtype="<f4").astype(np.float32),
            "consolidate_time": values["consolidate_time"],
            "derived_fact_ids": () if fact_ids == "[]" else _ids(fact_ids),
        },
    )


def fact_from_row(row: Row) -> Fact:
    return Fact(
        fact_id=row["fact_id"],
        user_id=row["user_id"],
        subject=row["subject"],
        predicate=row["predicate"],
        object=row["object"],
        source=row["source"],
        confidence=float(row["confidence"]),
        valid_from=float(row["valid_from"]),
        valid_to=row["valid_to"],
        origin=FactOrigin(row["origin"]),
        source_episode_ids=_ids(row["source_episode_ids"]),
        create_time=float(row["create_time"]),
        invalidate_time=row["invalidate_time"],
        invalidated_by=row["invalidated_by"],
        invalidation_reason=row["invalidation_reason"],
    )


def predicate_from_row(row: Row) -> Predicate:
    return Predicate(
        name=row["name"],
        single_valued=bool(row["single_valued"]),
        description=row["description"],
        create_time=float(row["create_time"]),
        update_time=float(row["update_time"]),
    )


def neighbourhood_from_rows(query: NeighbourhoodQuery, rows: Sequence[Row]) -> Neighbourhood:
    truncated = len(rows) > query.max_facts
    rows = rows[: query.max_facts]
    nodes: dict[str, EntityNode] = {query.entity: EntityNode(query.entity, 0)}
    for row in rows:
        hop = int(row["hop"])
        for name, key, depth in (
            (row["subject"], row["subject_key"], row["subject_depth"]),
            (row["object"], row["object_key"], row["object_depth"]),
        ):
            if key not in nodes:
                nodes[key] = EntityNode(name, hop if depth is None else int(depth))
    ordered = sorted(nodes.values(), key=lambda node: node.depth)  # stable: first seen first
    return Neighbourhood(ordered, [fact_from_row(row) for row in rows], truncated)


def _ids(value: str | list[str]) -> tuple[str, ...]:
    """An id list: JSON text on SQLite, a text[] on PostgreSQL."""
    return tuple(json.loads(value) if isinstance(value, str) else value)


def vector_rows_sql(mark: Callable[[int], str]) -> str:
    """A user's embedded episodes, the vectors' rows, by vector key."""
    return (
        "SELECT vector_key, embedding, dimension, importance, occur_time FROM"
        f" memory_episodes WHERE tenant={mark(1)} AND user_id={mark(2)} AND dimension > 0"
        " ORDER BY vector_key"
    )


def manifest_rows_sql(mark: Callable[[int], str]) -> str:
    """A user's embedded episodes, without their vectors."""
    return (
        "SELECT vector_key, importance, occur_time, dimension FROM memory_episodes"
        f" WHERE tenant={mark(1)} AND user_id={mark(2)} AND dimension > 0"
    )


def latest_model_sql(mark: Callable[[int], str]) -> str:
    """The embedding model of a user's newest model-embedded episode
    (parameters: tenant, user, `ValueSource.MODEL`)."""
    return (
        f"SELECT embedding_model FROM memory_episodes WHERE tenant={mark(1)}"
        f" AND user_id={mark(2)} AND embedding_source={mark(3)}"
        " ORDER BY vector_key DESC LIMIT 1"
    )


def vector_batch(rows: Sequence[Any], embedding_model: str) -> VectorBatch:
    """The vectors of `vector_rows_sql`'s rows (at least one)."""
    dimension = int(rows[0]["dimension"])
    matrix = np.frombuffer(b"".join(row["embedding"] for row in rows), dtype="<f4")
    return VectorBatch(
        keys=np.fromiter((row["vector_key"] for row in rows), np.int64, len(rows)),
        vectors=matrix.astype(np.float32).reshape(len(rows), dimension),
        importance=np.fromiter((row["importance"] for row in rows), np.float32, len(rows)),
        occur_time=np.fromiter((row["occur_time"] for row in rows), np.float64, len(rows)),
        embedding_model=embedding_model,
    )


def vector_manifest(rows: Sequence[Any], embedding_model: str) -> VectorManifest:
    """The manifest of `manifest_rows_sql`'s rows (at least one)."""
    return VectorManifest(
        keys=np.fromiter((row[0] for row in rows), np.int64, len(rows)),
        importance=np.fromiter((row[1] for row in rows), np.float32, len(rows)),
        occur_time=np.fromiter((row[2] for row in rows), np.float64, len(rows)),
        dimension=int(rows[0][3]),
        embedding_model=embedding_model,
    )
