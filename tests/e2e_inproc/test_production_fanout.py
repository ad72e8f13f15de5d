"""Cross-replica fan-out of the production tier, replica by replica: each
"replica" here has its own stores, feed, notifier and waiters over one
PostgreSQL and one Redis, as separate server processes do.

* a commit on one replica reaches the listeners of another through Redis,
  and one too big to inline is read back from PostgreSQL;
* a publish lost between COMMIT and XADD (a crashed replica) or an entry
  dropped from the stream is repaired from PostgreSQL: the watch on the
  other replica still sees every revision, in order;
* with Redis unreachable, the feed polls PostgreSQL;
* inbox wake-ups and RequestReply hand-offs cross replicas, and a reply
  offered to a replica that has gone is refused (so it goes to the inbox);
* replicas starting together on an empty database apply each of the
  stores' migrations once.
"""

from __future__ import annotations

import asyncio
import socket
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass

import pytest
import redis.asyncio as redis_asyncio

from statekeeper.core.blackboard.models import BlackboardLimits, RevisionBatch, Value
from statekeeper.core.blackboard.service import Blackboard, PutOp, WatchRequest
from statekeeper.core.blackboard.watch import WatchMessageKind
from statekeeper.core.errors import AlreadyExistsError
from statekeeper.core.messagebus.models import AgentMessage, new_message_id
from statekeeper.storage.postgres import blackboard_schema as postgres_blackboard
from statekeeper.storage.postgres import messagebus as postgres_messagebus
from statekeeper.storage.postgres.blackboard import PostgresBlackboardStore
from statekeeper.storage.postgres.messagebus import PostgresMessageStore
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.redis.bus import RedisInboxNotifier, RedisReplyWaiters
from tests.harness.deadlines import scaled
from tests.services import Services, configured, fresh_database, reachable

FAST = BlackboardLimits(feed_check_interval_seconds=0.1)


@dataclass
class Replica:
    store: PostgresBlackboardStore
    notifier: RedisInboxNotifier
    waiters: RedisReplyWaiters


@pytest.fixture
async def services() -> Services:
    found = configured()
    await reachable(found)
    return found


@pytest.fixture
async def db(services: Services) -> AsyncIterator[PostgresStorage]:
    storage = PostgresStorage(services.postgres_dsn, pool_size=6, migrate_on_start=True)
    await storage.start()
    yield storage
    await storage.close()


ReplicaFactory = Callable[..., Awaitable[Replica]]


@pytest.fixture
async def replicas(services: Services, db: PostgresStorage) -> AsyncIterator[ReplicaFactory]:
    """Starts replicas sharing a Redis prefix of the test's own."""
    prefix = f"fanout-{uuid.uuid4().hex[:8]}"
    async with AsyncExitStack() as stack:

        async def start(redis_url: str | None = services.redis_url) -> Replica:
            store = PostgresBlackboardStore(db, redis_url, prefix)
            notifier = RedisInboxNotifier(redis_url, prefix)
            waiters = RedisReplyWaiters(redis_url, prefix)
            for part in (store, notifier, waiters):
                await part.start()
            stack.push_async_callback(store.close)
            stack.push_async_callback(notifier.stop)
            stack.push_async_callback(waiters.stop)
            return Replica(store, notifier, waiters)

        yield start


def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


async def put(blackboard: Blackboard, t: str, key: str) -> int:
    outcome = await blackboard.put(t, "b", PutOp(key, Value.payload(key.encode())))
    return outcome.header.revision


async def until(predicate: Callable[[], bool], seconds: float) -> float:
    """Waits until `predicate()` holds; returns how long it took."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > seconds:
            raise AssertionError(f"not within {seconds}s")
        await asyncio.sleep(0.005)
    return time.monotonic() - start


async def test_a_commit_reaches_the_other_replicas_listeners_through_redis(
    replicas: ReplicaFactory,
) -> None:
    one, other = await replicas(), await replicas()
    t = tenant()
    seen: list[RevisionBatch] = []
    other.store.feed.track(t)
    remove = other.store.feed.listen(lambda b: seen.append(b) if b.tenant == t else None)
    writer = Blackboard(one.store)
    await asyncio.sleep(0.05)  # the reader picks the new stream up
    revisions = [await put(writer, t, f"k{i}") for i in range(20)]
    # Well under the hubs' own repair (two store checks): it came by Redis.
    await until(lambda: len(seen) == 20, 0.5)
    remove()
    assert [b.revision for b in seen] == revisions
    assert other.store.feed.stats.received >= 20 and other.store.feed.stats.polled == 0
    assert seen[3].events[0].previous is None and seen[3].events[0].entry.key == "k3"


async def test_a_batch_too_big_for_the_stream_is_read_back_from_postgres(
    replicas: ReplicaFactory,
) -> None:
    one, other = await replicas(), await replicas()
    t = tenant()
    seen: list[RevisionBatch] = []
    other.store.feed.track(t)
    other.store.feed.listen(lambda b: seen.append(b) if b.tenant == t else None)
    await asyncio.sleep(0.05)
    big = Value.payload(b"v" * 200_000)
    await Blackboard(one.store).put(t, "b", PutOp("big", big))
    await Blackboard(one.store).put(t, "b", PutOp("big", Value.payload(b"small")))
    await until(lambda: len(seen) == 2, 1.0)
    assert seen[0].events[0].entry.value == big
    assert seen[1].events[0].previous is not None and seen[1].events[0].previous.value == big
    assert other.store.feed.stats.references == 2, "both carry the big value (now or before)"


async def test_lost_publishes_and_dropped_stream_entries_are_read_from_postgres(
    replicas: ReplicaFactory, services: Services
) -> None:
    one, other = await replicas(), await replicas()
    t = tenant()
    writer, watcher = Blackboard(one.store, FAST), Blackboard(other.store, FAST)
    await watcher.start()
    try:
        stream = watcher.watch(t, WatchRequest(board="b", start_revision=0))
        started = await anext(stream)
        assert started.kind == WatchMessageKind.STARTED
        await put(writer, t, "before")
        # A replica that dies between COMMIT and XADD: its publish is lost.
        publish = one.store.feed.publish
        one.store.feed.publish = _local_only(one)  # type: ignore[method-assign]
        await put(writer, t, "lost")
        one.store.feed.publish = publish  # type: ignore[method-assign]
        # Redis loses what is in the stream (flushed, failed over).
        client = redis_asyncio.from_url(services.redis_url)
        await client.delete(one.store.feed.stream_key(t))
        await client.aclose()
        await put(writer, t, "after")
        keys = []
        while len(keys) < 3:
            message = await asyncio.wait_for(anext(stream), scaled(5))
            keys += [event.key for event in message.events]
        assert keys == ["before", "lost", "after"]
        await stream.aclose()
    finally:
        await watcher.stop()


def _local_only(replica: Replica) -> Callable[[list[RevisionBatch]], Awaitable[None]]:
    async def publish(batches: list[RevisionBatch]) -> None:
        for batch in batches:
            replica.store.feed._deliver(batch, remote=False)

    return publish


async def test_without_redis_the_feed_polls_postgres(replicas: ReplicaFactory) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"redis://127.0.0.1:{probe.getsockname()[1]}/0"
    one, other = await replicas(None), await replicas(dead)
    t = tenant()
    seen: list[int] = []
    other.store.feed.track(t)
    other.store.feed.listen(lambda b: seen.append(b.revision) if b.tenant == t else None)
    writer = Blackboard(one.store)
    await put(writer, t, "first")
    await asyncio.sleep(0.5)  # the reader fails, the poller takes its baseline
    revisions = [await put(writer, t, f"k{i}") for i in range(5)]
    await until(lambda: seen[-5:] == revisions, 2.0)
    assert other.store.feed.stats.polled >= 5


async def test_wake_ups_and_replies_cross_replicas(replicas: ReplicaFactory) -> None:
    one, other = await replicas(), await replicas()
    t = tenant()
    armed = other.notifier.arm(t, "worker")
    await one.notifier.notify(t, "worker")
    await asyncio.wait_for(armed.wait(), scaled(1))

    future = await other.waiters.register(t, "asker", "c1")
    with pytest.raises(AlreadyExistsError):
        await one.waiters.register(t, "asker", "c1")
    assert await one.waiters.is_waiting(t, "asker", "c1")
    reply = AgentMessage(new_message_id(), "asker", correlation_id="c1")
    assert await one.waiters.offer(t, reply)
    assert await asyncio.wait_for(future, scaled(1)) == reply
    assert not await one.waiters.offer(t, reply), "a waiter takes one reply"
    await other.waiters.unregister(t, "asker", "c1")
    assert not await one.waiters.is_waiting(t, "asker", "c1")


async def test_a_reply_offered_to_a_vanished_replica_is_refused(replicas: ReplicaFactory) -> None:
    one, other = await replicas(), await replicas()
    t = tenant()
    await other.waiters.register(t, "asker", "c2")
    assert other.waiters._subscriber is not None
    await other.waiters._subscriber.stop()  # the replica is gone; its key lingers
    reply = AgentMessage(new_message_id(), "asker", correlation_id="c2")
    assert await one.waiters.is_waiting(t, "asker", "c2")
    assert not await one.waiters.offer(t, reply), "nobody took it: it goes to the inbox"


async def test_replicas_starting_together_apply_each_migration_once(services: Services) -> None:
    async with fresh_database(services) as dsn:
        pools = [PostgresStorage(dsn, pool_size=2, migrate_on_start=True) for _ in range(3)]
        for pool in pools:
            await pool.start()
        try:
            stores: list[PostgresBlackboardStore | PostgresMessageStore] = []
            for pool in pools:
                stores += [PostgresBlackboardStore(pool, None), PostgresMessageStore(pool)]
            await asyncio.gather(*(store.start() for store in stores))
            async with pools[0].connection("check") as conn:
                for table, migrations in (
                    ("bb_schema_migrations", postgres_blackboard.MIGRATIONS),
                    ("mb_schema_migrations", postgres_messagebus.MIGRATIONS),
                ):
                    versions = await conn.fetch(f"SELECT version FROM {table}")
                    assert sorted(row["version"] for row in versions) == [
                        migration.version for migration in migrations
                    ], "each migration applied once"
            for store in stores:
                await store.close()
        finally:
            for pool in pools:
                await pool.close()
