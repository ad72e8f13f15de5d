"""The MessageStore, InboxNotifier and ReplyWaiters contract
(core/messagebus/store.py), checked on every backend.

Backends register in MESSAGEBUS_BACKENDS: an async context manager that
yields a started (store, notifier, waiters):

* embedded:   SQLite, in-process wake-ups and waiters;
* production: PostgreSQL, wake-ups and waiters over Redis;
* postgres:   PostgreSQL with no Redis (wake-ups and waiters in process).

The PostgreSQL backends are skipped with the reason printed when the test
services are not running (tests/services.py).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from statekeeper.core.errors import AlreadyExistsError, LimitExceededError
from statekeeper.core.messagebus.models import (
    AgentMessage,
    DeadLetterReason,
    Payload,
    Receipt,
    ReceiptStatus,
    new_message_id,
)
from statekeeper.core.messagebus.store import InboxNotifier, MessageStore, ReplyWaiters
from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.storage.embedded.messagebus import (
    EmbeddedMessageStore,
    InProcessInboxNotifier,
    InProcessReplyWaiters,
)
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.postgres.messagebus import PostgresMessageStore
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.redis.bus import RedisInboxNotifier, RedisReplyWaiters
from tests.harness.deadlines import scaled
from tests.services import configured, reachable

NOW = 1_700_000_000.0
MAX = 3  # the configured maximum of deliveries in these tests
ROOM = 1000


@dataclass
class Bus:
    store: MessageStore
    notifier: InboxNotifier
    waiters: ReplyWaiters


@asynccontextmanager
async def _embedded(tmp_path: Path) -> AsyncIterator[Bus]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    store = EmbeddedMessageStore(storage)
    await store.start()
    try:
        yield Bus(store, InProcessInboxNotifier(), InProcessReplyWaiters())
    finally:
        await store.close()
        await storage.close()


@asynccontextmanager
async def _on_postgres(tmp_path: Path, with_redis: bool) -> AsyncIterator[Bus]:
    services = configured()
    await reachable(services)
    db = PostgresStorage(services.postgres_dsn, pool_size=4, migrate_on_start=True)
    await db.start()
    store = PostgresMessageStore(db)
    await store.start()
    redis_url = services.redis_url if with_redis else None
    prefix = f"contract-{tmp_path.name}"
    notifier = RedisInboxNotifier(redis_url, prefix)
    waiters = RedisReplyWaiters(redis_url, prefix)
    await notifier.start()
    await waiters.start()
    try:
        yield Bus(store, notifier, waiters)
    finally:
        await waiters.stop()
        await notifier.stop()
        await store.close()
        await db.close()


def _production(tmp_path: Path) -> AbstractAsyncContextManager[Bus]:
    return _on_postgres(tmp_path, with_redis=True)


def _postgres(tmp_path: Path) -> AbstractAsyncContextManager[Bus]:
    return _on_postgres(tmp_path, with_redis=False)


MESSAGEBUS_BACKENDS: dict[str, Callable[[Path], AbstractAsyncContextManager[Bus]]] = {
    "embedded": _embedded,
    "production": _production,
    "postgres": _postgres,
}


@pytest.fixture(params=sorted(MESSAGEBUS_BACKENDS))
async def bus(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Bus]:
    async with MESSAGEBUS_BACKENDS[request.param](tmp_path) as backend:
        yield backend


@pytest.fixture
def store(bus: Bus) -> MessageStore:
    return bus.store


def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def message(to: str = "inbox", at: float = NOW, **fields: object) -> AgentMessage:
    return AgentMessage(
        message_id=new_message_id(),
        to_agent=to,
        payload=Payload("text/plain", 2, b"hello"),
        send_time=at,
        visible_time=fields.pop("visible_time", at),  # type: ignore[arg-type]
        **fields,  # type: ignore[arg-type]
    )


async def stored(store: MessageStore, t: str, **fields: object) -> AgentMessage:
    sent = message(**fields)  # type: ignore[arg-type]
    outcome = await store.insert(t, sent, NOW, None, False, ROOM)
    return outcome.message


async def claim(
    store: MessageStore, t: str, now: float = NOW, limit: int = 10, types: tuple[str, ...] = ()
) -> list[object]:
    return list(await store.claim(t, "inbox", types, now, 30.0, limit, MAX))


async def test_insert_get_and_deduplication(store: MessageStore) -> None:
    t = tenant()
    first = message(idempotency_key="k", headers={"h": "1"}, correlation_id="c")
    outcome = await store.insert(t, first, NOW, NOW + 60, False, ROOM)
    assert not outcome.duplicate and await store.get(t, first.message_id) == first
    again = await store.insert(t, message(idempotency_key="k"), NOW + 59, NOW + 119, False, ROOM)
    assert again.duplicate and again.message.message_id == first.message_id
    other_inbox = await store.insert(
        t, message("other", idempotency_key="k"), NOW, None, False, ROOM
    )
    assert not other_inbox.duplicate
    later = await store.insert(t, message(idempotency_key="k"), NOW + 60, None, False, ROOM)
    assert not later.duplicate
    assert await store.get(tenant(), first.message_id) is None


async def test_a_held_message_is_not_deliverable_until_released(store: MessageStore) -> None:
    t = tenant()
    held = message()
    await store.insert(t, held, NOW, None, True, ROOM)
    assert await claim(store, t) == []
    await store.release(t, held.message_id)
    assert len(await claim(store, t)) == 1


async def test_a_full_inbox_refuses(store: MessageStore) -> None:
    t = tenant()
    await stored(store, t)
    with pytest.raises(LimitExceededError):
        await store.insert(t, message(), NOW, None, False, 1)


async def test_claim_order_filters_and_exclusivity(store: MessageStore) -> None:
    t = tenant()
    late = await stored(store, t, visible_time=NOW + 2)
    early = await stored(store, t, visible_time=NOW - 1)
    typed = await stored(store, t, type="task.assign")
    await stored(store, t, visible_time=NOW + 100)
    only_typed = await store.claim(t, "inbox", ("task.assign",), NOW, 30, 10, MAX)
    assert [d.message.message_id for d in only_typed] == [typed.message_id]
    deliveries = await store.claim(t, "inbox", (), NOW + 2, 30, 10, MAX)
    assert [d.message.message_id for d in deliveries] == [early.message_id, late.message_id]
    assert all(d.delivery_count == 1 and d.visibility_deadline == NOW + 32 for d in deliveries)
    assert await store.claim(t, "inbox", (), NOW + 2, 30, 10, MAX) == []
    # In flight until NOW + 30 (the typed one) and NOW + 32; one is delayed.
    assert await store.next_visible_time(t, "inbox", NOW + 2) == NOW + 30


async def test_concurrent_claims_never_share_a_message(store: MessageStore) -> None:
    t = tenant()
    for _ in range(30):
        await stored(store, t)
    batches = await asyncio.gather(
        *(store.claim(t, "inbox", (), NOW, 30, 4, MAX) for _ in range(12))
    )
    ids = [d.message.message_id for batch in batches for d in batch]
    assert len(ids) == 30 == len(set(ids))


async def test_claim_drops_expired_and_dead_letters_exhausted(store: MessageStore) -> None:
    t = tenant()
    expired = await stored(store, t, expire_time=NOW + 1)
    once = await stored(store, t, max_deliveries=1)
    (first,) = [d for d in await store.claim(t, "inbox", (), NOW + 1, 30, 10, MAX)]
    assert first.message.message_id == once.message_id
    assert await store.get(t, expired.message_id) is None
    assert await store.claim(t, "inbox", (), NOW + 31, 30, 10, MAX) == []
    (letter,) = await store.list_dead_letters(t, "inbox", None, 10)
    assert (letter.message.message_id, letter.reason) == (
        once.message_id,
        DeadLetterReason.MAX_DELIVERIES,
    )


async def test_receipt_rules(store: MessageStore) -> None:
    t = tenant()
    await stored(store, t)
    await stored(store, t)
    first, second = await store.claim(t, "inbox", (), NOW, 30, 10, MAX)
    bogus = Receipt(first.receipt.message_id, "0" * 16)
    acked = await store.ack(t, [first.receipt, first.receipt, bogus, None], NOW + 1)
    assert [o.status for o in acked] == [
        ReceiptStatus.OK,
        ReceiptStatus.ALREADY_ACKED,
        ReceiptStatus.EXPIRED,
        ReceiptStatus.NOT_FOUND,
    ]
    assert acked[0].to_agent == "inbox"
    (extended,) = await store.extend(t, [second.receipt], NOW + 1, 100)
    assert (extended.status, extended.next_visible_time) == (ReceiptStatus.OK, NOW + 101)
    assert await store.in_flight(t, [first.receipt, second.receipt], NOW + 50) == [second.receipt]
    (late,) = await store.ack(t, [second.receipt], NOW + 101)
    assert late.status == ReceiptStatus.EXPIRED, "past its deadline"


async def test_nack_redelivers_or_dead_letters(store: MessageStore) -> None:
    t = tenant()
    await stored(store, t)
    await stored(store, t)
    first, second = await store.claim(t, "inbox", (), NOW, 30, 10, MAX)
    (later,) = await store.nack(t, [first.receipt], NOW, 5, False, "", MAX)
    assert (later.status, later.next_visible_time) == (ReceiptStatus.OK, NOW + 5)
    (stale,) = await store.ack(t, [first.receipt], NOW + 1)
    assert stale.status == ReceiptStatus.EXPIRED, "a nack revokes the receipt"
    (rejected,) = await store.nack(t, [second.receipt], NOW, 0, True, "poison", MAX)
    assert rejected.status == ReceiptStatus.DEAD_LETTERED
    (letter,) = await store.list_dead_letters(t, "inbox", None, 10)
    assert (letter.reason, letter.detail) == (DeadLetterReason.REJECTED, "poison")
    (gone,) = await store.ack(t, [second.receipt], NOW)
    assert gone.status == ReceiptStatus.NOT_FOUND
    (again,) = await store.claim(t, "inbox", (), NOW + 5, 30, 10, MAX)
    assert again.delivery_count == 2


async def test_dead_letter_paging_and_redrive(store: MessageStore) -> None:
    t = tenant()
    for _ in range(3):
        await stored(store, t)
    deliveries = await store.claim(t, "inbox", (), NOW, 30, 10, MAX)
    for offset, delivery in enumerate(deliveries):
        await store.nack(t, [delivery.receipt], NOW + offset, 0, True, "", MAX)
    first = await store.list_dead_letters(t, "inbox", None, 2)
    cursor = (first[-1].dead_letter_time, first[-1].message.message_id)
    rest = await store.list_dead_letters(t, "inbox", cursor, 2)
    assert [d.message.message_id for d in first + rest] == [
        d.message.message_id for d in deliveries
    ]
    one = deliveries[0].message.message_id
    assert await store.redrive(t, "inbox", [one, "missing"], NOW + 5) == (1, ["missing"])
    assert await store.redrive(t, "inbox", [], NOW + 5) == (2, [])
    redelivered = await store.claim(t, "inbox", (), NOW + 5, 30, 10, MAX)
    assert sorted(d.delivery_count for d in redelivered) == [1, 1, 1]


async def test_sweep(store: MessageStore) -> None:
    t = tenant()
    expiring = await stored(store, t, expire_time=NOW + 1)
    exhausted = await stored(store, t, max_deliveries=1, visible_time=NOW - 1)
    acked = await stored(store, t, to="acked")
    (delivery,) = await store.claim(t, "inbox", (), NOW - 1, 30, 1, MAX)
    (ack_me,) = await store.claim(t, "acked", (), NOW, 30, 1, MAX)
    await store.ack(t, [ack_me.receipt], NOW)
    assert delivery.message.message_id == exhausted.message_id
    changed = await store.sweep(NOW + 30, acked_retention=100, max_deliveries=MAX)
    assert changed == 2  # the expired message dropped, the exhausted one dead-lettered
    assert await store.get(t, expiring.message_id) is None
    assert [d.message.message_id for d in await store.list_dead_letters(t, "inbox", None, 9)] == [
        exhausted.message_id
    ]
    assert await store.get(t, acked.message_id) is not None
    await store.sweep(NOW + 100, acked_retention=100, max_deliveries=MAX)
    assert await store.get(t, acked.message_id) is None


async def test_tenants_are_isolated(store: MessageStore) -> None:
    mine, theirs = tenant(), tenant()
    secret = await stored(store, theirs)
    assert await claim(store, mine) == []
    assert await store.get(mine, secret.message_id) is None
    assert await store.redrive(mine, "inbox", [secret.message_id], NOW) == (0, [secret.message_id])


async def test_notifier_never_loses_a_notify_after_arm(bus: Bus) -> None:
    t = tenant()
    armed = bus.notifier.arm(t, "inbox")
    other = bus.notifier.arm(t, "elsewhere")
    await bus.notifier.notify(t, "inbox")
    await asyncio.wait_for(armed.wait(), scaled(1))
    assert not other.is_set()
    bus.notifier.close()
    await asyncio.wait_for(other.wait(), scaled(1))


async def test_waiters_one_per_correlation_and_offer(bus: Bus) -> None:
    t = tenant()
    waiters = bus.waiters
    future = await waiters.register(t, "asker", "c1")
    with pytest.raises(AlreadyExistsError):
        await waiters.register(t, "asker", "c1")
    assert await waiters.is_waiting(t, "asker", "c1")
    assert not await waiters.is_waiting(tenant(), "asker", "c1")
    reply = message("asker", correlation_id="c1")
    assert await waiters.offer(t, reply)
    assert await asyncio.wait_for(future, scaled(1)) == reply
    assert not await waiters.offer(t, reply), "a waiter takes one reply"
    await waiters.unregister(t, "asker", "c1")
    assert not await waiters.is_waiting(t, "asker", "c1")


async def test_erase_user_deletes_the_users_inboxes_only(store: MessageStore) -> None:
    t, other = tenant(), tenant()
    subject = ErasureSubject("u1", agent_ids=("helper-of-u1",))
    mine = [
        (
            await store.insert(
                t, message("user:u1", idempotency_key="k1"), NOW, NOW + 600, False, ROOM
            )
        ).message,
        await stored(store, t, to="helper-of-u1"),
    ]
    mine.append(await stored(store, t, to="user:u1"))
    [delivery] = await store.claim(t, "user:u1", (), NOW, 30.0, 1, MAX)
    await store.nack(t, [delivery.receipt], NOW, 0.0, True, "", MAX)
    [dead] = await store.list_dead_letters(t, "user:u1", None, 10)
    kept = [
        await stored(store, t, to="user:u2"),
        await stored(store, t, to="inbox"),
        await stored(store, other, to="user:u1"),
    ]
    dry = await store.erase_user(t, subject, dry_run=True)
    assert dry.counts[("messagebus", "messages")] == 3
    assert dry.counts[("messagebus", "dedup_keys")] == 1
    assert await store.list_dead_letters(t, "user:u1", None, 10) == [dead]
    real = await store.erase_user(t, subject, dry_run=False)
    assert real.counts == dry.counts
    for message_ in mine:
        assert await store.get(t, message_.message_id) is None
    assert await store.list_dead_letters(t, "user:u1", None, 10) == []
    assert await store.get(t, kept[0].message_id) is not None
    assert await store.get(t, kept[1].message_id) is not None
    assert await store.get(other, kept[2].message_id) is not None
    # The idempotency key went with the message: the same key is new again.
    again = await store.insert(t, message("user:u1", idempotency_key="k1"), NOW, None, False, ROOM)
    assert not again.duplicate
    assert (await store.erase_user(t, subject, dry_run=False)).total == 1  # only the new one
    assert (await store.erase_user(t, subject, dry_run=False)).total == 0
