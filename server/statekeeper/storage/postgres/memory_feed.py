"""The cross-replica vector change feed over PostgreSQL LISTEN/NOTIFY.

`PostgresChangeFeed` implements `core.vector_index.ChangeFeed`, like the
in-process feed, for replicas that share one PostgreSQL database:

* `publish(change)` delivers the change to this process's subscribers at
  once (the replica that made a change applies it without a round trip);
* the change itself reached PostgreSQL before that: `PostgresMemoryStore`
  logs every vector change in the transaction that makes it, with a
  per-tenant sequence number, and notifies channel `CHANGE_CHANNEL`
  (payload: tenant, seq, origin, user, op, vector keys). Logging in the
  store's transaction rather than in `publish` means a replica that dies
  between its commit and its publish still informs the others;
* every replica LISTENs on a dedicated connection. For a change made by
  another replica it reads the current rows of those keys from PostgreSQL
  (`get_episodes_by_keys`, with embeddings) and hands subscribers a
  `VectorChange`: present keys are upserts with their vector and ranking
  data, absent keys (deleted since) removals. Applying a change is
  therefore "make these keys match the store", which is idempotent and
  safe to repeat; that is what makes catching up simple. Changes whose
  origin is this replica's store are skipped (already published here), and
  so, once `attach`ed, are changes of users this replica holds no index of
  (a later load reads the store, which has them).

Nothing is missed. Per tenant, sequence numbers are gap-free and in commit
order (see storage/postgres/memory.py), and the feed remembers the last one
it applied per tenant. A notification further ahead than the next number
(or a reconnect after the listening connection was lost, or a local queue
overflow) makes it read the missing rows from `memory_vector_changes`
before going on. LISTEN is issued before the log is read, so a change
commits either before the read (and is in the log) or after LISTEN (and is
notified). If rows were pruned before a replica read them (it was away for
longer than `retention_seconds`), it rebuilds, from the store, each index
it holds of a user of that tenant who still has episodes (`attach` gives
it the indexes). A user whose episodes were all deleted meanwhile keeps
stale keys in that replica's index until its next rebuild; recall drops
them (no episode is found for them), so they cost ranking slots, not
correctness.

After a restart a replica does not replay the log from where it stopped:
with an index directory, `memory.start()` loads each saved index and brings
it up to date by comparing its keys with the store's (VectorIndexes), which
covers whatever the replica missed while down, even past the log's
retention; changes committed after LISTEN arrive here as usual and are
queued until the load ends.

Wiring (the feed must listen before the indexes are built):

    store = PostgresMemoryStore(db)                 # db: the started PostgresStorage
    feed = PostgresChangeFeed(store, dsn)
    memory = MemoryApp(..., store=store, feed=feed, index_dir=...)
    feed.attach(memory.indexes)
    await feed.start()                              # migrates the store, listens
    await memory.start()                            # loads or builds the indexes
    ...
    await memory.stop(); await feed.close(); await store.close()
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from statekeeper.core.errors import FailedPreconditionError, StorageUnavailableError
from statekeeper.core.memory.vector_index import (
    ChangeHandler,
    IndexEntry,
    VectorChange,
    VectorIndexes,
)
from statekeeper.logs import redact
from statekeeper.storage.postgres.memory import (
    CHANGE_CHANNEL,
    OP_ERASE,
    OP_ERASED,
    OP_REMOVE,
    PostgresMemoryStore,
    VectorChangeRow,
)

log = logging.getLogger(__name__)

# Failures of the listening connection or of a read that make the feed
# reconnect and catch up from the log.
_LOST = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.CannotConnectNowError,
    StorageUnavailableError,
)
_CATCH_UP_PAGE = 1000
_QUEUE_LIMIT = 10_000
_PRUNE_BATCH = 10_000
_PRUNE_BATCHES = 100  # per interval: up to a million rows
_REBUILD_ATTEMPTS = 50  # x 0.1 s: how long a gap rebuild waits for a running one


@dataclass(frozen=True)
class _Note:
    """One notification: the change row, or just its (tenant, seq) when the
    payload was too long to carry the rest (`row` None)."""

    tenant: str
    seq: int
    origin: str
    row: VectorChangeRow | None


class _ListenerLostError(Exception):
    """The listening connection is gone (or the local queue overflowed)."""


class PostgresChangeFeed:
    """Vector changes between replicas through one PostgreSQL database."""

    def __init__(
        self,
        store: PostgresMemoryStore,
        dsn: str,
        *,
        retention_seconds: float = 86_400.0,
        keepalive_seconds: float = 5.0,
        reconnect_initial_seconds: float = 0.05,
        reconnect_max_seconds: float = 5.0,
        prune_interval_seconds: float = 300.0,
        connect_timeout: float = 5.0,
    ) -> None:
        self._store = store
        self._dsn = dsn
        self._retention = retention_seconds
        self._keepalive = keepalive_seconds
        self._reconnect_initial = reconnect_initial_seconds
        self._reconnect_max = reconnect_max_seconds
        self._prune_interval = prune_interval_seconds
        self._connect_timeout = connect_timeout
        self._handlers: list[ChangeHandler] = []
        self._indexes: VectorIndexes | None = None
        self._seen: dict[str, int] = {}  # tenant -> last applied seq
        self._queue: asyncio.Queue[_Note | None] = asyncio.Queue(_QUEUE_LIMIT)
        self._overflowed = False
        self._conn: asyncpg.Connection[asyncpg.Record] | None = None
        self._task: asyncio.Task[None] | None = None
        self._pruner: asyncio.Task[None] | None = None
        self.reconnects = 0  # reconnects that completed their catch-up (tests, metrics)

    # ----- ChangeFeed ----------------------------------------------------------

    def subscribe(self, handler: ChangeHandler) -> Callable[[], None]:
        self._handlers.append(handler)
        return lambda: self._handlers.remove(handler)

    async def publish(self, change: VectorChange) -> None:
        """Delivers to this process's subscribers. Other replicas hear of
        the change from the store's transaction (see the module doc)."""
        self._emit(change)

    def attach(self, indexes: VectorIndexes) -> None:
        """Lets the feed skip changes of users this replica has no index for
        (no read at all), and rebuild a tenant's indexes when the log no
        longer holds what it missed. Without it every change is read."""
        self._indexes = indexes

    # ----- lifecycle ---------------------------------------------------------

    async def start(self) -> None:
        """Migrates the store's schema if needed (the log must exist),
        listens, notes every tenant's current sequence number (the indexes
        built after this read the store, which has those changes), and
        starts the receiving and pruning tasks. Raises
        StorageUnavailableError if PostgreSQL cannot be reached."""
        if self._task is not None:
            return
        await self._store.start()
        try:
            conn = await self._listen()
        except _LOST as exc:
            raise StorageUnavailableError(
                f"the memory change feed cannot listen on PostgreSQL: {exc}"
            ) from exc
        try:
            self._seen = await self._store.change_heads()
        except BaseException:
            await self._drop(conn)
            raise
        self._task = asyncio.create_task(self._run(conn), name="memory-change-feed")
        self._pruner = asyncio.create_task(self._prune_forever(), name="memory-change-prune")

    async def close(self) -> None:
        tasks = [t for t in (self._task, self._pruner) if t is not None]
        self._task = self._pruner = None
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._conn is not None:
            await self._drop(self._conn)

    @property
    def listening(self) -> bool:
        """True while the listening connection is up."""
        return self._conn is not None and not self._conn.is_closed()

    def seen(self, tenant: str) -> int:
        """The last sequence number of `tenant` this replica applied."""
        return self._seen.get(tenant, 0)

    # ----- the receiving task --------------------------------------------------

    async def _run(self, conn: asyncpg.Connection[asyncpg.Record] | None) -> None:
        """Receives until closed; on any loss, reconnects with capped
        exponential backoff and catches up from the log."""
        delay = self._reconnect_initial
        while True:
            try:
                if conn is None:
                    conn = await self._listen()
                    await self._resync()
                    self.reconnects += 1
                    log.info("memory change feed reconnected and caught up")
                delay = self._reconnect_initial
                await self._pump(conn)
            except (*_LOST, _ListenerLostError) as exc:
                log.warning(
                    "memory change feed lost PostgreSQL; reconnecting",
                    extra={"error": f"{type(exc).__name__}: {exc}", "retry_in_s": delay},
                )
            except Exception:
                # Not a connection problem, but the feed must outlive it: the
                # reconnect catches up from the log, so nothing is skipped.
                log.exception(
                    "memory change feed failed; restarting it", extra={"retry_in_s": delay}
                )
            if conn is not None:
                await self._drop(conn)
                conn = None
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._reconnect_max)

    async def _listen(self) -> asyncpg.Connection[asyncpg.Record]:
        """A new connection listening on the channel; its notifications go
        to a fresh queue (anything queued from a lost one is stale)."""
        conn: asyncpg.Connection[asyncpg.Record] = await asyncpg.connect(
            self._dsn,
            timeout=self._connect_timeout,
            command_timeout=self._keepalive * 2,
            server_settings={"application_name": "statekeeper-memory-feed"},
        )
        queue: asyncio.Queue[_Note | None] = asyncio.Queue(_QUEUE_LIMIT)
        try:
            await conn.add_listener(CHANGE_CHANNEL, self._receiver(queue))
        except BaseException:
            await conn.close()
            raise

        def terminated(_conn: object) -> None:
            _offer(queue, None)  # wakes the pump at once

        conn.add_termination_listener(terminated)
        self._queue, self._conn, self._overflowed = queue, conn, False
        log.info("memory change feed listening", extra={"dsn": redact(self._dsn)})
        return conn

    def _receiver(self, queue: asyncio.Queue[_Note | None]) -> Callable[..., None]:
        def receive(_conn: object, _pid: int, _channel: str, payload: str) -> None:
            note = _parse(payload)
            if note is None:
                log.error("unreadable memory change notification", extra={"payload": payload})
            elif not _offer(queue, note):
                self._overflowed = True  # caught up from the log by the pump

        return receive

    async def _drop(self, conn: asyncpg.Connection[asyncpg.Record]) -> None:
        if self._conn is conn:
            self._conn = None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.close(), timeout=self._connect_timeout)

    async def _pump(self, conn: asyncpg.Connection[asyncpg.Record]) -> None:
        """Applies notifications in order; when idle, checks the connection
        (a silent network loss is otherwise never noticed)."""
        while True:
            if self._overflowed:
                raise _ListenerLostError("more notifications than the local queue holds")
            try:
                note = await asyncio.wait_for(self._queue.get(), timeout=self._keepalive)
            except TimeoutError:
                await conn.fetchval("SELECT 1", timeout=self._keepalive)
                continue
            if note is None:
                raise _ListenerLostError("the listening connection was closed")
            await self._deliver(note)

    # ----- applying changes --------------------------------------------------

    async def _deliver(self, note: _Note) -> None:
        """Applies one notified change, after any the tenant missed."""
        last = self._seen.get(note.tenant, 0)
        if note.seq <= last:
            return  # already applied (caught up from the log)
        if note.row is None or note.seq > last + 1:
            # Missed changes before it, or its keys did not fit the payload:
            # the log has them all, in order.
            await self._catch_up(note.tenant, note.seq)
            return
        if note.origin != self._store.origin:
            await self._apply(note.row)
        self._seen[note.tenant] = note.seq

    async def _resync(self) -> None:
        """After a reconnect: every tenant's changes since the last applied."""
        for tenant, head in sorted((await self._store.change_heads()).items()):
            if head > self._seen.get(tenant, 0):
                await self._catch_up(tenant, head)

    async def _catch_up(self, tenant: str, upto: int) -> None:
        """Applies the tenant's logged changes after the last applied one, up
        to `upto`; rebuilds its indexes if the log lost some of them."""
        if upto > self._seen.get(tenant, 0) + 1:  # more than one over-long payload
            log.info(
                "memory change feed catching up",
                extra={"tenant": tenant, "from_seq": self._seen.get(tenant, 0), "to_seq": upto},
            )
        pages = (upto - self._seen.get(tenant, 0)) // _CATCH_UP_PAGE + 2
        for _ in range(pages):  # bounded: each page advances by at least one row
            last = self._seen.get(tenant, 0)
            if last >= upto:
                return
            page = await self._store.changes_after(tenant, last, _CATCH_UP_PAGE)
            rows = [r for r in page if r.seq <= upto]
            if not rows or rows[0].seq != last + 1:
                await self._rebuild_tenant(tenant, last, upto)
                self._seen[tenant] = upto
                return
            for row in rows:
                if row.origin != self._store.origin:
                    await self._apply(row)
                self._seen[tenant] = row.seq

    async def _apply(self, row: VectorChangeRow) -> None:
        """Makes the subscribers' view of `row.keys` match the store."""
        if row.op == OP_ERASED:
            return  # a row of an erased user, blanked
        if row.op == OP_ERASE:  # EraseUser: drop whichever index holds the keys
            if self._indexes is not None:
                self._indexes.forget_keys(row.tenant, row.keys)
            return
        if self._indexes is not None and self._indexes.stats(row.tenant, row.user_id) is None:
            return  # no index of that user here: a later load reads the store
        if row.op == OP_REMOVE:  # keys are never reused: nothing to read
            self._emit(VectorChange(row.tenant, row.user_id, removed=row.keys))
            return
        episodes = await self._store.get_episodes_by_keys(row.tenant, row.user_id, row.keys, True)
        entries = tuple(
            IndexEntry(e.vector_key, e.importance, e.occur_time, e.embedding)
            for e in episodes
            if e.embedding is not None
        )
        present = {entry.key for entry in entries}
        models = [e.embedding_model for e in episodes if e.embedding_model]
        self._emit(
            VectorChange(
                row.tenant,
                row.user_id,
                upserts=entries,
                removed=tuple(k for k in row.keys if k not in present),
                embedding_model=models[-1] if models else "",
            )
        )

    def _emit(self, change: VectorChange) -> None:
        for handler in list(self._handlers):
            try:
                handler(change)
            except Exception:  # one broken subscriber must not stop the others
                log.exception("vector change handler failed")

    async def _rebuild_tenant(self, tenant: str, last: int, upto: int) -> None:
        """The log no longer has changes this replica missed: rebuild, from
        the store, each index of the tenant that this replica holds."""
        log.warning(
            "memory change log pruned past this replica's position; rebuilding the tenant's"
            " indexes",
            extra={"tenant": tenant, "last_seq": last, "head_seq": upto},
        )
        indexes = self._indexes
        if indexes is None:
            log.error("memory change feed has no indexes attached; cannot rebuild")
            return
        for user_id in await self._store.users(tenant):
            if indexes.stats(tenant, user_id) is not None:
                await _rebuild_user(indexes, tenant, user_id)

    async def _prune_forever(self) -> None:
        """Every `prune_interval_seconds`, deletes change rows older than the
        retention, in bounded batches (every replica does; it is idempotent).
        A failure is logged and retried at the next interval."""
        while True:
            await asyncio.sleep(self._prune_interval)
            pruned = 0
            try:
                for _ in range(_PRUNE_BATCHES):
                    batch = await self._store.prune_changes(self._retention, _PRUNE_BATCH)
                    pruned += batch
                    if batch < _PRUNE_BATCH:
                        break
            except StorageUnavailableError as exc:
                log.warning("could not prune the memory change log", extra={"error": str(exc)})
            if pruned:
                log.info("pruned memory change log", extra={"rows": pruned})


async def _rebuild_user(indexes: VectorIndexes, tenant: str, user_id: str) -> None:
    """Rebuilds one index, waiting (bounded) for a rebuild already running:
    that one may have read the store before the missed changes."""
    for _ in range(_REBUILD_ATTEMPTS):
        try:
            await indexes.rebuild(tenant, user_id)
            return
        except FailedPreconditionError:
            await asyncio.sleep(0.1)
    log.error("could not rebuild a vector index", extra={"tenant": tenant, "user_id": user_id})


def _offer(queue: asyncio.Queue[_Note | None], item: _Note | None) -> bool:
    try:
        queue.put_nowait(item)
    except asyncio.QueueFull:
        return False
    return True


def _parse(payload: str) -> _Note | None:
    """A notification payload (see postgres_memory._LOG_CHANGE), or None."""
    try:
        data = json.loads(payload)
        tenant, seq, origin = str(data["t"]), int(data["s"]), str(data["r"])
        row = None
        if "k" in data:
            keys: Sequence[Any] = data["k"] or ()
            row = VectorChangeRow(
                tenant, seq, str(data["u"]), str(data["o"]), tuple(int(k) for k in keys), origin
            )
        return _Note(tenant, seq, origin, row)
    except (ValueError, KeyError, TypeError):
        return None
