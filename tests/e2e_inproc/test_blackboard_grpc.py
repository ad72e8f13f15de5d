"""BlackboardService through gRPC on a server process: compaction, slow
subscribers, TTL expiry events, error codes and tenant isolation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from tests.e2e.errors import bad_field, error_info
from tests.e2e_inproc.conftest import (
    ALPHA,
    BACKENDS,
    BETA,
    Deployment,
    ServerProcess,
    aio_channel,
    backend_options,
    start_server,
)
from tests.harness.deadlines import scaled


def payload(data: bytes) -> pb.BlackboardValue:
    return pb.BlackboardValue(payload=common_pb2.Payload(data=data))


@pytest.fixture
async def stub(server: Deployment) -> AsyncIterator[BlackboardServiceStub]:
    async with aio_channel(server.addresses[0]) as channel:
        yield BlackboardServiceStub(channel)


async def put(stub: BlackboardServiceStub, board: str, key: str, meta: object = ALPHA) -> int:
    reply = await stub.PutEntry(
        pb.PutEntryRequest(board=board, key=key, value=payload(b"v")),
        metadata=meta,  # type: ignore[arg-type]
    )
    return int(reply.header.revision)


async def expect_error(call: object, code: grpc.StatusCode) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    assert caught.value.code() == code, caught.value.details()
    return caught.value


async def first_responses(call: grpc.aio.UnaryStreamCall, count: int) -> list[pb.WatchResponse]:
    return [await asyncio.wait_for(call.read(), scaled(5)) for _ in range(count)]


# ----- compaction -------------------------------------------------------------------


async def test_compacted_start_revision_is_out_of_range_with_the_oldest(
    stub: BlackboardServiceStub,
) -> None:
    # Tenant beta: compaction is per tenant and must not disturb other tests.
    revisions = [await put(stub, "compact", f"k{i % 3}", BETA) for i in range(6)]
    oldest = revisions[3]
    reply = await stub.CompactBlackboard(
        pb.CompactBlackboardRequest(revision=oldest), metadata=BETA
    )
    assert reply.header.oldest_revision == oldest
    call = stub.Watch(pb.WatchRequest(board="compact", start_revision=oldest - 1), metadata=BETA)
    error = await expect_error(call.read(), grpc.StatusCode.OUT_OF_RANGE)
    info = error_info(error)
    assert info.reason == "REVISION_COMPACTED"
    assert info.metadata["oldest_revision"] == str(oldest)
    read = stub.GetEntry(
        pb.GetEntryRequest(board="compact", key="k0", revision=oldest - 1), metadata=BETA
    )
    assert error_info(await expect_error(read, grpc.StatusCode.OUT_OF_RANGE)).metadata[
        "oldest_revision"
    ] == str(oldest)
    again = stub.CompactBlackboard(pb.CompactBlackboardRequest(revision=oldest), metadata=BETA)
    await expect_error(again, grpc.StatusCode.OUT_OF_RANGE)


async def test_watch_from_the_oldest_revision_with_a_snapshot_still_works(
    stub: BlackboardServiceStub,
) -> None:
    revisions = [await put(stub, "compact2", f"k{i}", BETA) for i in range(4)]
    await stub.CompactBlackboard(pb.CompactBlackboardRequest(revision=revisions[2]), metadata=BETA)
    call = stub.Watch(
        pb.WatchRequest(board="compact2", start_revision=revisions[2], initial_snapshot=True),
        metadata=BETA,
    )
    started, begin, chunk, end, events = await first_responses(call, 5)
    call.cancel()
    assert started.started.start_revision == revisions[2]
    assert begin.snapshot_begin.revision == revisions[2] - 1
    assert [e.key for e in chunk.snapshot_chunk.entries] == ["k0", "k1"]
    assert end.snapshot_end.entry_count == 2 and end.resume_revision == revisions[2]
    assert [e.revision for e in events.events.events] == revisions[2:]


# ----- slow subscribers -------------------------------------------------------------------


@pytest.fixture(params=BACKENDS)
def small_buffer_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    with backend_options(request.param) as settings:
        proc = start_server(tmp_path, bb_limits={"watch_buffer_responses": 4}, **settings)
        try:
            yield proc
        finally:
            proc.stop()


async def test_a_subscriber_that_stops_reading_is_cancelled_with_slow_consumer(
    small_buffer_server: ServerProcess,
) -> None:
    address = small_buffer_server.addresses[0]
    big = payload(b"x" * 256 * 1024)
    async with aio_channel(address) as reader, aio_channel(address) as writer:
        call = BlackboardServiceStub(reader).Watch(pb.WatchRequest(board="slow"), metadata=ALPHA)
        started = await asyncio.wait_for(call.read(), scaled(5))
        writes = BlackboardServiceStub(writer)
        # 64 MiB of events while the subscriber reads nothing: flow control
        # stalls its stream, its 4-response buffer overflows.
        for index in range(256):
            await writes.PutEntry(
                pb.PutEntryRequest(board="slow", key=f"k{index}", value=big), metadata=ALPHA
            )
        delivered: list[int] = []
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            for _ in range(300):  # it ends with an error well before 256 events
                response = await asyncio.wait_for(call.read(), scaled(10))
                assert response is not grpc.aio.EOF
                delivered.extend(e.revision for e in response.events.events)
    error = caught.value
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info = error_info(error)
    assert info.reason == "SLOW_CONSUMER"
    resume = int(info.metadata["resume_revision"])
    assert resume == (delivered[-1] + 1 if delivered else started.started.start_revision)
    assert len(delivered) < 256


# ----- TTL ---------------------------------------------------------------------------------


async def test_expiry_is_streamed_as_an_expire_event(stub: BlackboardServiceStub) -> None:
    request = pb.PutEntryRequest(board="ttl", key="lease", value=payload(b"v"))
    request.ttl.FromMilliseconds(200)
    written = await stub.PutEntry(request, metadata=ALPHA)
    assert written.entry.HasField("expire_time")
    call = stub.Watch(
        pb.WatchRequest(board="ttl", start_revision=written.header.revision), metadata=ALPHA
    )
    _, put_events, expire_events = await first_responses(call, 3)
    call.cancel()
    assert [e.type for e in put_events.events.events] == [pb.BLACKBOARD_EVENT_TYPE_PUT]
    (expired,) = expire_events.events.events
    assert expired.type == pb.BLACKBOARD_EVENT_TYPE_EXPIRE
    assert expired.entry.key == "lease" and not expired.entry.HasField("value")
    gone = await stub.GetEntry(pb.GetEntryRequest(board="ttl", key="lease"), metadata=ALPHA)
    assert not gone.found and gone.header.revision >= expired.revision


# ----- errors -------------------------------------------------------------------------------


def _put(**fields: object) -> pb.PutEntryRequest:
    base: dict[str, object] = {"board": "b", "key": "k", "value": payload(b"v")}
    base.update(fields)
    return pb.PutEntryRequest(**base)  # type: ignore[arg-type]


def _ttl_request(seconds: int, keep: bool = False) -> pb.PutEntryRequest:
    request = _put(keep_ttl=keep)
    request.ttl.seconds = seconds
    return request


def _eq(**target: object) -> pb.TxnCompare:
    return pb.TxnCompare(key="k", operator=pb.TXN_COMPARE_OPERATOR_EQUAL, **target)  # type: ignore[arg-type]


INVALID = [
    ("PutEntry", _put(board=""), "board"),
    ("PutEntry", _put(key="a\x00b"), "key"),
    ("PutEntry", _put(value=None), "value"),
    ("PutEntry", _ttl_request(-1), "ttl"),
    ("PutEntry", _ttl_request(5, keep=True), "ttl"),
    ("PutEntry", _put(expected_mod_revision=-1), "expected_mod_revision"),
    ("GetEntry", pb.GetEntryRequest(board="b", key=""), "key"),
    ("GetEntry", pb.GetEntryRequest(board="b", key="k", revision=-2), "revision"),
    ("GetEntry", pb.GetEntryRequest(board="b", key="k", revision=10**9), "revision"),
    ("DeleteEntry", pb.DeleteEntryRequest(board="b", key="k", expected_mod_revision=0),
     "expected_mod_revision"),
    ("ListEntries", pb.ListEntriesRequest(board="b", pattern="k[ab"), "pattern"),
    ("ListEntries", pb.ListEntriesRequest(board="b", pattern="k\\"), "pattern"),
    ("ListEntries", pb.ListEntriesRequest(board="b", page_size=-1), "page_size"),
    ("ListEntries", pb.ListEntriesRequest(board="b", page_token="%%%"), "page_token"),
    ("Txn", pb.TxnRequest(board="b", compares=[pb.TxnCompare(key="k", mod_revision=1)]),
     "compares[0].operator"),
    ("Txn", pb.TxnRequest(board="b", compares=[_eq()]), "compares[0].target"),
    ("Txn", pb.TxnRequest(board="b", compares=[pb.TxnCompare(
        key="k", operator=pb.TXN_COMPARE_OPERATOR_GREATER, exists=True)]),
     "compares[0].operator"),
    ("Txn", pb.TxnRequest(board="b", success=[pb.TxnOp()]), "success[0]"),
    ("Txn", pb.TxnRequest(board="b", failure=[
        pb.TxnOp(delete_entry=pb.TxnDelete(key="k")),
        pb.TxnOp(put_entry=pb.TxnPut(key="k", value=payload(b"v"))),
    ]), "failure[1].put_entry.key"),
    ("CompactBlackboard", pb.CompactBlackboardRequest(revision=0), "revision"),
]  # fmt: skip


@pytest.mark.parametrize(("method", "request_message", "field"), INVALID)
async def test_bad_input_is_invalid_argument_naming_the_field(
    stub: BlackboardServiceStub, method: str, request_message: object, field: str
) -> None:
    call = getattr(stub, method)(request_message, metadata=ALPHA)
    error = await expect_error(call, grpc.StatusCode.INVALID_ARGUMENT)
    assert bad_field(error) == field


async def test_bad_watch_requests_end_the_stream_naming_the_field(
    stub: BlackboardServiceStub,
) -> None:
    for request, field in [
        (pb.WatchRequest(board=""), "board"),
        (pb.WatchRequest(board="b", pattern="["), "pattern"),
        (pb.WatchRequest(board="b", start_revision=-1), "start_revision"),
        (pb.WatchRequest(board="b", event_types=[0]), "event_types[0]"),
    ]:
        call = stub.Watch(request, metadata=ALPHA)
        assert bad_field(await expect_error(call.read(), grpc.StatusCode.INVALID_ARGUMENT)) == field


async def test_over_limit_input_is_resource_exhausted(stub: BlackboardServiceStub) -> None:
    too_long = stub.PutEntry(_put(key="k" * 2000), metadata=ALPHA)
    assert bad_field(await expect_error(too_long, grpc.StatusCode.RESOURCE_EXHAUSTED)) == "key"
    too_big = stub.PutEntry(_put(value=payload(b"x" * (1024 * 1024 + 1))), metadata=ALPHA)
    assert bad_field(await expect_error(too_big, grpc.StatusCode.RESOURCE_EXHAUSTED)) == "value"
    ops = [pb.TxnOp(get_entry=pb.TxnGet(key=f"k{i}")) for i in range(129)]
    too_many = stub.Txn(pb.TxnRequest(board="b", success=ops), metadata=ALPHA)
    assert bad_field(await expect_error(too_many, grpc.StatusCode.RESOURCE_EXHAUSTED)) == "success"


async def test_failed_cas_is_failed_precondition_with_the_current_revision(
    stub: BlackboardServiceStub,
) -> None:
    revision = await put(stub, "cas-errors", "k")
    stale = stub.PutEntry(
        pb.PutEntryRequest(
            board="cas-errors", key="k", value=payload(b"w"), expected_mod_revision=revision - 1
        ),
        metadata=ALPHA,
    )
    info = error_info(await expect_error(stale, grpc.StatusCode.FAILED_PRECONDITION))
    assert info.reason == "REVISION_MISMATCH" and info.metadata["current_revision"] == str(revision)
    request = pb.PutEntryRequest(board="cas-errors", key="k", value=payload(b"w"))
    request.expected_mod_revision = 0  # create if absent: the key exists
    create = stub.PutEntry(request, metadata=ALPHA)
    await expect_error(create, grpc.StatusCode.FAILED_PRECONDITION)


# ----- tenancy ------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["**", "*", "?", "[a-z]*", "\\**", "%", "_*", ".*"])
async def test_no_pattern_reaches_another_tenants_keys(
    stub: BlackboardServiceStub, pattern: str
) -> None:
    await put(stub, "shared-name", "secret")
    await put(stub, "shared-name", "%")
    listing = await stub.ListEntries(
        pb.ListEntriesRequest(board="shared-name", pattern=pattern), metadata=BETA
    )
    assert list(listing.entries) == []
    everything = await stub.ListEntries(pb.ListEntriesRequest(board="shared-name"), metadata=BETA)
    assert list(everything.entries) == []
    mine = await stub.ListEntries(
        pb.ListEntriesRequest(board="shared-name", pattern="**"), metadata=ALPHA
    )
    assert sorted(e.key for e in mine.entries) == ["%", "secret"]


async def test_a_watch_sees_only_its_own_tenant(stub: BlackboardServiceStub) -> None:
    call = stub.Watch(pb.WatchRequest(board="tenancy"), metadata=BETA)
    await asyncio.wait_for(call.read(), scaled(5))
    await put(stub, "tenancy", "alpha-only", ALPHA)
    mine = await put(stub, "tenancy", "beta-only", BETA)
    response = await asyncio.wait_for(call.read(), scaled(5))
    call.cancel()
    assert [(e.entry.key, e.revision) for e in response.events.events] == [("beta-only", mine)]
