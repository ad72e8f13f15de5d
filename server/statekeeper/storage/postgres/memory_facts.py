"""PostgreSQL statements of semantic memory: facts (insert, update, supersede in one batch
under per-key locks, with their audit records), predicates and the entity neighbourhood query."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.memory.models import (
    Fact,
    FactBatch,
    FactResult,
    NeighbourhoodQuery,
    entity_key,
)
from statekeeper.core.memory.semantic import FactResolution, resolve_fact
from statekeeper.storage.shared import memory_facts as shared
from statekeeper.storage.shared.memory import fact_from_row
from statekeeper.storage.sql import AUDIT_COLUMNS, audit_values

FACT_COLUMNS = shared.FACT_COLUMNS

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection


def valid_at(prefix: str, mark: str) -> str:
    """SQL true when the fact (columns prefixed by `prefix`) is valid at the
    instant bound to `mark` (see Fact.valid_at)."""
    p = prefix
    return (
        f"{p}valid_from <= {mark} AND ({p}valid_to IS NULL OR {mark} < {p}valid_to)"
        f" AND ({p}invalidate_time IS NULL OR {mark} < {p}invalidate_time)"
    )


async def _lock_fact_keys(conn: Connection, tenant: str, batch: FactBatch) -> None:
    """Locks every (scope, subject, predicate) the batch touches, so that
    contradiction and dedup see every committed fact of those keys."""
    names = {
        f"{tenant}\x1f{batch.user_id}\x1f{entity_key(d.subject)}\x1f{entity_key(d.predicate)}"
        for d in batch.drafts
    }
    await lock_all(conn, _FACT_LOCK, sorted(names))


async def apply_batch(
    conn: Connection, tenant: str, batch: FactBatch, audit: AuditRecord | None
) -> list[FactResult]:
    if not batch.drafts:
        return []
    await _lock_fact_keys(conn, tenant, batch)
    results: list[FactResult] = []
    for draft, new_id in zip(batch.drafts, batch.new_ids, strict=True):
        predicate_key = entity_key(draft.predicate)
        rows = await conn.fetch(
            f"SELECT {shared.FACT_COLUMNS} FROM memory_facts WHERE tenant=$1 AND subject_key=$2"
            f" AND predicate_key=$3 AND user_id=$4 AND {valid_at('', '$5')}"
            " ORDER BY create_time, fact_id",
            tenant,
            entity_key(draft.subject),
            predicate_key,
            batch.user_id,
            batch.now,
        )
        single = await conn.fetchval(
            "SELECT single_valued FROM memory_predicates WHERE tenant=$1 AND name=$2",
            tenant,
            predicate_key,
        )
        current = [fact_from_row(row) for row in rows]
        resolution = resolve_fact(draft, new_id, batch, current, bool(single))
        if resolution.created is not None:
            await _insert_fact(conn, tenant, resolution.created)
        for fact in resolution.updated:
            await update_fact(conn, tenant, fact)
        await _audit_resolution(conn, tenant, audit, resolution)
        results.append(resolution.result)
    return results


async def _audit_resolution(
    conn: Connection, tenant: str, audit: AuditRecord | None, resolution: FactResolution
) -> None:
    for fact_id, summary in shared.resolution_audits(resolution):
        await write_audit(conn, tenant, audit, "fact", [fact_id], summary)


_INSERT_FACT = (
    f"INSERT INTO memory_facts ({shared.INSERT_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,"
    "$11,$12,$13,$14,$15,$16,$17,$18,$19)"
)
_UPDATE_FACT = shared.UPDATE_FACT.format(*(f"${i + 1}" for i in range(7)))


async def _insert_fact(conn: Connection, tenant: str, fact: Fact) -> None:
    await conn.execute(_INSERT_FACT, *shared.insert_values(tenant, fact, list))


async def update_fact(conn: Connection, tenant: str, fact: Fact) -> None:
    """Writes the mutable fields of a fact: confidence and invalidation."""
    await conn.execute(_UPDATE_FACT, *shared.update_values(tenant, fact))


async def fact_by_id(conn: Connection, tenant: str, fact_id: str, lock: bool) -> Fact | None:
    row = await conn.fetchrow(
        f"SELECT {shared.FACT_COLUMNS} FROM memory_facts WHERE tenant=$1 AND fact_id=$2"
        + (" FOR UPDATE" if lock else ""),
        tenant,
        fact_id,
    )
    return None if row is None else fact_from_row(row)


def neighbourhood_sql(tenant: str, query: NeighbourhoodQuery) -> tuple[str, list[object]]:
    """One recursive query. `reach` walks entities breadth first, following
    visible facts in both directions through the subject and object indexes,
    up to depth-1 hops; every visible fact touching a reached entity is an
    edge, at one hop more than its nearer end. Visibility is applied while
    walking, so hidden facts never connect entities. Edges are looked up
    per reached entity through the same two indexes (LATERAL keeps the
    planner from hashing the whole tenant's facts), and DISTINCT drops a
    fact found from both of its ends."""
    params = Params(tenant, query.user_id, query.entity, query.depth - 1)
    visible = ["f.tenant = $1", "f.user_id IN ($2, '')"]
    if not query.include_invalidated:
        visible.append(valid_at("f.", params.add(query.as_of)))
    if query.predicates:
        visible.append(f"f.predicate_key = ANY({params.add(list(query.predicates))}::text[])")
    where = " AND ".join(visible)
    columns = ", ".join(
        f"f.{c.strip()}" for c in f"{shared.FACT_COLUMNS}, subject_key, object_key".split(",")
    )
    limit = params.add(query.max_facts + 1)
    sql = f"""
        WITH RECURSIVE reach(entity, depth) AS (
            SELECT $3::text, 0
            UNION
            SELECT CASE WHEN f.subject_key = r.entity THEN f.object_key ELSE f.subject_key END,
                   r.depth + 1
            FROM reach r
            JOIN memory_facts f ON f.tenant = $1
                AND (f.subject_key = r.entity OR f.object_key = r.entity)
            WHERE r.depth < $4 AND {where}
        ),
        nearest AS (SELECT entity, min(depth) AS depth FROM reach GROUP BY entity),
        edges AS (
            SELECT DISTINCT touching.* FROM nearest n CROSS JOIN LATERAL (
                SELECT {columns} FROM memory_facts f
                WHERE f.subject_key = n.entity AND {where}
                UNION ALL
                SELECT {columns} FROM memory_facts f
                WHERE f.object_key = n.entity AND {where}
            ) AS touching
        )
        SELECT e.*, ns.depth AS subject_depth, nob.depth AS object_depth,
            LEAST(COALESCE(ns.depth, 99), COALESCE(nob.depth, 99)) + 1 AS hop
        FROM edges e
        LEFT JOIN nearest ns ON ns.entity = e.subject_key
        LEFT JOIN nearest nob ON nob.entity = e.object_key
        ORDER BY hop, e.create_time DESC, e.fact_id
        LIMIT {limit}
    """
    return sql, params.values


_FACT_LOCK = 0x736B6D66  # "skmf"


class Params:
    """Positional parameters of one statement: `add` returns the mark."""

    def __init__(self, *initial: object) -> None:
        self.values: list[object] = list(initial)

    def add(self, value: object) -> str:
        self.values.append(value)
        return f"${len(self.values)}"


async def lock_all(conn: Connection, lock_class: int, names: Sequence[str]) -> None:
    """Takes the advisory transaction locks of these names in hash order, so
    two transactions locking overlapping sets never wait in a cycle."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock($1, h) FROM (SELECT DISTINCT hashtext(n) AS h"
        " FROM unnest($2::text[]) AS n ORDER BY h) AS ordered",
        lock_class,
        list(names),
    )


async def write_audit(
    conn: Connection,
    tenant: str,
    audit: AuditRecord | None,
    entity_type: str,
    entity_ids: Sequence[str],
    summary: str,
) -> None:
    """One audit record per entity, in the caller's transaction (see the
    store contract); memory records carry no revision, hence 0."""
    if audit is None or not entity_ids:
        return
    entry = replace(audit, entity_type=entity_type, revision=0, summary=summary)
    await conn.executemany(
        f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)",
        [audit_values(replace(entry, entity_id=entity_id), tenant) for entity_id in entity_ids],
    )
