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

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.errors import StorageUnavailableError
from statekeeper.core.memory import lexical
from statekeeper.core.memory.lexical import LexicalCandidate, LexicalMatches, Neighbour
from statekeeper.core.memory.models import (
    ConsolidationPlan,
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
)
from statekeeper.core.memory.store import MemoryStore
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.storage.postgres.erasure import run_steps
from statekeeper.storage.postgres.memory_episodes import (
    check_dimensions,
    embedded_keys_by_user,
    episode_by_hash,
    episode_clauses,
    episode_columns_of,
    established_dimensions,
    write_episode_audits,
)
from statekeeper.storage.postgres.memory_facts import (
    FACT_COLUMNS,
    Params,
    apply_batch,
    fact_by_id,
    neighbourhood_sql,
    update_fact,
    valid_at,
    write_audit,
)
from statekeeper.storage.postgres.memory_schema import (
    index_missing_terms,
    migrate_memory,
)
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.shared.erasure import Erasure, Step, memory_steps
from statekeeper.storage.shared.memory import (
    EPISODE_COLUMNS,
    episode_columns,
    episode_from_row,
    fact_from_row,
    latest_model_sql,
    manifest_rows_sql,
    neighbourhood_from_rows,
    predicate_from_row,
    vector_batch,
    vector_manifest,
    vector_rows_sql,
)
from statekeeper.storage.sql import postgres_mark

if TYPE_CHECKING:
    import asyncpg

    from statekeeper.storage.postgres.sessions import Connection

_VECTOR_ROWS = vector_rows_sql(postgres_mark)
_MANIFEST_ROWS = manifest_rows_sql(postgres_mark)
_LATEST_MODEL = latest_model_sql(postgres_mark)

# The episodes recorded just before and just after each wanted one in its
# session: one index probe each (memory_episodes_session_key). An episode
# recorded without a session (session_id '') has no neighbours: the user's
# sessionless episodes are not one conversation.
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
  AND e.session_id <> ''
"""

# The NOTIFY channel of vector changes, and the ops of a change row.
CHANGE_CHANNEL = "statekeeper_memory_vectors"
OP_ADD = "add"
OP_RANK = "rank"  # importance changed (consolidation demoted the episode)
OP_REMOVE = "remove"
# EraseUser: the keys of an erased user, logged without the user id; every
# replica drops whichever of its indexes holds them (and its snapshot).
OP_ERASE = "erase"
# An earlier row of an erased user, blanked: nothing to apply.
OP_ERASED = "erased"
# Keys per change row: keeps a notification with its keys well under
# PostgreSQL's 8000-byte payload limit.
CHANGE_CHUNK = 200
# A payload over this many bytes goes out without user and keys; the
# receiver reads them from the change row.
_PAYLOAD_LIMIT = 7900


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


def _before(params: Params, time_column: str, when: float, id_column: str, ident: str) -> str:
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
        columns = episode_columns_of([episode])
        async with self._db.transaction("record episode") as conn:
            # Bounded: a retry happens only when the duplicate that blocked
            # the insert is deleted before it can be read back.
            for _ in range(3):
                inserted = await self._insert(
                    conn, tenant, [episode], columns, audit, "recorded", self.origin
                )
                if inserted:
                    return inserted[0], True
                existing = await episode_by_hash(
                    conn, tenant, episode.user_id, episode.content_hash
                )
                if existing is not None:
                    return existing, False
        raise StorageUnavailableError("an episode kept being deleted while recorded; retry")

    async def find_by_hash(self, tenant: str, user_id: str, digest: str) -> Episode | None:
        async with self._db.connection("find episode") as conn:
            return await episode_by_hash(conn, tenant, user_id, digest)

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
        # Computed before the transaction (the terms of 1,000 episodes take
        # tens of ms): the users' dimension locks are held only for SQL.
        columns = episode_columns_of(episodes)
        async with self._db.transaction("insert episodes") as conn:
            if recorded:  # the domain publishes these changes in process
                return await self._insert(
                    conn, tenant, episodes, columns, audit, "recorded", self.origin
                )
            # The domain publishes no change for an import, so its rows are
            # logged without an origin: every replica's feed applies them,
            # this one's included.
            return await self._insert(conn, tenant, episodes, columns, audit, "imported", "")

    async def _insert(
        self,
        conn: Connection,
        tenant: str,
        episodes: Sequence[Episode],
        columns: list[list[object]],
        audit: AuditRecord | None,
        summary: str,
        origin: str,
    ) -> list[Episode]:
        """Inserts, in one statement (`columns`: episode_columns_of(episodes)),
        every episode whose content hash its user does not have yet (the
        first of equal ones in the batch), then checks dimensions, audits and
        logs the vector changes; returns the inserted episodes with their
        keys, in batch order."""
        embedded_users = sorted({e.user_id for e in episodes if e.embedding is not None})
        established = await established_dimensions(conn, tenant, embedded_users)
        rows = await conn.fetch(_INSERT_EPISODES, tenant, *columns)
        keys = {row["episode_id"]: int(row["vector_key"]) for row in rows}
        stored = [e.evolve(vector_key=keys[e.episode_id]) for e in episodes if e.episode_id in keys]
        check_dimensions(stored, established)  # raising rolls the insert back
        for user_id, user_keys in embedded_keys_by_user(stored).items():
            await self._log(conn, tenant, user_id, OP_ADD, user_keys, origin)
        # Last: the audit records go in linked, which locks the tenant's chain
        # head until the commit; no round trip of this transaction follows.
        await write_episode_audits(conn, tenant, audit, [e.episode_id for e in stored], summary)
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

    async def log_vector_change(
        self, conn: Connection, tenant: str, user_id: str, op: str, keys: Sequence[int]
    ) -> None:
        """`_log` for the archive tier (storage/archive/episodes_postgres.py):
        its deletes and restores of a user's episodes reach the other
        replicas' indexes through the log like any delete or insert; this
        replica's indexes get them in process (this store's origin)."""
        await self._log(conn, tenant, user_id, op, keys)

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
        clauses, params = episode_clauses(tenant, user_id, episode_filter)
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
        clauses, params = episode_clauses(tenant, user_id, episode_filter)
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
        match_budget: int = 0,
    ) -> LexicalMatches:
        wanted = list(dict.fromkeys(query_terms))
        if not wanted:
            return LexicalMatches([], 0)
        frequency_sql = (
            "SELECT term, (SELECT count(*) FROM memory_episodes WHERE tenant = $1"
            " AND user_id = $2 AND lexical @@ quote_literal(term)::tsquery)"
            " FROM unnest($3::text[]) AS term"
        )
        async with self._db.connection("lexical search") as conn:
            # Corpus statistics first: they choose the terms to match.
            counted = await conn.fetch(frequency_sql, tenant, user_id, wanted)
            total = int(
                await conn.fetchval(
                    "SELECT count(*) FROM memory_episodes WHERE tenant = $1 AND user_id = $2",
                    tenant,
                    user_id,
                )
            )
            frequency = {r[0]: int(r[1]) for r in counted}
            match = lexical.match_terms(wanted, frequency, match_budget)
            if not match:
                return LexicalMatches([], total, frequency)
            clauses, params = episode_clauses(tenant, user_id, episode_filter)
            # Terms are letters and digits only (core.lexical), safe to quote.
            query = params.add(" | ".join(f"'{term}'" for term in match))
            # ts_rank only picks which matches to return when there are more
            # than `limit`; core.lexical ranks them with BM25 like the other
            # backend.
            sql = (
                "SELECT vector_key, lexical_terms, importance, occur_time FROM memory_episodes"
                f" WHERE {' AND '.join(clauses)} AND lexical @@ {query}::tsquery"
                f" ORDER BY ts_rank(lexical, {query}::tsquery) DESC LIMIT {params.add(limit)}"
            )
            rows = await conn.fetch(sql, *params.values)
        return LexicalMatches(
            [LexicalCandidate(r[0], r[1] or "", r[2], r[3]) for r in rows], total, frequency
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
            await write_audit(
                conn, tenant, audit, "episode", [e.episode_id for e in deleted], "deleted"
            )
            for user_id, keys in embedded_keys_by_user(deleted).items():
                await self._log(conn, tenant, user_id, OP_REMOVE, keys)
        return deleted

    async def load_vectors(self, tenant: str, user_id: str) -> VectorBatch | None:
        read = await self._user_vectors("load vectors", _VECTOR_ROWS, tenant, user_id)
        return None if read is None else vector_batch(*read)

    async def vector_manifest(self, tenant: str, user_id: str) -> VectorManifest | None:
        read = await self._user_vectors("vector manifest", _MANIFEST_ROWS, tenant, user_id)
        return None if read is None else vector_manifest(*read)

    async def _user_vectors(
        self, what: str, query: str, tenant: str, user_id: str
    ) -> tuple[list[asyncpg.Record], str] | None:
        """The rows `query` reads of the user's embedded episodes and the
        embedding model, in one snapshot; None when the user has none."""
        async with (
            self._db.connection(what) as conn,
            conn.transaction(isolation="repeatable_read", readonly=True),
        ):
            rows = await conn.fetch(query, tenant, user_id)
            if not rows:
                return None
            model = await conn.fetchval(_LATEST_MODEL, tenant, user_id, int(ValueSource.MODEL))
        return rows, model or ""

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
        params = Params(tenant, after_key)
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

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        async def log_batch(conn: Connection, step: Step, values: Sequence[object]) -> None:
            # In each episode batch's transaction: one erase row, without
            # the user id, names the deleted keys so that every replica
            # drops the index holding them (an interrupted erasure has
            # logged every batch it committed).
            if step.kind == "episodes":
                await self._log(conn, tenant, "", OP_ERASE, sorted(int(str(k)) for k in values))

        async def blank_changes(conn: Connection, erasure: Erasure) -> None:
            # The user's earlier change rows are blanked (not deleted: each
            # tenant's sequence stays gap-free for the replicas' feeds).
            mine = "WHERE tenant = $1 AND user_id = $2"
            if erasure.dry_run:
                count = await conn.fetchval(
                    f"SELECT count(*) FROM memory_vector_changes {mine}", tenant, subject.user_id
                )
            else:
                status = await conn.execute(
                    f"UPDATE memory_vector_changes SET user_id = '', op = $3, keys = '{{}}' {mine}",
                    tenant,
                    subject.user_id,
                    OP_ERASED,
                )
                count = status.split()[-1]
            erasure.counts.add("memory", "vector_change_rows", int(count))

        steps = memory_steps(tenant, subject)
        erasure = await run_steps(
            self._db, steps, dry_run, finish=blank_changes, in_batch=log_batch
        )
        return erasure.counts

    # ----- facts -------------------------------------------------------------

    async def apply_facts(
        self, tenant: str, batch: FactBatch, audit: AuditRecord | None = None
    ) -> list[FactResult]:
        async with self._db.transaction("add facts") as conn:
            return await apply_batch(conn, tenant, batch, audit)

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
            results = await apply_batch(conn, tenant, plan.facts, audit)
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
            await write_audit(conn, tenant, audit, "episode", changed, summary)
            by_user: dict[str, list[int]] = {}
            for row in demoted:
                if row["dimension"] > 0:
                    by_user.setdefault(row["user_id"], []).append(int(row["vector_key"]))
            for user_id, keys in by_user.items():
                await self._log(conn, tenant, user_id, OP_RANK, keys)
            return results

    async def get_fact(self, tenant: str, fact_id: str) -> Fact | None:
        async with self._db.connection("get fact") as conn:
            return await fact_by_id(conn, tenant, fact_id, lock=False)

    async def list_facts(
        self,
        tenant: str,
        query: FactQuery,
        now: float,
        after: FactCursor | None,
        limit: int,
    ) -> list[Fact]:
        params = Params(tenant, query.user_id)
        clauses = ["tenant = $1", "user_id IN ($2, '')"]
        for name in ("subject", "predicate", "object"):
            if value := getattr(query, name):
                clauses.append(f"{name}_key = {params.add(value)}")
        if not query.include_invalidated:
            clauses.append(valid_at("", params.add(now)))
        if after is not None:
            clauses.append(
                _before(params, "create_time", after.create_time, "fact_id", after.fact_id)
            )
        sql = (
            f"SELECT {FACT_COLUMNS} FROM memory_facts WHERE {' AND '.join(clauses)}"
            f" ORDER BY create_time DESC, fact_id DESC LIMIT {params.add(limit)}"
        )
        async with self._db.connection("list facts") as conn:
            rows = await conn.fetch(sql, *params.values)
        return [fact_from_row(row) for row in rows]

    async def neighbourhood(self, tenant: str, query: NeighbourhoodQuery) -> Neighbourhood:
        sql, params = neighbourhood_sql(tenant, query)
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
            fact = await fact_by_id(conn, tenant, fact_id, lock=True)
            if fact is None:
                return None
            updated = fact.invalidated(reason, valid_to, now)
            if updated is None:
                return fact, True
            await update_fact(conn, tenant, updated)
            await write_audit(conn, tenant, audit, "fact", [fact_id], f"invalidated: {reason}")
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
            await write_audit(
                conn, tenant, audit, "predicate", [predicate.name], f"declared {kind}"
            )
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


# ----- audit ---------------------------------------------------------------------


# ----- fact rows -----------------------------------------------------------------


# ----- neighbourhood -------------------------------------------------------------
