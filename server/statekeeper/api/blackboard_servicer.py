"""BlackboardService: translates requests into Blackboard calls."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from statekeeper.api import blackboard_convert as convert
from statekeeper.api.interceptor import current_actor, current_tenant
from statekeeper.core.blackboard.service import Blackboard
from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import blackboard_pb2_grpc


class BlackboardServicer(blackboard_pb2_grpc.BlackboardServiceServicer):
    def __init__(self, blackboard: Blackboard) -> None:
        self._blackboard = blackboard

    async def PutEntry(
        self, request: pb.PutEntryRequest, context: grpc.aio.ServicerContext
    ) -> pb.PutEntryResponse:
        outcome = await self._blackboard.put(
            current_tenant(),
            request.board,
            convert.put_op(request),
            writer_agent_id=request.writer_agent_id,
            expected_mod_revision=convert.optional_revision(request, "expected_mod_revision"),
            actor=current_actor(),
        )
        return pb.PutEntryResponse(
            header=convert.header_to_proto(outcome.header),
            entry=convert.entry_to_proto(outcome.entry),
            previous=convert.optional_entry(outcome.previous),
        )

    async def GetEntry(
        self, request: pb.GetEntryRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetEntryResponse:
        outcome = await self._blackboard.get(
            current_tenant(), request.board, request.key, request.revision
        )
        return pb.GetEntryResponse(
            header=convert.header_to_proto(outcome.header),
            found=outcome.entry is not None,
            entry=convert.optional_entry(outcome.entry),
        )

    async def DeleteEntry(
        self, request: pb.DeleteEntryRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteEntryResponse:
        outcome = await self._blackboard.delete(
            current_tenant(),
            request.board,
            request.key,
            expected_mod_revision=convert.optional_revision(request, "expected_mod_revision"),
            return_previous=request.return_previous,
            actor=current_actor(),
        )
        return pb.DeleteEntryResponse(
            header=convert.header_to_proto(outcome.header),
            deleted=outcome.deleted,
            previous=convert.optional_entry(outcome.previous),
        )

    async def ListEntries(
        self, request: pb.ListEntriesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListEntriesResponse:
        prefix, pattern = convert.selector_of(request)
        outcome = await self._blackboard.list_entries(
            current_tenant(),
            request.board,
            prefix,
            pattern,
            request.revision,
            request.page_size,
            request.page_token,
            request.keys_only,
        )
        return pb.ListEntriesResponse(
            header=convert.header_to_proto(outcome.header),
            entries=[convert.entry_to_proto(entry) for entry in outcome.entries],
            next_page_token=outcome.next_page_token,
        )

    async def Txn(
        self, request: pb.TxnRequest, context: grpc.aio.ServicerContext
    ) -> pb.TxnResponse:
        outcome = await self._blackboard.txn(
            current_tenant(),
            request.board,
            [
                convert.compare_from_proto(f"compares[{i}]", c)
                for i, c in enumerate(request.compares)
            ],
            [convert.op_from_proto(f"success[{i}]", op) for i, op in enumerate(request.success)],
            [convert.op_from_proto(f"failure[{i}]", op) for i, op in enumerate(request.failure)],
            writer_agent_id=request.writer_agent_id,
            actor=current_actor(),
        )
        return pb.TxnResponse(
            header=convert.header_to_proto(outcome.header),
            succeeded=outcome.succeeded,
            results=[convert.op_result_to_proto(result) for result in outcome.results],
        )

    async def Watch(
        self, request: pb.WatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.WatchResponse]:
        stream = self._blackboard.watch(current_tenant(), convert.watch_request(request))
        async for message in stream:
            yield convert.watch_message_to_proto(message)

    async def CompactBlackboard(
        self, request: pb.CompactBlackboardRequest, context: grpc.aio.ServicerContext
    ) -> pb.CompactBlackboardResponse:
        header = await self._blackboard.compact(current_tenant(), request.revision)
        return pb.CompactBlackboardResponse(header=convert.header_to_proto(header))


def register(server: grpc.aio.Server, blackboard: Blackboard) -> None:
    """Adds BlackboardService, backed by `blackboard`, to `server`."""
    blackboard_pb2_grpc.add_BlackboardServiceServicer_to_server(  # type: ignore[no-untyped-call]
        BlackboardServicer(blackboard), server
    )
