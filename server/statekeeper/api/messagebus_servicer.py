"""MessageService: translates requests into MessageBus calls."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from statekeeper.api import messagebus_convert as convert
from statekeeper.api.convert import optional_seconds
from statekeeper.api.interceptor import current_actor, current_tenant
from statekeeper.core.messagebus.service import MessageBus
from statekeeper_client.v1 import message_pb2 as pb
from statekeeper_client.v1 import message_pb2_grpc


class MessageServicer(message_pb2_grpc.MessageServiceServicer):
    def __init__(self, bus: MessageBus) -> None:
        self._bus = bus

    async def SendMessage(
        self, request: pb.SendMessageRequest, context: grpc.aio.ServicerContext
    ) -> pb.SendMessageResponse:
        result = await self._bus.send(
            current_tenant(), convert.send_draft(request), current_actor()
        )
        return pb.SendMessageResponse(
            message_id=result.message_id,
            duplicate=result.duplicate,
            visible_time=convert.timestamp(result.visible_time),
        )

    async def ReceiveMessages(
        self, request: pb.ReceiveMessagesRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ReceiveMessagesResponse]:
        stream = self._bus.receive(current_tenant(), convert.receive_options(request))
        # Headers at once: a client can tell an open stream on an idle inbox
        # (nothing to deliver yet) from one still connecting.
        await context.send_initial_metadata(())
        async for deliveries in stream:
            yield pb.ReceiveMessagesResponse(
                deliveries=[convert.delivery_to_proto(d) for d in deliveries]
            )

    async def PullMessages(
        self, request: pb.PullMessagesRequest, context: grpc.aio.ServicerContext
    ) -> pb.PullMessagesResponse:
        wait = optional_seconds(request, "wait_timeout")
        remaining = context.time_remaining()
        if wait is not None and remaining is not None:
            wait = min(wait, max(remaining - 0.05, 0.0))
        deliveries = await self._bus.pull(
            current_tenant(), convert.receive_options(request), request.max_messages, wait
        )
        return pb.PullMessagesResponse(
            deliveries=[convert.delivery_to_proto(d) for d in deliveries]
        )

    async def AckMessages(
        self, request: pb.AckMessagesRequest, context: grpc.aio.ServicerContext
    ) -> pb.AckMessagesResponse:
        results = await self._bus.ack(
            current_tenant(), list(request.receipt_handles), current_actor()
        )
        return pb.AckMessagesResponse(results=[convert.receipt_result_to_proto(r) for r in results])

    async def NackMessages(
        self, request: pb.NackMessagesRequest, context: grpc.aio.ServicerContext
    ) -> pb.NackMessagesResponse:
        results = await self._bus.nack(
            current_tenant(),
            list(request.receipt_handles),
            optional_seconds(request, "delay") or 0.0,
            request.dead_letter,
            request.reason,
            current_actor(),
        )
        return pb.NackMessagesResponse(
            results=[convert.receipt_result_to_proto(r) for r in results]
        )

    async def ExtendVisibility(
        self, request: pb.ExtendVisibilityRequest, context: grpc.aio.ServicerContext
    ) -> pb.ExtendVisibilityResponse:
        results = await self._bus.extend(
            current_tenant(),
            list(request.receipt_handles),
            optional_seconds(request, "visibility_timeout"),
        )
        return pb.ExtendVisibilityResponse(
            results=[convert.receipt_result_to_proto(r) for r in results]
        )

    async def RequestReply(
        self, request: pb.RequestReplyRequest, context: grpc.aio.ServicerContext
    ) -> pb.RequestReplyResponse:
        request_id, reply = await self._bus.request_reply(
            current_tenant(),
            convert.request_draft(request),
            optional_seconds(request, "timeout"),
            context.time_remaining(),
            current_actor(),
        )
        return pb.RequestReplyResponse(
            request_message_id=request_id, reply=convert.message_to_proto(reply)
        )

    async def SendReply(
        self, request: pb.SendReplyRequest, context: grpc.aio.ServicerContext
    ) -> pb.SendReplyResponse:
        result = await self._bus.send_reply(
            current_tenant(),
            request.request_message_id,
            convert.reply_draft(request),
            current_actor(),
        )
        return pb.SendReplyResponse(
            message_id=result.message_id,
            duplicate=result.duplicate,
            delivered_to_waiter=result.delivered_to_waiter,
        )

    async def ListDeadLetters(
        self, request: pb.ListDeadLettersRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListDeadLettersResponse:
        letters, next_token = await self._bus.list_dead_letters(
            current_tenant(), request.agent_id, request.page_size, request.page_token
        )
        return pb.ListDeadLettersResponse(
            dead_letters=[convert.dead_letter_to_proto(letter) for letter in letters],
            next_page_token=next_token,
        )

    async def RedriveDeadLetters(
        self, request: pb.RedriveDeadLettersRequest, context: grpc.aio.ServicerContext
    ) -> pb.RedriveDeadLettersResponse:
        moved, missing = await self._bus.redrive(
            current_tenant(), request.agent_id, list(request.message_ids), current_actor()
        )
        return pb.RedriveDeadLettersResponse(redriven_count=moved, not_found_message_ids=missing)


def register(server: grpc.aio.Server, bus: MessageBus) -> None:
    """Adds MessageService, backed by `bus`, to `server`."""
    message_pb2_grpc.add_MessageServiceServicer_to_server(  # type: ignore[no-untyped-call]
        MessageServicer(bus), server
    )
