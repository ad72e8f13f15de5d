"""Cross-replica fan-out over Redis: the blackboard event feed (Redis Streams)
and the message bus wake-ups and reply hand-offs (Redis pub/sub).

Redis only carries signals and copies here. PostgreSQL holds every
blackboard revision and every message before anything is published, so a
lost, flushed or unreachable Redis costs latency, never data:

* `RedisStreamFeed`: after a commit, the store hands the batch to the feed,
  which delivers it to this replica's listeners at once and XADDs it to the
  tenant's stream (`{prefix}:{<tenant>}:bb:feed`, trimmed to about
  `max_stream_length` entries, expiring when idle). One reader task per
  replica XREADs (BLOCK) the streams of the tenants its watch hubs track.
  A batch whose encoding is large is published as a reference (tenant and
  revision only) and read back from PostgreSQL by the readers, so a
  tenant's stream holds at most max_stream_length x inline_limit_bytes
  (32 MiB by default). Readers only need the tail: one that falls further
  behind finds a gap and repairs it from PostgreSQL. While Redis
  cannot be read (or is not configured), the feed polls the store header of
  every tracked tenant and delivers the missing revisions from PostgreSQL
  history. Listeners (the watch hubs) repair any remaining gap themselves,
  by revision, from the store (see core/blackboard/watch.py).
* `RedisInboxNotifier`: a notify wakes this replica's receivers at once and
  is PUBLISHed on one channel that every replica subscribes to. A lost
  wake-up costs at most the message bus's idle poll.
* `RedisReplyWaiters`: a waiting RequestReply is a key
  `{prefix}:{<tenant>}:mb:w:<digest>` holding the id of the replica that
  waits (refreshed while it waits, so a crashed replica's keys expire). A
  reply sent through another replica is offered to that replica over its
  own channel, and the waiter's replica answers whether it took it; no
  answer in time means "not taken", so the reply goes to the inbox (at
  least once, never lost).

Everything here tolerates Redis being down: calls fail fast (short socket
timeouts), each component skips Redis for a second after a failure, logs
once when Redis goes away and once when it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import redis.asyncio as redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from statekeeper.core import observations
from statekeeper.core.blackboard.models import (
    Header,
    RevisionBatch,
)
from statekeeper.core.blackboard.store import BlackboardEventFeed, FeedListener, FeedListeners
from statekeeper.core.errors import StatekeeperError
from statekeeper.storage.redis.codec import (
    decode_batch,
    encode_batch,
)

log = logging.getLogger(__name__)

# What a Redis call raises when Redis cannot serve it.
FAILURES = (redis.RedisError, OSError, TimeoutError)
# Committed batches XADDed in one Redis pipeline at most.
OUTBOX_PIPELINE = 512


def connect(url: str, timeout: float, name: str, read_timeout: float | None = None) -> redis.Redis:
    """A client that fails fast instead of retrying: callers have a
    PostgreSQL fallback and must not stall a request on Redis. `name` shows
    in CLIENT LIST ("<prefix>:<role>")."""
    return redis.Redis.from_url(
        url,
        client_name=name,
        socket_timeout=read_timeout if read_timeout is not None else timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
        retry_on_timeout=False,
    )


class Breaker:
    """Remembers that Redis failed: callers skip it for `pause` seconds, and
    the transitions are logged once each."""

    def __init__(self, what: str, pause: float = 1.0) -> None:
        self._what = what
        self._pause = pause
        self._retry_at = 0.0
        self.down = False

    def allows(self) -> bool:
        return not self.down or time.monotonic() >= self._retry_at

    def failed(self, exc: BaseException) -> None:
        observations.store_error("redis", exc)
        if not self.down:
            log.warning(
                "Redis unavailable for %s (%s: %s); falling back until it answers again",
                self._what,
                type(exc).__name__,
                exc,
            )
        self.down = True
        self._retry_at = time.monotonic() + self._pause

    def succeeded(self) -> None:
        if self.down:
            log.warning("Redis available again for %s", self._what)
        self.down = False


class Background:
    """Fire-and-forget tasks that are kept referenced and cancelled at close."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Any, name: str) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def cancel_all(self) -> None:
        await stop_tasks(self._tasks)


async def stop_tasks(
    tasks: Iterable[asyncio.Task[None] | None],
    interrupt: Callable[[], Awaitable[None]] | None = None,
    timeout: float = 5.0,
) -> None:
    """Cancels `tasks` and waits for them, a bounded while. redis-py can
    lose a cancellation that lands while it reads a blocking command (its
    issues #2028, #2551), so every loop here also stops on its owner's
    `stopping` flag; tasks still running after a moment are `interrupt`ed
    (their connections closed), and this wait never hangs regardless."""
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    if not running:
        return
    _, pending = await asyncio.wait(running, timeout=0.1)
    if pending and interrupt is not None:
        with contextlib.suppress(*FAILURES):
            await interrupt()
    _, pending = await asyncio.wait(running, timeout=timeout)
    if pending:
        log.warning("%d Redis background task(s) did not stop within %.0fs", len(pending), timeout)
    for task in running:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: a failure at shutdown is not news


class HeldConnection:
    """One connection of `client`'s pool, held by a single sender that sends
    one command at a time: the command goes straight through it. redis-py's
    own path checks a connection out of the pool for every command (a lock,
    a readiness probe of the socket, instrumentation, a retry wrapper, the
    check-in), which costs more than the command; a blackboard write waits
    for its XADD to be sent. A command that fails or is cut leaves the
    connection disconnected (redis-py does so) and handed back; the next
    command takes one again."""

    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._connection: Any = None

    async def call(self, *args: Any) -> Any:
        """Sends one command and returns its reply (raises what redis-py
        raises, a reply error included)."""
        connection = self._connection
        if connection is None:
            pool: Any = self._client.connection_pool
            connection = await pool.get_connection()
            self._connection = connection
        try:
            await connection.send_command(*args)
            return await connection.read_response()
        except BaseException:
            await self.release()
            raise

    async def release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.disconnect()
            await self._client.connection_pool.release(connection)


# ----- encodings ---------------------------------------------------------------------


# ----- the blackboard feed -------------------------------------------------------------


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    """A stream entry's fields, from the flat list XREAD replies with."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


class HistorySource(Protocol):
    """What the feed reads from PostgreSQL: the blackboard store itself."""

    async def header(self, tenant: str) -> Header: ...

    async def history(
        self,
        tenant: str,
        board: str | None,
        from_revision: int,
        to_revision: int,
        limit: int,
        with_previous: bool,
    ) -> list[RevisionBatch]: ...


@dataclass
class FeedStats:
    """Counters of one replica's feed (for metrics and tests)."""

    published: int = 0  # batches XADDed
    publish_failures: int = 0  # publish calls that could not reach Redis
    received: int = 0  # other replicas' batches read from Redis
    references: int = 0  # of those, read back from PostgreSQL (too big to inline)
    duplicates: int = 0  # read from Redis but already delivered
    polled: int = 0  # batches delivered from PostgreSQL while Redis could not be read


@dataclass(eq=False)
class _Tracked:
    """A tenant some hub of this replica watches."""

    hubs: int
    since: float  # monotonic time it was first tracked
    stream_id: bytes | None = None  # last stream entry read; None: not read yet


class RedisStreamFeed(BlackboardEventFeed):
    """The production blackboard feed (see the module docstring).

    Delivery to listeners: a batch committed on this replica is delivered
    right after its commit, in this replica's commit order; batches of other
    replicas as the reader gets them, in stream order, each at most once
    (older or repeated revisions of a tenant are dropped). Listeners repair
    gaps from the store.
    """

    def __init__(
        self,
        source: HistorySource,
        redis_url: str | None,
        prefix: str = "sk",
        *,
        max_stream_length: int = 512,
        stream_ttl_seconds: float = 24 * 3600.0,
        inline_limit_bytes: int = 64 * 1024,
        block_seconds: float = 5.0,
        fallback_poll_seconds: float = 0.2,
        timeout_seconds: float = 0.5,
    ) -> None:
        self._source = source
        self._url = redis_url
        self._prefix = prefix
        self._max_length = max_stream_length
        self._ttl_ms = int(stream_ttl_seconds * 1000)
        self._inline_limit = inline_limit_bytes
        self._block_ms = int(block_seconds * 1000)
        self._poll_seconds = fallback_poll_seconds
        self._timeout = timeout_seconds
        self._origin = uuid.uuid4().hex.encode()
        self._wake_key = f"{prefix}:bb:wake:{self._origin.decode()}"
        self._wake_id: bytes = b"0-0"
        self._listeners = FeedListeners()
        self._tracked: dict[str, _Tracked] = {}
        self._delivered: dict[str, int] = {}
        self._ttl_refreshed: dict[str, float] = {}  # tenant -> when to refresh again
        self._client: redis.Redis | None = None
        self._publisher: HeldConnection | None = None  # the sender task's
        self._listening: HeldConnection | None = None  # the reader task's
        self._reader: redis.Redis | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._background = Background()
        self._publishing = Breaker("blackboard feed publishing")
        self._outbox: list[RevisionBatch] = []  # committed, not yet XADDed
        self._sender: asyncio.Task[None] | None = None
        self._reading = Breaker("blackboard feed reading")
        self._stopping = False
        self.stats = FeedStats()

    @property
    def description(self) -> str:
        if self._url is None:
            return "blackboard feed: in process, PostgreSQL polling across replicas (no Redis)"
        return f"blackboard feed: Redis Streams ({self._prefix}:{{<tenant>}}:bb:feed)"

    def stream_key(self, tenant: str) -> str:
        """The tenant's stream; the tenant is the Redis Cluster hash tag."""
        return f"{self._prefix}:{{{tenant}}}:bb:feed"

    async def start(self) -> None:
        if self._url is not None:
            self._client = connect(self._url, self._timeout, f"{self._prefix}:bb-feed")
            self._publisher = HeldConnection(self._client)
            # XREAD BLOCK holds the socket for up to block_seconds.
            self._reader = connect(
                self._url,
                self._timeout,
                f"{self._prefix}:bb-feed-reader",
                self._block_ms / 1000 + 5.0,
            )
            self._tasks.append(asyncio.create_task(self._read_forever(), name="bb-feed-read"))
        self._tasks.append(asyncio.create_task(self._poll_forever(), name="bb-feed-poll"))

    async def close(self) -> None:
        await self._flush_outbox()
        self._stopping = True
        await stop_tasks(self._tasks, self._disconnect_reader)
        self._tasks = []
        await self._background.cancel_all()
        for held in (self._publisher, self._listening):
            if held is not None:
                with contextlib.suppress(*FAILURES):
                    await held.release()
        self._listening = None
        for client in (self._client, self._reader):
            if client is not None:
                with contextlib.suppress(*FAILURES):
                    await client.aclose()
        self._client = self._reader = None

    async def _disconnect_reader(self) -> None:
        if self._reader is not None:
            await self._reader.connection_pool.disconnect()

    # ----- listeners and tracking ---------------------------------------------------

    def listen(self, listener: FeedListener) -> Callable[[], None]:
        return self._listeners.add(listener)

    def track(self, tenant: str) -> None:
        state = self._tracked.get(tenant)
        if state is not None:
            state.hubs += 1
            return
        self._tracked[tenant] = _Tracked(1, time.monotonic())
        self._wake_reader()

    def untrack(self, tenant: str) -> None:
        state = self._tracked.get(tenant)
        if state is None:
            return
        state.hubs -= 1
        if state.hubs <= 0:
            del self._tracked[tenant]
            self._delivered.pop(tenant, None)

    def _deliver(self, batch: RevisionBatch, remote: bool) -> None:
        observations.feed_delivered("blackboard", batch.commit_time, remote)
        last = self._delivered.get(batch.tenant)
        if remote and last is not None and batch.revision <= last:
            # Re-read after a (re)track, or overtaken: the hub has it or repairs it.
            self.stats.duplicates += 1
            return
        if batch.tenant in self._tracked:
            self._delivered[batch.tenant] = max(last or 0, batch.revision)
        self._listeners.call(batch)

    # ----- publishing ---------------------------------------------------------------

    async def publish(self, batches: Sequence[RevisionBatch]) -> None:
        """Called by the store after COMMIT: delivers here at once, and queues
        the XADDs for the other replicas. Never raises: a lost publish is
        repaired by the readers from PostgreSQL.

        The XADDs go out from one sender task, in commit order, a whole
        queue per pipeline: the writer's reply does not wait for Redis (the
        commit is durable, and other replicas' watchers get events
        asynchronously in any case), and neither does the next group commit."""
        for batch in batches:
            self._deliver(batch, remote=False)
        if self._client is None or not batches or not self._publishing.allows():
            return
        self._outbox.extend(batches)
        if self._sender is None:
            self._sender = asyncio.create_task(self._send_outbox(), name="bb-feed-publish")

    async def _send_outbox(self) -> None:
        try:
            while self._outbox and self._client is not None:
                batches = self._outbox[:OUTBOX_PIPELINE]
                del self._outbox[:OUTBOX_PIPELINE]
                await self._xadd_all(self._client, batches)
        finally:
            self._sender = None

    async def _xadd_all(self, client: redis.Redis, batches: list[RevisionBatch]) -> None:
        try:
            if len(batches) == 1 and not self._ttl_due(batches[0].tenant):
                # One command (the sequential writer's case): no pipeline to
                # build, and the XADD leaves a little sooner.
                await self._xadd(client, batches[0])
            else:
                async with client.pipeline(transaction=False) as pipe:
                    for batch in batches:
                        self._queue_xadd(pipe, batch)
                    await pipe.execute()
        except FAILURES as exc:
            self.stats.publish_failures += 1
            self._publishing.failed(exc)
            # What was queued behind goes the same way until the pause ends.
            self._outbox.clear()
            return
        self.stats.published += len(batches)
        self._publishing.succeeded()

    async def _flush_outbox(self) -> None:
        """Lets the queued XADDs go out before the feed closes (bounded by
        the client's timeout per pipeline)."""
        for _ in range(100):  # bounded: each round sends up to OUTBOX_PIPELINE
            sender = self._sender
            if sender is None:
                return
            with contextlib.suppress(Exception):
                await asyncio.shield(sender)

    def _stream_fields(self, batch: RevisionBatch) -> dict[Any, Any]:
        data = encode_batch(batch)
        if len(data) > self._inline_limit:
            data = b""  # a reference: readers fetch it from PostgreSQL
        return {"o": self._origin, "r": batch.revision, "d": data}

    async def _xadd(self, client: redis.Redis, batch: RevisionBatch) -> None:
        key = self.stream_key(batch.tenant)
        fields = self._stream_fields(batch)
        if self._publisher is None:
            await client.xadd(key, fields, maxlen=self._max_length, approximate=True)
            return
        # What client.xadd sends, through the sender's held connection.
        pairs = [item for pair in fields.items() for item in pair]
        await self._publisher.call("XADD", key, "MAXLEN", "~", self._max_length, "*", *pairs)

    def _ttl_due(self, tenant: str) -> bool:
        return self._ttl_refreshed.get(tenant, 0.0) <= time.monotonic()

    def _queue_xadd(self, pipe: Any, batch: RevisionBatch) -> None:
        key = self.stream_key(batch.tenant)
        fields = self._stream_fields(batch)
        pipe.xadd(key, fields, maxlen=self._max_length, approximate=True)
        # The stream of an idle tenant expires; its TTL is refreshed now and
        # then rather than on every publish (one command per write, not two).
        if self._ttl_due(batch.tenant):
            pipe.pexpire(key, self._ttl_ms)
            if len(self._ttl_refreshed) > 10_000:
                self._ttl_refreshed.clear()
            self._ttl_refreshed[batch.tenant] = time.monotonic() + self._ttl_ms / 10_000

    # ----- reading ------------------------------------------------------------------

    def _wake_reader(self) -> None:
        """Interrupts the reader's XREAD so that it reads the new tenant's
        stream at once (by adding to a stream of its own that it reads too)."""
        client = self._client
        if client is None or not self._tasks:
            return

        async def wake() -> None:
            with contextlib.suppress(*FAILURES):
                async with client.pipeline(transaction=False) as pipe:
                    pipe.xadd(self._wake_key, {"w": 1}, maxlen=1, approximate=False)
                    pipe.pexpire(self._wake_key, 60_000)
                    await pipe.execute()

        self._background.spawn(wake(), "bb-feed-wake")

    async def _read_forever(self) -> None:
        failures = 0
        while not self._stopping:
            try:
                await self._read_once()
            except FAILURES as exc:
                if self._stopping:
                    return  # our own close cut the read
                failures += 1
                self._reading.failed(exc)
                await asyncio.sleep(min(2.0, 0.05 * 2 ** min(failures, 6)))
                continue
            failures = 0
            self._reading.succeeded()

    async def _read_once(self) -> None:
        reader = self._reader
        assert reader is not None
        await self._assign_start_ids(reader)
        streams: dict[Any, Any] = {self._wake_key: self._wake_id}
        by_key: dict[bytes, tuple[str, _Tracked]] = {}
        for tenant, state in self._tracked.items():
            if state.stream_id is None:
                continue  # tracked while we asked for the time: next round (woken)
            key = self.stream_key(tenant).encode()
            streams[key] = state.stream_id
            by_key[key] = (tenant, state)
        for raw_key, entries in await self._xread(reader, streams):
            key = raw_key if isinstance(raw_key, bytes) else str(raw_key).encode()
            if not entries:
                continue
            if key == self._wake_key.encode():
                self._wake_id = entries[-1][0]
                continue
            tenant, state = by_key[key]
            if self._tracked.get(tenant) is state:
                state.stream_id = entries[-1][0]
            elif tenant not in self._tracked:
                continue
            for _, fields in entries:
                try:
                    await self._handle(tenant, fields)
                except StatekeeperError as exc:
                    log.warning("blackboard feed cannot read a referenced revision: %s", exc)
                except (ValueError, KeyError, TypeError, AssertionError):
                    # Not ours or corrupt: skipped; hubs repair any gap it leaves.
                    log.exception("blackboard feed skipped a malformed stream entry")

    async def _xread(
        self, reader: redis.Redis, streams: dict[Any, Any]
    ) -> list[tuple[Any, list[tuple[bytes, dict[bytes, bytes]]]]]:
        """XREAD BLOCK of `streams` (key: last id read) through the reader's
        held connection (see HeldConnection): each stream read with its
        entries as (id, fields). An entry trimmed meanwhile (no fields) is
        left out: readers repair what they miss."""
        if self._listening is None:
            self._listening = HeldConnection(reader)
        keys = list(streams)
        command = ["XREAD", "COUNT", self._max_length, "BLOCK", self._block_ms, "STREAMS"]
        reply: Any = await self._listening.call(*command, *keys, *(streams[k] for k in keys))
        if isinstance(reply, dict):  # a RESP3 map
            reply = list(reply.items())
        return [
            (key, [(entry[0], _pairs(entry[1])) for entry in entries if entry[1] is not None])
            for key, entries in reply or []
        ]

    async def _assign_start_ids(self, reader: redis.Redis) -> None:
        """A newly tracked tenant is read from the Redis time at which it
        was tracked, less a second: its hub reads the store revision after
        tracking, so every later commit is in the stream from then on (the
        re-read second is dropped as already delivered)."""
        fresh = [state for state in self._tracked.values() if state.stream_id is None]
        if not fresh:
            return
        seconds, micros = await reader.time()
        now_ms = int(seconds) * 1000 + int(micros) // 1000
        for state in fresh:
            elapsed_ms = int((time.monotonic() - state.since) * 1000)
            state.stream_id = f"{max(now_ms - elapsed_ms - 1000, 0)}-0".encode()

    async def _handle(self, tenant: str, fields: dict[bytes, bytes]) -> None:
        if fields.get(b"o") == self._origin:
            return  # committed here: delivered at commit
        self.stats.received += 1
        data = fields.get(b"d")
        if data:
            batch = decode_batch(data)
            if batch.tenant == tenant:
                self._deliver(batch, remote=True)
            return
        self.stats.references += 1
        revision = int(fields[b"r"])
        batches = await self._source.history(tenant, None, revision, revision, 1, True)
        for batch in batches:
            self._deliver(batch, remote=True)

    # ----- the PostgreSQL fallback --------------------------------------------------------

    async def _poll_forever(self) -> None:
        """While Redis cannot be read, catches tracked tenants up from the
        store every `fallback_poll_seconds`."""
        while not self._stopping:
            await asyncio.sleep(self._poll_seconds)
            if self._url is not None and not self._reading.down:
                continue
            for tenant in list(self._tracked):
                try:
                    await self._poll(tenant)
                except StatekeeperError as exc:
                    log.warning("blackboard feed cannot poll the store: %s", exc)
                    break
                except Exception:
                    log.exception("blackboard feed poll failed")
                    break

    async def _poll(self, tenant: str) -> None:
        header = await self._source.header(tenant)
        last = self._delivered.get(tenant)
        if last is None:
            if tenant in self._tracked:
                self._delivered[tenant] = header.revision
            return
        if header.revision <= last:
            return
        start = max(last + 1, header.oldest_revision)
        for batch in await self._source.history(tenant, None, start, header.revision, 500, True):
            self.stats.polled += 1
            self._deliver(batch, remote=True)


# ----- the message bus ------------------------------------------------------------------
