"""Embedded (SQLite) implementation of the memory stores.

It shares the `EmbeddedStorage` connection and database thread (all work goes
through `EmbeddedStorage.run`), and keeps its own versioned schema table,
`memory_schema_migrations`, so its migrations evolve independently of the
session schema. Embeddings are stored as little-endian float32 blobs.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from statekeeper.core.audit.models import AuditRecord
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
from statekeeper.storage.codec import dumps
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.shared.memory import (
    EPISODE_COLUMNS,
    episode_columns,
    episode_from_row,
    fact_from_row,
    neighbourhood_from_rows,
    predicate_from_row,
)
from statekeeper.storage.sql import AUDIT_COLUMNS, audit_values

T = TypeVar("T")

# Versioned migrations of the memory tables: (version, statements). Append
# only; never edit a released entry.
MEMORY_MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            """CREATE TABLE memory_episodes (
                vector_key INTEGER PRIMARY KEY AUTOINCREMENT,
                tenant TEXT NOT NULL,
                episode_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                session_id TEXT NOT NULL,
                user_message TEXT NOT NULL,
                assistant_response TEXT NOT NULL,
                summary TEXT NOT NULL,
                summary_source INTEGER NOT NULL,
                embedding BLOB,
                dimension INTEGER NOT NULL,
                embedding_source INTEGER NOT NULL,
                embedding_model TEXT NOT NULL,
                importance REAL NOT NULL,
                metadata TEXT NOT NULL,
                occur_time REAL NOT NULL,
                create_time REAL NOT NULL,
                content_hash TEXT NOT NULL,
                consolidate_time REAL,
                derived_fact_ids TEXT NOT NULL
            )""",
            "CREATE UNIQUE INDEX memory_episodes_id ON memory_episodes (tenant, episode_id)",
            "CREATE UNIQUE INDEX memory_episodes_hash"
            " ON memory_episodes (tenant, user_id, content_hash)",
            "CREATE INDEX memory_episodes_user_time"
            " ON memory_episodes (tenant, user_id, occur_time DESC, episode_id DESC)",
            "CREATE INDEX memory_episodes_time"
            " ON memory_episodes (tenant, occur_time DESC, episode_id DESC)",
            """CREATE TABLE memory_facts (
                tenant TEXT NOT NULL,
                fact_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                subject TEXT NOT NULL,
                subject_key TEXT NOT NULL,
                predicate TEXT NOT NULL,
                predicate_key TEXT NOT NULL,
                object TEXT NOT NULL,
                object_key TEXT NOT NULL,
                source TEXT NOT NULL,
                confidence REAL NOT NULL,
                valid_from REAL NOT NULL,
                valid_to REAL,
                origin INTEGER NOT NULL,
                source_episode_ids TEXT NOT NULL,
                create_time REAL NOT NULL,
                invalidate_time REAL,
                invalidated_by TEXT NOT NULL,
                invalidation_reason TEXT NOT NULL,
                PRIMARY KEY (tenant, fact_id)
            )""",
            "CREATE INDEX memory_facts_subject"
            " ON memory_facts (tenant, subject_key, predicate_key, user_id)",
            "CREATE INDEX memory_facts_object ON memory_facts (tenant, object_key)",
            "CREATE INDEX memory_facts_time"
            " ON memory_facts (tenant, create_time DESC, fact_id DESC)",
            """CREATE TABLE memory_predicates (
                tenant TEXT NOT NULL,
                name TEXT NOT NULL,
                single_valued INTEGER NOT NULL,
                description TEXT NOT NULL,
                create_time REAL NOT NULL,
                update_time REAL NOT NULL,
                PRIMARY KEY (tenant, name)
            )""",
        ],
    ),
    (
        2,
        [
            # Lexical index: terms come from core.lexical (NULL: not indexed
            # yet, see _index_terms); FTS5 only splits them on spaces.
            "ALTER TABLE memory_episodes ADD COLUMN lexical_terms TEXT",
            "CREATE VIRTUAL TABLE memory_episode_terms USING fts5(scope, terms,"
            " tokenize = 'unicode61 remove_diacritics 0')",
            "CREATE TRIGGER memory_episode_terms_delete AFTER DELETE ON memory_episodes"
            " BEGIN DELETE FROM memory_episode_terms WHERE rowid = old.vector_key; END",
        ],
    ),
    (
        3,
        [
            # Recall looks up the turns recorded next to a match in its session.
            "CREATE INDEX memory_episodes_session_key"
            " ON memory_episodes (tenant, user_id, session_id, vector_key)",
        ],
    ),
    (
        4,
        [
            # Filtered recall (matching_keys) reads a user's metadata from
            # this covering index, newest first, instead of every row with
            # its embedding (a 1-2 KB row per episode).
            "CREATE INDEX memory_episodes_user_metadata ON memory_episodes"
            " (tenant, user_id, occur_time DESC, episode_id DESC, dimension, metadata)",
        ],
    ),
    (
        5,
        [
            # Episodes whose terms are still to be derived (_index_terms runs
            # at every start): empty once done, so that check costs nothing.
            "CREATE INDEX memory_episodes_unindexed ON memory_episodes (vector_key)"
            " WHERE lexical_terms IS NULL",
        ],
    ),
]
_INDEX_BATCH = 500

_FACT_COLUMNS = (
    "fact_id, user_id, subject, predicate, object, source, confidence, valid_from, valid_to,"
    " origin, source_episode_ids, create_time, invalidate_time, invalidated_by,"
    " invalidation_reason"
)
# A fact is valid at :t when this holds (see Fact.valid_at).
_VALID_AT = (
    "valid_from <= :t AND (valid_to IS NULL OR :t < valid_to)"
    " AND (invalidate_time IS NULL OR :t < invalidate_time)"
)
_CHUNK = 500  # SQLite caps bound parameters per statement
# The episodes recorded just before and just after each wanted one in its
# session (memory_episodes_session_key makes each lookup one index probe).
_NEIGHBOURS = """
WITH wanted(k) AS (VALUES {marks}),
episode AS (
    SELECT e.vector_key, e.tenant, e.user_id, e.session_id FROM wanted
    JOIN memory_episodes e ON e.vector_key = wanted.k AND e.tenant = ? AND e.user_id = ?
),
link AS (
    SELECT vector_key AS k, (SELECT max(x.vector_key) FROM memory_episodes x
        WHERE x.tenant = episode.tenant AND x.user_id = episode.user_id
        AND x.session_id = episode.session_id AND x.vector_key < episode.vector_key) AS n,
        0 AS after FROM episode
    UNION ALL
    SELECT vector_key, (SELECT min(x.vector_key) FROM memory_episodes x
        WHERE x.tenant = episode.tenant AND x.user_id = episode.user_id
        AND x.session_id = episode.session_id AND x.vector_key > episode.vector_key),
        1 FROM episode
)
SELECT link.k, link.n, link.after, m.importance, m.occur_time
FROM link JOIN memory_episodes m ON m.vector_key = link.n
"""


def migrate_memory(db: sqlite3.Connection) -> None:
    """Applies the memory migrations not applied yet."""
    with db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS memory_schema_migrations"
            " (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
        )
    applied = {row[0] for row in db.execute("SELECT version FROM memory_schema_migrations")}
    for version, statements in MEMORY_MIGRATIONS:
        if version in applied:
            continue
        with db:
            for statement in statements:
                db.execute(statement)
            db.execute(
                "INSERT INTO memory_schema_migrations (version, applied_at) VALUES (?, ?)",
                (version, time.time()),
            )
    _index_terms(db)


def _index_terms(db: sqlite3.Connection) -> None:
    """Indexes the terms of episodes stored before the lexical index
    existed (migration 2), in batches of their own transactions."""
    while True:
        with db:
            rows = db.execute(
                "SELECT vector_key, tenant, user_id, user_message, assistant_response, summary"
                " FROM memory_episodes INDEXED BY memory_episodes_unindexed"
                " WHERE lexical_terms IS NULL LIMIT ?",
                (_INDEX_BATCH,),
            ).fetchall()
            for row in rows:
                _store_terms(
                    db,
                    row[0],
                    row[1],
                    row[2],
                    lexical.document_terms(row[3], row[4], row[5]),
                )
        if len(rows) < _INDEX_BATCH:
            return


def _store_terms(db: sqlite3.Connection, key: int, tenant: str, user_id: str, terms: str) -> None:
    db.execute("UPDATE memory_episodes SET lexical_terms = ? WHERE vector_key = ?", (terms, key))
    db.execute(
        "INSERT INTO memory_episode_terms (rowid, scope, terms) VALUES (?, ?, ?)",
        (key, lexical.scope_token(tenant, user_id), terms),
    )


class EmbeddedMemoryStore(MemoryStore):
    """Episodes and facts in the embedded SQLite file."""

    def __init__(self, backend: EmbeddedStorage) -> None:
        self._backend = backend
        self._migrated = False

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def guarded(db: sqlite3.Connection) -> T:
            # The session store migrates at open; the memory schema migrates
            # at first use, on the same thread, so nobody races it.
            if not self._migrated:
                migrate_memory(db)
                self._migrated = True
            return work(db)

        return await self._backend.run(guarded)

    async def start(self) -> None:
        """Applies pending migrations now rather than at first use."""
        await self._run(lambda db: None)

    # ----- episodes ----------------------------------------------------------

    async def insert_episode(
        self, tenant: str, episode: Episode, audit: AuditRecord | None = None
    ) -> tuple[Episode, bool]:
        def work(db: sqlite3.Connection) -> tuple[Episode, bool]:
            with db:
                existing = _episode_by_hash(db, tenant, episode.user_id, episode.content_hash)
                if existing is not None:
                    return existing, False
                stored = _insert_episode(db, tenant, episode)
                _audit(db, tenant, audit, "episode", stored.episode_id, "recorded")
                return stored, True

        return await self._run(work)

    async def find_by_hash(self, tenant: str, user_id: str, digest: str) -> Episode | None:
        return await self._run(lambda db: _episode_by_hash(db, tenant, user_id, digest))

    async def find_by_hashes(
        self, tenant: str, user_id: str, digests: Sequence[str]
    ) -> dict[str, Episode]:
        wanted = list(dict.fromkeys(digests))

        def work(db: sqlite3.Connection) -> dict[str, Episode]:
            found: dict[str, Episode] = {}
            for chunk in _chunks(wanted):
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT {EPISODE_COLUMNS} FROM memory_episodes WHERE tenant=?"
                    f" AND user_id=? AND content_hash IN ({marks})",
                    (tenant, user_id, *chunk),
                )
                found.update((e.content_hash, e) for e in map(episode_from_row, rows))
            return found

        return await self._run(work)

    async def insert_episodes(
        self,
        tenant: str,
        episodes: Sequence[Episode],
        audit: AuditRecord | None = None,
        recorded: bool = False,
    ) -> list[Episode]:
        summary = "recorded" if recorded else "imported"

        def work(db: sqlite3.Connection) -> list[Episode]:
            with db:
                stored = _insert_new_episodes(db, tenant, episodes)
                for episode in stored:
                    _audit(db, tenant, audit, "episode", episode.episode_id, summary)
            return stored

        return await self._run(work)

    async def get_episode(
        self, tenant: str, episode_id: str, include_embedding: bool
    ) -> Episode | None:
        columns = episode_columns(include_embedding)

        def work(db: sqlite3.Connection) -> Episode | None:
            row = db.execute(
                f"SELECT {columns} FROM memory_episodes WHERE tenant=? AND episode_id=?",
                (tenant, episode_id),
            ).fetchone()
            return None if row is None else episode_from_row(row)

        return await self._run(work)

    async def get_episodes_by_keys(
        self, tenant: str, user_id: str, keys: Sequence[int], include_embedding: bool
    ) -> list[Episode]:
        columns = episode_columns(include_embedding)
        wanted = [int(key) for key in keys]

        def work(db: sqlite3.Connection) -> list[Episode]:
            found: list[Episode] = []
            for chunk in _chunks(wanted):
                marks = ",".join("?" * len(chunk))
                # The unary + keeps SQLite on the primary key: with the
                # (tenant, user_id, ...) index it would scan the whole user.
                rows = db.execute(
                    f"SELECT {columns} FROM memory_episodes WHERE vector_key IN ({marks})"
                    " AND +tenant = ? AND +user_id = ?",
                    (*chunk, tenant, user_id),
                )
                found.extend(episode_from_row(row) for row in rows)
            return found

        return await self._run(work)

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
            clauses.append("(occur_time < ? OR (occur_time = ? AND episode_id < ?))")
            params.extend([after.occur_time, after.occur_time, after.episode_id])
        sql = (
            f"SELECT {episode_columns(include_embedding)} FROM memory_episodes"
            f" WHERE {' AND '.join(clauses)} ORDER BY occur_time DESC, episode_id DESC LIMIT ?"
        )

        def work(db: sqlite3.Connection) -> list[Episode]:
            return [episode_from_row(row) for row in db.execute(sql, (*params, limit))]

        return await self._run(work)

    async def matching_keys(
        self, tenant: str, user_id: str, episode_filter: EpisodeFilter, limit: int
    ) -> list[int]:
        clauses, params = _episode_clauses(tenant, user_id, episode_filter)
        clauses.append("dimension > 0")
        sql = (
            f"SELECT vector_key FROM memory_episodes WHERE {' AND '.join(clauses)}"
            " ORDER BY occur_time DESC, episode_id DESC LIMIT ?"
        )

        def work(db: sqlite3.Connection) -> list[int]:
            return [int(row[0]) for row in db.execute(sql, (*params, limit))]

        return await self._run(work)

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
        scope = f'scope : "{lexical.scope_token(tenant, user_id)}"'
        either = " OR ".join(f'"{term}"' for term in wanted)
        clauses, params = _episode_clauses(tenant, user_id, episode_filter)
        # bm25 weights: the scope column matches every episode of the user,
        # so it must not count. The ranking that matters is core.lexical's.
        sql = (
            "SELECT vector_key, lexical_terms, importance, occur_time FROM memory_episode_terms"
            " JOIN memory_episodes ON memory_episodes.vector_key = memory_episode_terms.rowid"
            f" WHERE memory_episode_terms MATCH ? AND {' AND '.join(clauses)}"
            " ORDER BY bm25(memory_episode_terms, 0.0, 1.0) LIMIT ?"
        )
        count_sql = "SELECT count(*) FROM memory_episode_terms WHERE memory_episode_terms MATCH ?"

        def work(db: sqlite3.Connection) -> LexicalMatches:
            rows = db.execute(sql, (f"{scope} AND terms : ({either})", *params, limit))
            candidates = [LexicalCandidate(r[0], r[1] or "", r[2], r[3]) for r in rows]
            frequency = {
                term: int(db.execute(count_sql, (f'{scope} AND terms : "{term}"',)).fetchone()[0])
                for term in wanted
            }
            total = db.execute(
                "SELECT count(*) FROM memory_episodes WHERE tenant = ? AND user_id = ?",
                (tenant, user_id),
            ).fetchone()[0]
            return LexicalMatches(candidates, int(total), frequency)

        return await self._run(work)

    async def neighbours(self, tenant: str, user_id: str, keys: Sequence[int]) -> list[Neighbour]:
        wanted = [int(key) for key in keys]

        def work(db: sqlite3.Connection) -> list[Neighbour]:
            found: list[Neighbour] = []
            for chunk in _chunks(wanted):
                marks = ",".join("(?)" for _ in chunk)
                rows = db.execute(_NEIGHBOURS.format(marks=marks), (*chunk, tenant, user_id))
                found.extend(Neighbour(r[0], r[1], bool(r[2]), r[3], r[4]) for r in rows)
            return found

        return await self._run(work)

    async def delete_episodes(
        self, tenant: str, episode_ids: Sequence[str], audit: AuditRecord | None = None
    ) -> list[Episode]:
        ids = list(episode_ids)

        def work(db: sqlite3.Connection) -> list[Episode]:
            deleted: list[Episode] = []
            with db:
                for chunk in _chunks(ids):
                    marks = ",".join("?" * len(chunk))
                    rows = db.execute(
                        f"SELECT {EPISODE_COLUMNS} FROM memory_episodes"
                        f" WHERE tenant=? AND episode_id IN ({marks})",
                        (tenant, *chunk),
                    ).fetchall()
                    deleted.extend(episode_from_row(row) for row in rows)
                    db.execute(
                        f"DELETE FROM memory_episodes WHERE tenant=? AND episode_id IN ({marks})",
                        (tenant, *chunk),
                    )
                for episode in deleted:
                    _audit(db, tenant, audit, "episode", episode.episode_id, "deleted")
            return deleted

        return await self._run(work)

    async def load_vectors(self, tenant: str, user_id: str) -> VectorBatch | None:
        def work(db: sqlite3.Connection) -> VectorBatch | None:
            rows = db.execute(
                "SELECT vector_key, embedding, dimension, importance, occur_time FROM"
                " memory_episodes WHERE tenant=? AND user_id=? AND dimension > 0"
                " ORDER BY vector_key",
                (tenant, user_id),
            ).fetchall()
            if not rows:
                return None
            model_row = db.execute(
                "SELECT embedding_model FROM memory_episodes WHERE tenant=? AND user_id=?"
                " AND embedding_source=? ORDER BY vector_key DESC LIMIT 1",
                (tenant, user_id, int(ValueSource.MODEL)),
            ).fetchone()
            dimension = int(rows[0]["dimension"])
            matrix = np.frombuffer(b"".join(row["embedding"] for row in rows), dtype="<f4")
            return VectorBatch(
                keys=np.fromiter((row["vector_key"] for row in rows), np.int64, len(rows)),
                vectors=matrix.astype(np.float32).reshape(len(rows), dimension),
                importance=np.fromiter((row["importance"] for row in rows), np.float32),
                occur_time=np.fromiter((row["occur_time"] for row in rows), np.float64),
                embedding_model=model_row[0] if model_row else "",
            )

        return await self._run(work)

    async def vector_manifest(self, tenant: str, user_id: str) -> VectorManifest | None:
        def work(db: sqlite3.Connection) -> VectorManifest | None:
            # One database thread runs every store call: no write between.
            rows = db.execute(
                "SELECT vector_key, importance, occur_time, dimension FROM memory_episodes"
                " WHERE tenant=? AND user_id=? AND dimension > 0",
                (tenant, user_id),
            ).fetchall()
            model_row = db.execute(
                "SELECT embedding_model FROM memory_episodes WHERE tenant=? AND user_id=?"
                " AND embedding_source=? ORDER BY vector_key DESC LIMIT 1",
                (tenant, user_id, int(ValueSource.MODEL)),
            ).fetchone()
            if not rows:
                return None
            return VectorManifest(
                keys=np.fromiter((row[0] for row in rows), np.int64, len(rows)),
                importance=np.fromiter((row[1] for row in rows), np.float32, len(rows)),
                occur_time=np.fromiter((row[2] for row in rows), np.float64, len(rows)),
                dimension=int(rows[0][3]),
                embedding_model=model_row[0] if model_row else "",
            )

        return await self._run(work)

    async def index_owners(self) -> list[tuple[str, str]]:
        def work(db: sqlite3.Connection) -> list[tuple[str, str]]:
            rows = db.execute(
                "SELECT DISTINCT tenant, user_id FROM memory_episodes WHERE dimension > 0"
                " ORDER BY tenant, user_id"
            )
            return [(row[0], row[1]) for row in rows]

        return await self._run(work)

    async def tenants(self) -> list[str]:
        def work(db: sqlite3.Connection) -> list[str]:
            rows = db.execute("SELECT DISTINCT tenant FROM memory_episodes ORDER BY tenant")
            return [row[0] for row in rows]

        return await self._run(work)

    async def users(self, tenant: str) -> list[str]:
        def work(db: sqlite3.Connection) -> list[str]:
            rows = db.execute(
                "SELECT DISTINCT user_id FROM memory_episodes WHERE tenant=? ORDER BY user_id",
                (tenant,),
            )
            return [row[0] for row in rows]

        return await self._run(work)

    async def unconsolidated_episodes(self, tenant: str, user_id: str, limit: int) -> list[Episode]:
        def work(db: sqlite3.Connection) -> list[Episode]:
            rows = db.execute(
                f"SELECT {episode_columns(True)} FROM memory_episodes WHERE tenant=?"
                " AND user_id=? AND dimension > 0 AND consolidate_time IS NULL"
                " ORDER BY occur_time, vector_key LIMIT ?",
                (tenant, user_id, limit),
            )
            return [episode_from_row(row) for row in rows]

        return await self._run(work)

    async def scan_episodes(
        self, tenant: str, user_id: str, after_key: int, limit: int
    ) -> list[Episode]:
        user_clause = " AND user_id=?" if user_id else ""
        params: tuple[Any, ...] = (tenant, after_key, *((user_id,) if user_id else ()), limit)

        def work(db: sqlite3.Connection) -> list[Episode]:
            rows = db.execute(
                f"SELECT {EPISODE_COLUMNS} FROM memory_episodes WHERE tenant=?"
                f" AND vector_key > ?{user_clause} ORDER BY vector_key LIMIT ?",
                params,
            )
            return [episode_from_row(row) for row in rows]

        return await self._run(work)

    # ----- facts -------------------------------------------------------------

    async def apply_facts(
        self, tenant: str, batch: FactBatch, audit: AuditRecord | None = None
    ) -> list[FactResult]:
        def work(db: sqlite3.Connection) -> list[FactResult]:
            with db:
                return _apply_batch(db, tenant, batch, audit)

        return await self._run(work)

    async def consolidate(
        self, tenant: str, plan: ConsolidationPlan, audit: AuditRecord | None = None
    ) -> list[FactResult]:
        ids = list(plan.episode_ids)

        def work(db: sqlite3.Connection) -> list[FactResult]:
            with db:
                marks = ",".join("?" * len(ids))
                done = db.execute(
                    f"SELECT COUNT(*) FROM memory_episodes WHERE tenant=? AND episode_id IN"
                    f" ({marks}) AND consolidate_time IS NOT NULL",
                    (tenant, *ids),
                ).fetchone()[0]
                if done:
                    return []
                results = _apply_batch(db, tenant, plan.facts, audit)
                derived = dumps([r.fact.fact_id for r in results])
                db.execute(
                    "UPDATE memory_episodes SET importance = importance * ?, consolidate_time = ?,"
                    f" derived_fact_ids = ? WHERE tenant=? AND episode_id IN ({marks})",
                    (plan.demotion_factor, plan.facts.now, derived, tenant, *ids),
                )
                summary = f"consolidated, importance x {plan.demotion_factor:g}"
                for episode_id in ids:
                    _audit(db, tenant, audit, "episode", episode_id, summary)
                return results

        return await self._run(work)

    async def get_fact(self, tenant: str, fact_id: str) -> Fact | None:
        def work(db: sqlite3.Connection) -> Fact | None:
            return _fact_by_id(db, tenant, fact_id)

        return await self._run(work)

    async def list_facts(
        self,
        tenant: str,
        query: FactQuery,
        now: float,
        after: FactCursor | None,
        limit: int,
    ) -> list[Fact]:
        clauses = ["tenant = :tenant", "user_id IN (:user, '')"]
        params: dict[str, Any] = {"tenant": tenant, "user": query.user_id, "t": now}
        for name in ("subject", "predicate", "object"):
            if value := getattr(query, name):
                clauses.append(f"{name}_key = :{name}")
                params[name] = value
        if not query.include_invalidated:
            clauses.append(_VALID_AT)
        if after is not None:
            clauses.append(
                "(create_time < :after_time OR (create_time = :after_time AND fact_id < :after_id))"
            )
            params.update(after_time=after.create_time, after_id=after.fact_id)
        sql = (
            f"SELECT {_FACT_COLUMNS} FROM memory_facts WHERE {' AND '.join(clauses)}"
            " ORDER BY create_time DESC, fact_id DESC LIMIT :limit"
        )
        params["limit"] = limit

        def work(db: sqlite3.Connection) -> list[Fact]:
            return [fact_from_row(row) for row in db.execute(sql, params)]

        return await self._run(work)

    async def neighbourhood(self, tenant: str, query: NeighbourhoodQuery) -> Neighbourhood:
        sql, params = _neighbourhood_sql(tenant, query)

        def work(db: sqlite3.Connection) -> list[sqlite3.Row]:
            return db.execute(sql, params).fetchall()

        rows = await self._run(work)
        return neighbourhood_from_rows(query, rows)

    async def entities_among(self, tenant: str, user_id: str, keys: Sequence[str]) -> list[str]:
        wanted = list(dict.fromkeys(keys))

        def work(db: sqlite3.Connection) -> list[str]:
            found: set[str] = set()
            for chunk in _chunks(wanted):
                marks = ",".join("?" * len(chunk))
                for column in ("subject_key", "object_key"):
                    rows = db.execute(
                        f"SELECT DISTINCT {column} FROM memory_facts WHERE tenant=?"
                        f" AND user_id IN (?, '') AND {column} IN ({marks})",
                        (tenant, user_id, *chunk),
                    )
                    found.update(row[0] for row in rows)
            return sorted(found)

        return await self._run(work)

    async def invalidate_fact(
        self,
        tenant: str,
        fact_id: str,
        reason: str,
        valid_to: float | None,
        now: float,
        audit: AuditRecord | None = None,
    ) -> tuple[Fact, bool] | None:
        def work(db: sqlite3.Connection) -> tuple[Fact, bool] | None:
            with db:
                fact = _fact_by_id(db, tenant, fact_id)
                if fact is None:
                    return None
                if fact.invalidate_time is not None:
                    return fact, True
                end = now if valid_to is None else valid_to
                if fact.valid_to is not None and fact.valid_to < end:
                    end = fact.valid_to
                updated = fact.evolve(valid_to=end, invalidate_time=now, invalidation_reason=reason)
                _update_fact(db, tenant, updated)
                _audit(db, tenant, audit, "fact", fact_id, f"invalidated: {reason}")
                return updated, False

        return await self._run(work)

    async def declare_predicate(
        self, tenant: str, predicate: Predicate, audit: AuditRecord | None = None
    ) -> Predicate:
        kind = "single-valued" if predicate.single_valued else "multi-valued"

        def work(db: sqlite3.Connection) -> Predicate:
            with db:
                _audit(db, tenant, audit, "predicate", predicate.name, f"declared {kind}")
                db.execute(
                    "INSERT INTO memory_predicates (tenant, name, single_valued, description,"
                    " create_time, update_time) VALUES (?,?,?,?,?,?)"
                    " ON CONFLICT (tenant, name) DO UPDATE SET"
                    " single_valued=excluded.single_valued, description=excluded.description,"
                    " update_time=excluded.update_time",
                    (
                        tenant,
                        predicate.name,
                        int(predicate.single_valued),
                        predicate.description,
                        predicate.create_time,
                        predicate.update_time,
                    ),
                )
                row = db.execute(
                    "SELECT * FROM memory_predicates WHERE tenant=? AND name=?",
                    (tenant, predicate.name),
                ).fetchone()
            return predicate_from_row(row)

        return await self._run(work)

    async def list_predicates(self, tenant: str, after_name: str, limit: int) -> list[Predicate]:
        def work(db: sqlite3.Connection) -> list[Predicate]:
            rows = db.execute(
                "SELECT * FROM memory_predicates WHERE tenant=? AND name > ? ORDER BY name LIMIT ?",
                (tenant, after_name, limit),
            )
            return [predicate_from_row(row) for row in rows]

        return await self._run(work)


# ----- episode rows --------------------------------------------------------------


def _episode_by_hash(
    db: sqlite3.Connection, tenant: str, user_id: str, digest: str
) -> Episode | None:
    row = db.execute(
        f"SELECT {EPISODE_COLUMNS} FROM memory_episodes WHERE tenant=? AND user_id=?"
        " AND content_hash=?",
        (tenant, user_id, digest),
    ).fetchone()
    return None if row is None else episode_from_row(row)


def _insert_episode(db: sqlite3.Connection, tenant: str, episode: Episode) -> Episode:
    if episode.embedding is not None:
        _check_dimension(db, tenant, episode.user_id, episode.dimension)
    terms = _terms_of(episode)
    key = _insert_row(db, tenant, episode, terms)
    db.execute(
        "INSERT INTO memory_episode_terms (rowid, scope, terms) VALUES (?, ?, ?)",
        (key, lexical.scope_token(tenant, episode.user_id), terms),
    )
    return episode.evolve(vector_key=key)


def _insert_new_episodes(
    db: sqlite3.Connection, tenant: str, episodes: Sequence[Episode]
) -> list[Episode]:
    """The batch form of `_insert_episode` for the episodes whose content
    their user does not have yet (the first of equal ones): hashes read and
    dimensions checked once per user, the full-text rows in one statement."""
    taken: set[tuple[str, str]] = set()
    for user_id in {e.user_id for e in episodes}:
        digests = [e.content_hash for e in episodes if e.user_id == user_id]
        taken.update((user_id, digest) for digest in _stored_hashes(db, tenant, user_id, digests))
    dimensions: dict[str, int] = {}
    stored: list[Episode] = []
    term_rows: list[tuple[int, str, str]] = []
    for episode in episodes:
        if (episode.user_id, episode.content_hash) in taken:
            continue
        taken.add((episode.user_id, episode.content_hash))
        if episode.embedding is not None:
            _check_batch_dimension(db, tenant, episode, dimensions)
        terms = _terms_of(episode)
        key = _insert_row(db, tenant, episode, terms)
        term_rows.append((key, lexical.scope_token(tenant, episode.user_id), terms))
        stored.append(episode.evolve(vector_key=key))
    db.executemany(
        "INSERT INTO memory_episode_terms (rowid, scope, terms) VALUES (?, ?, ?)", term_rows
    )
    return stored


def _stored_hashes(
    db: sqlite3.Connection, tenant: str, user_id: str, digests: Sequence[str]
) -> set[str]:
    found: set[str] = set()
    for chunk in _chunks(list(dict.fromkeys(digests))):
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            "SELECT content_hash FROM memory_episodes WHERE tenant=? AND user_id=?"
            f" AND content_hash IN ({marks})",
            (tenant, user_id, *chunk),
        )
        found.update(row[0] for row in rows)
    return found


def _check_batch_dimension(
    db: sqlite3.Connection, tenant: str, episode: Episode, dimensions: dict[str, int]
) -> None:
    """`_check_dimension` with the user's dimension remembered for the batch
    (the first embedded episode of a user without vectors sets it)."""
    expected = dimensions.get(episode.user_id)
    if expected is None:
        _check_dimension(db, tenant, episode.user_id, episode.dimension)
        dimensions[episode.user_id] = episode.dimension
    elif expected != episode.dimension:
        raise DimensionMismatchError("embedding", expected, episode.dimension)


def _terms_of(episode: Episode) -> str:
    return lexical.document_terms(episode.user_message, episode.assistant_response, episode.summary)


def _insert_row(db: sqlite3.Connection, tenant: str, episode: Episode, terms: str) -> int:
    """Inserts the episode's row (its full-text row is the caller's); returns its key."""
    blob: bytes | None = None
    if episode.embedding is not None:
        blob = np.asarray(episode.embedding, dtype="<f4").tobytes()
    cursor = db.execute(
        "INSERT INTO memory_episodes (tenant, episode_id, user_id, session_id, user_message,"
        " assistant_response, summary, summary_source, embedding, dimension, embedding_source,"
        " embedding_model, importance, metadata, occur_time, create_time, content_hash,"
        " consolidate_time, derived_fact_ids, lexical_terms)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            tenant,
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
            dumps(episode.metadata),
            episode.occur_time,
            episode.create_time,
            episode.content_hash,
            episode.consolidate_time,
            dumps(list(episode.derived_fact_ids)),
            terms,
        ),
    )
    return int(cursor.lastrowid or 0)


def _check_dimension(db: sqlite3.Connection, tenant: str, user_id: str, dimension: int) -> None:
    row = db.execute(
        "SELECT dimension FROM memory_episodes WHERE tenant=? AND user_id=? AND dimension > 0"
        " LIMIT 1",
        (tenant, user_id),
    ).fetchone()
    if row is not None and row[0] != dimension:
        raise DimensionMismatchError("embedding", int(row[0]), dimension)


def _episode_clauses(
    tenant: str, user_id: str, episode_filter: EpisodeFilter
) -> tuple[list[str], list[Any]]:
    clauses = ["tenant = ?"]
    params: list[Any] = [tenant]
    if user_id:
        clauses.append("user_id = ?")
        params.append(user_id)
    if episode_filter.session_id:
        clauses.append("session_id = ?")
        params.append(episode_filter.session_id)
    if episode_filter.start_time is not None:
        clauses.append("occur_time >= ?")
        params.append(episode_filter.start_time)
    if episode_filter.end_time is not None:
        clauses.append("occur_time < ?")
        params.append(episode_filter.end_time)
    for key, value in sorted(episode_filter.metadata.items()):
        # Metadata is a flat string map stored as compact JSON (codec.dumps),
        # so a row has the pair exactly when its text contains `{"key":"value"`
        # or `,"key":"value"` as dumps spells them: inside a JSON string every
        # quote is escaped (\"), so an unescaped `"` after `{` or `,`, and the
        # unescaped `":"` and closing `"`, can only be the pair's own. A
        # substring search, not a JSON parse per row (filtered recall on a
        # user with 100k episodes).
        pair = dumps({key: value})[1:-1]
        clauses.append(
            "(instr(memory_episodes.metadata, ?) > 0 OR instr(memory_episodes.metadata, ?) > 0)"
        )
        params.extend(["{" + pair, "," + pair])
    return clauses, params


# ----- fact rows -----------------------------------------------------------------


def _apply_batch(
    db: sqlite3.Connection, tenant: str, batch: FactBatch, audit: AuditRecord | None
) -> list[FactResult]:
    results: list[FactResult] = []
    for draft, new_id in zip(batch.drafts, batch.new_ids, strict=True):
        predicate_key = entity_key(draft.predicate)
        current = [
            fact_from_row(row)
            for row in db.execute(
                f"SELECT {_FACT_COLUMNS} FROM memory_facts WHERE tenant=:tenant"
                " AND subject_key=:subject AND predicate_key=:predicate AND user_id=:user"
                f" AND {_VALID_AT} ORDER BY create_time, fact_id",
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
            _update_fact(db, tenant, fact)
        _audit_resolution(db, tenant, audit, resolution)
        results.append(resolution.result)
    return results


def _audit_resolution(
    db: sqlite3.Connection, tenant: str, audit: AuditRecord | None, resolution: FactResolution
) -> None:
    created = resolution.created
    if created is not None:
        _audit(db, tenant, audit, "fact", created.fact_id, "created")
    for fact in resolution.updated:
        if fact.invalidated_by:
            _audit(
                db, tenant, audit, "fact", fact.fact_id, f"contradicted by {fact.invalidated_by}"
            )
        else:
            _audit(db, tenant, audit, "fact", fact.fact_id, "confidence raised by a duplicate")


def _audit(
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
    db.execute(
        f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
        audit_values(entry, tenant),
    )


def _insert_fact(db: sqlite3.Connection, tenant: str, fact: Fact) -> None:
    db.execute(
        "INSERT INTO memory_facts (tenant, fact_id, user_id, subject, subject_key, predicate,"
        " predicate_key, object, object_key, source, confidence, valid_from, valid_to, origin,"
        " source_episode_ids, create_time, invalidate_time, invalidated_by, invalidation_reason)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
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
            dumps(list(fact.source_episode_ids)),
            fact.create_time,
            fact.invalidate_time,
            fact.invalidated_by,
            fact.invalidation_reason,
        ),
    )


def _update_fact(db: sqlite3.Connection, tenant: str, fact: Fact) -> None:
    """Writes the mutable fields of a fact: confidence and invalidation."""
    db.execute(
        "UPDATE memory_facts SET confidence=?, valid_to=?, invalidate_time=?, invalidated_by=?,"
        " invalidation_reason=? WHERE tenant=? AND fact_id=?",
        (
            fact.confidence,
            fact.valid_to,
            fact.invalidate_time,
            fact.invalidated_by,
            fact.invalidation_reason,
            tenant,
            fact.fact_id,
        ),
    )


def _fact_by_id(db: sqlite3.Connection, tenant: str, fact_id: str) -> Fact | None:
    row = db.execute(
        f"SELECT {_FACT_COLUMNS} FROM memory_facts WHERE tenant=? AND fact_id=?",
        (tenant, fact_id),
    ).fetchone()
    return None if row is None else fact_from_row(row)


def _neighbourhood_sql(tenant: str, query: NeighbourhoodQuery) -> tuple[str, dict[str, Any]]:
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
        visible.append(_VALID_AT)
    if query.predicates:
        names = [f":p{index}" for index in range(len(query.predicates))]
        visible.append(f"predicate_key IN ({', '.join(names)})")
        params.update({f"p{index}": p for index, p in enumerate(query.predicates)})
    sql = f"""
        WITH RECURSIVE
        visible AS (
            SELECT {_FACT_COLUMNS}, subject_key, object_key FROM memory_facts
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


def _chunks(items: Sequence[T]) -> Iterable[Sequence[T]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]
