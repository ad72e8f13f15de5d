"""Message bus rules in process: visibility timeouts, receipts, dead letters,
deduplication, expiry, delays, competing receivers, request-reply."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from statekeeper.core.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    LimitExceededError,
    NotFoundError,
    StorageUnavailableError,
)
from statekeeper.core.messagebus.models import (
    DeadLetterReason,
    MessageBusLimits,
    Payload,
    ReceiptStatus,
    ReplyTimeoutError,
)
from statekeeper.core.messagebus.service import MessageBus, ReceiveOptions, SendDraft
from statekeeper.storage.embedded.messagebus import (
    EmbeddedMessageStore,
    InProcessInboxNotifier,
    InProcessReplyWaiters,
)
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from tests.fakes.clock import FakeClock

T = "tenant-a"
LIMITS = MessageBusLimits(max_deliveries=3, dedup_window_seconds=60, acked_retention_seconds=600)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedMessageStore]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    message_store = EmbeddedMessageStore(storage)
    await message_store.start()
    yield message_store
    await storage.close()


def make_bus(
    store: EmbeddedMessageStore, clock: Callable[[], float] = time.time, **limits: object
) -> MessageBus:
    return MessageBus(
        store,
        InProcessInboxNotifier(),
        InProcessReplyWaiters(),
        dataclasses.replace(LIMITS, **limits),  # type: ignore[arg-type]
        clock=clock,
    )


@pytest.fixture
def bus(store: EmbeddedMessageStore, clock: FakeClock) -> MessageBus:
    return make_bus(store, clock)


def draft(to: str = "worker", **fields: object) -> SendDraft:
    return SendDraft(to_agent=to, payload=Payload(data=b"job"), **fields)  # type: ignore[arg-type]


def pull_options(agent: str = "worker", visibility: float = 30.0) -> ReceiveOptions:
    return ReceiveOptions(agent_id=agent, visibility_timeout_seconds=visibility)


async def test_an_unacked_message_comes_back_after_the_visibility_timeout(
    bus: MessageBus, clock: FakeClock
) -> None:
    sent = await bus.send(T, draft())
    (first,) = await bus.pull(T, pull_options(), 10, None)
    assert (first.message.message_id, first.delivery_count) == (sent.message_id, 1)
    assert await bus.pull(T, pull_options(), 10, None) == [], "delivered twice while invisible"
    clock.now += 30
    (second,) = await bus.pull(T, pull_options(), 10, None)
    assert second.delivery_count == 2 and second.receipt != first.receipt
    results = await bus.ack(T, [first.receipt.handle, second.receipt.handle])
    assert [r.status for r in results] == [ReceiptStatus.EXPIRED, ReceiptStatus.OK]
    clock.now += 60
    assert await bus.pull(T, pull_options(), 10, None) == []


async def test_receipt_statuses(bus: MessageBus, clock: FakeClock) -> None:
    await bus.send(T, draft())
    (delivery,) = await bus.pull(T, pull_options(), 1, None)
    handle = delivery.receipt.handle
    results = await bus.ack(T, [handle, handle, "not-a-handle", "0" * 32 + "." + "0" * 16])
    assert [r.status for r in results] == [
        ReceiptStatus.OK,
        ReceiptStatus.ALREADY_ACKED,
        ReceiptStatus.NOT_FOUND,
        ReceiptStatus.NOT_FOUND,
    ]
    (again,) = await bus.nack(T, [handle], 0.0, False, "")
    assert again.status == ReceiptStatus.ALREADY_ACKED
    other_tenant = await bus.ack("tenant-b", [handle])
    assert other_tenant[0].status == ReceiptStatus.NOT_FOUND


async def test_dead_letter_after_the_maximum_deliveries(bus: MessageBus, clock: FakeClock) -> None:
    sent = await bus.send(T, draft())
    own_limit = await bus.send(T, draft(max_deliveries=1))
    for count in (1, 2, 3):
        deliveries = await bus.pull(T, pull_options(), 10, None)
        assert {d.delivery_count for d in deliveries} == {count}
        clock.now += 30
    assert await bus.pull(T, pull_options(), 10, None) == []
    letters, token = await bus.list_dead_letters(T, "worker", 0, "")
    assert token == ""
    assert {(d.message.message_id, d.delivery_count) for d in letters} == {
        (own_limit.message_id, 1),
        (sent.message_id, 3),
    }
    assert {d.reason for d in letters} == {DeadLetterReason.MAX_DELIVERIES}
    moved, missing = await bus.redrive(T, "worker", [sent.message_id, "unknown"])
    assert (moved, missing) == (1, ["unknown"])
    (back,) = await bus.pull(T, pull_options(), 10, None)
    assert (back.message.message_id, back.delivery_count) == (sent.message_id, 1)


async def test_dead_letters_are_listed_oldest_first_by_pages(
    bus: MessageBus, clock: FakeClock
) -> None:
    ids = []
    for _ in range(3):
        ids.append((await bus.send(T, draft())).message_id)
        (delivery,) = await bus.pull(T, pull_options(), 1, None)
        await bus.nack(T, [delivery.receipt.handle], 0.0, True, "poison")
        clock.now += 1
    first, token = await bus.list_dead_letters(T, "worker", 2, "")
    second, last = await bus.list_dead_letters(T, "worker", 2, token)
    assert [d.message.message_id for d in first + second] == ids and last == ""
    assert {(d.reason, d.detail) for d in first} == {(DeadLetterReason.REJECTED, "poison")}


async def test_nack_delays_and_extend_postpones_redelivery(
    bus: MessageBus, clock: FakeClock
) -> None:
    await bus.send(T, draft())
    (delivery,) = await bus.pull(T, pull_options(), 1, None)
    (nacked,) = await bus.nack(T, [delivery.receipt.handle], 5.0, False, "")
    assert nacked.status == ReceiptStatus.OK and nacked.next_visible_time == clock.now + 5
    assert await bus.pull(T, pull_options(), 1, None) == []
    clock.now += 5
    (again,) = await bus.pull(T, pull_options(visibility=10), 1, None)
    (extended,) = await bus.extend(T, [again.receipt.handle], 100.0)
    assert extended.next_visible_time == clock.now + 100
    clock.now += 50
    assert await bus.pull(T, pull_options(), 1, None) == []
    assert (await bus.ack(T, [again.receipt.handle]))[0].status == ReceiptStatus.OK


async def test_duplicates_are_suppressed_within_the_window(
    bus: MessageBus, clock: FakeClock
) -> None:
    first = await bus.send(T, draft(idempotency_key="once"))
    second = await bus.send(T, draft(idempotency_key="once"))
    assert second.duplicate and second.message_id == first.message_id
    clock.now += 61
    third = await bus.send(T, draft(idempotency_key="once"))
    assert not third.duplicate and third.message_id != first.message_id


async def test_expired_messages_are_dropped_not_dead_lettered(
    bus: MessageBus, clock: FakeClock
) -> None:
    await bus.send(T, draft(ttl_seconds=10))
    clock.now += 10
    assert await bus.pull(T, pull_options(), 1, None) == []
    assert (await bus.list_dead_letters(T, "worker", 0, ""))[0] == []


async def test_a_delayed_message_waits(bus: MessageBus, clock: FakeClock) -> None:
    sent = await bus.send(T, draft(delay_seconds=3))
    assert sent.visible_time == clock.now + 3
    assert await bus.pull(T, pull_options(), 1, None) == []
    clock.now += 3
    assert len(await bus.pull(T, pull_options(), 1, None)) == 1


async def test_competing_receivers_never_share_a_delivery(store: EmbeddedMessageStore) -> None:
    bus = make_bus(store)
    for _ in range(40):
        await bus.send(T, draft())
    batches = await asyncio.gather(*(bus.pull(T, pull_options(), 3, None) for _ in range(20)))
    ids = [d.message.message_id for batch in batches for d in batch]
    assert len(ids) == 40 and len(set(ids)) == 40


async def test_a_full_inbox_refuses_more(store: EmbeddedMessageStore) -> None:
    bus = make_bus(store, max_inbox_messages=2)
    await bus.send(T, draft())
    await bus.send(T, draft())
    with pytest.raises(LimitExceededError) as full:
        await bus.send(T, draft())
    assert full.value.field == "to_agent"
    await bus.send(T, draft(to="other"))


async def test_the_sweep_dead_letters_exhausted_deliveries_and_forgets_acked(
    bus: MessageBus, clock: FakeClock
) -> None:
    exhausted = await bus.send(T, draft(max_deliveries=1))
    (delivery,) = await bus.pull(T, pull_options(), 1, None)
    acked = await bus.send(T, draft(to="other"))
    (other,) = await bus.pull(T, pull_options("other"), 1, None)
    await bus.ack(T, [other.receipt.handle])
    clock.now += 31
    assert await bus.sweep() == 1
    letters, _ = await bus.list_dead_letters(T, "worker", 0, "")
    assert [d.message.message_id for d in letters] == [exhausted.message_id]
    clock.now += 600
    await bus.sweep()
    with pytest.raises(NotFoundError):
        await bus.send_reply(T, acked.message_id, SendDraft(to_agent=""))
    assert delivery.delivery_count == 1


async def test_request_reply_times_out_and_the_request_expires(
    store: EmbeddedMessageStore,
) -> None:
    bus = make_bus(store)  # real time: the wait is real
    with pytest.raises(ReplyTimeoutError) as timeout:
        await bus.request_reply(T, draft(to="silent", from_agent="asker"), 0.1, None)
    assert len(timeout.value.metadata["message_id"]) == 32
    assert await bus.pull(T, pull_options("silent"), 1, None) == []


async def test_request_reply_gets_the_reply_not_the_inbox(store: EmbeddedMessageStore) -> None:
    bus = make_bus(store)

    async def responder() -> bool:
        for _ in range(100):
            deliveries = await bus.pull(T, pull_options("helper"), 1, 1.0)
            if deliveries:
                request = deliveries[0].message
                reply = await bus.send_reply(T, request.message_id, SendDraft(to_agent=""))
                return reply.delivered_to_waiter
        return False

    answering = asyncio.create_task(responder())
    request_id, reply = await bus.request_reply(
        T, draft(to="helper", from_agent="asker"), 5.0, None
    )
    assert await answering
    assert (reply.in_reply_to, reply.correlation_id, reply.from_agent) == (
        request_id,
        request_id,
        "helper",
    )
    assert await bus.pull(T, pull_options("asker"), 1, None) == []


async def test_one_waiter_per_correlation_id(store: EmbeddedMessageStore) -> None:
    bus = make_bus(store)
    waiting = asyncio.create_task(
        bus.request_reply(T, draft(to="b", from_agent="a", correlation_id="c1"), 1.0, None)
    )
    await asyncio.sleep(0.05)
    with pytest.raises(AlreadyExistsError):
        await bus.request_reply(T, draft(to="b", from_agent="a", correlation_id="c1"), 1.0, None)
    await bus.send(T, draft(to="a", correlation_id="c1"))
    _, reply = await waiting
    assert reply.correlation_id == "c1"


async def test_a_reply_needs_someone_to_reply_to(bus: MessageBus) -> None:
    anonymous = await bus.send(T, draft())
    with pytest.raises(FailedPreconditionError):
        await bus.send_reply(T, anonymous.message_id, SendDraft(to_agent=""))


async def test_a_stream_sleeps_until_a_send_wakes_it(store: EmbeddedMessageStore) -> None:
    bus = make_bus(store, idle_poll_seconds=30)
    stream = bus.receive(T, ReceiveOptions("worker"))
    receiving = asyncio.ensure_future(stream.__anext__())
    await asyncio.sleep(0.05)
    assert not receiving.done()
    await bus.send(T, draft())
    (delivery,) = await asyncio.wait_for(receiving, 2)  # long before the 30 s re-check
    assert delivery.delivery_count == 1
    await stream.aclose()


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"to": ""}, "to_agent"),
        ({"from_agent": "has space"}, "from_agent"),
        ({"ttl_seconds": -1.0}, "ttl"),
        ({"ttl_seconds": 5.0, "delay_seconds": 5.0}, "delay"),
        ({"max_deliveries": -1}, "max_deliveries"),
        ({"headers": {"": "x"}}, "headers"),
    ],
)
async def test_bad_drafts_name_the_field(
    bus: MessageBus, fields: dict[str, object], field: str
) -> None:
    to = str(fields.pop("to", "worker"))
    with pytest.raises(InvalidArgumentError) as caught:
        await bus.send(T, draft(to, **fields))
    assert caught.value.field == field


async def test_oversized_inputs_are_over_the_limit(bus: MessageBus) -> None:
    with pytest.raises(LimitExceededError) as big:
        await bus.send(T, SendDraft("worker", payload=Payload(data=b"x" * (1024 * 1024 + 1))))
    assert big.value.field == "payload"
    with pytest.raises(LimitExceededError) as handles:
        await bus.ack(T, ["x"] * 101)
    assert handles.value.field == "receipt_handles"
    with pytest.raises(LimitExceededError):
        await bus.extend(T, ["x"], 13 * 3600.0)


async def test_stop_ends_waiting_requests_and_streams(store: EmbeddedMessageStore) -> None:
    bus = make_bus(store)
    await bus.start()
    asking = asyncio.create_task(bus.request_reply(T, draft(to="b", from_agent="a"), 30.0, None))
    stream = bus.receive(T, ReceiveOptions("idle"))
    receiving = asyncio.ensure_future(stream.__anext__())
    await asyncio.sleep(0.05)
    await bus.stop()
    with pytest.raises(StorageUnavailableError):
        await asyncio.wait_for(asking, 2)
    with pytest.raises(StorageUnavailableError):
        await asyncio.wait_for(receiving, 2)


async def test_a_request_to_oneself_is_refused(bus: MessageBus) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        await bus.request_reply(T, draft(to="a", from_agent="a"), 1.0, None)
    assert caught.value.field == "to_agent"
