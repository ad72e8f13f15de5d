"""Embedded (SQLite) implementation of the memory stores.

It shares the `EmbeddedStorage` connection and database thread (all work goes
through `EmbeddedStorage.run`), and keeps its own versioned schema table,
`memory_schema_migrations`, so its migrations evolve independently of the
session schema. Embeddings are stored as little-endian float32 blobs.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

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
)
from statekeeper.core.memory.store import MemoryStore
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.storage.codec import dumps
from statekeeper.storage.embedded.audit_chain import insert_audit_rows
from statekeeper.storage.embedded.erasure import merge_terms, run_steps
from statekeeper.storage.embedded.memory_facts import (
    FACT_COLUMNS,
    VALID_AT,
    apply_batch,
    fact_by_id,
    neighbourhood_sql,
    update_fact,
    write_audit,
)
from statekeeper.storage.embedded.memory_schema import (
    migrate_memory,
)
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.shared.erasure import memory_steps
from statekeeper.storage.shared.memory import (
    EPISODE_COLUMNS,
    episode_columns,
    episode_from_row,
    episode_values,
    fact_from_row,
    latest_model_sql,
    manifest_rows_sql,
    neighbourhood_from_rows,
    predicate_from_row,
    vector_batch,
    vector_manifest,
    vector_rows_sql,
)
from statekeeper.storage.sql import AUDIT_COLUMNS, audit_values, sqlite_mark

T = TypeVar("T")


_CHUNK = 500  # SQLite caps bound parameters per statement
_VECTOR_ROWS = vector_rows_sql(sqlite_mark)
_MANIFEST_ROWS = manifest_rows_sql(sqlite_mark)
_LATEST_MODEL = latest_model_sql(sqlite_mark)
# Lexical statistics kept (see _CorpusStats): users, and terms per user.
_STATS_USERS = 256
_STATS_TERMS = 4096
# Episodes (without embeddings) the key cache holds at most (see
# _EpisodeCache): a few recalls' worth for each of many users.
_CACHED_EPISODES = 4096
# ... and about this many bytes of their content at most; an episode larger
# than _CACHED_EPISODE_BYTES is read each time (a few 64 KiB texts would
# otherwise take the room of hundreds of turns).
_CACHED_BYTES = 32 * 1024 * 1024
_CACHED_EPISODE_BYTES = 64 * 1024
# Episodes read by key on the event loop (a recall's top k: ~60 us for 10,
# against a thread hop that costs more than the read under load); more are
# read on a reader thread.
_INLINE_READ_KEYS = 64
# ... and while their content stays under this many bytes (64 episodes of
# the largest size took 28-99 ms there); a larger read goes to a reader thread.
_INLINE_READ_BYTES = 256 * 1024
# The episodes recorded just before and just after each wanted one in its
# session (memory_episodes_session_key makes each lookup one index probe).
# An episode recorded without a session (session_id '') has no neighbours:
# the user's sessionless episodes are not one conversation.
_NEIGHBOURS = """
WITH wanted(k) AS (VALUES {marks}),
episode AS (
    SELECT e.vector_key, e.tenant, e.user_id, e.session_id FROM wanted
    JOIN memory_episodes e ON e.vector_key = wanted.k AND e.tenant = ? AND e.user_id = ?
    WHERE e.session_id <> ''
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


@dataclass
class _UserStats:
    """One user's episode count and term document frequencies, valid while
    the connection's change count and the file's data version are `changes`."""

    changes: tuple[int, int]
    total: int | None = None
    frequency: dict[str, int] = field(default_factory=dict)

    def remember(self, term: str, count: int) -> None:
        if len(self.frequency) < _STATS_TERMS:
            self.frequency[term] = count


class _CorpusStats:
    """Lexical corpus statistics per user, reused while nothing was written.

    Every write of the server goes through the store's one connection
    (EmbeddedStorage.run), whose `total_changes` grows with each row any
    statement inserts, updates or deletes, and `PRAGMA data_version` moves
    when another connection commits; statistics read at one pair of values
    are exact for as long as neither has moved. So repeated recalls of a large
    user skip the counts (a count over 100,000 episodes takes ~10 ms), and
    any write, to memory or not, makes every entry stale."""

    def __init__(self) -> None:
        self._users: OrderedDict[tuple[str, str], _UserStats] = OrderedDict()

    def for_user(self, db: sqlite3.Connection, tenant: str, user_id: str) -> _UserStats:
        # data_version moves when another connection commits (an import run
        # by `statekeeper import` beside the server).
        changes = (db.total_changes, int(db.execute("PRAGMA data_version").fetchone()[0]))
        key = (tenant, user_id)
        stats = self._users.get(key)
        if stats is None or stats.changes != changes:
            stats = _UserStats(changes)
            self._users[key] = stats
        self._users.move_to_end(key)
        while len(self._users) > _STATS_USERS:
            self._users.popitem(last=False)
        return stats


class _EpisodeCache:
    """Episodes read by key (without embeddings), reused while nothing was
    committed to the database: a recall reads its top k by key, and on a
    user nobody writes to, the same episodes again and again.

    Validity is `PRAGMA data_version` read through the backend's inline
    connection (EmbeddedStorage.read_inline), which moves whenever another
    connection commits: every write of the server (the writer connection,
    memory or not) and of any other process on the file. It is read on the
    event loop (a WAL read of shared memory, never waiting: no busy timeout;
    an error, or a closed store, just skips the cache). Entries are stamped
    with the version read before their rows were: a row read later is at
    least that new, and the first commit after clears them all. The store's
    own deletes and erasures also clear it at once, so an erased episode's
    content does not stay in memory until the next lookup. It holds at most
    `capacity` episodes and about `budget` bytes of their content, the least
    recently used going first; a larger episode is not kept."""

    def __init__(
        self,
        backend: EmbeddedStorage,
        capacity: int = _CACHED_EPISODES,
        budget: int = _CACHED_BYTES,
    ) -> None:
        self._backend = backend
        self._capacity = capacity
        self._budget = budget
        self._bytes = 0
        self._version: int | None = None
        self._entries: OrderedDict[tuple[str, str, int], tuple[Episode, int]] = OrderedDict()

    def version(self) -> int | None:
        """The database's data version now (entries of another are dropped);
        None if it cannot be read (nothing is cached then)."""
        version = self._backend.read_inline(_data_version)
        if version is None:
            self.clear()
            return None
        if version != self._version:
            self.clear()
            self._version = version
        return version

    def lookup(
        self, tenant: str, user_id: str, keys: Sequence[int]
    ) -> tuple[list[Episode], list[int], int | None]:
        """The cached episodes of `keys`, the keys that are not cached, and
        the version now (for `fill` after the others are read). A hit
        becomes the most recently used entry: the last to be evicted."""
        version = self.version()
        if version is None:
            return [], list(keys), None
        entries = self._entries
        found, missing = [], []
        for key in keys:
            entry_key = (tenant, user_id, key)
            entry = entries.get(entry_key)
            if entry is None:
                missing.append(key)
            else:
                entries.move_to_end(entry_key)
                found.append(entry[0])
        return found, missing, version

    def fill(self, version: int | None, tenant: str, user_id: str, found: list[Episode]) -> None:
        """Remembers episodes read after `version` was (see version())."""
        if version is None or version != self._version:
            return  # a commit was seen meanwhile: the rows may predate it
        entries = self._entries
        for episode in found:
            size = _content_bytes(episode)
            if size > _CACHED_EPISODE_BYTES:
                continue
            replaced = entries.pop((tenant, user_id, episode.vector_key), None)
            if replaced is not None:
                self._bytes -= replaced[1]
            entries[(tenant, user_id, episode.vector_key)] = (episode, size)
            self._bytes += size
        while entries and (len(entries) > self._capacity or self._bytes > self._budget):
            self._bytes -= entries.popitem(last=False)[1][1]

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0
        self._version = None


def _data_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA data_version").fetchone()[0])


def _select_by_keys(
    db: sqlite3.Connection, columns: str, tenant: str, user_id: str, keys: Sequence[int]
) -> sqlite3.Cursor:
    marks = ",".join("?" * len(keys))
    # The unary + keeps SQLite on the primary key: with the (tenant, user_id,
    # ...) index it would scan the whole user.
    return db.execute(
        f"SELECT {columns} FROM memory_episodes WHERE vector_key IN ({marks})"
        " AND +tenant = ? AND +user_id = ?",
        (*keys, tenant, user_id),
    )


def _by_vector_key(episode: Episode) -> int:
    return episode.vector_key


def _row_content_bytes(row: sqlite3.Row) -> int:
    """What an episode row's texts hold (the embedding is not read here)."""
    return (
        len(row["user_message"])
        + len(row["assistant_response"])
        + len(row["summary"])
        + len(row["metadata"])
    )


def _content_bytes(episode: Episode) -> int:
    """About what an episode's content holds in memory (its texts and its
    metadata as written out, and a fixed share for the rest)."""
    size = 512 + len(episode.user_message) + len(episode.assistant_response)
    size += len(episode.summary)
    if episode.metadata:
        size += len(repr(episode.metadata))
    return size


class EmbeddedMemoryStore(MemoryStore):
    """Episodes and facts in the embedded SQLite file."""

    def __init__(self, backend: EmbeddedStorage) -> None:
        self._backend = backend
        self._migrated = False
        self._stats = _CorpusStats()
        self._cache = _EpisodeCache(backend)

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
            existing = _episode_by_hash(db, tenant, episode.user_id, episode.content_hash)
            if existing is not None:
                return existing, False
            stored = _insert_episode(db, tenant, episode)
            write_audit(db, tenant, audit, "episode", stored.episode_id, "recorded")
            return stored, True

        if not self._migrated:
            await self.start()
        # Group-committed with the other writes queued meanwhile (concurrent
        # RecordEpisode calls share one transaction and one fsync; each in its
        # own savepoint, so a refused one leaves the others in). Durable on
        # return, as before.
        return await self._backend.write(work)

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
                _write_episode_audits(db, tenant, audit, stored, summary)
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
        if not self._migrated:
            await self.start()
        wanted = [int(key) for key in keys]
        if include_embedding:  # index loads (a snapshot's tail), restores: as before
            return await self._run(self._by_keys_work(tenant, user_id, wanted, True))
        cached, missing, version = self._cache.lookup(tenant, user_id, wanted)
        if not missing:
            return sorted(cached, key=_by_vector_key)
        found = None
        if len(missing) <= _INLINE_READ_KEYS:
            # On the event loop, but only a few rows: the read gives up
            # (None) once their content passes _INLINE_READ_BYTES, and
            # the reader thread reads them instead.
            inline = self._bounded_by_keys_work(tenant, user_id, missing, _INLINE_READ_BYTES)
            found = self._backend.read_inline(inline)
        if found is None:
            # On a reader connection: off the writer thread, which group-commits.
            found = await self._backend.read(self._by_keys_work(tenant, user_id, missing, False))
        self._cache.fill(version, tenant, user_id, found)
        return sorted([*cached, *found], key=_by_vector_key) if cached else found

    @staticmethod
    def _by_keys_work(
        tenant: str, user_id: str, wanted: list[int], include_embedding: bool
    ) -> Callable[[sqlite3.Connection], list[Episode]]:
        columns = episode_columns(include_embedding)

        def work(db: sqlite3.Connection) -> list[Episode]:
            found: list[Episode] = []
            # Several statements read one snapshot (a reader connection is in
            # autocommit: each statement alone would see the last commit).
            snapshot = len(wanted) > _CHUNK and not db.in_transaction
            if snapshot:
                db.execute("BEGIN")
            try:
                for chunk in _chunks(wanted):
                    rows = _select_by_keys(db, columns, tenant, user_id, chunk)
                    # Fetched whole before mapping: a row that fails to map
                    # must not leave a statement (and its snapshot) open.
                    found.extend(map(episode_from_row, rows.fetchall()))
            finally:
                if snapshot:
                    db.execute("COMMIT")
            return found

        return work

    @staticmethod
    def _bounded_by_keys_work(
        tenant: str, user_id: str, wanted: list[int], byte_limit: int
    ) -> Callable[[sqlite3.Connection], list[Episode] | None]:
        """The read of a few episodes (one statement) that gives up, None,
        once the rows read hold more than `byte_limit` bytes of content."""
        columns = episode_columns(False)

        def work(db: sqlite3.Connection) -> list[Episode] | None:
            rows, size = [], 0
            cursor = _select_by_keys(db, columns, tenant, user_id, wanted)
            try:
                for row in cursor:
                    size += _row_content_bytes(row)
                    if size > byte_limit:
                        return None
                    rows.append(row)
            finally:
                cursor.close()  # ends the statement's read at once
            return list(map(episode_from_row, rows))

        return work

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
        match_budget: int = 0,
    ) -> LexicalMatches:
        wanted = list(dict.fromkeys(query_terms))
        if not wanted:
            return LexicalMatches([], 0)
        scope = f'scope : "{lexical.scope_token(tenant, user_id)}"'
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
            # Corpus statistics first (they choose the terms to match); they
            # are kept while nothing was written (see _CorpusStats).
            stats = self._stats.for_user(db, tenant, user_id)
            if stats.total is None:
                stats.total = int(
                    db.execute(
                        "SELECT count(*) FROM memory_episodes WHERE tenant = ? AND user_id = ?",
                        (tenant, user_id),
                    ).fetchone()[0]
                )
            frequency: dict[str, int] = {}
            for term in wanted:
                known = stats.frequency.get(term)
                if known is None:
                    query = f'{scope} AND terms : "{term}"'
                    known = int(db.execute(count_sql, (query,)).fetchone()[0])
                    stats.remember(term, known)
                frequency[term] = known
            total = stats.total
            match = lexical.match_terms(wanted, frequency, match_budget)
            if not match:
                return LexicalMatches([], total, frequency)
            either = " OR ".join(f'"{term}"' for term in match)
            rows = db.execute(sql, (f"{scope} AND terms : ({either})", *params, limit))
            candidates = [LexicalCandidate(r[0], r[1] or "", r[2], r[3]) for r in rows]
            return LexicalMatches(candidates, total, frequency)

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
                    write_audit(db, tenant, audit, "episode", episode.episode_id, "deleted")
            return deleted

        try:
            return await self._run(work)
        finally:
            self._cache.clear()  # the commit made it stale; drop the content now

    async def load_vectors(self, tenant: str, user_id: str) -> VectorBatch | None:
        def work(db: sqlite3.Connection) -> VectorBatch | None:
            read = _user_vectors(db, _VECTOR_ROWS, tenant, user_id)
            return None if read is None else vector_batch(*read)

        return await self._run(work)

    async def vector_manifest(self, tenant: str, user_id: str) -> VectorManifest | None:
        def work(db: sqlite3.Connection) -> VectorManifest | None:
            # One database thread runs every store call: no write between.
            read = _user_vectors(db, _MANIFEST_ROWS, tenant, user_id)
            return None if read is None else vector_manifest(*read)

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
                return apply_batch(db, tenant, batch, audit)

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
                results = apply_batch(db, tenant, plan.facts, audit)
                derived = dumps([r.fact.fact_id for r in results])
                db.execute(
                    "UPDATE memory_episodes SET importance = importance * ?, consolidate_time = ?,"
                    f" derived_fact_ids = ? WHERE tenant=? AND episode_id IN ({marks})",
                    (plan.demotion_factor, plan.facts.now, derived, tenant, *ids),
                )
                summary = f"consolidated, importance x {plan.demotion_factor:g}"
                for episode_id in ids:
                    write_audit(db, tenant, audit, "episode", episode_id, summary)
                return results

        try:
            return await self._run(work)
        finally:
            self._cache.clear()

    async def get_fact(self, tenant: str, fact_id: str) -> Fact | None:
        def work(db: sqlite3.Connection) -> Fact | None:
            return fact_by_id(db, tenant, fact_id)

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
            clauses.append(VALID_AT)
        if after is not None:
            clauses.append(
                "(create_time < :after_time OR (create_time = :after_time AND fact_id < :after_id))"
            )
            params.update(after_time=after.create_time, after_id=after.fact_id)
        sql = (
            f"SELECT {FACT_COLUMNS} FROM memory_facts WHERE {' AND '.join(clauses)}"
            " ORDER BY create_time DESC, fact_id DESC LIMIT :limit"
        )
        params["limit"] = limit

        def work(db: sqlite3.Connection) -> list[Fact]:
            return [fact_from_row(row) for row in db.execute(sql, params)]

        return await self._run(work)

    async def neighbourhood(self, tenant: str, query: NeighbourhoodQuery) -> Neighbourhood:
        sql, params = neighbourhood_sql(tenant, query)

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
                fact = fact_by_id(db, tenant, fact_id)
                if fact is None:
                    return None
                updated = fact.invalidated(reason, valid_to, now)
                if updated is None:
                    return fact, True
                update_fact(db, tenant, updated)
                write_audit(db, tenant, audit, "fact", fact_id, f"invalidated: {reason}")
                return updated, False

        return await self._run(work)

    async def declare_predicate(
        self, tenant: str, predicate: Predicate, audit: AuditRecord | None = None
    ) -> Predicate:
        kind = "single-valued" if predicate.single_valued else "multi-valued"

        def work(db: sqlite3.Connection) -> Predicate:
            with db:
                write_audit(db, tenant, audit, "predicate", predicate.name, f"declared {kind}")
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

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        try:
            erasure = await run_steps(self._backend, memory_steps(tenant, subject), dry_run)
        finally:
            self._cache.clear()  # no erased content stays in this process
        if not dry_run and erasure.values("memory", "episodes"):
            await self._backend.run(merge_terms)
        return erasure.counts


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
    dimensions checked once per user, the rows and their full-text rows in
    one statement each."""
    taken: set[tuple[str, str]] = set()
    for user_id in {e.user_id for e in episodes}:
        digests = [e.content_hash for e in episodes if e.user_id == user_id]
        taken.update((user_id, digest) for digest in _stored_hashes(db, tenant, user_id, digests))
    dimensions: dict[str, int] = {}
    new: list[Episode] = []
    terms: list[str] = []
    for episode in episodes:
        if (episode.user_id, episode.content_hash) in taken:
            continue
        taken.add((episode.user_id, episode.content_hash))
        if episode.embedding is not None:
            _check_batch_dimension(db, tenant, episode, dimensions)
        new.append(episode)
        terms.append(_terms_of(episode))
    keys = _insert_rows(db, tenant, new, terms)
    scopes = {e.user_id: lexical.scope_token(tenant, e.user_id) for e in new}
    db.executemany(
        "INSERT INTO memory_episode_terms (rowid, scope, terms) VALUES (?, ?, ?)",
        [(key, scopes[e.user_id], text) for key, e, text in zip(keys, new, terms, strict=True)],
    )
    stored = [episode.evolve(vector_key=key) for episode, key in zip(new, keys, strict=True)]
    return stored


def _write_episode_audits(
    db: sqlite3.Connection,
    tenant: str,
    audit: AuditRecord | None,
    episodes: Sequence[Episode],
    summary: str,
) -> None:
    """`write_audit` for each episode, in order, in one statement."""
    if audit is None or not episodes:
        return
    entry = audit_values(
        replace(audit, entity_type="episode", entity_id="", revision=0, summary=summary), tenant
    )
    # The record of each episode is `entry` with its id: one tuple built per
    # episode, not one AuditRecord.
    before, after = entry[:_AUDIT_ENTITY_ID], entry[_AUDIT_ENTITY_ID + 1 :]
    insert_audit_rows(db, [(*before, episode.episode_id, *after) for episode in episodes])


_AUDIT_ENTITY_ID = AUDIT_COLUMNS.split(", ").index("entity_id")


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


_INSERT_EPISODE = (
    "INSERT INTO memory_episodes (tenant, episode_id, user_id, session_id, user_message,"
    " assistant_response, summary, summary_source, embedding, dimension, embedding_source,"
    " embedding_model, importance, metadata, occur_time, create_time, content_hash,"
    " consolidate_time, derived_fact_ids, lexical_terms)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def _insert_row(db: sqlite3.Connection, tenant: str, episode: Episode, terms: str) -> int:
    """Inserts the episode's row (its full-text row is the caller's); returns its key."""
    cursor = db.execute(_INSERT_EPISODE, (tenant, *episode_values(episode, terms)))
    return int(cursor.lastrowid or 0)


def _insert_rows(
    db: sqlite3.Connection, tenant: str, episodes: Sequence[Episode], terms: Sequence[str]
) -> list[int]:
    """`_insert_row` for each episode, in one statement; returns their keys
    in order. The keys come from the key counter (AUTOINCREMENT: each row
    one above the largest key the table ever had), so the rows of one
    statement in a write transaction get consecutive keys above the largest
    one before; when the last key says otherwise (a counter ahead of the
    largest key left), the keys are read back."""
    if not episodes:
        return []
    before = int(
        db.execute("SELECT coalesce(max(vector_key), 0) FROM memory_episodes").fetchone()[0]
    )
    db.executemany(
        _INSERT_EPISODE,
        [(tenant, *episode_values(e, text)) for e, text in zip(episodes, terms, strict=True)],
    )
    last = int(db.execute("SELECT last_insert_rowid()").fetchone()[0])
    if last - before == len(episodes):
        return list(range(before + 1, last + 1))
    rows = db.execute(
        "SELECT episode_id, vector_key FROM memory_episodes WHERE vector_key > ?", (before,)
    )
    key_of = dict(rows.fetchall())
    return [int(key_of[e.episode_id]) for e in episodes]


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


def _chunks(items: Sequence[T]) -> Iterable[Sequence[T]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _user_vectors(
    db: sqlite3.Connection, query: str, tenant: str, user_id: str
) -> tuple[list[sqlite3.Row], str] | None:
    """The rows `query` reads of the user's embedded episodes and the
    embedding model (one database thread runs every store call: no write
    comes between); None when the user has none."""
    rows = db.execute(query, (tenant, user_id)).fetchall()
    if not rows:
        return None
    model = db.execute(_LATEST_MODEL, (tenant, user_id, int(ValueSource.MODEL))).fetchone()
    return rows, model[0] if model else ""
