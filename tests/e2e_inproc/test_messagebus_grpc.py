"""MessageService through gRPC on a server process: redelivery after the
visibility timeout, dead letters, deduplication, request-reply, errors."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import grpc
import pytest

from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1 import message_pb2 as pb
from statekeeper_client.v1.message_pb2_grpc import MessageServiceStub
from tests.e2e.errors import bad_field, error_info
from tests.e2e_inproc.conftest import ALPHA, BETA, Deployment, aio_channel
from tests.harness.deadlines import scaled


@pytest.fixture
async def stubs(server: Deployment) -> AsyncIterator[tuple[MessageServiceStub, ...]]:
    """One stub per replica."""
    async with aio_channel(server.addresses[0]) as one, aio_channel(server.addresses[1]) as two:
        yield MessageServiceStub(one), MessageServiceStub(two)


def agent() -> str:
    return f"agent-{uuid.uuid4().hex[:8]}"


async def send(stub: MessageServiceStub, to: str, **fields: object) -> pb.SendMessageResponse:
    fields.setdefault("payload", common_pb2.Payload(data=b"task"))
    request = pb.SendMessageRequest(to_agent=to, **fields)  # type: ignore[arg-type]
    reply: pb.SendMessageResponse = await stub.SendMessage(request, metadata=ALPHA)
    return reply


async def pull(
    stub: MessageServiceStub, inbox: str, visibility_ms: int, wait_ms: int
) -> list[pb.Delivery]:
    request = pb.PullMessagesRequest(agent_id=inbox, max_messages=10)
    request.visibility_timeout.FromMilliseconds(visibility_ms)
    request.wait_timeout.FromMilliseconds(wait_ms)
    reply = await stub.PullMessages(request, metadata=ALPHA)
    return list(reply.deliveries)


async def test_a_receiver_that_never_acks_gets_the_message_again(
    stubs: tuple[MessageServiceStub, ...],
) -> None:
    first_replica, second_replica = stubs
    inbox = agent()
    sent = await send(first_replica, inbox)
    receive = pb.ReceiveMessagesRequest(agent_id=inbox)
    receive.visibility_timeout.FromMilliseconds(400)
    stream = first_replica.ReceiveMessages(receive, metadata=ALPHA)
    first = (await asyncio.wait_for(stream.read(), scaled(5))).deliveries[0]
    delivered_at = time.monotonic()
    stream.cancel()  # the receiver dies before it acks
    assert (first.message.message_id, first.delivery_count) == (sent.message_id, 1)
    again_stream = second_replica.ReceiveMessages(receive, metadata=ALPHA)
    again = (await asyncio.wait_for(again_stream.read(), scaled(5))).deliveries[0]
    waited = time.monotonic() - delivered_at
    again_stream.cancel()
    assert (again.message.message_id, again.delivery_count) == (sent.message_id, 2)
    assert waited >= 0.35, "redelivered before the visibility timeout passed"
    assert again.receipt_handle != first.receipt_handle
    acks = await second_replica.AckMessages(
        pb.AckMessagesRequest(
            receipt_handles=[first.receipt_handle, again.receipt_handle, again.receipt_handle]
        ),
        metadata=ALPHA,
    )
    assert [r.status for r in acks.results] == [
        pb.RECEIPT_STATUS_EXPIRED,
        pb.RECEIPT_STATUS_OK,
        pb.RECEIPT_STATUS_ALREADY_ACKED,
    ]
    assert await pull(first_replica, inbox, 100, 600) == []


async def test_a_message_is_dead_lettered_after_its_maximum_deliveries(
    stubs: tuple[MessageServiceStub, ...],
) -> None:
    stub = stubs[0]
    inbox = agent()
    sent = await send(stub, inbox, max_deliveries=2)
    for count in (1, 2):
        (delivery,) = await pull(stub, inbox, 100, 2000)
        assert delivery.delivery_count == count
    assert await pull(stub, inbox, 100, 500) == []
    letters = await stub.ListDeadLetters(pb.ListDeadLettersRequest(agent_id=inbox), metadata=ALPHA)
    (letter,) = letters.dead_letters
    assert letter.message.message_id == sent.message_id
    assert letter.reason == pb.DEAD_LETTER_REASON_MAX_DELIVERIES
    assert letter.delivery_count == 2
    redriven = await stub.RedriveDeadLetters(
        pb.RedriveDeadLettersRequest(agent_id=inbox, message_ids=[sent.message_id, "nope"]),
        metadata=ALPHA,
    )
    assert redriven.redriven_count == 1 and list(redriven.not_found_message_ids) == ["nope"]
    (back,) = await pull(stub, inbox, 100, 2000)
    assert (back.message.message_id, back.delivery_count) == (sent.message_id, 1)


async def test_nack_with_dead_letter_rejects_a_poison_message(
    stubs: tuple[MessageServiceStub, ...],
) -> None:
    stub = stubs[0]
    inbox = agent()
    await send(stub, inbox)
    (delivery,) = await pull(stub, inbox, 5000, 2000)
    nacked = await stub.NackMessages(
        pb.NackMessagesRequest(
            receipt_handles=[delivery.receipt_handle], dead_letter=True, reason="bad schema"
        ),
        metadata=ALPHA,
    )
    assert nacked.results[0].status == pb.RECEIPT_STATUS_DEAD_LETTERED
    letters = await stub.ListDeadLetters(pb.ListDeadLettersRequest(agent_id=inbox), metadata=ALPHA)
    assert [(d.reason, d.detail) for d in letters.dead_letters] == [
        (pb.DEAD_LETTER_REASON_REJECTED, "bad schema")
    ]


async def test_duplicates_are_suppressed_by_idempotency_key(
    stubs: tuple[MessageServiceStub, ...],
) -> None:
    first_replica, second_replica = stubs
    inbox, other = agent(), agent()
    original = await send(first_replica, inbox, request_id="order-42")
    repeat = await send(second_replica, inbox, request_id="order-42")
    elsewhere = await send(first_replica, other, request_id="order-42")
    assert not original.duplicate and repeat.duplicate
    assert repeat.message_id == original.message_id
    assert not elsewhere.duplicate and elsewhere.message_id != original.message_id
    deliveries = await pull(first_replica, inbox, 5000, 300)
    assert [d.message.message_id for d in deliveries] == [original.message_id]


async def test_request_reply_times_out_with_reply_timeout(
    stubs: tuple[MessageServiceStub, ...],
) -> None:
    stub = stubs[0]
    asker, nobody = agent(), agent()
    request = pb.RequestReplyRequest(from_agent=asker, to_agent=nobody)
    request.timeout.FromMilliseconds(300)
    started = time.monotonic()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        # The client's own deadline only bounds the test; the server must
        # answer first, with its REPLY_TIMEOUT.
        await stub.RequestReply(request, metadata=ALPHA, timeout=scaled(30))
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    info = error_info(caught.value)
    assert info.reason == "REPLY_TIMEOUT" and len(info.metadata["message_id"]) == 32
    assert time.monotonic() - started >= 0.25, "answered before the reply timeout"
    # The request expired with the wait: no responder ever receives it.
    await asyncio.sleep(0.1)
    assert await pull(stub, nobody, 1000, 0) == []


async def test_request_reply_answers_before_the_call_deadline(
    stubs: tuple[MessageServiceStub, ...],
) -> None:
    """A call deadline shorter than `timeout` still ends in REPLY_TIMEOUT
    with its reason, sent by the server just before the deadline."""
    request = pb.RequestReplyRequest(from_agent=agent(), to_agent=agent())
    request.timeout.FromSeconds(30)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stubs[0].RequestReply(request, metadata=ALPHA, timeout=0.5)
    assert error_info(caught.value).reason == "REPLY_TIMEOUT"


async def test_request_reply_gets_its_reply_across_replicas(
    stubs: tuple[MessageServiceStub, ...],
) -> None:
    asker_stub, responder_stub = stubs
    asker, responder = agent(), agent()

    async def respond() -> pb.SendReplyResponse:
        (delivery,) = await pull(responder_stub, responder, 5000, 5000)
        await responder_stub.AckMessages(
            pb.AckMessagesRequest(receipt_handles=[delivery.receipt_handle]), metadata=ALPHA
        )
        reply: pb.SendReplyResponse = await responder_stub.SendReply(
            pb.SendReplyRequest(
                request_message_id=delivery.message.message_id,
                payload=common_pb2.Payload(data=b"answer"),
            ),
            metadata=ALPHA,
        )
        return reply

    responding = asyncio.create_task(respond())
    request = pb.RequestReplyRequest(
        from_agent=asker, to_agent=responder, payload=common_pb2.Payload(data=b"question")
    )
    request.timeout.FromSeconds(5)
    answer = await asker_stub.RequestReply(request, metadata=ALPHA)
    sent = await responding
    assert sent.delivered_to_waiter
    assert answer.reply.payload.data == b"answer"
    assert answer.reply.in_reply_to == answer.request_message_id
    assert answer.reply.correlation_id == answer.request_message_id
    assert answer.reply.from_agent == responder
    assert await pull(asker_stub, asker, 1000, 200) == [], "the reply also went to the inbox"


async def test_a_stream_keeps_at_most_max_in_flight_unacked(
    stubs: tuple[MessageServiceStub, ...],
) -> None:
    stub = stubs[0]
    inbox = agent()
    for _ in range(3):
        await send(stub, inbox)
    stream = stub.ReceiveMessages(
        pb.ReceiveMessagesRequest(agent_id=inbox, max_in_flight=2), metadata=ALPHA
    )
    held: list[pb.Delivery] = []
    while len(held) < 2:
        held.extend((await asyncio.wait_for(stream.read(), scaled(5))).deliveries)
    assert len(held) == 2
    pending = asyncio.create_task(stream.read())
    await asyncio.sleep(0.4)
    assert not pending.done(), "a third delivery came while two were unacknowledged"
    await stub.AckMessages(
        pb.AckMessagesRequest(receipt_handles=[held[0].receipt_handle]), metadata=ALPHA
    )
    third = await asyncio.wait_for(pending, scaled(5))
    stream.cancel()
    assert len(third.deliveries) == 1


async def test_another_tenant_cannot_receive_or_ack(stubs: tuple[MessageServiceStub, ...]) -> None:
    stub = stubs[0]
    inbox = agent()
    await send(stub, inbox)
    request = pb.PullMessagesRequest(agent_id=inbox)
    assert list((await stub.PullMessages(request, metadata=BETA)).deliveries) == []
    (delivery,) = await pull(stub, inbox, 5000, 1000)
    acks = await stub.AckMessages(
        pb.AckMessagesRequest(receipt_handles=[delivery.receipt_handle]), metadata=BETA
    )
    assert acks.results[0].status == pb.RECEIPT_STATUS_NOT_FOUND


def _send(**fields: object) -> pb.SendMessageRequest:
    base: dict[str, object] = {"to_agent": "worker"}
    base.update(fields)
    return pb.SendMessageRequest(**base)  # type: ignore[arg-type]


INVALID = [
    ("SendMessage", _send(to_agent=""), "to_agent"),
    ("SendMessage", _send(to_agent="bad agent"), "to_agent"),
    ("SendMessage", _send(ttl={"seconds": -1}), "ttl"),
    ("SendMessage", _send(ttl={"seconds": 1}, delay={"seconds": 2}), "delay"),
    ("SendMessage", _send(max_deliveries=-1), "max_deliveries"),
    ("PullMessages", pb.PullMessagesRequest(agent_id=""), "agent_id"),
    ("PullMessages", pb.PullMessagesRequest(agent_id="a", max_messages=-1), "max_messages"),
    ("AckMessages", pb.AckMessagesRequest(), "receipt_handles"),
    ("AckMessages", pb.AckMessagesRequest(receipt_handles=["x", ""]), "receipt_handles[1]"),
    ("NackMessages", pb.NackMessagesRequest(receipt_handles=["x"], delay={"seconds": -1}),
     "delay"),
    ("ExtendVisibility", pb.ExtendVisibilityRequest(receipt_handles=["x"]),
     "visibility_timeout"),
    ("RequestReply", pb.RequestReplyRequest(to_agent="b"), "from_agent"),
    ("RequestReply", pb.RequestReplyRequest(from_agent="a", to_agent="b",
                                            timeout={"seconds": -1}), "timeout"),
    ("SendReply", pb.SendReplyRequest(), "request_message_id"),
    ("ListDeadLetters", pb.ListDeadLettersRequest(agent_id="a", page_token="!"), "page_token"),
    ("RedriveDeadLetters", pb.RedriveDeadLettersRequest(), "agent_id"),
]  # fmt: skip


@pytest.mark.parametrize(("method", "request_message", "field"), INVALID)
async def test_bad_input_is_invalid_argument_naming_the_field(
    stubs: tuple[MessageServiceStub, ...], method: str, request_message: object, field: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await getattr(stubs[0], method)(request_message, metadata=ALPHA)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    assert bad_field(caught.value) == field


async def test_over_limit_and_unknown_inputs(stubs: tuple[MessageServiceStub, ...]) -> None:
    stub = stubs[0]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await send(stub, "worker", payload=common_pb2.Payload(data=b"x" * (1024 * 1024 + 1)))
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert bad_field(caught.value) == "payload"
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await stub.SendReply(pb.SendReplyRequest(request_message_id="f" * 32), metadata=ALPHA)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    stream = stub.ReceiveMessages(pb.ReceiveMessagesRequest(agent_id=""), metadata=ALPHA)
    with pytest.raises(grpc.aio.AioRpcError) as bad_stream:
        await stream.read()
    assert bad_field(bad_stream.value) == "agent_id"


async def test_a_receive_stream_sends_its_headers_before_any_delivery(
    stubs: tuple[MessageServiceStub, ...],
) -> None:
    """On an idle inbox the stream still answers at once with its headers, so
    a client can tell an open stream from one still connecting."""
    stub = stubs[0]
    call = stub.ReceiveMessages(pb.ReceiveMessagesRequest(agent_id=agent()), metadata=ALPHA)
    try:
        await asyncio.wait_for(call.initial_metadata(), timeout=scaled(10))
        assert not call.done()  # open, nothing delivered
    finally:
        call.cancel()
