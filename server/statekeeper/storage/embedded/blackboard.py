"""Embedded blackboard store: SQLite tables on the shared database thread, and
an in-process event feed.

Mutations are group-committed: those that arrive while a commit is running
are applied together in the next SQLite transaction (one fsync), each as its
own revision in arrival order. A refused decision writes nothing of its own.
A mutation that fails while writing (never expected: a bug or a corrupt row)
rolls the transaction back, and the group is applied again without it - no
savepoint per mutation, whose statement journal copied every page the
mutation touched (about 60 KiB, spilled to a temporary file, per write).

The group's batches are handed to the feed on the event loop as soon as the
commit's result gets there, before any writer of the group is answered; the
expiry sweep's batches likewise. Both come back from the one database thread
in commit order, and each is delivered in the step of the event loop that
receives it, so listeners see revisions in commit order, with one wake-up of
the loop per commit (not one for the feed and one for the result).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.audit.service import blackboard_record
from statekeeper.core.blackboard.keys import KeyMatcher
from statekeeper.core.blackboard.models import (
    Decide,
    Decision,
    Entry,
    Event,
    EventType,
    Header,
    MutationOutcome,
    MutationView,
    ReadResult,
    RevisionBatch,
    RevisionCompactedError,
    T,
    event_from_columns,
    tombstone,
)
from statekeeper.core.blackboard.store import (
    BlackboardEventFeed,
    BlackboardStore,
    FeedListener,
    FeedListeners,
)
from statekeeper.core.errors import StorageUnavailableError
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.storage.embedded.audit_chain import insert_audit_rows
from statekeeper.storage.embedded.erasure import run_steps
from statekeeper.storage.embedded.migrations import apply_migrations
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.shared.blackboard import (
    above_current,
    batches_from_rows,
    check_decision,
    entry_from_row,
    resolve_revision,
    value_columns,
    visible,
)
from statekeeper.storage.shared.erasure import blackboard_steps
from statekeeper.storage.sql import audit_values

log = logging.getLogger(__name__)

# Versioned schema of the blackboard tables: (version, statements). Append
# only; never edit a released entry.
SCHEMA: list[tuple[int, list[str]]] = [
    (
        1,
        [
            """CREATE TABLE bb_tenants (
                tenant TEXT PRIMARY KEY,
                revision INTEGER NOT NULL,
                oldest_revision INTEGER NOT NULL,
                key_count INTEGER NOT NULL
            )""",
            """CREATE TABLE bb_entries (
                tenant TEXT NOT NULL,
                board TEXT NOT NULL,
                key TEXT NOT NULL,
                kind INTEGER,
                content_type TEXT,
                schema_version INTEGER,
                data BLOB,
                create_revision INTEGER NOT NULL,
                revision INTEGER NOT NULL,
                version INTEGER NOT NULL,
                writer TEXT NOT NULL,
                expire_time REAL,
                update_time REAL NOT NULL,
                PRIMARY KEY (tenant, board, key)
            )""",
            "CREATE INDEX bb_entries_by_expiry ON bb_entries (expire_time)"
            " WHERE expire_time IS NOT NULL",
            # Every event ever committed (until compaction): the history for
            # reads at a revision and for watch replay.
            """CREATE TABLE bb_versions (
                tenant TEXT NOT NULL,
                board TEXT NOT NULL,
                key TEXT NOT NULL,
                revision INTEGER NOT NULL,
                seq INTEGER NOT NULL,
                event_type INTEGER NOT NULL,
                kind INTEGER,
                content_type TEXT,
                schema_version INTEGER,
                data BLOB,
                create_revision INTEGER NOT NULL,
                version INTEGER NOT NULL,
                writer TEXT NOT NULL,
                expire_time REAL,
                update_time REAL NOT NULL,
                PRIMARY KEY (tenant, board, key, revision)
            )""",
            "CREATE INDEX bb_versions_by_board ON bb_versions (tenant, board, revision, seq)",
            "CREATE INDEX bb_versions_by_revision ON bb_versions (tenant, revision, seq)",
            # One row per revision, for retention by time.
            """CREATE TABLE bb_log (
                tenant TEXT NOT NULL,
                revision INTEGER NOT NULL,
                board TEXT NOT NULL,
                commit_time REAL NOT NULL,
                PRIMARY KEY (tenant, revision)
            )""",
        ],
    ),
]

# Mutations applied in one SQLite transaction at most; bounds reply latency.
MAX_GROUP = 256

_ENTRY_COLUMNS = (
    "board, key, kind, content_type, schema_version, data, create_revision, revision,"
    " version, writer, expire_time, update_time"
)


class InProcessEventFeed(BlackboardEventFeed):
    """Delivers batches to the listeners of this process, in commit order."""

    def __init__(self) -> None:
        self._listeners = FeedListeners()

    def listen(self, listener: FeedListener) -> Callable[[], None]:
        return self._listeners.add(listener)

    def deliver(self, batches: Sequence[RevisionBatch]) -> None:
        for batch in batches:
            self._listeners.call(batch)


@dataclass(eq=False)
class _Job:
    """A mutation waiting for the next group commit."""

    tenant: str
    board: str
    keys: tuple[str, ...]
    now: float
    decide: Decide[Any]
    future: asyncio.Future[MutationOutcome[Any]]
    audit: AuditRecord | None
    outcome: MutationOutcome[Any] | None = None
    error: BaseException | None = None


@dataclass
class _Tenant:
    """The tenant's counters, as read inside the current transaction."""

    tenant: str
    revision: int = 0
    oldest_revision: int = 1
    key_count: int = 0
    stored: bool = False

    @property
    def header(self) -> Header:
        return Header(self.revision, self.oldest_revision)


@dataclass
class _Group:
    """What one group commit produced, for publication after COMMIT, and
    the counters of the tenants it wrote: read once, saved once at its end
    (not once per mutation)."""

    batches: list[RevisionBatch] = field(default_factory=list)
    tenants: dict[str, _Tenant] = field(default_factory=dict)

    def tenant(self, db: sqlite3.Connection, name: str) -> _Tenant:
        state = self.tenants.get(name)
        if state is None:
            state = self.tenants[name] = _load_tenant(db, name, create=True)
        return state

    def save_tenants(self, db: sqlite3.Connection) -> None:
        for state in self.tenants.values():
            _save_tenant(db, state)


class EmbeddedBlackboardStore(BlackboardStore):
    """The blackboard on the embedded SQLite store."""

    def __init__(self, storage: EmbeddedStorage) -> None:
        self._storage = storage
        self._feed = InProcessEventFeed()
        self._pending: list[_Job] = []
        self._committer: asyncio.Task[None] | None = None

    @property
    def feed(self) -> InProcessEventFeed:
        return self._feed

    async def start(self) -> None:
        await self._storage.run(_migrate)

    async def close(self) -> None:
        if self._committer is not None:
            await asyncio.shield(self._committer)

    # ----- mutations (group commit) ----------------------------------------------

    async def mutate(
        self,
        tenant: str,
        board: str,
        keys: Sequence[str],
        now: float,
        decide: Decide[T],
        audit: AuditRecord | None = None,
    ) -> MutationOutcome[T]:
        loop = asyncio.get_running_loop()
        keys = tuple(sorted(set(keys)))
        job = _Job(tenant, board, keys, now, decide, loop.create_future(), audit)
        # A caller cancelled mid-commit never reads its outcome; mark it read.
        job.future.add_done_callback(_consume)
        self._pending.append(job)
        if self._committer is None:
            self._committer = asyncio.create_task(self._commit_pending(), name="bb-commit")
        # Cancelling the caller cancels only this future (no shield, and no
        # step of the loop for one): the job stays queued and commits with
        # its group all the same, and _resolve skips a future already done.
        outcome: MutationOutcome[T] = await job.future
        return outcome

    async def _commit_pending(self) -> None:
        try:
            while self._pending:
                jobs, self._pending = self._pending[:MAX_GROUP], self._pending[MAX_GROUP:]
                batches: list[RevisionBatch] = []
                try:
                    batches = await self._storage.run(self._group_work(jobs))
                except Exception as exc:
                    for job in jobs:
                        job.error = exc
                # In the step that receives the commit's result, before any
                # reply (see the module docstring).
                self._deliver(batches)
                _resolve(jobs)
        finally:
            self._committer = None

    def _group_work(self, jobs: list[_Job]) -> Callable[[sqlite3.Connection], list[RevisionBatch]]:
        return lambda db: self._commit_group(db, jobs)

    def _commit_group(self, db: sqlite3.Connection, jobs: list[_Job]) -> list[RevisionBatch]:
        """Applies `jobs` in one transaction; a job that fails while writing
        is left out and the others are applied again (bounded: each round
        leaves one out). Returns the committed batches, in revision order."""
        for _ in range(len(jobs) + 1):
            group = _Group()
            db.execute("BEGIN IMMEDIATE")
            try:
                failed = self._run_jobs(db, jobs, group)
                if failed is None:
                    group.save_tenants(db)
                    db.commit()
                    return group.batches
                db.rollback()
            except BaseException:
                db.rollback()
                raise
            jobs = [job for job in jobs if job is not failed]
            for job in jobs:
                job.outcome, job.error = None, None
        raise AssertionError("every round of a group commit leaves a job out")

    def _run_jobs(self, db: sqlite3.Connection, jobs: list[_Job], group: _Group) -> _Job | None:
        """Runs the jobs in order; returns the first that failed while
        writing (its error set; the transaction must be rolled back)."""
        for job in jobs:
            try:
                self._run_job(db, job, group)
            except sqlite3.OperationalError:
                raise  # the disk failed: the whole group rolls back
            except Exception as exc:
                job.error = exc
                return job
        return None

    def _run_job(self, db: sqlite3.Connection, job: _Job, group: _Group) -> None:
        """One mutation: expires its named keys that are due, decides, and
        writes the decision. A refused decision (its error set on the job)
        writes nothing of its own; any other error is raised."""
        tenant = group.tenant(db, job.tenant)
        entries = _current_entries(db, job.tenant, job.board, job.keys)
        expired = sorted(
            (e for e in entries.values() if e.is_expired(job.now)), key=lambda e: e.key
        )
        if expired:
            group.batches.append(_write_expiry(db, tenant, job.board, expired, job.now))
            for entry in expired:
                del entries[entry.key]
        view = MutationView(tenant.header, job.now, entries, tenant.key_count)
        try:
            decision = job.decide(view)
        except Exception as exc:
            job.error = exc
            return
        batch = None
        if decision.events:
            batch = _batch_for(job, view, decision, set(entries))
            _write_batch(db, tenant, batch, set(entries), save=False)
            _write_audit(db, batch, job.audit)
            group.batches.append(batch)
        job.outcome = MutationOutcome(tenant.header, decision.result, batch)

    def _deliver(self, batches: list[RevisionBatch]) -> None:
        """Hands committed batches to the feed; runs on the event loop."""
        if batches:
            self._feed.deliver(batches)

    # ----- reads ------------------------------------------------------------------

    async def header(self, tenant: str) -> Header:
        return await self._storage.run(lambda db: _load_tenant(db, tenant).header)

    async def read(
        self,
        tenant: str,
        board: str,
        keys: Sequence[str],
        revision: int,
        visible_at: float | None,
    ) -> ReadResult:
        def work(db: sqlite3.Connection) -> ReadResult:
            header = _load_tenant(db, tenant).header
            at = resolve_revision(header, revision, slack=0)
            entries: list[Entry] = []
            for key in sorted(set(keys)):
                entry = _entry_at(db, tenant, board, key, at, header.revision)
                if entry is not None and visible(entry, visible_at):
                    entries.append(entry)
            return ReadResult(header, at, entries)

        return await self._storage.run(work)

    async def list_entries(
        self,
        tenant: str,
        board: str,
        matcher: KeyMatcher,
        revision: int,
        visible_at: float | None,
        after_key: str | None,
        limit: int,
    ) -> ReadResult:
        def work(db: sqlite3.Connection) -> ReadResult:
            header = _load_tenant(db, tenant).header
            at = resolve_revision(header, revision, slack=1)
            entries: list[Entry] = []
            for entry in _scan(db, tenant, board, matcher, after_key, at, header.revision):
                if matcher.matches(entry.key) and visible(entry, visible_at):
                    entries.append(entry)
                    if len(entries) >= limit:
                        break
            return ReadResult(header, at, entries)

        return await self._storage.run(work)

    async def history(
        self,
        tenant: str,
        board: str | None,
        from_revision: int,
        to_revision: int,
        limit: int,
        with_previous: bool,
    ) -> list[RevisionBatch]:
        def work(db: sqlite3.Connection) -> list[RevisionBatch]:
            header = _load_tenant(db, tenant).header
            if from_revision < header.oldest_revision:
                raise RevisionCompactedError(from_revision, header.oldest_revision)
            rows = _history_rows(db, tenant, board, from_revision, to_revision)
            return _batches(db, tenant, rows, limit, with_previous)

        return await self._storage.run(work)

    # ----- compaction and expiry ------------------------------------------------------

    async def compact(self, tenant: str, revision: int) -> Header:
        def work(db: sqlite3.Connection) -> Header:
            with db:
                state = _load_tenant(db, tenant)
                if revision > state.revision:
                    raise above_current(revision, state.revision)
                if revision <= state.oldest_revision:
                    raise RevisionCompactedError(revision, state.oldest_revision)
                _compact(db, state, revision)
                return state.header

        return await self._storage.run(work)

    async def compact_expired_history(
        self, now: float, retention_seconds: float, max_revisions: int
    ) -> list[tuple[str, int]]:
        def work(db: sqlite3.Connection) -> list[tuple[str, int]]:
            compacted: list[tuple[str, int]] = []
            with db:
                for row in db.execute("SELECT tenant FROM bb_tenants").fetchall():
                    state = _load_tenant(db, row["tenant"])
                    target = _retention_target(db, state, now - retention_seconds, max_revisions)
                    if target > state.oldest_revision:
                        _compact(db, state, target)
                        compacted.append((state.tenant, target))
            return compacted

        return await self._storage.run(work)

    async def expire_due(self, now: float, limit: int) -> list[RevisionBatch]:
        def work(db: sqlite3.Connection) -> list[RevisionBatch]:
            rows = db.execute(
                f"SELECT tenant, {_ENTRY_COLUMNS} FROM bb_entries"
                " WHERE expire_time IS NOT NULL AND expire_time <= ?"
                " ORDER BY expire_time LIMIT ?",
                (now, limit),
            ).fetchall()
            groups: dict[tuple[str, str], list[Entry]] = {}
            for row in rows:
                groups.setdefault((row["tenant"], row["board"]), []).append(entry_from_row(row))
            batches: list[RevisionBatch] = []
            with db:
                for (tenant, board), expired in sorted(groups.items()):
                    state = _load_tenant(db, tenant, create=True)
                    expired.sort(key=lambda e: e.key)
                    batches.append(_write_expiry(db, state, board, expired, now))
            return batches

        batches = await self._storage.run(work)
        self._deliver(batches)  # in the step that receives them: commit order
        return batches

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        erasure = await run_steps(self._storage, blackboard_steps(tenant, subject), dry_run)
        return erasure.counts


# ----- helpers (all run on the database thread) ------------------------------------


def _migrate(db: sqlite3.Connection) -> None:
    apply_migrations(db, "blackboard_schema", SCHEMA)


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _resolve(jobs: list[_Job]) -> None:
    for job in jobs:
        if job.future.done():
            continue
        if job.error is not None:
            job.future.set_exception(job.error)
        elif job.outcome is not None:
            job.future.set_result(job.outcome)
        else:
            job.future.set_exception(StorageUnavailableError("the mutation was not applied"))


def _load_tenant(db: sqlite3.Connection, tenant: str, create: bool = False) -> _Tenant:
    row = db.execute(
        "SELECT revision, oldest_revision, key_count FROM bb_tenants WHERE tenant=?", (tenant,)
    ).fetchone()
    if row is not None:
        return _Tenant(tenant, row[0], row[1], row[2], stored=True)
    if create:
        db.execute(
            "INSERT INTO bb_tenants (tenant, revision, oldest_revision, key_count)"
            " VALUES (?, 0, 1, 0)",
            (tenant,),
        )
        return _Tenant(tenant, stored=True)
    return _Tenant(tenant)


def _save_tenant(db: sqlite3.Connection, state: _Tenant) -> None:
    db.execute(
        "UPDATE bb_tenants SET revision=?, oldest_revision=?, key_count=? WHERE tenant=?",
        (state.revision, state.oldest_revision, state.key_count, state.tenant),
    )


def _current_entries(
    db: sqlite3.Connection, tenant: str, board: str, keys: Sequence[str]
) -> dict[str, Entry]:
    found: dict[str, Entry] = {}
    for key in keys:
        row = db.execute(
            f"SELECT {_ENTRY_COLUMNS} FROM bb_entries WHERE tenant=? AND board=? AND key=?",
            (tenant, board, key),
        ).fetchone()
        if row is not None:
            found[key] = entry_from_row(row)
    return found


def _entry_at(
    db: sqlite3.Connection, tenant: str, board: str, key: str, revision: int, current: int
) -> Entry | None:
    if revision == current:
        row = db.execute(
            f"SELECT {_ENTRY_COLUMNS} FROM bb_entries WHERE tenant=? AND board=? AND key=?",
            (tenant, board, key),
        ).fetchone()
        return None if row is None else entry_from_row(row)
    return _version_before(db, tenant, board, key, revision + 1)


def _version_before(
    db: sqlite3.Connection, tenant: str, board: str, key: str, revision: int
) -> Entry | None:
    """The key's entry just before `revision` (None if absent then)."""
    row = db.execute(
        "SELECT * FROM bb_versions WHERE tenant=? AND board=? AND key=? AND revision < ?"
        " ORDER BY revision DESC LIMIT 1",
        (tenant, board, key, revision),
    ).fetchone()
    if row is None or row["event_type"] != EventType.PUT:
        return None
    return entry_from_row(row)


def _scan(
    db: sqlite3.Connection,
    tenant: str,
    board: str,
    matcher: KeyMatcher,
    after_key: str | None,
    revision: int,
    current: int,
) -> Iterator[Entry]:
    """Entries of the matcher's key range at `revision`, by key (not yet
    filtered by glob or expiry)."""
    clauses = ["tenant = ?", "board = ?", "key >= ?"]
    params: list[object] = [tenant, board, matcher.prefix]
    end = matcher.end
    if end is not None:
        clauses.append("key < ?")
        params.append(end)
    if after_key is not None:
        clauses.append("key > ?")
        params.append(after_key)
    where = " AND ".join(clauses)
    if revision == current:
        sql = f"SELECT {_ENTRY_COLUMNS} FROM bb_entries WHERE {where} ORDER BY key"
        for row in db.execute(sql, params):
            yield entry_from_row(row)
        return
    # SQLite returns the other columns from the row holding max(revision).
    sql = (
        f"SELECT *, max(revision) FROM bb_versions WHERE {where} AND revision <= ?"
        " GROUP BY key ORDER BY key"
    )
    for row in db.execute(sql, [*params, revision]):
        if row["event_type"] == EventType.PUT:
            yield entry_from_row(row)


def _history_rows(
    db: sqlite3.Connection, tenant: str, board: str | None, low: int, high: int
) -> sqlite3.Cursor:
    if board is None:
        return db.execute(
            "SELECT * FROM bb_versions WHERE tenant=? AND revision BETWEEN ? AND ?"
            " ORDER BY revision, seq",
            (tenant, low, high),
        )
    return db.execute(
        "SELECT * FROM bb_versions WHERE tenant=? AND board=? AND revision BETWEEN ? AND ?"
        " ORDER BY revision, seq",
        (tenant, board, low, high),
    )


def _batches(
    db: sqlite3.Connection,
    tenant: str,
    rows: sqlite3.Cursor,
    limit: int,
    with_previous: bool,
) -> list[RevisionBatch]:
    # Materialize first: previous-value lookups reuse the connection.
    return batches_from_rows(
        tenant, rows.fetchall(), lambda row: _event_from_row(db, tenant, row, with_previous), limit
    )


def _event_from_row(
    db: sqlite3.Connection, tenant: str, row: sqlite3.Row, with_previous: bool
) -> Event:
    event_type, entry = event_from_columns(row)
    previous = None
    if with_previous:
        previous = _version_before(db, tenant, row["board"], row["key"], row["revision"])
    return Event(event_type, entry, previous)


def _batch_for(
    job: _Job, view: MutationView, decision: Decision[Any], existing: set[str]
) -> RevisionBatch:
    check_decision(job.keys, job.board, view.revision, decision.events)
    return RevisionBatch(job.tenant, job.board, view.revision, job.now, decision.events)


def _write_expiry(
    db: sqlite3.Connection, state: _Tenant, board: str, expired: list[Entry], now: float
) -> RevisionBatch:
    revision = state.revision + 1
    events = tuple(
        Event(EventType.EXPIRE, tombstone(board, e.key, revision, now), e) for e in expired
    )
    batch = RevisionBatch(state.tenant, board, revision, now, events)
    _write_batch(db, state, batch, {e.key for e in expired})
    _write_audit(db, batch, None)
    return batch


def _write_audit(
    db: sqlite3.Connection, batch: RevisionBatch, template: AuditRecord | None
) -> None:
    """The revision's audit record, in the transaction that stores it."""
    record = blackboard_record(template, batch)
    if record is not None:
        insert_audit_rows(db, [audit_values(record, batch.tenant)])


def _write_batch(
    db: sqlite3.Connection,
    state: _Tenant,
    batch: RevisionBatch,
    live: set[str],
    save: bool = True,
) -> None:
    """Stores one revision: history rows, current entries, counters (in
    `state`; saved too unless the caller saves them later in the transaction)."""
    tenant, board, revision = state.tenant, batch.board, batch.revision
    for seq, event in enumerate(batch.events):
        entry = event.entry
        db.execute(
            "INSERT INTO bb_versions (tenant, board, key, revision, seq, event_type, kind,"
            " content_type, schema_version, data, create_revision, version, writer,"
            " expire_time, update_time) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                tenant,
                board,
                entry.key,
                revision,
                seq,
                int(event.type),
                *value_columns(entry.value),
                entry.create_revision,
                entry.version,
                entry.writer_agent_id,
                entry.expire_time,
                batch.commit_time,
            ),
        )
        if event.type == EventType.PUT:
            _upsert_entry(db, tenant, entry)
            if entry.key not in live:
                live.add(entry.key)
                state.key_count += 1
        else:
            db.execute(
                "DELETE FROM bb_entries WHERE tenant=? AND board=? AND key=?",
                (tenant, board, entry.key),
            )
            if entry.key in live:
                live.discard(entry.key)
                state.key_count -= 1
    db.execute(
        "INSERT INTO bb_log (tenant, revision, board, commit_time) VALUES (?,?,?,?)",
        (tenant, revision, board, batch.commit_time),
    )
    state.revision = revision
    if save:
        _save_tenant(db, state)


def _upsert_entry(db: sqlite3.Connection, tenant: str, entry: Entry) -> None:
    value = entry.value
    assert value is not None, "a PUT carries a value"
    db.execute(
        f"INSERT INTO bb_entries (tenant, {_ENTRY_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
        # An update in place: the row and its key index entry stay where
        # they are (OR REPLACE deleted and reinserted both).
        " ON CONFLICT (tenant, board, key) DO UPDATE SET kind = excluded.kind,"
        " content_type = excluded.content_type, schema_version = excluded.schema_version,"
        " data = excluded.data, create_revision = excluded.create_revision,"
        " revision = excluded.revision, version = excluded.version, writer = excluded.writer,"
        " expire_time = excluded.expire_time, update_time = excluded.update_time",
        (
            tenant,
            entry.board,
            entry.key,
            int(value.kind),
            value.content_type,
            value.schema_version,
            value.data,
            entry.create_revision,
            entry.mod_revision,
            entry.version,
            entry.writer_agent_id,
            entry.expire_time,
            entry.update_time,
        ),
    )


def compact_history(db: sqlite3.Connection, tenant: str, revision: int) -> None:
    """Compaction to `revision` inside the caller's transaction (the
    archive's compare-and-compact of archived history)."""
    _compact(db, _load_tenant(db, tenant), revision)


def _compact(db: sqlite3.Connection, state: _Tenant, revision: int) -> None:
    """Drops history below `revision` except each key's latest PUT below it."""
    db.execute(
        "DELETE FROM bb_versions WHERE tenant = ?1 AND revision < ?2 AND ("
        " event_type != 1 OR EXISTS (SELECT 1 FROM bb_versions AS newer"
        " WHERE newer.tenant = bb_versions.tenant AND newer.board = bb_versions.board"
        " AND newer.key = bb_versions.key AND newer.revision > bb_versions.revision"
        " AND newer.revision < ?2))",
        (state.tenant, revision),
    )
    db.execute("DELETE FROM bb_log WHERE tenant=? AND revision < ?", (state.tenant, revision))
    state.oldest_revision = revision
    _save_tenant(db, state)


def _retention_target(
    db: sqlite3.Connection, state: _Tenant, cutoff: float, max_revisions: int
) -> int:
    """The oldest revision to keep: the first one committed after `cutoff`,
    and within the newest `max_revisions`; never past the current one."""
    row = db.execute(
        "SELECT revision FROM bb_log WHERE tenant=? AND commit_time > ? ORDER BY revision LIMIT 1",
        (state.tenant, cutoff),
    ).fetchone()
    target = row[0] if row is not None else state.revision
    target = max(target, state.revision - max_revisions + 1)
    return min(target, state.revision)
