"""Issue 14: many Watch streams on one connection. Every stream the limits
admit opens (none CANCELLED by gRPC's pending queue), and one past a limit
fails at once with RESOURCE_EXHAUSTED naming the limit, logged by the server."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Iterator

import grpc
import pytest

from statekeeper_client.v1 import blackboard_pb2, blackboard_pb2_grpc, common_pb2
from tests.harness.backends import BACKENDS, backend
from tests.harness.deploy import statekeeper_replicas
from tests.harness.servers import ServerProcess
from tests.hostile.conftest import ALPHA

PER_CONNECTION = 2000
IN_ALL = 2300


@pytest.fixture(scope="module", params=BACKENDS)
def limited(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    limits = [
        # One worker process: the limits hold per process, and the test's two
        # connections must meet the same one.
        *("--workers", "1"),
        *("--limit", f"max_streams_per_connection={PER_CONNECTION}"),
        *("--limit", f"max_open_streams={IN_ALL}"),
    ]
    with backend(request.param, "streams") as where:
        path = tmp_path_factory.mktemp(f"streams-{request.param}")
        with statekeeper_replicas(path, where, extra_args=limits) as servers:
            yield servers[0]


async def first_message(call: grpc.aio.UnaryStreamCall) -> str:  # type: ignore[type-arg]
    """OK once the stream delivered a message, else the status it ended with."""
    try:
        await asyncio.wait_for(call.read(), 60)
    except grpc.aio.AioRpcError as error:
        return error.code().name
    return "OK"


async def open_watches(
    stub: blackboard_pb2_grpc.BlackboardServiceStub, board: str, count: int
) -> list[grpc.aio.UnaryStreamCall]:  # type: ignore[type-arg]
    calls = [
        stub.Watch(blackboard_pb2.WatchRequest(board=board), metadata=ALPHA) for _ in range(count)
    ]
    await asyncio.gather(*(call.wait_for_connection() for call in calls))
    return calls


async def put(stub: blackboard_pb2_grpc.BlackboardServiceStub, board: str) -> None:
    value = blackboard_pb2.BlackboardValue(payload=common_pb2.Payload(data=b"v"))
    request = blackboard_pb2.PutEntryRequest(board=board, key="k", value=value)
    await stub.PutEntry(request, metadata=ALPHA)


async def refusal(stub: blackboard_pb2_grpc.BlackboardServiceStub, board: str) -> str:
    call = stub.Watch(blackboard_pb2.WatchRequest(board=board), metadata=ALPHA)
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await asyncio.wait_for(call.read(), 30)
    assert failure.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    return str(failure.value.details())


async def exercise(address: str) -> None:
    board = f"b-{uuid.uuid4().hex[:8]}"
    # A local subchannel pool each: two connections (channels to one address
    # share a connection by default).
    own_connection = [("grpc.use_local_subchannel_pool", 1)]
    async with (
        grpc.aio.insecure_channel(address, options=own_connection) as one,
        grpc.aio.insecure_channel(address, options=own_connection) as two,
    ):
        first = blackboard_pb2_grpc.BlackboardServiceStub(one)
        second = blackboard_pb2_grpc.BlackboardServiceStub(two)
        calls = await open_watches(first, board, PER_CONNECTION)
        await put(first, board)
        outcomes = Counter(await asyncio.gather(*(first_message(c) for c in calls)))
        assert outcomes == Counter({"OK": PER_CONNECTION})
        assert "max_streams_per_connection" in await refusal(first, board)
        others = await open_watches(second, board, IN_ALL - PER_CONNECTION)
        assert "max_open_streams" in await refusal(second, board)
        for call in [*calls, *others]:
            call.cancel()
        await asyncio.sleep(1.0)  # the server sees the cancellations
        (again,) = await open_watches(first, board, 1)
        await put(first, board)
        assert await first_message(again) == "OK", "closed streams give their places back"
        again.cancel()


def test_streams_up_to_the_limits_open_and_past_them_fail_clearly(
    limited: ServerProcess,
) -> None:
    asyncio.run(exercise(limited.address))
    log = limited.log()
    assert "max_streams_per_connection (2000) reached" in log
    assert "max_open_streams (2300) reached" in log
