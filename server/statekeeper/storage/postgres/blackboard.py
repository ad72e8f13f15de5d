"""Production blackboard store: PostgreSQL is the source of truth, Redis
Streams carry commits to the other replicas (storage/redis/feeds.py).

Serialization. Every mutation advances the tenant's revision counter
(bb_tenants), and a mutation commits only on the state its decision saw:

* optimistically (the common case): one statement reads the counters and
  the named keys (one snapshot, no lock), the decisions run in Python, and
  one call of the `bb_commit` function writes everything in its own
  implicit transaction only if the counter is still the one read - the
  UPDATE that checks it takes the row lock, so the lock is held for one
  statement and its commit, never across a round trip to this process.
  If another mutation got there first, nothing is written and the
  decisions run again on the new state (the contract lets a store call
  `decide` again);
* after OPTIMISTIC_ATTEMPTS such losses (replicas racing on one tenant),
  under the lock: a transaction that locks the counter row (`SELECT ...
  FOR UPDATE`), reads, writes and commits, which cannot lose.

A replica also remembers, for the tenants it wrote last, the state of the
keys it read or wrote as of its own last commit (bounded: KNOWN_*): a group
on those keys skips the read and costs one round trip. The same revision
check makes this safe: if anyone else wrote since, the commit is refused
and the group decides again on a fresh read. A group that would write
nothing is never answered from what is remembered (its refusal or read
could rest on a stale copy): it reads first.

Either way the decision sees exactly the state it commits on and its
revision is the counter plus one: compare-and-swap is correct on any number
of replicas. Reads need no lock: each is one statement (one snapshot) or a
REPEATABLE READ transaction when it takes several.

Group commit. A replica queues the mutations of a tenant that arrive while
one of its commits runs and commits them together in the next one: the
decisions run in arrival order, each on the state the ones before it left
(so the group equals the same mutations one by one), all their revisions
go in one `bb_commit` call, and callers are answered after COMMIT. A
refused decision fails alone; a failed commit fails the whole group and
leaves nothing. Each revision's audit record (core.audit.blackboard_record)
goes into the same call (migration 3), so the trail commits with the data.

Tables (key columns use the "C" collation, so keys sort and compare by
UTF-8 bytes, i.e. code points):

* bb_tenants: revision, oldest readable revision, number of live keys;
* bb_entries: the current entry of every live key;
* bb_versions: every event ever committed, until compaction (reads at a
  past revision, watch replay with previous values);
* bb_log: one row per revision (board, commit time): history paging and
  retention by time.

The schema is this module's own versioned migration list (MIGRATIONS),
recorded in bb_schema_migrations and applied under a transaction-scoped
advisory lock, so replicas starting together apply each migration once.

Publishing. After COMMIT (never before) the batch goes to the feed, which
delivers it on this replica and XADDs it for the others. A crash between
the two loses the publish, not the data: watch hubs repair gaps from
`history`. A mutation runs in its tenant's committer task, not in its
caller's, so a caller that hangs up cannot cut a commit from its publish.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

import asyncpg

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.audit.service import blackboard_record
from statekeeper.core.blackboard.keys import KeyMatcher
from statekeeper.core.blackboard.models import (
    Decide,
    Entry,
    Event,
    EventType,
    Header,
    MutationOutcome,
    ReadResult,
    RevisionBatch,
    RevisionCompactedError,
    T,
    tombstone,
)
from statekeeper.core.blackboard.store import BlackboardStore
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.storage.postgres.blackboard_commit import (
    Known,
    Pending,
    Tenant,
    apply,
    audit_arguments,
    audit_records,
    by_key,
    commit_arguments,
    copy,
    named,
    with_oldest,
    write_arguments,
)
from statekeeper.storage.postgres.blackboard_reads import (
    ENTRY_COLUMNS,
    READ_AT,
    READ_CURRENT,
    VERSION_COLUMNS,
    batches,
    current_entries,
    history_sql,
    live,
    scan,
)
from statekeeper.storage.postgres.blackboard_schema import (
    LATEST_SCHEMA,
    MIGRATION_LOCK_KEY,
    MIGRATIONS,
    SCHEMA_TABLE,
)
from statekeeper.storage.postgres.erasure import drop_redis_keys, run_steps
from statekeeper.storage.postgres.migrations import (
    SchemaOutOfDateError,
    apply_migrations,
)
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.redis.feeds import RedisStreamFeed
from statekeeper.storage.shared.blackboard import (
    above_current,
    entry_from_row,
    resolve_revision,
    visible,
)
from statekeeper.storage.shared.erasure import blackboard_steps
from statekeeper.storage.sql import AUDIT_COLUMNS, audit_values

if TYPE_CHECKING:
    from statekeeper.storage.postgres.sessions import Connection

log = logging.getLogger(__name__)


# One statement writes a whole revision: history rows, entry upserts and
# deletes, the log row and the counters. The events come as parallel
# arrays; PUT rows carry a value, DELETE/EXPIRE rows do not.
_WRITE_BATCH = f"""
WITH ev AS (
    SELECT * FROM unnest($5::text[], $6::smallint[], $7::smallint[], $8::text[],
        $9::integer[], $10::bytea[], $11::bigint[], $12::bigint[], $13::text[],
        $14::float8[], $15::float8[])
        WITH ORDINALITY AS u(key, event_type, kind, content_type, schema_version, data,
            create_revision, version, writer, expire_time, update_time, seq)
), history AS (
    INSERT INTO bb_versions (tenant, {VERSION_COLUMNS})
    SELECT $1, $2, key, $3, seq - 1, event_type, kind, content_type, schema_version, data,
        create_revision, version, writer, expire_time, $4
    FROM ev
), upserted AS (
    INSERT INTO bb_entries (tenant, {ENTRY_COLUMNS})
    SELECT $1, $2, key, kind, content_type, schema_version, data, create_revision, $3,
        version, writer, expire_time, update_time
    FROM ev WHERE event_type = 1
    ON CONFLICT (tenant, board, key) DO UPDATE SET kind = excluded.kind,
        content_type = excluded.content_type, schema_version = excluded.schema_version,
        data = excluded.data, create_revision = excluded.create_revision,
        revision = excluded.revision, version = excluded.version, writer = excluded.writer,
        expire_time = excluded.expire_time, update_time = excluded.update_time
), removed AS (
    DELETE FROM bb_entries e USING ev
    WHERE e.tenant = $1 AND e.board = $2 AND e.key = ev.key AND ev.event_type <> 1
), logged AS (
    INSERT INTO bb_log (tenant, revision, board, commit_time) VALUES ($1, $3, $2, $4)
)
UPDATE bb_tenants SET revision = $3, key_count = $16 WHERE tenant = $1
"""


# Mutations of one tenant committed in one transaction at most: bounds the
# time the tenant's lock is held and the latency of the group's first caller.
MAX_GROUP = 128
# Optimistic commits of a group before it takes the tenant's lock instead.
OPTIMISTIC_ATTEMPTS = 2
# What a replica remembers of the tenants it wrote last (see Known): at
# most this many tenants, keys per tenant, and bytes per value.
KNOWN_TENANTS = 64
KNOWN_KEYS = 128
KNOWN_VALUE_BYTES = 4096

_COMMIT = "SELECT bb_commit(" + ", ".join(f"${n}" for n in range(1, 35)) + ")"
_INSERT_AUDIT = f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)"

# The tenant's counters and the current entries of some (board, key) pairs,
# in one snapshot.
_READ_STATE = f"""
SELECT h.revision AS h_revision, h.oldest_revision AS h_oldest, h.key_count AS h_key_count,
    h.erase_epoch AS h_epoch, e.*
FROM (SELECT 1) AS one
LEFT JOIN bb_tenants h ON h.tenant = $1
LEFT JOIN LATERAL (
    SELECT {ENTRY_COLUMNS} FROM bb_entries
    WHERE tenant = $1 AND (board, key) IN (SELECT * FROM unnest($2::text[], $3::text[]))
) e ON true
"""


# A committed group: its revisions (each with the key count after it) and
# each mutation's outcome or refusal.
_Committed = tuple[list[tuple[RevisionBatch, int]], list[MutationOutcome[Any] | Exception]]


class PostgresBlackboardStore(BlackboardStore):
    """The blackboard on PostgreSQL, published through Redis Streams (or,
    without a Redis URL, through this replica and PostgreSQL polling)."""

    def __init__(
        self,
        db: PostgresStorage,
        redis_url: str | None,
        prefix: str = "sk",
        migrate: bool = True,
        feed_options: dict[str, Any] | None = None,
    ) -> None:
        self._db = db
        self._migrate = migrate
        self._redis_url = redis_url
        self._feed = RedisStreamFeed(self, redis_url, prefix, **(feed_options or {}))
        # Group commit: mutations waiting per tenant, and the task committing them.
        self._pending: dict[str, collections.deque[Pending]] = {}
        self._committers: dict[str, asyncio.Task[None]] = {}
        self._known: dict[str, Known] = {}

    @property
    def feed(self) -> RedisStreamFeed:
        return self._feed

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        steps = blackboard_steps(tenant, subject, bump_epoch=True)
        erasure = await run_steps(self._db, steps, dry_run)
        if not dry_run and erasure.counts.total:
            # This replica's copies of the tenant's state, and the shared
            # stream of recent batches (readers repair from PostgreSQL).
            self._known.pop(tenant, None)
            await drop_redis_keys(self._redis_url, [self._feed.stream_key(tenant)])
        return erasure.counts

    @property
    def description(self) -> str:
        return f"blackboard on PostgreSQL; {self._feed.description}"

    async def start(self) -> None:
        """Applies (or, with migrate=False, checks) the schema, then starts
        the feed. The PostgresStorage must be started first."""
        async with self._db.connection("blackboard schema") as conn:
            applied = await apply_migrations(
                conn, SCHEMA_TABLE, MIGRATION_LOCK_KEY, MIGRATIONS, self._migrate
            )
            version = applied.version
        if version < LATEST_SCHEMA:
            raise SchemaOutOfDateError(
                f"the blackboard schema is at version {version}, this server needs"
                f" {LATEST_SCHEMA}: start with --migrate-on-start"
            )
        await self._feed.start()

    async def close(self) -> None:
        # Mutations already accepted finish (their callers' cancellation does
        # not reach the committer tasks) before the feed they publish to closes.
        for _ in range(100):  # bounded: each round waits for the running groups
            committers = list(self._committers.values())
            if not committers:
                break
            await asyncio.gather(*committers, return_exceptions=True)
        await self._feed.close()

    # ----- mutations ----------------------------------------------------------------

    async def mutate(
        self,
        tenant: str,
        board: str,
        keys: Sequence[str],
        now: float,
        decide: Decide[T],
        audit: AuditRecord | None = None,
    ) -> MutationOutcome[T]:
        future: asyncio.Future[MutationOutcome[Any]] = asyncio.get_running_loop().create_future()
        # A caller cancelled mid-commit never reads the outcome; mark it read.
        future.add_done_callback(_consume)
        self._pending.setdefault(tenant, collections.deque()).append(
            Pending(board, sorted(set(keys)), now, decide, future, audit)
        )
        if tenant not in self._committers:
            self._committers[tenant] = asyncio.create_task(
                self._commit_pending(tenant),
                name="blackboard-group-commit",
                context=contextvars.Context(),
            )
        # The group commits whether or not this caller still waits for it:
        # cancelling the caller cancels only this future (no shield, and no
        # step of the loop for one), and the committer skips a future done.
        outcome: MutationOutcome[T] = await future
        return outcome

    async def _commit_pending(self, tenant: str) -> None:
        """Commits the tenant's pending mutations, group after group, until
        none is left. One group is one transaction: the tenant's row lock is
        taken once and held for a fixed number of round trips whatever the
        group's size, instead of once per mutation."""
        queue = self._pending[tenant]
        try:
            while queue:
                group = [queue.popleft() for _ in range(min(len(queue), MAX_GROUP))]
                await self._commit_group(tenant, group)
        finally:
            # No await between the last check and here: nothing can slip in.
            del self._committers[tenant]
            if queue:
                self._committers[tenant] = asyncio.create_task(
                    self._commit_pending(tenant),
                    name="blackboard-group-commit",
                    context=contextvars.Context(),
                )
            else:
                del self._pending[tenant]

    async def _commit_group(self, tenant: str, group: list[Pending]) -> None:
        """Commits `group` (optimistically, then under the tenant's lock if
        other replicas keep winning), then publishes and answers. A refused
        decision fails alone; a database failure fails them all and leaves
        nothing behind."""
        try:
            answered = False
            known = self._known.get(tenant)
            if known is not None and named(group) <= known.entries.keys():
                answered = await self._commit_optimistic(tenant, group, known)
            for _ in range(OPTIMISTIC_ATTEMPTS):
                if answered:
                    break
                answered = await self._commit_optimistic(tenant, group)
            if not answered:
                await self._commit_locked(tenant, group)
        except BaseException as exc:
            # Callers already answered committed; a connection that fails to
            # go back to the pool after that changes nothing for them.
            for pending in group:
                if not pending.future.done():
                    pending.future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return

    async def _answer(self, group: list[Pending], committed: _Committed) -> None:
        """Publishes a committed group and answers its callers. Runs before
        the connection goes back to the pool: the commit is durable, and
        asyncpg's release (a task, a timeout, the reset) need not delay the
        replies."""
        writes, results = committed
        await self._feed.publish([batch for batch, _ in writes])
        for pending, result in zip(group, results, strict=True):
            if pending.future.done():
                continue
            if isinstance(result, Exception):
                pending.future.set_exception(result)
            else:
                pending.future.set_result(result)

    async def _commit_optimistic(
        self, tenant: str, group: list[Pending], known: Known | None = None
    ) -> bool:
        """Two round trips and no lock held across them: read the tenant's
        state and the named keys (one statement, one snapshot), decide, then
        one `bb_commit` call that writes the group only if the tenant's
        revision is still the one read (every mutation advances it, so the
        decisions ran on exactly the state they commit on). With `known`,
        the read is skipped: one round trip. Returns False when another
        mutation got there first: nothing was written, nobody answered."""
        async with self._db.connection("blackboard mutation") as conn:
            if known is None:
                state, seen = await self._read(conn, tenant, named(group))
            else:
                state, seen = copy(known.state), dict(known.entries)
            live = {slot: entry for slot, entry in seen.items() if entry is not None}
            writes: list[tuple[RevisionBatch, int]] = []
            expected = state.revision
            results = [apply(state, live, pending, writes) for pending in group]
            if not writes:
                if known is not None:
                    # A refusal or a read must not rest on a copy that may
                    # be stale: answer from a fresh read instead.
                    return False
                await self._answer(group, (writes, results))
                return True
            arguments = commit_arguments(tenant, expected, state, writes)
            arguments += audit_arguments(audit_records(group, results, writes))
            arguments.append(state.epoch)  # no erasure since the read (or the copy)
            oldest = await conn.fetchval(_COMMIT, *arguments)
            if oldest is None:
                self._known.pop(tenant, None)
                return False
            if oldest != state.oldest_revision:  # compacted since the read
                results = [with_oldest(result, oldest) for result in results]
                state.oldest_revision = oldest
            for batch, _ in writes:
                for event in batch.events:
                    put = event.type == EventType.PUT
                    seen[batch.board, event.key] = event.entry if put else None
            self._remember(tenant, Known(state, seen))
            await self._answer(group, (writes, results))
            return True

    async def _read(
        self, conn: Connection, tenant: str, wanted: set[tuple[str, str]]
    ) -> tuple[Tenant, dict[tuple[str, str], Entry | None]]:
        """The tenant's state and the `wanted` keys (None: absent), plus what
        this replica knew of other keys if it is still exact (the tenant has
        not moved since)."""
        state, live = await _read_state(conn, tenant, wanted)
        seen: dict[tuple[str, str], Entry | None] = {slot: live.get(slot) for slot in wanted}
        previous = self._known.get(tenant)
        if (
            previous is not None
            and previous.state.revision == state.revision
            and previous.state.epoch == state.epoch
        ):
            seen = {**previous.entries, **seen}
        return state, seen

    def _remember(self, tenant: str, known: Known) -> None:
        """Keeps `known` if it is small (bounded memory), else forgets the
        tenant."""
        small = len(known.entries) <= KNOWN_KEYS and all(
            entry is None or entry.value is None or len(entry.value.data) <= KNOWN_VALUE_BYTES
            for entry in known.entries.values()
        )
        if not small:
            self._known.pop(tenant, None)
            return
        if tenant not in self._known and len(self._known) >= KNOWN_TENANTS:
            self._known.pop(next(iter(self._known)))  # the oldest remembered
        self._known[tenant] = known

    async def _commit_locked(self, tenant: str, group: list[Pending]) -> None:
        """The group in one transaction under the tenant's row lock, then
        answered: always succeeds (the fallback when optimistic commits keep
        losing)."""
        self._known.pop(tenant, None)
        async with self._db.connection("blackboard mutation") as conn:
            async with conn.transaction():
                state = await _lock_tenant(conn, tenant)
                live = await _entries_of(conn, tenant, named(group))
                writes: list[tuple[RevisionBatch, int]] = []
                results = [apply(state, live, pending, writes) for pending in group]
                await _write_batches(conn, state.tenant, writes)
                records = audit_records(group, results, writes)
                await conn.executemany(_INSERT_AUDIT, [audit_values(r, tenant) for r in records])
            await self._answer(group, (writes, results))  # committed

    # ----- reads ----------------------------------------------------------------------

    async def header(self, tenant: str) -> Header:
        async with self._db.connection("blackboard header") as conn:
            row = await conn.fetchrow(
                "SELECT revision, oldest_revision FROM bb_tenants WHERE tenant = $1", tenant
            )
        return Header(0, 1) if row is None else Header(row[0], row[1])

    async def read(
        self,
        tenant: str,
        board: str,
        keys: Sequence[str],
        revision: int,
        visible_at: float | None,
    ) -> ReadResult:
        wanted = sorted(set(keys))
        async with self._db.connection("blackboard read") as conn:
            if revision == 0:
                rows = await conn.fetch(READ_CURRENT, tenant, board, wanted)
            else:
                rows = await conn.fetch(READ_AT, tenant, board, wanted, revision)
        header = _header_of(rows[0])
        at = resolve_revision(header, revision, slack=0)
        entries = [
            entry
            for row in rows
            if row["key"] is not None
            for entry in live(row, revision != 0)
            if visible(entry, visible_at)
        ]
        return ReadResult(header, at, sorted(entries, key=by_key))

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
        async with _snapshot(self._db, "blackboard list") as conn:
            header = await _read_header(conn, tenant)
            at = resolve_revision(header, revision, slack=1)
            entries: list[Entry] = []
            async for entry in scan(conn, tenant, board, matcher, after_key, at, header):
                if matcher.matches(entry.key) and visible(entry, visible_at):
                    entries.append(entry)
                    if len(entries) >= limit:
                        break
        return ReadResult(header, at, entries)

    async def history(
        self,
        tenant: str,
        board: str | None,
        from_revision: int,
        to_revision: int,
        limit: int,
        with_previous: bool,
    ) -> list[RevisionBatch]:
        async with _snapshot(self._db, "blackboard history") as conn:
            header = await _read_header(conn, tenant)
            if from_revision < header.oldest_revision:
                raise RevisionCompactedError(from_revision, header.oldest_revision)
            rows = await conn.fetch(
                history_sql(board is not None, with_previous),
                tenant,
                from_revision,
                to_revision,
                limit,
                board,
            )
        return batches(tenant, rows, with_previous)

    # ----- compaction and expiry ---------------------------------------------------------

    async def compact(self, tenant: str, revision: int) -> Header:
        async with self._db.transaction("blackboard compaction") as conn:
            state = await _lock_tenant(conn, tenant, create=False)
            if revision > state.revision:
                raise above_current(revision, state.revision)
            if revision <= state.oldest_revision:
                raise RevisionCompactedError(revision, state.oldest_revision)
            await _compact(conn, state, revision)
            return state.header

    async def compact_expired_history(
        self, now: float, retention_seconds: float, max_revisions: int
    ) -> list[tuple[str, int]]:
        cutoff = now - retention_seconds
        async with self._db.connection("blackboard retention") as conn:
            candidates = await conn.fetch(_RETENTION_CANDIDATES, cutoff, max_revisions)
        compacted: list[tuple[str, int]] = []
        for row in candidates:
            async with self._db.transaction("blackboard retention") as conn:
                state = await _lock_tenant(conn, row["tenant"], create=False)
                target = await _retention_target(conn, state, cutoff, max_revisions)
                if target > state.oldest_revision:
                    await _compact(conn, state, target)
                    compacted.append((state.tenant, target))
        return compacted

    async def expire_due(self, now: float, limit: int) -> list[RevisionBatch]:
        async with self._db.connection("blackboard expiry scan") as conn:
            rows = await conn.fetch(
                "SELECT tenant, board, key, revision FROM bb_entries"
                " WHERE expire_time IS NOT NULL AND expire_time <= $1"
                " ORDER BY expire_time LIMIT $2",
                now,
                limit,
            )
        found: dict[tuple[str, str], dict[str, int]] = {}
        for row in rows:
            found.setdefault((row["tenant"], row["board"]), {})[row["key"]] = row["revision"]
        batches: list[RevisionBatch] = []
        for (tenant, board), seen in sorted(found.items()):
            batch = await asyncio.shield(self._expire(tenant, board, seen, now))
            if batch is not None:
                batches.append(batch)
        return batches

    async def _expire(
        self, tenant: str, board: str, seen: dict[str, int], now: float
    ) -> RevisionBatch | None:
        """One (tenant, board) of a sweep: the keys still expired and
        unchanged since the scan (another replica may have got there first)."""
        async with self._db.transaction("blackboard expiry") as conn:
            state = await _lock_tenant(conn, tenant)
            entries = await current_entries(conn, tenant, board, sorted(seen))
            expired = sorted(
                (
                    e
                    for e in entries.values()
                    if e.is_expired(now) and e.mod_revision == seen[e.key]
                ),
                key=by_key,
            )
            batch = await _write_expiry(conn, state, board, expired, now) if expired else None
        if batch is not None:
            await self._feed.publish([batch])
        return batch


# ----- migrations ------------------------------------------------------------------------


# ----- helpers -------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _snapshot(db: PostgresStorage, what: str) -> AsyncIterator[Connection]:
    """A read-only REPEATABLE READ transaction: several statements, one
    snapshot."""
    async with (
        db.connection(what) as conn,
        conn.transaction(isolation="repeatable_read", readonly=True),
    ):
        yield conn


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


async def _lock_tenant(conn: Connection, tenant: str, create: bool = True) -> Tenant:
    """Locks the tenant's counter row (creating it on first use), which
    serializes this transaction with every other mutation of the tenant."""
    sql = "SELECT revision, oldest_revision, key_count FROM bb_tenants WHERE tenant=$1 FOR UPDATE"
    row = await conn.fetchrow(sql, tenant)
    if row is None and create:
        await conn.execute(
            "INSERT INTO bb_tenants (tenant, revision, oldest_revision, key_count)"
            " VALUES ($1, 0, 1, 0) ON CONFLICT (tenant) DO NOTHING",
            tenant,
        )
        row = await conn.fetchrow(sql, tenant)
    if row is None:
        return Tenant(tenant)
    return Tenant(tenant, row[0], row[1], row[2])


async def _read_header(conn: Connection, tenant: str) -> Header:
    row = await conn.fetchrow(
        "SELECT revision, oldest_revision FROM bb_tenants WHERE tenant = $1", tenant
    )
    return Header(0, 1) if row is None else Header(row[0], row[1])


def _header_of(row: asyncpg.Record) -> Header:
    if row["h_revision"] is None:
        return Header(0, 1)
    return Header(row["h_revision"], row["h_oldest"])


async def _read_state(
    conn: Connection, tenant: str, wanted: set[tuple[str, str]]
) -> tuple[Tenant, dict[tuple[str, str], Entry]]:
    boards, keys = zip(*sorted(wanted), strict=True) if wanted else ((), ())
    rows = await conn.fetch(_READ_STATE, tenant, list(boards), list(keys))
    first = rows[0]
    state = Tenant(tenant)
    if first["h_revision"] is not None:
        state = Tenant(
            tenant, first["h_revision"], first["h_oldest"], first["h_key_count"], first["h_epoch"]
        )
    live = {(row["board"], row["key"]): entry_from_row(row) for row in rows if row["key"]}
    return state, live


async def _entries_of(
    conn: Connection, tenant: str, wanted: set[tuple[str, str]]
) -> dict[tuple[str, str], Entry]:
    """The current entries of some (board, key) pairs, in one statement."""
    boards, keys = zip(*sorted(wanted), strict=True) if wanted else ((), ())
    rows = await conn.fetch(
        f"SELECT {ENTRY_COLUMNS} FROM bb_entries"
        " WHERE tenant = $1 AND (board, key) IN"
        " (SELECT * FROM unnest($2::text[], $3::text[]))",
        tenant,
        list(boards),
        list(keys),
    )
    return {(row["board"], row["key"]): entry_from_row(row) for row in rows}


async def _write_batches(
    conn: Connection, tenant: str, writes: list[tuple[RevisionBatch, int]]
) -> None:
    """Stores the group's revisions: one statement per revision, sent
    together (asyncpg pipelines executemany into one round trip)."""
    if writes:
        await conn.executemany(
            _WRITE_BATCH,
            [write_arguments(tenant, batch, key_count) for batch, key_count in writes],
        )


async def _write_expiry(
    conn: Connection, state: Tenant, board: str, expired: list[Entry], now: float
) -> RevisionBatch:
    revision = state.revision + 1
    events = tuple(
        Event(EventType.EXPIRE, tombstone(board, e.key, revision, now), e) for e in expired
    )
    batch = RevisionBatch(state.tenant, board, revision, now, events)
    await _write_batch(conn, state, batch, {e.key for e in expired})
    record = blackboard_record(None, batch)
    assert record is not None, "an expiry revision is always audited"
    await conn.execute(_INSERT_AUDIT, *audit_values(record, state.tenant))
    return batch


async def _write_batch(
    conn: Connection, state: Tenant, batch: RevisionBatch, live: set[str]
) -> None:
    """Stores one revision in one statement and advances `state`."""
    for event in batch.events:
        if event.type == EventType.PUT:
            if event.key not in live:
                live.add(event.key)
                state.key_count += 1
        elif event.key in live:
            live.discard(event.key)
            state.key_count -= 1
    await conn.execute(_WRITE_BATCH, *write_arguments(state.tenant, batch, state.key_count))
    state.revision = batch.revision


async def compact_history(conn: Connection, tenant: str, revision: int) -> None:
    """Compaction to `revision` inside the caller's transaction, which has
    locked the tenant's counter row (the archive's compare-and-compact of
    archived history)."""
    await _compact(conn, await _lock_tenant(conn, tenant, create=False), revision)


async def _compact(conn: Connection, state: Tenant, revision: int) -> None:
    """Drops history below `revision` except each key's latest PUT below it."""
    await conn.execute(
        "DELETE FROM bb_versions v WHERE v.tenant = $1 AND v.revision < $2 AND ("
        " v.event_type <> 1 OR EXISTS (SELECT 1 FROM bb_versions newer"
        " WHERE newer.tenant = v.tenant AND newer.board = v.board AND newer.key = v.key"
        " AND newer.revision > v.revision AND newer.revision < $2))",
        state.tenant,
        revision,
    )
    await conn.execute(
        "DELETE FROM bb_log WHERE tenant = $1 AND revision < $2", state.tenant, revision
    )
    await conn.execute(
        "UPDATE bb_tenants SET oldest_revision = $2 WHERE tenant = $1", state.tenant, revision
    )
    state.oldest_revision = revision


# Tenants whose oldest kept revision is past the retention window or the
# revision cap (cheap: one index probe per tenant).
_RETENTION_CANDIDATES = """
SELECT t.tenant FROM bb_tenants t
WHERE t.oldest_revision < t.revision AND (
    t.revision - t.oldest_revision + 1 > $2
    OR EXISTS (SELECT 1 FROM bb_log l WHERE l.tenant = t.tenant
               AND l.revision = t.oldest_revision AND l.commit_time <= $1))
ORDER BY t.tenant
"""


async def _retention_target(
    conn: Connection, state: Tenant, cutoff: float, max_revisions: int
) -> int:
    """The oldest revision to keep: the first one committed after `cutoff`,
    and within the newest `max_revisions`; never past the current one."""
    first_kept = await conn.fetchval(
        "SELECT revision FROM bb_log WHERE tenant = $1 AND revision >= $2"
        " AND commit_time > $3 ORDER BY revision LIMIT 1",
        state.tenant,
        state.oldest_revision,
        cutoff,
    )
    target = first_kept if first_kept is not None else state.revision
    target = max(target, state.revision - max_revisions + 1)
    return int(min(target, state.revision))
