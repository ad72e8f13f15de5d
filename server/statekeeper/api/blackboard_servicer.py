"""BlackboardService: translates requests into Blackboard calls."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any

import grpc

from statekeeper.api import blackboard_convert as convert
from statekeeper.api.handlers import register_with_serializers
from statekeeper.api.interceptor import current_actor, current_tenant
from statekeeper.core.blackboard.service import Blackboard
from statekeeper.core.blackboard.watch import WatchMessage
from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import blackboard_pb2_grpc


class BlackboardServicer(blackboard_pb2_grpc.BlackboardServiceServicer):
    def __init__(self, blackboard: Blackboard) -> None:
        self._blackboard = blackboard
        self._responses = convert.SerializedWatchResponses()

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

    async def Watch(self, request: pb.WatchRequest, context: grpc.aio.ServicerContext) -> None:
        """Writes each message serialized once for all the watchers that get
        it (the handler's response serializer passes bytes through); live
        events are handed to the writer by the hub's dispatch directly."""
        writer = _WatchWriter(context, self._responses)
        stream = self._blackboard.watch(current_tenant(), convert.watch_request(request), writer)
        try:
            async with contextlib.aclosing(stream):
                async for message in stream:
                    await writer.write(message)
        finally:
            await writer.close()

    async def CompactBlackboard(
        self, request: pb.CompactBlackboardRequest, context: grpc.aio.ServicerContext
    ) -> pb.CompactBlackboardResponse:
        header = await self._blackboard.compact(current_tenant(), request.revision)
        return pb.CompactBlackboardResponse(header=convert.header_to_proto(header))


class _WatchWriter:
    """Writes the responses of one Watch call in order, one at a time: the
    messages its stream yields and those the hub's dispatch hands over
    directly (core/blackboard/watch.py LiveSender), which start writing at
    once (_Write) so that the call's task is not woken for them.

    Every write runs in one copy of the call's context, which is merged back
    when the call ends: what the response serializer counts there (the
    access log's bytes out) reaches the call's context."""

    def __init__(
        self,
        context: grpc.aio.ServicerContext,
        encode: Callable[[WatchMessage], bytes],
    ) -> None:
        self._context = context
        self._encode = encode
        self._loop = asyncio.get_running_loop()
        self._writes_context = contextvars.copy_context()
        self._copied = dict(self._writes_context.items())
        self._call = asyncio.current_task()
        self._in_flight: _Write | None = None
        self._flushing = False

    def idle(self) -> bool:
        return self._in_flight is None or self._in_flight.ended

    def send(self, message: WatchMessage) -> None:
        """Starts writing `message`; the previous write must have ended."""
        write = self._context.write(self._encode(message))
        self._in_flight = _Write(write, self._writes_context, self._loop, self._written)

    def _written(self, write: _Write) -> None:
        """Runs as a write ends (from the step that ends it)."""
        if self._in_flight is write:
            self._in_flight = None
        if write.error is not None and not self._flushing and self._call is not None:
            # A direct write failed while the call's task waits for events:
            # the call is broken (its client went away), end it.
            self._call.cancel()

    async def write(self, message: WatchMessage) -> None:
        await self._flush()
        self.send(message)
        await self._flush()

    async def _flush(self) -> None:
        """Waits for the write in flight; raises what it raised."""
        self._flushing = True
        try:
            while (write := self._in_flight) is not None:
                if not write.ended:
                    # A future of its own: a cancelled call cancels only it,
                    # and the gRPC write in flight is left for close().
                    await write.until_ended()
                if self._in_flight is write:
                    self._in_flight = None
                write.result()  # raises what the write raised
        finally:
            self._flushing = False

    async def close(self) -> None:
        """Lets the last write end (a stream ending with an error resumes
        after it), or drops it if the call was cancelled; then merges the
        writes' context into the call's."""
        write = self._in_flight
        try:
            if write is not None:
                if self._call is not None and self._call.cancelling():
                    write.cancel()
                self._flushing = True
                await asyncio.wait([write.until_ended()])  # its outcome was taken by _written
        finally:
            for variable, value in self._writes_context.items():
                if self._copied.get(variable, _UNSET) is not value:
                    variable.set(value)


_UNSET = object()


class _Write:
    """One context.write driven without a task: its first step runs at once,
    in the caller's pass of the event loop, and each later one from the done
    callback of the future it waits on - what a Task does, without a Task's
    scheduling of every step (a commit makes one write per watcher). The
    steps run in `context`. When the write ends, `ended` is set, `error`
    holds what it raised (a CancelledError if it was cancelled), and
    `on_end` runs in that same step: no future and no callback of the loop
    per write; a future is made only for a caller that waits (until_ended)."""

    def __init__(
        self,
        write: Coroutine[Any, Any, None],
        context: contextvars.Context,
        loop: asyncio.AbstractEventLoop,
        on_end: Callable[[_Write], None],
    ) -> None:
        self._coroutine = write
        self._context = context
        self._loop = loop
        self._on_end = on_end
        self._waiting_on: Any = None
        self._waiters: list[asyncio.Future[None]] = []
        self.ended = False
        self.error: BaseException | None = None
        self._step()

    def cancel(self) -> None:
        if self._waiting_on is not None:
            self._waiting_on.cancel()  # the write meets CancelledError where it waits

    def until_ended(self) -> asyncio.Future[None]:
        """A new future that completes (never with an error) when the write
        ends: cancelling it leaves the write alone."""
        waiter: asyncio.Future[None] = self._loop.create_future()
        if self.ended:
            waiter.set_result(None)
        else:
            self._waiters.append(waiter)
        return waiter

    def result(self) -> None:
        """Raises what the write raised (it has ended)."""
        if self.error is not None:
            raise self.error

    def _end(self, error: BaseException | None) -> None:
        self.ended = True
        self.error = error
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()
        self._on_end(self)

    def _step(self, _: object = None) -> None:
        self._waiting_on = None
        if self.ended:  # never expected: nothing else ends it
            self._coroutine.close()
            return
        try:
            awaited = self._context.run(self._coroutine.send, None)
        except StopIteration:
            self._end(None)
            return
        except asyncio.CancelledError as cancelled:
            self._end(cancelled)
            return
        except Exception as exc:
            self._end(exc)
            return
        if awaited is None:  # a bare yield: step again on the next pass
            self._loop.call_soon(self._step)
        elif getattr(awaited, "_asyncio_future_blocking", False):
            awaited._asyncio_future_blocking = False
            self._waiting_on = awaited
            awaited.add_done_callback(self._step)
        else:
            self._coroutine.close()
            self._end(RuntimeError(f"a write awaited {awaited!r}"))


def register(server: grpc.aio.Server, blackboard: Blackboard) -> None:
    """Adds BlackboardService, backed by `blackboard`, to `server`: the
    generated handlers, with Watch's response serializer passing the
    servicer's bytes through."""
    register_with_serializers(
        server,
        blackboard_pb2_grpc.add_BlackboardServiceServicer_to_server,
        BlackboardServicer(blackboard),
        {"Watch": convert.serialized_watch_response},
    )
