"""PostgreSQL implementation of the memory stores (episodes, facts, predicates).

It shares the `PostgresStorage` pool: every method is one transaction (or one
statement) on a pooled connection, connection failures become
`StorageUnavailableError`, and audit rows go into `audit_log` in the
transaction of the change. Embeddings are stored durably as little-endian
float32 `bytea`, so vector indexes can always be rebuilt from here.

Schema: its own versioned migrations (MEMORY_MIGRATIONS, append only) and
version table `memory_schema_migrations`, applied by `start()` in one
transaction under `pg_advisory_xact_lock(MEMORY_MIGRATION_LOCK_KEY)`, so
replicas starting together apply each migration once. It needs the main
schema (audit_log) to be migrated first.

Concurrency, on any number of replicas:

* exact duplicates: a unique (tenant, user_id, content_hash) index and
  `INSERT ... ON CONFLICT DO NOTHING`;
* the one-dimension-per-user rule: a per-user advisory transaction lock
  taken before the dimension check, so two first vectors of different
  dimensions cannot both pass;
* facts: advisory transaction locks per (user, subject, predicate), taken for
  the whole batch up front in one global order (no deadlocks between
  batches), so contradiction and dedup see every committed fact;
* consolidation: the episodes are locked (`FOR UPDATE`) before the
  "consolidated meanwhile?" check, so of two concurrent runs exactly one
  applies.

Vector change log (the cross-replica change feed's source): every change of
an embedded episode (added, importance changed by consolidation, deleted)
appends a row to `memory_vector_changes` with the next number of a
per-tenant sequence (`memory_change_heads`, bumped under its row lock) and
sends `pg_notify(CHANGE_CHANNEL, ...)`, all in the transaction of the
change. A notification therefore exists exactly when the change committed,
and per tenant the sequence order is the commit order, so a receiver that
saw seq n and then sees n + 2 knows it missed n + 1 and can read it back
(storage/postgres/memory_feed.py). The row lock serialises the *commits* of
one tenant's vector changes (it is taken by the last statement before
COMMIT); other tenants and every read are unaffected.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import StorageUnavailableError
from statekeeper.core.memory import lexical
from statekeeper.core.memory.lexical import LexicalCandidate, LexicalMatches, Neighbour
from statekeeper.core.memory.models import (
    ConsolidationPlan,
    DimensionMismatchError,
    Episode,
    EpisodeCursor,
    EpisodeFilter,
    Fact,
    FactBatch,
    FactCursor,
    FactQuery,
    FactResult,
    Neighbourhood,
    NeighbourhoodQuery,
    Predicate,
    ValueSource,
    VectorBatch,
    VectorManifest,
    entity_key,
)
from statekeeper.core.memory.semantic import FactResolution, resolve_fact
from statekeeper.core.memory.store import MemoryStore
from statekeeper.storage.postgres.memory_schema import (
    MEMORY_MIGRATION_LOCK_KEY,
    MEMORY_MIGRATIONS,
)
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.shared.memory import (
    EPISODE_COLUMNS,
    episode_columns,
    episode_from_row,
    fact_from_row,
    neighbourhood_from_rows,
    predicate_from_row,
)
from statekeeper.storage.sql import AUDIT_COLUMNS, audit_values

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection

# The episodes recorded just before and just after each wanted one in its
# session: one index probe each (memory_episodes_session_key).
_NEIGHBOURS = """
SELECT e.vector_key, n.vector_key, n.after, n.importance, n.occur_time
FROM memory_episodes e
CROSS JOIN LATERAL (
    (SELECT x.vector_key, false AS after, x.importance, x.occur_time FROM memory_episodes x
     WHERE x.tenant = e.tenant AND x.user_id = e.user_id AND x.session_id = e.session_id
       AND x.vector_key < e.vector_key ORDER BY x.vector_key DESC LIMIT 1)
    UNION ALL
    (SELECT x.vector_key, true, x.importance, x.occur_time FROM memory_episodes x
     WHERE x.tenant = e.tenant AND x.user_id = e.user_id AND x.session_id = e.session_id
       AND x.vector_key > e.vector_key ORDER BY x.vector_key LIMIT 1)
) AS n
WHERE e.vector_key = ANY($3::bigint[]) AND e.tenant = $1 AND e.user_id = $2
"""
_INDEX_BATCH = 500
# Class ids of the two-int advisory locks (a key space apart from one-bigint
# keys such as the migration locks): per user's vector dimension, per
# (user, subject, predicate) of facts.
_DIMENSION_LOCK = 0x736B6D64  # "skmd"
_FACT_LOCK = 0x736B6D66  # "skmf"

# The NOTIFY channel of vector changes, and the ops of a change row.
CHANGE_CHANNEL = "statekeeper_memory_vectors"
OP_ADD = "add"
OP_RANK = "rank"  # importance changed (consolidation demoted the episode)
OP_REMOVE = "remove"
# Keys per change row: keeps a notification with its keys well under
# PostgreSQL's 8000-byte payload limit.
CHANGE_CHUNK = 200
# A payload over this many bytes goes out without user and keys; the
# receiver reads them from the change row.
_PAYLOAD_LIMIT = 7900

_FACT_COLUMNS = (
    "fact_id, user_id, subject, predicate, object, source, confidence, valid_from, valid_to,"
    " origin, source_episode_ids, create_time, invalidate_time, invalidated_by,"
    " invalidation_reason"
)

# Every episode of a batch in one statement (one round trip), keys assigned
# in batch order; a content hash the user has (or an earlier row of the
# batch has) is skipped.
_INSERT_EPISODES = """
INSERT INTO memory_episodes (tenant, episode_id, user_id, session_id, user_message,
    assistant_response, summary, summary_source, embedding, dimension, embedding_source,
    embedding_model, importance, metadata, occur_time, create_time, content_hash,
    consolidate_time, derived_fact_ids, lexical_terms)
SELECT $1, e.episode_id, e.user_id, e.session_id, e.user_message, e.assistant_response,
    e.summary, e.summary_source, e.embedding, e.dimension, e.embedding_source,
    e.embedding_model, e.importance, e.metadata::jsonb, e.occur_time, e.create_time,
    e.content_hash, e.consolidate_time,
    ARRAY(SELECT jsonb_array_elements_text(e.derived::jsonb)), e.lexical_terms
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::integer[], $9::bytea[], $10::integer[], $11::integer[], $12::text[], $13::float8[],
    $14::text[], $15::float8[], $16::float8[], $17::text[], $18::float8[], $19::text[],
    $20::text[])
    WITH ORDINALITY AS e(episode_id, user_id, session_id, user_message, assistant_response,
        summary, summary_source, embedding, dimension, embedding_source, embedding_model,
        importance, metadata, occur_time, create_time, content_hash, consolidate_time,
        derived, lexical_terms, position)
ORDER BY e.position
ON CONFLICT (tenant, user_id, content_hash) DO NOTHING
RETURNING vector_key, episode_id
"""

# One change row: bump the tenant's sequence (row lock until commit), log
# the change, notify. The payload carries everything a receiver needs unless
# it would be too long (see _PAYLOAD_LIMIT).
_LOG_CHANGE = f"""
WITH head AS (
    INSERT INTO memory_change_heads AS h (tenant, seq) VALUES ($1, 1)
    ON CONFLICT (tenant) DO UPDATE SET seq = h.seq + 1
    RETURNING seq
), logged AS (
    INSERT INTO memory_vector_changes (tenant, seq, user_id, op, keys, origin)
    SELECT $1, seq, $2, $3, $4, $5 FROM head
    RETURNING seq
), payload AS (
    SELECT json_build_object('t', $1::text, 's', seq, 'r', $5::text, 'u', $2::text,
               'o', $3::text, 'k', $4::bigint[])::text AS full_text,
           json_build_object('t', $1::text, 's', seq, 'r', $5::text)::text AS brief_text
    FROM logged
)
SELECT pg_notify('{CHANGE_CHANNEL}',
    CASE WHEN octet_length(full_text) <= {_PAYLOAD_LIMIT} THEN full_text ELSE brief_text END)
FROM payload
"""


@dataclass(frozen=True)
class VectorChangeRow:
    """One row of the vector change log."""

    tenant: str
    seq: int
    user_id: str
    op: str
    keys: tuple[int, ...]
    origin: str


async def migrate_memory(conn: Connection) -> list[int]:
    """Applies every missing memory migration in one transaction under the
    memory advisory lock; returns the versions this call applied."""
    applied_now: list[int] = []
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", MEMORY_MIGRATION_LOCK_KEY)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS memory_schema_migrations (version integer PRIMARY KEY,"
            " description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        applied = {
            r["version"] for r in await conn.fetch("SELECT version FROM memory_schema_migrations")
        }
        for migration in MEMORY_MIGRATIONS:
            if migration.version in applied:
                continue
            for statement in migration.statements:
                await conn.execute(statement)
            await conn.execute(
                "INSERT INTO memory_schema_migrations (version, description) VALUES ($1, $2)",
                migration.version,
                migration.description,
            )
            applied_now.append(migration.version)
    return applied_now


async def index_missing_terms(conn: Connection) -> int:
    """Derives the lexical terms of episodes stored before migration 2, in
    batches of their own transactions (replicas may run it together: each
    batch locks the rows it takes, skipping those another one holds)."""
    total = 0
    while True:
        async with conn.transaction():
            rows = await conn.fetch(
                "SELECT vector_key, user_message, assistant_response, summary"
                " FROM memory_episodes WHERE lexical_terms IS NULL LIMIT $1"
                " FOR UPDATE SKIP LOCKED",
                _INDEX_BATCH,
            )
            await conn.executemany(
                "UPDATE memory_episodes SET lexical_terms = $2 WHERE vector_key = $1",
                [(r["vector_key"], lexical.document_terms(r[1], r[2], r[3])) for r in rows],
            )
        total += len(rows)
        if len(rows) < _INDEX_BATCH:
            return total


class _Params:
    """Positional parameters of one statement: `add` returns the mark."""

    def __init__(self, *initial: object) -> None:
        self.values: list[object] = list(initial)

    def add(self, value: object) -> str:
        self.values.append(value)
        return f"${len(self.values)}"


def _before(params: _Params, time_column: str, when: float, id_column: str, ident: str) -> str:
    """Keyset condition: strictly after (when, ident) in (time DESC, id DESC)."""
    t, i = params.add(when), params.add(ident)
    return f"({time_column} < {t} OR ({time_column} = {t} AND {id_column} < {i}))"


class PostgresMemoryStore(MemoryStore):
    """Episodes and facts in PostgreSQL, next to the session tables.

    `origin` names this store instance in the vector change log, so that
    the change feed of the same replica can skip what this replica already
    applied in process; it defaults to a random id per instance. Imports
    (`insert_episodes`), which the domain does not publish, are logged
    without an origin, so every replica applies them.
    """

    def __init__(self, db: PostgresStorage, origin: str = "") -> None:
        self._db = db
        self.origin = origin or uuid.uuid4().hex

    async def start(self) -> None:
        """Applies pending memory migrations (idempotent, replica-safe)."""
        async with self._db.connection("memory migrations") as conn:
            await migrate_memory(conn)
            await index_missing_terms(conn)

    async def close(self) -> None:
        """Nothing of its own to release: the pool belongs to PostgresStorage."""

    # ----- episodes ----------------------------------------------------------

    async def insert_episode(
        self, tenant: str, episode: Episode, audit: AuditRecord | None = None
    ) -> tuple[Episode, bool]:
        async with self._db.transaction("record episode") as conn:
            # Bounded: a retry happens only when the duplicate that blocked
            # the insert is deleted before it can be read back.
            for _ in range(3):
                inserted = await self._insert(
                    conn, tenant, [episode], audit, "recorded", self.origin
                )
                if inserted:
                    return inserted[0], True
                existing = await _episode_by_hash(
                    conn, tenant, episode.user_id, episode.content_hash
                )
                if existing is not None:
                    return existing, False
        raise StorageUnavailableError("an episode kept being deleted while recorded; retry")

    async def find_by_hash(self, tenant: str, user_id: str, digest: str) -> Episode | None:
        async with self._db.connection("find episode") as conn:
            return await _episode_by_hash(conn, tenant, user_id, digest)

    async def find_by_hashes(
        self, tenant: str, user_id: str, digests: Sequence[str]
    ) -> dict[str, Episode]:
        async with self._db.connection("find episodes") as conn:
            rows = await conn.fetch(
                f"SELECT {EPISODE_COLUMNS} FROM memory_episodes WHERE tenant=$1"
                " AND user_id=$2 AND content_hash = ANY($3::text[])",
                tenant,
                user_id,
                list(dict.fromkeys(digests)),
            )
        return {e.content_hash: e for e in map(episode_from_row, rows)}

    async def insert_episodes(
        self,
        tenant: str,
        episodes: Sequence[Episode],
        audit: AuditRecord | None = None,
        recorded: bool = False,
    ) -> list[Episode]:
        if not episodes:
            return []
        async with self._db.transaction("insert episodes") as conn:
            if recorded:  # the domain publishes these changes in process
                return await self._insert(conn, tenant, episodes, audit, "recorded", self.origin)
            # The domain publishes no change for an import, so its rows are
            # logged without an origin: every replica's feed applies them,
            # this one's included.
            return await self._insert(conn, tenant, episodes, audit, "imported", "")

    async def _insert(
        self,
        conn: Connection,
        tenant: str,
        episodes: Sequence[Episode],
        audit: AuditRecord | None,
        summary: str,
        origin: str,
    ) -> list[Episode]:
        """Inserts, in one statement, every episode whose content hash its
        user does not have yet (the first of equal ones in the batch), then
        checks dimensions, audits and logs the vector changes; returns the
        inserted episodes with their keys, in batch order."""
        embedded_users = sorted({e.user_id for e in episodes if e.embedding is not None})
        established = await _established_dimensions(conn, tenant, embedded_users)
        rows = await conn.fetch(_INSERT_EPISODES, tenant, *_episode_columns_of(episodes))
        keys = {row["episode_id"]: int(row["vector_key"]) for row in rows}
        stored = [e.evolve(vector_key=keys[e.episode_id]) for e in episodes if e.episode_id in keys]
        _check_dimensions(stored, established)  # raising rolls the insert back
        await _audit(conn, tenant, audit, "episode", [e.episode_id for e in stored], summary)
        for user_id, user_keys in _embedded_keys_by_user(stored).items():
            await self._log(conn, tenant, user_id, OP_ADD, user_keys, origin)
        return stored

    async def _log(
        self,
        conn: Connection,
        tenant: str,
        user_id: str,
        op: str,
        keys: Sequence[int],
        origin: str | None = None,
    ) -> None:
        """Appends the change to the log and notifies, in the caller's
        transaction, one row per CHANGE_CHUNK keys. `origin` defaults to this
        store's: a change the domain also publishes in process."""
        for start in range(0, len(keys), CHANGE_CHUNK):
            chunk = [int(k) for k in keys[start : start + CHANGE_CHUNK]]
            await conn.execute(
                _LOG_CHANGE, tenant, user_id, op, chunk, self.origin if origin is None else origin
            )

    async def get_episode(
        self, tenant: str, episode_id: str, include_embedding: bool
    ) -> Episode | None:
        async with self._db.connection("get episode") as conn:
            row = await conn.fetchrow(
                f"SELECT {episode_columns(include_embedding)} FROM memory_episodes"
                " WHERE tenant=$1 AND episode_id=$2",
                tenant,
                episode_id,
            )
        return None if row is None else episode_from_row(row)

    async def get_episodes_by_keys(
        self, tenant: str, user_id: str, keys: Sequence[int], include_embedding: bool
    ) -> list[Episode]:
        async with self._db.connection("get episodes") as conn:
            rows = await conn.fetch(
                f"SELECT {episode_columns(include_embedding)} FROM memory_episodes"
                " WHERE vector_key = ANY($1::bigint[]) AND tenant=$2 AND user_id=$3",
                [int(k) for k in keys],
                tenant,
                user_id,
            )
        return [episode_from_row(row) for row in rows]

    async def list_episodes(
        self,
        tenant: str,
        user_id: str,
        episode_filter: EpisodeFilter,
        after: EpisodeCursor | None,
        limit: int,
        include_embedding: bool,
    ) -> list[Episode]:
        clauses, params = _episode_clauses(tenant, user_id, episode_filter)
        if after is not None:
            clauses.append(
                _before(params, "occur_time", after.occur_time, "episode_id", after.episode_id)
            )
        sql = (
            f"SELECT {episode_columns(include_embedding)} FROM memory_episodes"
            f" WHERE {' AND '.join(clauses)}"
            f" ORDER BY occur_time DESC, episode_id DESC LIMIT {params.add(limit)}"
        )
        async with self._db.connection("list episodes") as conn:
            rows = await conn.fetch(sql, *params.values)
        return [episode_from_row(row) for row in rows]

    async def matching_keys(
        self, tenant: str, user_id: str, episode_filter: EpisodeFilter, limit: int
    ) -> list[int]:
        clauses, params = _episode_clauses(tenant, user_id, episode_filter)
        clauses.append("dimension > 0")
        sql = (
            f"SELECT vector_key FROM memory_episodes WHERE {' AND '.join(clauses)}"
            f" ORDER BY occur_time DESC, episode_id DESC LIMIT {params.add(limit)}"
        )
        async with self._db.connection("match episodes") as conn:
            rows = await conn.fetch(sql, *params.values)
        return [int(row[0]) for row in rows]

    async def lexical_matches(
        self,
        tenant: str,
        user_id: str,
        query_terms: Sequence[str],
        episode_filter: EpisodeFilter,
        limit: int,
    ) -> LexicalMatches:
        wanted = list(dict.fromkeys(query_terms))
        if not wanted:
            return LexicalMatches([], 0)
        clauses, params = _episode_clauses(tenant, user_id, episode_filter)
        # Terms are letters and digits only (core.lexical), safe to quote.
        query = params.add(" | ".join(f"'{term}'" for term in wanted))
        # ts_rank only picks which matches to return when there are more than
        # `limit`; core.lexical ranks them with BM25 like the other backend.
        sql = (
            "SELECT vector_key, lexical_terms, importance, occur_time FROM memory_episodes"
            f" WHERE {' AND '.join(clauses)} AND lexical @@ {query}::tsquery"
            f" ORDER BY ts_rank(lexical, {query}::tsquery) DESC LIMIT {params.add(limit)}"
        )
        frequency_sql = (
            "SELECT term, (SELECT count(*) FROM memory_episodes WHERE tenant = $1"
            " AND user_id = $2 AND lexical @@ quote_literal(term)::tsquery)"
            " FROM unnest($3::text[]) AS term"
        )
        async with self._db.connection("lexical search") as conn:
            rows = await conn.fetch(sql, *params.values)
            frequency = await conn.fetch(frequency_sql, tenant, user_id, wanted)
            total = await conn.fetchval(
                "SELECT count(*) FROM memory_episodes WHERE tenant = $1 AND user_id = $2",
                tenant,
                user_id,
            )
        return LexicalMatches(
            [LexicalCandidate(r[0], r[1] or "", r[2], r[3]) for r in rows],
            int(total),
            {r[0]: int(r[1]) for r in frequency},
        )

    async def neighbours(self, tenant: str, user_id: str, keys: Sequence[int]) -> list[Neighbour]:
        if not keys:
            return []
        async with self._db.connection("episode neighbours") as conn:
            rows = await conn.fetch(_NEIGHBOURS, tenant, user_id, [int(k) for k in keys])
        return [Neighbour(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    async def delete_episodes(
        self, tenant: str, episode_ids: Sequence[str], audit: AuditRecord | None = None
    ) -> list[Episode]:
        async with self._db.transaction("delete episodes") as conn:
            rows = await conn.fetch(
                f"DELETE FROM memory_episodes WHERE tenant=$1 AND episode_id = ANY($2::text[])"
                f" RETURNING {EPISODE_COLUMNS}",
                tenant,
                list(dict.fromkeys(episode_ids)),
            )
            deleted = [episode_from_row(row) for row in rows]
            await _audit(conn, tenant, audit, "episode", [e.episode_id for e in deleted], "deleted")
            for user_id, keys in _embedded_keys_by_user(deleted).items():
                await self._log(conn, tenant, user_id, OP_REMOVE, keys)
        return deleted

    async def load_vectors(self, tenant: str, user_id: str) -> VectorBatch | None:
        # One snapshot for the vectors and the model name.
        async with (
            self._db.connection("load vectors") as conn,
            conn.transaction(isolation="repeatable_read", readonly=True),
        ):
            rows = await conn.fetch(
                "SELECT vector_key, embedding, dimension, importance, occur_time FROM"
                " memory_episodes WHERE tenant=$1 AND user_id=$2 AND dimension > 0"
                " ORDER BY vector_key",
                tenant,
                user_id,
            )
            if not rows:
                return None
            model = await conn.fetchval(
                "SELECT embedding_model FROM memory_episodes WHERE tenant=$1 AND user_id=$2"
                " AND embedding_source=$3 ORDER BY vector_key DESC LIMIT 1",
                tenant,
                user_id,
                int(ValueSource.MODEL),
            )
        return _vector_batch(rows, model or "")

    async def vector_manifest(self, tenant: str, user_id: str) -> VectorManifest | None:
        async with (
            self._db.connection("vector manifest") as conn,
            conn.transaction(isolation="repeatable_read", readonly=True),
        ):
            rows = await conn.fetch(
                "SELECT vector_key, importance, occur_time, dimension FROM memory_episodes"
                " WHERE tenant=$1 AND user_id=$2 AND dimension > 0",
                tenant,
                user_id,
            )
            if not rows:
                return None
            model = await conn.fetchval(
                "SELECT embedding_model FROM memory_episodes WHERE tenant=$1 AND user_id=$2"
                " AND embedding_source=$3 ORDER BY vector_key DESC LIMIT 1",
                tenant,
                user_id,
                int(ValueSource.MODEL),
            )
        return VectorManifest(
            keys=np.fromiter((row[0] for row in rows), np.int64, len(rows)),
            importance=np.fromiter((row[1] for row in rows), np.float32, len(rows)),
            occur_time=np.fromiter((row[2] for row in rows), np.float64, len(rows)),
            dimension=int(rows[0][3]),
            embedding_model=model or "",
        )

    async def index_owners(self) -> list[tuple[str, str]]:
        async with self._db.connection("index owners") as conn:
            rows = await conn.fetch(
                "SELECT DISTINCT tenant, user_id FROM memory_episodes WHERE dimension > 0"
                " ORDER BY tenant, user_id"
            )
        return [(row[0], row[1]) for row in rows]

    async def tenants(self) -> list[str]:
        async with self._db.connection("memory tenants") as conn:
            rows = await conn.fetch("SELECT DISTINCT tenant FROM memory_episodes ORDER BY tenant")
        return [row[0] for row in rows]

    async def users(self, tenant: str) -> list[str]:
        async with self._db.connection("memory users") as conn:
            rows = await conn.fetch(
                "SELECT DISTINCT user_id FROM memory_episodes WHERE tenant=$1 ORDER BY user_id",
                tenant,
            )
        return [row[0] for row in rows]

    async def unconsolidated_episodes(self, tenant: str, user_id: str, limit: int) -> list[Episode]:
        async with self._db.connection("unconsolidated episodes") as conn:
            rows = await conn.fetch(
                f"SELECT {episode_columns(True)} FROM memory_episodes WHERE tenant=$1"
                " AND user_id=$2 AND dimension > 0 AND consolidate_time IS NULL"
                " ORDER BY occur_time, vector_key LIMIT $3",
                tenant,
                user_id,
                limit,
            )
        return [episode_from_row(row) for row in rows]

    async def scan_episodes(
        self, tenant: str, user_id: str, after_key: int, limit: int
    ) -> list[Episode]:
        params = _Params(tenant, after_key)
        user_clause = f" AND user_id = {params.add(user_id)}" if user_id else ""
        sql = (
            f"SELECT {EPISODE_COLUMNS} FROM memory_episodes WHERE tenant=$1"
            f" AND vector_key > $2{user_clause} ORDER BY vector_key LIMIT {params.add(limit)}"
        )
        async with self._db.connection("scan episodes") as conn:
            rows = await conn.fetch(sql, *params.values)
        return [episode_from_row(row) for row in rows]

    # ----- the vector change log (read by the change feed) -------------------

    async def change_heads(self) -> dict[str, int]:
        """The newest change sequence number of every tenant that has one."""
        async with self._db.connection("change heads") as conn:
            rows = await conn.fetch("SELECT tenant, seq FROM memory_change_heads")
        return {row["tenant"]: int(row["seq"]) for row in rows}

    async def changes_after(self, tenant: str, after_seq: int, limit: int) -> list[VectorChangeRow]:
        """Up to `limit` change rows of the tenant with seq > `after_seq`,
        ascending. The first row's seq is after_seq + 1 unless the rows
        between were pruned."""
        async with self._db.connection("read changes") as conn:
            rows = await conn.fetch(
                "SELECT tenant, seq, user_id, op, keys, origin FROM memory_vector_changes"
                " WHERE tenant=$1 AND seq > $2 ORDER BY seq LIMIT $3",
                tenant,
                after_seq,
                limit,
            )
        return [
            VectorChangeRow(
                row["tenant"],
                int(row["seq"]),
                row["user_id"],
                row["op"],
                tuple(int(k) for k in row["keys"]),
                row["origin"],
            )
            for row in rows
        ]

    async def prune_changes(self, older_than_seconds: float, limit: int = 10_000) -> int:
        """Deletes up to `limit` change rows older than the given age (by
        the database clock); returns how many. Heads are kept, so sequence
        numbers are never reused."""
        async with self._db.connection("prune changes") as conn:
            status = await conn.execute(
                "DELETE FROM memory_vector_changes WHERE (tenant, seq) IN (SELECT tenant, seq"
                " FROM memory_vector_changes WHERE change_time < now() - make_interval(secs => $1)"
                " LIMIT $2)",
                float(older_than_seconds),
                limit,
            )
        return int(status.split()[-1])

    # ----- facts -------------------------------------------------------------

    async def apply_facts(
        self, tenant: str, batch: FactBatch, audit: AuditRecord | None = None
    ) -> list[FactResult]:
        async with self._db.transaction("add facts") as conn:
            return await _apply_batch(conn, tenant, batch, audit)

    async def consolidate(
        self, tenant: str, plan: ConsolidationPlan, audit: AuditRecord | None = None
    ) -> list[FactResult]:
        ids = sorted(set(plan.episode_ids))
        async with self._db.transaction("consolidate") as conn:
            # Locked in one order, so concurrent runs queue instead of
            # deadlocking; the check then sees a concurrent run's commit.
            locked = await conn.fetch(
                "SELECT consolidate_time FROM memory_episodes WHERE tenant=$1"
                " AND episode_id = ANY($2::text[]) ORDER BY episode_id FOR UPDATE",
                tenant,
                ids,
            )
            if any(row["consolidate_time"] is not None for row in locked):
                return []
            results = await _apply_batch(conn, tenant, plan.facts, audit)
            demoted = await conn.fetch(
                "UPDATE memory_episodes SET importance = importance * $1, consolidate_time = $2,"
                " derived_fact_ids = derived_fact_ids || $3::text[]"
                " WHERE tenant=$4 AND episode_id = ANY($5::text[])"
                " RETURNING episode_id, user_id, vector_key, dimension",
                plan.demotion_factor,
                plan.facts.now,
                [r.fact.fact_id for r in results],
                tenant,
                ids,
            )
            summary = f"consolidated, importance x {plan.demotion_factor:g}"
            changed = [row["episode_id"] for row in demoted]
            await _audit(conn, tenant, audit, "episode", changed, summary)
            by_user: dict[str, list[int]] = {}
            for row in demoted:
                if row["dimension"] > 0:
                    by_user.setdefault(row["user_id"], []).append(int(row["vector_key"]))
            for user_id, keys in by_user.items():
                await self._log(conn, tenant, user_id, OP_RANK, keys)
            return results

    async def get_fact(self, tenant: str, fact_id: str) -> Fact | None:
        async with self._db.connection("get fact") as conn:
            return await _fact_by_id(conn, tenant, fact_id, lock=False)

    async def list_facts(
        self,
        tenant: str,
        query: FactQuery,
        now: float,
        after: FactCursor | None,
        limit: int,
    ) -> list[Fact]:
        params = _Params(tenant, query.user_id)
        clauses = ["tenant = $1", "user_id IN ($2, '')"]
        for name in ("subject", "predicate", "object"):
            if value := getattr(query, name):
                clauses.append(f"{name}_key = {params.add(value)}")
        if not query.include_invalidated:
            clauses.append(_valid_at("", params.add(now)))
        if after is not None:
            clauses.append(
                _before(params, "create_time", after.create_time, "fact_id", after.fact_id)
            )
        sql = (
            f"SELECT {_FACT_COLUMNS} FROM memory_facts WHERE {' AND '.join(clauses)}"
            f" ORDER BY create_time DESC, fact_id DESC LIMIT {params.add(limit)}"
        )
        async with self._db.connection("list facts") as conn:
            rows = await conn.fetch(sql, *params.values)
        return [fact_from_row(row) for row in rows]

    async def neighbourhood(self, tenant: str, query: NeighbourhoodQuery) -> Neighbourhood:
        sql, params = _neighbourhood_sql(tenant, query)
        async with self._db.connection("neighbourhood") as conn:
            rows = await conn.fetch(sql, *params)
        return neighbourhood_from_rows(query, rows)

    async def entities_among(self, tenant: str, user_id: str, keys: Sequence[str]) -> list[str]:
        async with self._db.connection("entities") as conn:
            rows = await conn.fetch(
                "SELECT subject_key FROM memory_facts WHERE tenant=$1 AND user_id IN ($2, '')"
                " AND subject_key = ANY($3::text[])"
                " UNION SELECT object_key FROM memory_facts WHERE tenant=$1"
                " AND user_id IN ($2, '') AND object_key = ANY($3::text[])",
                tenant,
                user_id,
                list(dict.fromkeys(keys)),
            )
        return sorted(row[0] for row in rows)

    async def invalidate_fact(
        self,
        tenant: str,
        fact_id: str,
        reason: str,
        valid_to: float | None,
        now: float,
        audit: AuditRecord | None = None,
    ) -> tuple[Fact, bool] | None:
        async with self._db.transaction("invalidate fact") as conn:
            fact = await _fact_by_id(conn, tenant, fact_id, lock=True)
            if fact is None:
                return None
            if fact.invalidate_time is not None:
                return fact, True
            end = now if valid_to is None else valid_to
            if fact.valid_to is not None and fact.valid_to < end:
                end = fact.valid_to
            updated = fact.evolve(valid_to=end, invalidate_time=now, invalidation_reason=reason)
            await _update_fact(conn, tenant, updated)
            await _audit(conn, tenant, audit, "fact", [fact_id], f"invalidated: {reason}")
            return updated, False

    async def declare_predicate(
        self, tenant: str, predicate: Predicate, audit: AuditRecord | None = None
    ) -> Predicate:
        kind = "single-valued" if predicate.single_valued else "multi-valued"
        async with self._db.transaction("declare predicate") as conn:
            row = await conn.fetchrow(
                "INSERT INTO memory_predicates (tenant, name, single_valued, description,"
                " create_time, update_time) VALUES ($1,$2,$3,$4,$5,$6)"
                " ON CONFLICT (tenant, name) DO UPDATE SET"
                " single_valued=excluded.single_valued, description=excluded.description,"
                " update_time=excluded.update_time RETURNING *",
                tenant,
                predicate.name,
                predicate.single_valued,
                predicate.description,
                predicate.create_time,
                predicate.update_time,
            )
            await _audit(conn, tenant, audit, "predicate", [predicate.name], f"declared {kind}")
        assert row is not None  # INSERT ... RETURNING returns the row
        return predicate_from_row(row)

    async def list_predicates(self, tenant: str, after_name: str, limit: int) -> list[Predicate]:
        async with self._db.connection("list predicates") as conn:
            rows = await conn.fetch(
                "SELECT * FROM memory_predicates WHERE tenant=$1 AND name > $2"
                " ORDER BY name LIMIT $3",
                tenant,
                after_name,
                limit,
            )
        return [predicate_from_row(row) for row in rows]


# ----- episode rows --------------------------------------------------------------


async def _episode_by_hash(
    conn: Connection, tenant: str, user_id: str, digest: str
) -> Episode | None:
    row = await conn.fetchrow(
        f"SELECT {EPISODE_COLUMNS} FROM memory_episodes WHERE tenant=$1 AND user_id=$2"
        " AND content_hash=$3",
        tenant,
        user_id,
        digest,
    )
    return None if row is None else episode_from_row(row)


async def _established_dimensions(
    conn: Connection, tenant: str, user_ids: Sequence[str]
) -> dict[str, int]:
    """The dimension of each user's stored vectors (users without any are
    absent). The users' locks, held to commit, make check-then-insert
    atomic; the read is its own statement so that its snapshot is taken
    after the locks are granted and sees what their last holder committed."""
    if not user_ids:
        return {}
    await _lock_all(conn, _DIMENSION_LOCK, [f"{tenant}\x1f{u}" for u in user_ids])
    rows = await conn.fetch(
        "SELECT u.user_id, (SELECT dimension FROM memory_episodes WHERE tenant=$1"
        " AND user_id=u.user_id AND dimension > 0 LIMIT 1) AS dimension"
        " FROM unnest($2::text[]) AS u(user_id)",
        tenant,
        list(user_ids),
    )
    return {row["user_id"]: int(row["dimension"]) for row in rows if row["dimension"]}


def _check_dimensions(stored: Sequence[Episode], established: dict[str, int]) -> None:
    """Raises DimensionMismatchError unless every stored vector has its
    user's dimension: the one stored before, else the first in the batch."""
    expected = dict(established)
    for episode in stored:
        if not episode.has_embedding:
            continue
        want = expected.setdefault(episode.user_id, episode.dimension)
        if want != episode.dimension:
            raise DimensionMismatchError("embedding", want, episode.dimension)


async def _lock_all(conn: Connection, lock_class: int, names: Sequence[str]) -> None:
    """Takes the advisory transaction locks of these names in hash order, so
    two transactions locking overlapping sets never wait in a cycle."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock($1, h) FROM (SELECT DISTINCT hashtext(n) AS h"
        " FROM unnest($2::text[]) AS n ORDER BY h) AS ordered",
        lock_class,
        list(names),
    )


def _episode_columns_of(episodes: Sequence[Episode]) -> list[list[object]]:
    """The episodes as column arrays, in the order of _INSERT_EPISODES."""
    columns: list[list[object]] = [[] for _ in range(19)]
    for episode in episodes:
        blob = None
        if episode.embedding is not None:
            blob = np.asarray(episode.embedding, dtype="<f4").tobytes()
        values = (
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
            json.dumps(episode.metadata),
            episode.occur_time,
            episode.create_time,
            episode.content_hash,
            episode.consolidate_time,
            json.dumps(list(episode.derived_fact_ids)),
            lexical.document_terms(
                episode.user_message, episode.assistant_response, episode.summary
            ),
        )
        for column, value in zip(columns, values, strict=True):
            column.append(value)
    return columns


def _embedded_keys_by_user(episodes: Iterable[Episode]) -> dict[str, list[int]]:
    by_user: dict[str, list[int]] = {}
    for episode in episodes:
        if episode.has_embedding:
            by_user.setdefault(episode.user_id, []).append(episode.vector_key)
    return by_user


def _episode_clauses(
    tenant: str, user_id: str, episode_filter: EpisodeFilter
) -> tuple[list[str], _Params]:
    params = _Params(tenant)
    clauses = ["tenant = $1"]
    if user_id:
        clauses.append(f"user_id = {params.add(user_id)}")
    if episode_filter.session_id:
        clauses.append(f"session_id = {params.add(episode_filter.session_id)}")
    if episode_filter.start_time is not None:
        clauses.append(f"occur_time >= {params.add(episode_filter.start_time)}")
    if episode_filter.end_time is not None:
        clauses.append(f"occur_time < {params.add(episode_filter.end_time)}")
    if episode_filter.metadata:
        # jsonb containment of string values is exact equality of each pair;
        # the document is a parameter, so any key or value is safe.
        clauses.append(f"metadata @> {params.add(json.dumps(episode_filter.metadata))}::jsonb")
    return clauses, params


def _vector_batch(rows: Sequence[Any], embedding_model: str) -> VectorBatch:
    dimension = int(rows[0]["dimension"])
    matrix = np.frombuffer(b"".join(row["embedding"] for row in rows), dtype="<f4")
    return VectorBatch(
        keys=np.fromiter((row["vector_key"] for row in rows), np.int64, len(rows)),
        vectors=matrix.astype(np.float32).reshape(len(rows), dimension),
        importance=np.fromiter((row["importance"] for row in rows), np.float32, len(rows)),
        occur_time=np.fromiter((row["occur_time"] for row in rows), np.float64, len(rows)),
        embedding_model=embedding_model,
    )


# ----- audit ---------------------------------------------------------------------


async def _audit(
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


# ----- fact rows -----------------------------------------------------------------


def _valid_at(prefix: str, mark: str) -> str:
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
    await _lock_all(conn, _FACT_LOCK, sorted(names))


async def _apply_batch(
    conn: Connection, tenant: str, batch: FactBatch, audit: AuditRecord | None
) -> list[FactResult]:
    if not batch.drafts:
        return []
    await _lock_fact_keys(conn, tenant, batch)
    results: list[FactResult] = []
    for draft, new_id in zip(batch.drafts, batch.new_ids, strict=True):
        predicate_key = entity_key(draft.predicate)
        rows = await conn.fetch(
            f"SELECT {_FACT_COLUMNS} FROM memory_facts WHERE tenant=$1 AND subject_key=$2"
            f" AND predicate_key=$3 AND user_id=$4 AND {_valid_at('', '$5')}"
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
            await _update_fact(conn, tenant, fact)
        await _audit_resolution(conn, tenant, audit, resolution)
        results.append(resolution.result)
    return results


async def _audit_resolution(
    conn: Connection, tenant: str, audit: AuditRecord | None, resolution: FactResolution
) -> None:
    if resolution.created is not None:
        await _audit(conn, tenant, audit, "fact", [resolution.created.fact_id], "created")
    for fact in resolution.updated:
        summary = (
            f"contradicted by {fact.invalidated_by}"
            if fact.invalidated_by
            else "confidence raised by a duplicate"
        )
        await _audit(conn, tenant, audit, "fact", [fact.fact_id], summary)


async def _insert_fact(conn: Connection, tenant: str, fact: Fact) -> None:
    await conn.execute(
        "INSERT INTO memory_facts (tenant, fact_id, user_id, subject, subject_key, predicate,"
        " predicate_key, object, object_key, source, confidence, valid_from, valid_to, origin,"
        " source_episode_ids, create_time, invalidate_time, invalidated_by, invalidation_reason)"
        " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19)",
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
        list(fact.source_episode_ids),
        fact.create_time,
        fact.invalidate_time,
        fact.invalidated_by,
        fact.invalidation_reason,
    )


async def _update_fact(conn: Connection, tenant: str, fact: Fact) -> None:
    """Writes the mutable fields of a fact: confidence and invalidation."""
    await conn.execute(
        "UPDATE memory_facts SET confidence=$1, valid_to=$2, invalidate_time=$3,"
        " invalidated_by=$4, invalidation_reason=$5 WHERE tenant=$6 AND fact_id=$7",
        fact.confidence,
        fact.valid_to,
        fact.invalidate_time,
        fact.invalidated_by,
        fact.invalidation_reason,
        tenant,
        fact.fact_id,
    )


async def _fact_by_id(conn: Connection, tenant: str, fact_id: str, lock: bool) -> Fact | None:
    row = await conn.fetchrow(
        f"SELECT {_FACT_COLUMNS} FROM memory_facts WHERE tenant=$1 AND fact_id=$2"
        + (" FOR UPDATE" if lock else ""),
        tenant,
        fact_id,
    )
    return None if row is None else fact_from_row(row)


# ----- neighbourhood -------------------------------------------------------------


def _neighbourhood_sql(tenant: str, query: NeighbourhoodQuery) -> tuple[str, list[object]]:
    """One recursive query. `reach` walks entities breadth first, following
    visible facts in both directions through the subject and object indexes,
    up to depth-1 hops; every visible fact touching a reached entity is an
    edge, at one hop more than its nearer end. Visibility is applied while
    walking, so hidden facts never connect entities. Edges are looked up
    per reached entity through the same two indexes (LATERAL keeps the
    planner from hashing the whole tenant's facts), and DISTINCT drops a
    fact found from both of its ends."""
    params = _Params(tenant, query.user_id, query.entity, query.depth - 1)
    visible = ["f.tenant = $1", "f.user_id IN ($2, '')"]
    if not query.include_invalidated:
        visible.append(_valid_at("f.", params.add(query.as_of)))
    if query.predicates:
        visible.append(f"f.predicate_key = ANY({params.add(list(query.predicates))}::text[])")
    where = " AND ".join(visible)
    columns = ", ".join(
        f"f.{c.strip()}" for c in f"{_FACT_COLUMNS}, subject_key, object_key".split(",")
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
