"""proto <-> domain conversions for the message bus. Only translation."""

from __future__ import annotations

from statekeeper.api.convert import optional_seconds
from statekeeper.api.convert import timestamp as timestamp
from statekeeper.core.messagebus.models import (
    AgentMessage,
    DeadLetter,
    Delivery,
    Payload,
    ReceiptResult,
)
from statekeeper.core.messagebus.service import ReceiveOptions, SendDraft
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1 import message_pb2 as pb


def payload_from_proto(payload: common_pb2.Payload) -> Payload:
    return Payload(payload.content_type, payload.schema_version, payload.data)


def payload_to_proto(payload: Payload) -> common_pb2.Payload:
    return common_pb2.Payload(
        content_type=payload.content_type, schema_version=payload.schema_version, data=payload.data
    )


def send_draft(request: pb.SendMessageRequest) -> SendDraft:
    return SendDraft(
        to_agent=request.to_agent,
        from_agent=request.from_agent,
        type=request.type,
        payload=payload_from_proto(request.payload),
        reply_to=request.reply_to,
        correlation_id=request.correlation_id,
        in_reply_to=request.in_reply_to,
        headers=dict(request.headers),
        idempotency_key=request.request_id,
        ttl_seconds=optional_seconds(request, "ttl"),
        delay_seconds=optional_seconds(request, "delay"),
        max_deliveries=request.max_deliveries,
    )


def request_draft(request: pb.RequestReplyRequest) -> SendDraft:
    return SendDraft(
        to_agent=request.to_agent,
        from_agent=request.from_agent,
        type=request.type,
        payload=payload_from_proto(request.payload),
        correlation_id=request.correlation_id,
        headers=dict(request.headers),
        idempotency_key=request.request_id,
        ttl_seconds=optional_seconds(request, "ttl"),
    )


def reply_draft(request: pb.SendReplyRequest) -> SendDraft:
    return SendDraft(
        to_agent="",
        from_agent=request.from_agent,
        type=request.type,
        payload=payload_from_proto(request.payload),
        headers=dict(request.headers),
        idempotency_key=request.request_id,
    )


def receive_options(request: pb.ReceiveMessagesRequest | pb.PullMessagesRequest) -> ReceiveOptions:
    max_in_flight = request.max_in_flight if isinstance(request, pb.ReceiveMessagesRequest) else 0
    return ReceiveOptions(
        agent_id=request.agent_id,
        max_in_flight=max_in_flight,
        visibility_timeout_seconds=optional_seconds(request, "visibility_timeout"),
        types=tuple(request.types),
    )


def message_to_proto(message: AgentMessage) -> pb.AgentMessage:
    return pb.AgentMessage(
        message_id=message.message_id,
        from_agent=message.from_agent,
        to_agent=message.to_agent,
        type=message.type,
        payload=payload_to_proto(message.payload),
        reply_to=message.reply_to,
        correlation_id=message.correlation_id,
        in_reply_to=message.in_reply_to,
        headers=message.headers,
        request_id=message.idempotency_key,
        send_time=timestamp(message.send_time),
        visible_time=timestamp(message.visible_time),
        expire_time=timestamp(message.expire_time),
        max_deliveries=message.max_deliveries,
    )


def delivery_to_proto(delivery: Delivery) -> pb.Delivery:
    return pb.Delivery(
        receipt_handle=delivery.receipt.handle,
        message=message_to_proto(delivery.message),
        delivery_count=delivery.delivery_count,
        visibility_deadline=timestamp(delivery.visibility_deadline),
    )


def receipt_result_to_proto(result: ReceiptResult) -> pb.ReceiptResult:
    return pb.ReceiptResult(
        receipt_handle=result.receipt_handle,
        status=int(result.status),  # type: ignore[arg-type]
        next_visible_time=timestamp(result.next_visible_time),
    )


def dead_letter_to_proto(letter: DeadLetter) -> pb.DeadLetter:
    return pb.DeadLetter(
        message=message_to_proto(letter.message),
        delivery_count=letter.delivery_count,
        reason=int(letter.reason),  # type: ignore[arg-type]
        detail=letter.detail,
        dead_letter_time=timestamp(letter.dead_letter_time),
    )
