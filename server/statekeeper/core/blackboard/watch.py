"""Watch: a per-replica hub that fans committed revisions out to watchers.

How a watch stays gap-free:

1. The watcher registers with the hub of its tenant and learns H, the last
   revision the hub has dispatched. From then on the hub puts every
   matching batch above H in the watcher's bounded queue.
2. The watcher replays revisions [start, H] from the store's history (and
   the snapshot first, if asked), then drains its queue.
3. The hub dispatches each tenant's revisions strictly in order, each once.
   A batch that arrives out of order or after a hole (a production feed can
   lose a publish when a replica crashes) makes the hub fetch the missing
   revisions from the store first; a periodic check of the store revision
   repairs a lost tail. Every revision of the tenant passes through the
   hub, so its `last_revision` is a valid progress bookmark.
4. A watcher whose queue is full is dropped from the hub and its stream ends
   with SLOW_CONSUMER and the revision to resume from: never a silent gap.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

from statekeeper.core.blackboard.keys import KeyMatcher
from statekeeper.core.blackboard.models import (
    BlackboardLimits,
    Entry,
    Event,
    EventType,
    Header,
    RevisionBatch,
    RevisionCompactedError,
    SlowConsumerError,
)
from statekeeper.core.blackboard.store import ArchivedHistory, BlackboardStore
from statekeeper.core.errors import (
    InvalidArgumentError,
    LimitExceededError,
    StatekeeperError,
    StorageUnavailableError,
)

log = logging.getLogger(__name__)

# Revisions fetched per store call while catching up or repairing.
HISTORY_PAGE_REVISIONS = 500


@dataclass(frozen=True)
class WatchSpec:
    """A validated Watch request."""

    board: str
    matcher: KeyMatcher
    start_revision: int = 0
    initial_snapshot: bool = False
    prev_value: bool = False
    progress_interval: float | None = None
    event_types: frozenset[EventType] = frozenset(EventType)


class WatchMessageKind(enum.Enum):
    STARTED = "started"
    EVENTS = "events"
    PROGRESS = "progress"
    SNAPSHOT_BEGIN = "snapshot_begin"
    SNAPSHOT_CHUNK = "snapshot_chunk"
    SNAPSHOT_END = "snapshot_end"


@dataclass(frozen=True)
class WatchMessage:
    """One message of a Watch stream. `revision` is the started, progress or
    snapshot revision; `resume_revision` resumes right after this message
    (0 inside a snapshot)."""

    kind: WatchMessageKind
    header: Header
    resume_revision: int
    revision: int = 0
    events: tuple[Event, ...] = ()
    entries: tuple[Entry, ...] = ()
    entry_count: int = 0


class LiveSender(Protocol):
    """The transport of one watch, able to take a live message at once.

    While the stream waits for events, the hub's dispatch hands it each
    event message directly when it has no write in flight: the watcher's
    own task is not woken for it, so one commit reaches every idle watcher
    in one pass of the event loop. A sender with a write in flight says so
    (`idle` False) and the message goes through the queue and the stream,
    behind it: order is kept."""

    def idle(self) -> bool: ...

    def send(self, message: WatchMessage) -> None: ...


@dataclass(eq=False)
class _Watcher:
    """A registered watcher: its filter and its bounded queue."""

    board: str
    matcher: KeyMatcher
    event_types: frozenset[EventType]
    prev_value: bool
    capacity: int
    queue: deque[RevisionBatch] = field(default_factory=deque)
    # The future its stream awaits while the queue is empty (None while the
    # stream runs): a bare future, resolved by the hub's dispatch, is the
    # cheapest wake-up the event loop has (no Event, no wait_for layers).
    waiter: asyncio.Future[None] | None = None
    # Set while the stream waits and its transport can take a batch at
    # once (LiveSender); True when it took it.
    direct: Callable[[RevisionBatch], bool] | None = None
    failure: StatekeeperError | None = None
    overflowed: bool = False

    def select(
        self, batch: RevisionBatch, stripped: RevisionBatch | None = None
    ) -> RevisionBatch | None:
        """The part of `batch` this watcher wants, or None. `stripped` is
        `batch` without previous entries, when the caller has it. When the
        watcher wants all of it, the very batch object is returned, so that
        watchers with the same view share it (and its serialization)."""
        if batch.board != self.board:
            return None
        if not self.prev_value:
            batch = stripped if stripped is not None else without_previous(batch)
        events = batch.events
        types, matches = self.event_types, self.matcher.matches
        wanted = [e for e in events if e.type in types and matches(e.key)]
        if not wanted:
            return None
        return batch if len(wanted) == len(events) else replace(batch, events=tuple(wanted))

    def offer(self, batch: RevisionBatch, stripped: RevisionBatch | None = None) -> bool:
        """Queues the wanted part of `batch`; False if the queue is full."""
        wanted = self.select(batch, stripped)
        if wanted is None:
            return True
        if self.direct is not None and not self.queue and self.direct(wanted):
            return True
        if len(self.queue) >= self.capacity:
            self.overflowed = True
            self.wake()
            return False
        self.queue.append(wanted)
        self.wake()
        return True

    def fail(self, error: StatekeeperError) -> None:
        self.failure = error
        self.wake()

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


@dataclass(eq=False)
class _TenantHub:
    """Dispatch state of one tenant on this replica."""

    tenant: str
    ready: asyncio.Future[None]
    last_revision: int = -1
    oldest_revision: int = 1
    watchers: dict[str, set[_Watcher]] = field(default_factory=dict)
    backlog: list[RevisionBatch] = field(default_factory=list)
    repair: asyncio.Task[None] | None = None
    lagging_target: int = 0
    # The last live message handed to a watcher directly: the watchers of
    # one dispatch that want the same events share it (one message object,
    # one header, and one serialization in the transport's cache).
    live_message: WatchMessage | None = None

    @property
    def watcher_count(self) -> int:
        return sum(len(group) for group in self.watchers.values())

    @property
    def header(self) -> Header:
        return Header(self.last_revision, self.oldest_revision)

    def events_message(self, events: tuple[Event, ...]) -> WatchMessage:
        """The live message of `events` with the hub's current header (what
        _WatchStream._events_message builds), shared while it stays the same."""
        last = events[-1].revision
        revision = max(self.last_revision, last)
        message = self.live_message
        if (
            message is not None
            and message.events is events
            and message.header.revision == revision
            and message.header.oldest_revision == self.oldest_revision
        ):
            return message
        header = Header(revision, self.oldest_revision)
        message = WatchMessage(WatchMessageKind.EVENTS, header, last + 1, events=events)
        self.live_message = message
        return message


class WatchHub:
    """Fans committed revisions out to the watchers of this replica."""

    def __init__(self, store: BlackboardStore, limits: BlackboardLimits) -> None:
        self._store = store
        self._limits = limits
        self._tenants: dict[str, _TenantHub] = {}
        self._unlisten: Callable[[], None] | None = None
        self._checker: asyncio.Task[None] | None = None
        self._closed = False
        # Open watches over every tenant, kept up to date on the event loop
        # at each change: the metrics thread reads this int and never walks
        # the dicts the loop is resizing.
        self.open_watches = 0
        # Archived history (core/archive/blackboard.py): a watch may start
        # below the oldest hot revision; its replay reads the archive first.
        self.archived: ArchivedHistory | None = None

    async def start(self) -> None:
        self._closed = False
        self._unlisten = self._store.feed.listen(self._on_batch)
        self._checker = asyncio.create_task(self._check_forever(), name="watch-feed-check")

    async def stop(self) -> None:
        self._closed = True
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        tasks = [t for t in (self._checker, *(h.repair for h in self._tenants.values())) if t]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._checker = None
        shutting_down = StorageUnavailableError("the server is shutting down; resume the watch")
        for hub in list(self._tenants.values()):
            for watcher in _all_watchers(hub):
                watcher.fail(shutting_down)
        self._tenants.clear()
        self.open_watches = 0

    def watcher_count(self, tenant: str) -> int:
        hub = self._tenants.get(tenant)
        return hub.watcher_count if hub else 0

    # ----- registration ------------------------------------------------------

    async def _register(self, tenant: str, watcher: _Watcher) -> _TenantHub:
        hub = await self._ready_hub(tenant)
        if hub.watcher_count >= self._limits.max_watches_per_tenant:
            raise LimitExceededError(
                "board", self._limits.max_watches_per_tenant, "the tenant has too many open watches"
            )
        group = hub.watchers.setdefault(watcher.board, set())
        if watcher not in group:
            group.add(watcher)
            self.open_watches += 1
        return hub

    async def _ready_hub(self, tenant: str) -> _TenantHub:
        """The tenant's hub, initialized; created on first use."""
        for _ in range(10):  # bounded: only a cancelled initializer makes us retry
            if self._closed:
                raise StorageUnavailableError("the server is shutting down")
            hub = self._tenants.get(tenant)
            if hub is None:
                hub = _TenantHub(tenant, asyncio.get_running_loop().create_future())
                self._tenants[tenant] = hub
                self._store.feed.track(tenant)
                await self._initialize(hub)
                return hub
            try:
                await asyncio.shield(hub.ready)
                return hub
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if not hub.ready.cancelled() or (current is not None and current.cancelling()):
                    raise
                # The watcher that was initializing this hub went away: retry.
        raise StorageUnavailableError("the watch hub cannot start; retry the watch")

    async def _initialize(self, hub: _TenantHub) -> None:
        """Learns the store revision; batches that arrive meanwhile wait in
        the backlog (those at or below it are already in the store)."""
        try:
            header = await self._store.header(hub.tenant)
        except BaseException as exc:
            self._drop_tenant(hub)
            if isinstance(exc, asyncio.CancelledError):
                hub.ready.cancel()
            else:
                hub.ready.set_exception(exc)
                hub.ready.exception()  # retrieved: no warning when nobody waits
            raise
        hub.last_revision = header.revision
        hub.oldest_revision = header.oldest_revision
        hub.ready.set_result(None)
        self._drain_backlog(hub)

    def _unregister(self, tenant: str, watcher: _Watcher) -> None:
        hub = self._tenants.get(tenant)
        if hub is None:
            return
        group = hub.watchers.get(watcher.board)
        if group is not None:
            if watcher in group:
                group.discard(watcher)
                self.open_watches -= 1
            if not group:
                del hub.watchers[watcher.board]
        if not hub.watchers and hub.ready.done():
            self._drop_tenant(hub)

    def _drop_tenant(self, hub: _TenantHub) -> None:
        if self._tenants.get(hub.tenant) is hub:
            del self._tenants[hub.tenant]
            self._store.feed.untrack(hub.tenant)
        if hub.repair is not None:
            hub.repair.cancel()

    # ----- dispatch ------------------------------------------------------------

    def _on_batch(self, batch: RevisionBatch) -> None:
        hub = self._tenants.get(batch.tenant)
        if hub is None:
            return
        if not hub.ready.done() or hub.repair is not None or hub.backlog:
            hub.backlog.append(batch)
            self._drain_backlog(hub)
            return
        if batch.revision <= hub.last_revision:
            return  # a duplicate, or repaired from the store already
        if batch.revision == hub.last_revision + 1:
            self._dispatch(hub, batch)
            return
        hub.backlog.append(batch)
        self._drain_backlog(hub)

    def _dispatch(self, hub: _TenantHub, batch: RevisionBatch) -> None:
        hub.last_revision = batch.revision
        group = hub.watchers.get(batch.board)
        if not group:
            return
        # Stripped once per dispatch: the watchers without prev_value share it.
        stripped = without_previous(batch)
        for watcher in list(group):
            if not watcher.offer(batch, stripped):
                # Dropped from the hub now, so the queue stops growing; the
                # stream ends with SLOW_CONSUMER when it next runs.
                group = hub.watchers[batch.board]
                if watcher in group:
                    group.discard(watcher)
                    self.open_watches -= 1

    def _drain_backlog(self, hub: _TenantHub) -> None:
        """Dispatches what the backlog holds in order; starts a repair from
        the store if a revision is missing."""
        if not hub.ready.done() or hub.repair is not None:
            return
        hub.backlog.sort(key=lambda b: b.revision)
        while hub.backlog:
            batch = hub.backlog[0]
            if batch.revision <= hub.last_revision:
                hub.backlog.pop(0)
            elif batch.revision == hub.last_revision + 1:
                hub.backlog.pop(0)
                self._dispatch(hub, batch)
            else:
                self._start_repair(hub, batch.revision - 1)
                return

    def _start_repair(self, hub: _TenantHub, through: int) -> None:
        hub.repair = asyncio.create_task(self._repair(hub, through), name="watch-repair")

    async def _repair(self, hub: _TenantHub, through: int) -> None:
        """Fetches revisions (last, through] from the store and dispatches them."""
        try:
            while hub.last_revision < through:
                batches = await self._store.history(
                    hub.tenant,
                    None,
                    hub.last_revision + 1,
                    through,
                    HISTORY_PAGE_REVISIONS,
                    with_previous=True,
                )
                for batch in batches:
                    if batch.revision > hub.last_revision:
                        self._dispatch(hub, batch)
                if len(batches) < HISTORY_PAGE_REVISIONS:
                    # Revisions of no board (none exist today) still count.
                    hub.last_revision = max(hub.last_revision, through)
        except StatekeeperError as exc:
            log.warning("watch hub cannot repair its feed", extra={"tenant": hub.tenant})
            for watcher in _all_watchers(hub):
                watcher.fail(exc)
            self.open_watches -= hub.watcher_count
            hub.watchers.clear()
        finally:
            hub.repair = None
        self._drain_backlog(hub)

    async def _check_forever(self) -> None:
        """Repairs a lost tail: a store revision the feed has not delivered
        across two checks is fetched from the store."""
        while True:
            await asyncio.sleep(self._limits.feed_check_interval_seconds)
            for hub in list(self._tenants.values()):
                try:
                    await self._check(hub)
                except StatekeeperError:
                    log.warning("watch hub feed check failed", extra={"tenant": hub.tenant})

    async def _check(self, hub: _TenantHub) -> None:
        if not hub.ready.done() or hub.repair is not None:
            return
        header = await self._store.header(hub.tenant)
        hub.oldest_revision = header.oldest_revision
        behind = header.revision > hub.last_revision
        if behind and hub.lagging_target and hub.lagging_target > hub.last_revision:
            self._start_repair(hub, hub.lagging_target)
        hub.lagging_target = header.revision if behind else 0

    # ----- the stream ----------------------------------------------------------

    def watch(
        self, tenant: str, spec: WatchSpec, sender: LiveSender | None = None
    ) -> AsyncGenerator[WatchMessage, None]:
        """The messages of one watch. The watcher registers when the stream
        is first read and leaves when it ends. With a `sender`, live event
        messages may go to it directly instead (see LiveSender)."""
        watcher = _Watcher(
            board=spec.board,
            matcher=spec.matcher,
            event_types=spec.event_types,
            prev_value=spec.prev_value,
            capacity=self._limits.watch_buffer_responses,
        )
        stream = _WatchStream(self, tenant, spec, watcher)
        stream.archived = self.archived
        stream.sender = sender
        return stream.run()


def without_previous(batch: RevisionBatch) -> RevisionBatch:
    """`batch` with no previous entries (`batch` itself if it has none)."""
    if all(event.previous is None for event in batch.events):
        return batch
    return replace(batch, events=tuple(replace(e, previous=None) for e in batch.events))


def _chunks(entries: list[Entry], max_bytes: int) -> Iterable[list[Entry]]:
    """Splits entries into runs of at most `max_bytes` (an entry bigger than
    that goes alone)."""
    chunk: list[Entry] = []
    size = 0
    for entry in entries:
        if chunk and size + entry.size_bytes > max_bytes:
            yield chunk
            chunk, size = [], 0
        chunk.append(entry)
        size += entry.size_bytes
    if chunk:
        yield chunk


def _all_watchers(hub: _TenantHub) -> Iterable[_Watcher]:
    return [watcher for group in hub.watchers.values() for watcher in group]


class _WatchStream:
    """One watcher's stream: started, snapshot, catch-up, then live events
    and progress."""

    def __init__(self, owner: WatchHub, tenant: str, spec: WatchSpec, watcher: _Watcher) -> None:
        self._owner = owner
        self._store = owner._store
        self._limits = owner._limits
        self._tenant = tenant
        self._spec = spec
        self._watcher = watcher
        self._hub: _TenantHub  # set by run(), at registration
        self._caught_up_through = 0
        self._next = 0
        self._quiet_since = 0.0
        self.archived: ArchivedHistory | None = None
        self.sender: LiveSender | None = None

    async def run(self) -> AsyncGenerator[WatchMessage, None]:
        """The whole stream in one generator: live messages, the many, cross
        a single generator frame on their way to the transport."""
        hub = await self._owner._register(self._tenant, self._watcher)
        try:
            # Registration and reading H happen in one step of the event
            # loop: the queue holds exactly the revisions above H.
            self._hub = hub
            self._caught_up_through = hub.last_revision
            self._next = self._spec.start_revision or hub.last_revision + 1
            async for message in self._opening():
                yield message
            loop = asyncio.get_running_loop()
            interval = self._spec.progress_interval
            self._quiet_since = loop.time()
            while True:
                self._raise_if_failed()
                batches = self._take_queued()
                if batches:
                    for message in self._event_messages(batches):
                        yield message
                    self._quiet_since = loop.time()
                    continue
                timeout = None
                if interval is not None:
                    timeout = self._quiet_since + interval - loop.time()
                if timeout is not None and timeout <= 0:
                    yield self._progress()
                    self._quiet_since = loop.time()
                    continue
                await self._wait(timeout)
        finally:
            self._owner._unregister(self._tenant, self._watcher)

    async def _opening(self) -> AsyncIterator[WatchMessage]:
        """Started, the snapshot if asked, then the catch-up from the store."""
        start = self._next
        oldest = self._hub.oldest_revision
        if start <= oldest - 1 and self._spec.start_revision:
            if self.archived is None:
                raise RevisionCompactedError(start, oldest)
            # Raises now (before STARTED) when no archived range holds it.
            await self.archived.history(self._tenant, self._spec.board, start, start, False, oldest)
        yield WatchMessage(WatchMessageKind.STARTED, self._header(), start, revision=start)
        if self._spec.initial_snapshot:
            async for message in self._snapshot(start - 1):
                yield message
        async for message in self._catch_up():
            yield message

    def _header(self, revision: int = 0) -> Header:
        return Header(max(self._hub.last_revision, revision), self._hub.oldest_revision)

    async def _snapshot(self, revision: int) -> AsyncIterator[WatchMessage]:
        if revision > self._caught_up_through:
            raise InvalidArgumentError(
                "start_revision",
                f"a snapshot needs a committed revision; the current one is"
                f" {self._caught_up_through}",
            )
        yield WatchMessage(WatchMessageKind.SNAPSHOT_BEGIN, self._header(), 0, revision=revision)
        count = 0
        after: str | None = None
        while True:
            entries = await self._snapshot_page(revision, after)
            count += len(entries)
            for chunk in _chunks(entries, self._limits.max_response_bytes):
                after = chunk[-1].key
                yield WatchMessage(
                    WatchMessageKind.SNAPSHOT_CHUNK, self._header(), 0, entries=tuple(chunk)
                )
            if len(entries) < self._limits.snapshot_chunk_entries:
                break
        yield WatchMessage(
            WatchMessageKind.SNAPSHOT_END,
            self._header(),
            revision + 1,
            revision=revision,
            entry_count=count,
        )

    async def _snapshot_page(self, revision: int, after: str | None) -> list[Entry]:
        """One page of the snapshot, from the archive below the hot history."""
        size = self._limits.snapshot_chunk_entries
        try:
            page = await self._store.list_entries(
                self._tenant, self._spec.board, self._spec.matcher, revision, None, after, size
            )
            return page.entries
        except RevisionCompactedError as error:
            if self.archived is None:
                raise
            return await self.archived.list_entries(
                self._tenant,
                self._spec.board,
                self._spec.matcher,
                revision,
                after,
                size,
                error.oldest_revision,
                snapshot=True,
            )

    def _archived_through(self, error: RevisionCompactedError, target: int) -> int:
        """The last revision the archive can replay from `next` on (at most
        a page, never into the hot history), or raises `error`."""
        through = min(target, error.oldest_revision - 1, self._next + HISTORY_PAGE_REVISIONS - 1)
        if self.archived is None or through < self._next:
            raise error
        return through

    async def _catch_up(self) -> AsyncIterator[WatchMessage]:
        """Replays [next, H] from the store's history (archived history
        first, when `next` is below the oldest hot revision)."""
        target = self._caught_up_through
        while self._next <= target:
            self._raise_if_failed()
            try:
                batches = await self._store.history(
                    self._tenant,
                    self._spec.board,
                    self._next,
                    target,
                    HISTORY_PAGE_REVISIONS,
                    self._spec.prev_value,
                )
            except RevisionCompactedError as error:
                through = self._archived_through(error, target)
                assert self.archived is not None
                archived = await self.archived.history(
                    self._tenant,
                    self._spec.board,
                    self._next,
                    through,
                    self._spec.prev_value,
                    error.oldest_revision,
                )
                wanted = [w for w in map(self._watcher.select, archived) if w is not None]
                for message in self._event_messages(wanted):
                    yield message
                self._next = max(self._next, through + 1)
                continue
            wanted = [w for w in map(self._watcher.select, batches) if w is not None]
            for message in self._event_messages(wanted):
                yield message
            if len(batches) < HISTORY_PAGE_REVISIONS:
                break
            self._next = batches[-1].revision + 1
        self._next = max(self._next, target + 1)

    async def _wait(self, timeout: float | None) -> None:
        """Waits for the hub's next offer (or failure), or `timeout`."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        watcher = self._watcher
        watcher.waiter = waiter
        if self.sender is not None:
            watcher.direct = self._send_directly
        try:
            if timeout is None:
                await waiter
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter, timeout)
        finally:
            watcher.waiter = None
            watcher.direct = None

    def _send_directly(self, batch: RevisionBatch) -> bool:
        """Hands `batch` (the queue is empty) to the transport from the hub's
        dispatch, if it can take it now; True when handled."""
        sender = self.sender
        watcher = self._watcher
        if sender is None or watcher.failure is not None or watcher.overflowed:
            return False
        if batch.revision < self._next:
            return True  # delivered already (by the catch-up)
        if not sender.idle():
            return False
        message = self._hub.events_message(batch.events)
        try:
            sender.send(message)
        except Exception:
            # Queued instead: the stream's own task meets the failure and
            # ends the call, and no other watcher of this dispatch misses it.
            return False
        self._next = message.resume_revision
        self._quiet_since = asyncio.get_running_loop().time()
        return True

    def _take_queued(self) -> list[RevisionBatch]:
        queue = self._watcher.queue
        taken: list[RevisionBatch] = []
        while queue:
            batch = queue.popleft()
            if batch.revision >= self._next:
                taken.append(batch)
        return taken

    def _progress(self) -> WatchMessage:
        # The queue is empty and the hub dispatches in order, so every
        # matching event up to the hub's last revision has been delivered.
        revision = max(self._next - 1, self._hub.last_revision)
        self._next = revision + 1
        return WatchMessage(
            WatchMessageKind.PROGRESS, self._header(), revision + 1, revision=revision
        )

    def _event_messages(self, batches: list[RevisionBatch]) -> Iterable[WatchMessage]:
        """Packs whole revisions into messages of bounded count and size; one
        revision is never split."""
        if len(batches) == 1:
            # The live common case: the message holds the batch's own events
            # tuple, which every watcher of the same view shares (the
            # transport serializes it once for all of them).
            yield self._events_message(batches[0].events)
            return
        limits = self._limits
        pending: list[Event] = []
        size = 0
        for batch in batches:
            batch_size = sum(event.size_bytes for event in batch.events)
            too_many = len(pending) + len(batch.events) > limits.max_events_per_response
            too_big = size + batch_size > limits.max_response_bytes
            if pending and (too_many or too_big):
                yield self._events_message(tuple(pending))
                pending, size = [], 0
            pending.extend(batch.events)
            size += batch_size
        if pending:
            yield self._events_message(tuple(pending))

    def _events_message(self, events: tuple[Event, ...]) -> WatchMessage:
        last = events[-1].revision
        self._next = last + 1
        return WatchMessage(WatchMessageKind.EVENTS, self._header(last), last + 1, events=events)

    def _raise_if_failed(self) -> None:
        watcher = self._watcher
        if watcher.failure is not None:
            raise watcher.failure
        if watcher.overflowed:
            raise SlowConsumerError(self._next, watcher.capacity)
