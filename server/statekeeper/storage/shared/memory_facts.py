"""Semantic memory facts: what the SQLite and PostgreSQL statements share
(the columns, the values of an insert and an update, the audit wording)."""

from __future__ import annotations

from collections.abc import Callable

from statekeeper.core.memory.models import Fact, entity_key
from statekeeper.core.memory.semantic import FactResolution

FACT_COLUMNS = (
    "fact_id, user_id, subject, predicate, object, source, confidence, valid_from, valid_to,"
    " origin, source_episode_ids, create_time, invalidate_time, invalidated_by,"
    " invalidation_reason"
)

# The columns of an insert, in the order of `insert_values`.
INSERT_COLUMNS = (
    "tenant, fact_id, user_id, subject, subject_key, predicate, predicate_key, object,"
    " object_key, source, confidence, valid_from, valid_to, origin, source_episode_ids,"
    " create_time, invalidate_time, invalidated_by, invalidation_reason"
)

# The update of `update_values`, its parameters as format fields {0}..{6}.
UPDATE_FACT = (
    "UPDATE memory_facts SET confidence={0}, valid_to={1}, invalidate_time={2},"
    " invalidated_by={3}, invalidation_reason={4} WHERE tenant={5} AND fact_id={6}"
)


def insert_values(
    tenant: str, fact: Fact, episode_ids: Callable[[list[str]], object]
) -> tuple[object, ...]:
    """The values of INSERT_COLUMNS; `episode_ids` encodes the source
    episode ids as the database stores them (JSON text, or an array)."""
    return (
        tenant,
        fact.fact_id,
        fact.user_id,
        fact.subject,
        entity_key(fact.subject),
        fact.predicate,
        entity_key(fact.predicate),
        fact.object,
        entity_key(fact.object),
        fact.source,
        fact.confidence,
        fact.valid_from,
        fact.valid_to,
        int(fact.origin),
        episode_ids(list(fact.source_episode_ids)),
        fact.create_time,
        fact.invalidate_time,
        fact.invalidated_by,
        fact.invalidation_reason,
    )


def update_values(tenant: str, fact: Fact) -> tuple[object, ...]:
    """The mutable fields of a fact (confidence and invalidation), then the
    tenant and the fact id: the values of UPDATE_FACT."""
    return (
        fact.confidence,
        fact.valid_to,
        fact.invalidate_time,
        fact.invalidated_by,
        fact.invalidation_reason,
        tenant,
        fact.fact_id,
    )


def resolution_audits(resolution: FactResolution) -> list[tuple[str, str]]:
    """(fact id, summary) of each fact a resolution created or changed."""
    audits: list[tuple[str, str]] = []
    if resolution.created is not None:
        audits.append((resolution.created.fact_id, "created"))
    for fact in resolution.updated:
        summary = (
            f"contradicted by {fact.invalidated_by}"
            if fact.invalidated_by
            else "confidence raised by a duplicate"
        )
        audits.append((fact.fact_id, summary))
    return audits
