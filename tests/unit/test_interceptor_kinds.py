"""The interceptor authenticates and checks every kind of call, including
client streams the contract does not have yet, and serves response streams
in the call's own task."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator

import grpc
import pytest

from statekeeper.api.interceptor import DomainInterceptor, current_tenant
from statekeeper.core.tenancy import Authenticator
from statekeeper_client.v1 import message_pb2 as pb
from tests.e2e.errors import bad_field

KEY = (("x-api-key", "key-alpha"),)
Request = pb.SendMessageRequest


async def collect(requests: AsyncIterator[Request], context: object) -> Request:
    """Client stream: answers with the tenant and the number of requests."""
    count = 0
    async for _ in requests:
        count += 1
    return Request(to_agent=current_tenant(), max_deliveries=count)


async def chat(requests: AsyncIterator[Request], context: object) -> AsyncIterator[Request]:
    async for request in requests:
        yield Request(to_agent=current_tenant(), type=request.type)


# What the cleanup of each `endless` stream saw: the caller's tenant, or the
# error reading it (cleanup run by a garbage-collection finalizer in some
# other task would not see the caller).
cleanups: list[str] = []


async def endless(request: Request, context: object) -> AsyncIterator[Request]:
    """Server stream that writes until the client cancels."""
    try:
        while True:
            yield Request(type="tick")
    finally:
        try:
            cleanups.append(current_tenant())
        except LookupError as error:
            cleanups.append(f"no caller: {error!r}")


@pytest.fixture
async def address() -> AsyncIterator[str]:
    server = grpc.aio.server(
        interceptors=[DomainInterceptor(Authenticator({"key-alpha": "alpha"}))]
    )
    kinds = {
        "Collect": grpc.stream_unary_rpc_method_handler(
            collect, Request.FromString, Request.SerializeToString
        ),
        "Chat": grpc.stream_stream_rpc_method_handler(
            chat, Request.FromString, Request.SerializeToString
        ),
        "Endless": grpc.unary_stream_rpc_method_handler(
            endless, Request.FromString, Request.SerializeToString
        ),
    }
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("test.Kinds", kinds)])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    yield f"127.0.0.1:{port}"
    await server.stop(None)


def stubs(channel: grpc.aio.Channel) -> tuple[grpc.aio.StreamUnaryMultiCallable, ...]:
    serialize, parse = Request.SerializeToString, Request.FromString
    return (
        channel.stream_unary("/test.Kinds/Collect", serialize, parse),
        channel.stream_stream("/test.Kinds/Chat", serialize, parse),  # type: ignore[return-value]
    )


async def test_client_streams_are_authenticated(address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        collect_call, chat_call = stubs(channel)
        with pytest.raises(grpc.aio.AioRpcError) as unary:
            await collect_call(iter([Request(type="a")]))
        assert unary.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.aio.AioRpcError) as bidi:
            async for _ in chat_call(iter([Request(type="a")])):
                pass
        assert bidi.value.code() == grpc.StatusCode.UNAUTHENTICATED
        reply = await collect_call(iter([Request(type="a"), Request(type="b")]), metadata=KEY)
        assert (reply.to_agent, reply.max_deliveries) == ("alpha", 2)
        answers = [r async for r in chat_call(iter([Request(type="a")]), metadata=KEY)]
        assert [(r.to_agent, r.type) for r in answers] == [("alpha", "a")]


async def test_every_message_of_a_client_stream_is_checked(address: str) -> None:
    bad = Request(type="b")
    bad.ttl.seconds = -1
    async with grpc.aio.insecure_channel(address) as channel:
        collect_call, chat_call = stubs(channel)
        with pytest.raises(grpc.aio.AioRpcError) as unary:
            await collect_call(iter([Request(type="a"), bad]), metadata=KEY)
        assert unary.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert bad_field(unary.value) == "ttl"  # type: ignore[arg-type]
        with pytest.raises(grpc.aio.AioRpcError) as bidi:
            async for _ in chat_call(iter([Request(type="a\x00")]), metadata=KEY):
                pass
        assert bidi.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert bad_field(bidi.value) == "type"  # type: ignore[arg-type]


async def test_a_cancelled_stream_is_cleaned_up_in_its_call_as_its_caller(
    address: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Cancelled mid-write, a stream must not be left to a garbage-collection
    finalizer (which would close it in another task and Context: the
    `ValueError ... different Context` / "Task exception was never
    retrieved" of issue 14)."""
    cleanups.clear()
    calls = 50
    async with grpc.aio.insecure_channel(address) as channel:
        endless_call = channel.unary_stream(
            "/test.Kinds/Endless", Request.SerializeToString, Request.FromString
        )
        for _ in range(calls):
            call = endless_call(Request(), metadata=KEY)
            for _ in range(3):
                await call.read()
            call.cancel()
        for _ in range(100):  # the server learns of each cancellation shortly
            if len(cleanups) == calls:
                break
            await asyncio.sleep(0.05)
        gc.collect()  # finalizers left behind would run (and log) now
        await asyncio.sleep(0.2)
        gc.collect()
    assert cleanups == ["alpha"] * calls
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
