"""SQLite statements of semantic memory: facts (insert, update, supersede in one batch, with
their audit records), predicates and the entity neighbourhood query."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from typing import Any

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.memory.models import (
    Fact,
    FactBatch,
    FactResult,
    NeighbourhoodQuery,
    entity_key,
)
from statekeeper.core.memory.semantic import FactResolution, resolve_fact
from statekeeper.storage.codec import dumps
from statekeeper.storage.embedded.audit_chain import insert_audit_rows
from statekeeper.storage.shared.memory import fact_from_row
from statekeeper.storage.shared.memory_facts import FACT_COLUMNS as FACT_COLUMNS
from statekeeper.storage.shared.memory_facts import (
    INSERT_COLUMNS,
    UPDATE_FACT,
    insert_values,
    resolution_audits,
    update_values,
)
from statekeeper.storage.sql import audit_values

# A fact is valid at :t when this holds (see Fact.valid_at).
VALID_AT = (
    "valid_from <= :t AND (valid_to IS NULL OR :t < valid_to)"
    " AND (invalidate_time IS NULL OR :t < invalidate_time)"
)


def apply_batch(
    db: sqlite3.Connection, tenant: str, batch: FactBatch, audit: AuditRecord | None
) -> list[FactResult]:
    results: list[FactResult] = []
    for draft, new_id in zip(batch.drafts, batch.new_ids, strict=True):
        predicate_key = entity_key(draft.predicate)
        current = [
            fact_from_row(row)
            for row in db.execute(
                f"SELECT {FACT_COLUMNS} FROM memory_facts WHERE tenant=:tenant"
                " AND subject_key=:subject AND predicate_key=:predicate AND user_id=:user"
                f" AND {VALID_AT} ORDER BY create_time, fact_id",
                {
                    "tenant": tenant,
                    "subject": entity_key(draft.subject),
                    "predicate": predicate_key,
                    "user": batch.user_id,
                    "t": batch.now,
                },
            )
        ]
        single = db.execute(
            "SELECT single_valued FROM memory_predicates WHERE tenant=? AND name=?",
            (tenant, predicate_key),
        ).fetchone()
        resolution = resolve_fact(draft, new_id, batch, current, bool(single and single[0]))
        if resolution.created is not None:
            _insert_fact(db, tenant, resolution.created)
        for fact in resolution.updated:
            update_fact(db, tenant, fact)
        _audit_resolution(db, tenant, audit, resolution)
        results.append(resolution.result)
    return results


def _audit_resolution(
    db: sqlite3.Connection, tenant: str, audit: AuditRecord | None, resolution: FactResolution
) -> None:
    for fact_id, summary in resolution_audits(resolution):
        write_audit(db, tenant, audit, "fact", fact_id, summary)


_UPDATE_FACT = UPDATE_FACT.format(*"?" * 7)


def _insert_fact(db: sqlite3.Connection, tenant: str, fact: Fact) -> None:
    marks = ",".join("?" * 19)
    db.execute(
        f"INSERT INTO memory_facts ({INSERT_COLUMNS}) VALUES ({marks})",
        insert_values(tenant, fact, dumps),
    )


def update_fact(db: sqlite3.Connection, tenant: str, fact: Fact) -> None:
    """Writes the mutable fields of a fact: confidence and invalidation."""
    db.execute(_UPDATE_FACT, update_values(tenant, fact))


def fact_by_id(db: sqlite3.Connection, tenant: str, fact_id: str) -> Fact | None:
    row = db.execute(
        f"SELECT {FACT_COLUMNS} FROM memory_facts WHERE tenant=? AND fact_id=?",
        (tenant, fact_id),
    ).fetchone()
    return None if row is None else fact_from_row(row)


def neighbourhood_sql(tenant: str, query: NeighbourhoodQuery) -> tuple[str, dict[str, Any]]:
    """One recursive query: `reach` walks entities breadth first (both
    directions) up to depth-1 hops; every visible fact touching a reached
    entity is an edge, at one hop more than its nearer end."""
    params: dict[str, Any] = {
        "tenant": tenant,
        "user": query.user_id,
        "entity": query.entity,
        "inner_depth": query.depth - 1,
        "t": query.as_of,
        "limit": query.max_facts + 1,
    }
    visible = ["tenant = :tenant", "user_id IN (:user, '')"]
    if not query.include_invalidated:
        visible.append(VALID_AT)
    if query.predicates:
        names = [f":p{index}" for index in range(len(query.predicates))]
        visible.append(f"predicate_key IN ({', '.join(names)})")
        params.update({f"p{index}": p for index, p in enumerate(query.predicates)})
    sql = f"""
        WITH RECURSIVE
        visible AS (
            SELECT {FACT_COLUMNS}, subject_key, object_key FROM memory_facts
            WHERE {" AND ".join(visible)}
        ),
        hops(origin, target) AS (
            SELECT subject_key, object_key FROM visible
            UNION ALL
            SELECT object_key, subject_key FROM visible
        ),
        reach(entity, depth) AS (
            SELECT :entity, 0
            UNION
            SELECT hops.target, reach.depth + 1 FROM reach JOIN hops ON hops.origin = reach.entity
            WHERE reach.depth < :inner_depth
        ),
        nearest(entity, depth) AS (SELECT entity, MIN(depth) FROM reach GROUP BY entity)
        SELECT visible.*, near_subject.depth AS subject_depth, near_object.depth AS object_depth,
            MIN(COALESCE(near_subject.depth, 99), COALESCE(near_object.depth, 99)) + 1 AS hop
        FROM visible
        LEFT JOIN nearest AS near_subject ON near_subject.entity = visible.subject_key
        LEFT JOIN nearest AS near_object ON near_object.entity = visible.object_key
        WHERE near_subject.depth IS NOT NULL OR near_object.depth IS NOT NULL
        ORDER BY hop, create_time DESC, fact_id
        LIMIT :limit
    """
    return sql, params


def write_audit(
    db: sqlite3.Connection,
    tenant: str,
    audit: AuditRecord | None,
    entity_type: str,
    entity_id: str,
    summary: str,
) -> None:
    """Writes one audit record in the caller's transaction (see the store
    contract); memory records carry no revision, hence 0."""
    if audit is None:
        return
    entry = replace(
        audit, entity_type=entity_type, entity_id=entity_id, revision=0, summary=summary
    )
    insert_audit_rows(db, [audit_values(entry, tenant)])
