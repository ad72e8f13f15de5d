"""Issue 14 item 7: per-tenant quotas on a real `statekeeper serve`.

Each quota refuses with RESOURCE_EXHAUSTED, ErrorInfo LIMIT_EXCEEDED naming
the quota and a google.rpc.RetryInfo, and the call succeeds again once the
delay has passed; a per-tenant override changes one tenant only. Rates and
streams are checked on the embedded store (they live in the server
process); the stored-bytes quota, measured in the store, on both backends.
Timing is generous: rates are low enough that a busy machine cannot refill
a bucket between two calls by accident, and only "at least" is asserted.
"""

from __future__ import annotations

import concurrent.futures
import json
import secrets
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from statekeeper_client.v1 import (
    blackboard_pb2,
    blackboard_pb2_grpc,
    common_pb2,
    items_pb2,
    items_pb2_grpc,
)
from tests.harness.backends import BACKENDS, backend
from tests.harness.deadlines import scaled, wait_until
from tests.harness.deploy import statekeeper_replicas
from tests.harness.servers import ServerProcess

KEYS = {
    "key-alpha": "alpha",  # the default: 3 requests at once, then one per 5 s
    "key-beta": "beta",  # override: no request rate
    "key-gamma": "gamma",  # override: 2,000 bytes/s, burst 6,000
    "key-delta": "delta",  # override: 2 streams
    "key-epsilon": "epsilon",  # stored bytes (second server)
}
RATE = 0.2
SERVED = {grpc.StatusCode.OK, grpc.StatusCode.NOT_FOUND}
BURST = 3


@dataclass
class Refusal:
    quota: str
    retry_delay: float
    metadata: dict[str, str]


def refusal(error: grpc.RpcError) -> Refusal:
    """The quota refusal carried by `error` (asserting it is one)."""
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None, "no rich status"
    info = error_details_pb2.ErrorInfo()
    retry = error_details_pb2.RetryInfo()
    found = set()
    for detail in status.details:
        if detail.Is(info.DESCRIPTOR):
            detail.Unpack(info)
            found.add("info")
        elif detail.Is(retry.DESCRIPTOR):
            detail.Unpack(retry)
            found.add("retry")
    assert found == {"info", "retry"}, status
    assert info.reason == "LIMIT_EXCEEDED"
    assert info.domain == "statekeeper.dev"
    delay = retry.retry_delay.seconds + retry.retry_delay.nanos / 1e9
    assert delay > 0
    return Refusal(info.metadata["quota"], delay, dict(info.metadata))


def md(key: str) -> tuple[tuple[str, str]]:
    return (("x-api-key", key),)


def get_entry(stub: blackboard_pb2_grpc.BlackboardServiceStub, key: str) -> grpc.StatusCode:
    """One small request; its code (OK or NOT_FOUND: served)."""
    try:
        stub.GetEntry(
            blackboard_pb2.GetEntryRequest(board="quota", key="absent"),
            metadata=md(key),
            timeout=scaled(30),
        )
    except grpc.RpcError as error:
        return error.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


@pytest.fixture(scope="module")
def rates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    args = [
        *("--workers", "1", "--log-format", "json"),
        *("--quota", f"requests_per_second={RATE}", "--quota", f"requests_burst={BURST}"),
        *("--quota", "beta:requests_per_second=0"),
        *("--quota", "gamma:requests_per_second=0"),
        *("--quota", "gamma:bytes_per_second=2000", "--quota", "gamma:bytes_burst=6000"),
        *("--quota", "delta:requests_per_second=0", "--quota", "delta:max_streams=2"),
    ]
    path = tmp_path_factory.mktemp("quotas")
    with statekeeper_replicas(path, None, extra_args=args, api_keys=KEYS) as servers:
        yield servers[0]


@pytest.fixture(scope="module")
def channel(rates: ServerProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(rates.address) as opened:
        yield opened


def test_request_rate_refuses_with_retry_info_and_recovers(channel: grpc.Channel) -> None:
    stub = blackboard_pb2_grpc.BlackboardServiceStub(channel)  # type: ignore[no-untyped-call]
    started = time.monotonic()
    served = 0
    refused: grpc.RpcError | None = None
    for _ in range(50):  # bounded: the burst plus what the rate adds meanwhile
        try:
            stub.GetEntry(
                blackboard_pb2.GetEntryRequest(board="quota", key="absent"),
                metadata=md("key-alpha"),
                timeout=scaled(30),
            )
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                refused = error
                break
            assert error.code() == grpc.StatusCode.NOT_FOUND
        served += 1
    elapsed = time.monotonic() - started
    assert refused is not None, "never refused"
    assert BURST <= served <= BURST + elapsed * RATE + 1
    info = refusal(refused)
    assert info.quota == "requests_per_second"
    assert info.metadata["limit"] == f"{RATE:g}"
    assert info.retry_delay <= 1 / RATE + 0.01
    # Another tenant (override: no rate) is not affected meanwhile.
    assert {get_entry(stub, "key-beta") for _ in range(10)} <= SERVED
    # After the delay the tenant is served again.
    time.sleep(info.retry_delay + 0.05)
    assert get_entry(stub, "key-alpha") in SERVED


def put_item(stub: items_pb2_grpc.ItemServiceStub, key: str, name: str, size: int) -> None:
    # Random text: PostgreSQL counts values as stored, compressed.
    value = json.dumps({"text": secrets.token_urlsafe(size)[:size]})
    stub.PutItem(
        items_pb2.PutItemRequest(namespace=["quota"], key=name, value_json=value),
        metadata=md(key),
        timeout=scaled(30),
    )


def test_byte_rate_refuses_with_retry_info_and_recovers(channel: grpc.Channel) -> None:
    stub = items_pb2_grpc.ItemServiceStub(channel)  # type: ignore[no-untyped-call]
    put_item(stub, "key-gamma", "a", 4000)  # within the 6,000-byte burst
    with pytest.raises(grpc.RpcError) as refused:
        put_item(stub, "key-gamma", "b", 4000)  # ~2,000 left: refused
    info = refusal(refused.value)
    assert info.quota == "bytes_per_second"
    # ~2,000 missing bytes at 2,000 bytes/s: about a second (less if the
    # machine was slow between the calls).
    assert info.retry_delay <= 2.1
    time.sleep(info.retry_delay + 0.05)
    put_item(stub, "key-gamma", "b", 4000)
    # A request larger than the whole burst is admitted from a full bucket.
    time.sleep(3.1)
    put_item(stub, "key-gamma", "big", 9000)
    with pytest.raises(grpc.RpcError) as owing:
        put_item(stub, "key-gamma", "c", 10)
    assert refusal(owing.value).quota == "bytes_per_second"


def test_stream_quota_refuses_the_third_watch_and_recovers(channel: grpc.Channel) -> None:
    stub = blackboard_pb2_grpc.BlackboardServiceStub(channel)  # type: ignore[no-untyped-call]
    board = f"b-{uuid.uuid4().hex[:8]}"
    request = blackboard_pb2.WatchRequest(board=board)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        watches = [stub.Watch(request, metadata=md("key-delta")) for _ in range(2)]
        for watch in watches:
            assert pool.submit(next, watch).result(timeout=scaled(30)).HasField("started")
        third = stub.Watch(request, metadata=md("key-delta"))
        with pytest.raises(grpc.RpcError) as refused:
            pool.submit(next, third).result(timeout=scaled(30))
        info = refusal(refused.value)
        assert info.quota == "max_streams"
        assert info.metadata["limit"] == "2"
        # Another tenant opens streams freely.
        other = stub.Watch(request, metadata=md("key-beta"))
        assert pool.submit(next, other).result(timeout=scaled(30)).HasField("started")
        other.cancel()
        # One closes: the tenant may open one again (the server notices the
        # cancel asynchronously, hence the wait).
        watches[0].cancel()

        def reopened() -> bool:
            again = stub.Watch(request, metadata=md("key-delta"))
            try:
                first = pool.submit(next, again).result(timeout=scaled(30))
            except grpc.RpcError as error:
                assert refusal(error).quota == "max_streams"
                return False
            watches.append(again)
            return bool(first.HasField("started"))

        wait_until(reopened, 30, "a stream slot freed", interval=0.5)
        for watch in watches:
            watch.cancel()


def test_refusals_are_logged_rate_limited(rates: ServerProcess) -> None:
    lines = [json.loads(line) for line in rates.log().splitlines() if "refused over quota" in line]
    assert lines, rates.log_tail()
    assert {line["quota"] for line in lines} >= {"requests_per_second", "max_streams"}
    assert {line["level"] for line in lines} == {"WARNING"}
    for secret in KEYS:
        assert secret not in rates.log()


@pytest.fixture(scope="module", params=BACKENDS)
def stored(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    args = [
        *("--log-format", "json", "--usage-interval-seconds", "0.5"),
        *("--quota", "epsilon:max_stored_bytes=30000"),
    ]
    with backend(request.param, "quota") as where:
        path = tmp_path_factory.mktemp(f"stored-{request.param}")
        with statekeeper_replicas(path, where, extra_args=args, api_keys=KEYS) as servers:
            yield servers[0]


def test_stored_bytes_quota_refuses_writes_serves_reads_and_deletes(
    stored: ServerProcess, tmp_path: Path
) -> None:
    with grpc.insecure_channel(stored.address) as opened:
        stub = items_pb2_grpc.ItemServiceStub(opened)  # type: ignore[no-untyped-call]
        written: list[str] = []
        refused: grpc.RpcError | None = None
        deadline = time.monotonic() + scaled(120)
        # Bounded: 8 KB items until the measurement (every 0.5 s) sees 30 KB.
        while refused is None and time.monotonic() < deadline and len(written) < 200:
            name = f"i{len(written)}"
            try:
                put_item(stub, "key-epsilon", name, 8000)
            except grpc.RpcError as error:
                refused = error
                break
            written.append(name)
            time.sleep(0.2)
        assert refused is not None, "never refused"
        assert len(written) >= 3  # 30,000 bytes hold three 8 KB items at least
        info = refusal(refused)
        assert info.quota == "max_stored_bytes"
        assert info.metadata["limit"] == "30000"
        # Writes stay refused (small ones too), across other services.
        with pytest.raises(grpc.RpcError) as still:
            put_item(stub, "key-epsilon", "small", 1)
        assert refusal(still.value).quota == "max_stored_bytes"
        board = blackboard_pb2_grpc.BlackboardServiceStub(opened)  # type: ignore[no-untyped-call]
        with pytest.raises(grpc.RpcError) as bb:
            board.PutEntry(
                blackboard_pb2.PutEntryRequest(
                    board="q",
                    key="k",
                    value=blackboard_pb2.BlackboardValue(payload=common_pb2.Payload(data=b"v")),
                ),
                metadata=md("key-epsilon"),
                timeout=scaled(30),
            )
        assert refusal(bb.value).quota == "max_stored_bytes"
        # After a restart the process knows nothing of those writes: the
        # measurement of the store alone makes it refuse again.
        stored.restart()

        def refused_again() -> bool:
            try:
                put_item(stub, "key-epsilon", f"probe-{uuid.uuid4().hex[:6]}", 1)
            except grpc.RpcError as error:
                if error.code() == grpc.StatusCode.UNAVAILABLE:
                    return False  # the channel reconnecting to the new process
                return refusal(error).quota == "max_stored_bytes"
            return False

        wait_until(refused_again, 60, "measured over the quota", stored.log_tail, interval=0.5)
        # Reads are served, and so are deletes.
        got = stub.GetItem(
            items_pb2.GetItemRequest(namespace=["quota"], key=written[0]),
            metadata=md("key-epsilon"),
            timeout=scaled(30),
        )
        assert got.item.key == written[0]
        # Another tenant writes freely.
        put_item(stub, "key-alpha", "other", 8000)
        for name in written:
            stub.DeleteItem(
                items_pb2.DeleteItemRequest(namespace=["quota"], key=name),
                metadata=md("key-epsilon"),
                timeout=scaled(30),
            )

        # Once measured below the quota again, writes are accepted.
        def accepted() -> bool:
            try:
                put_item(stub, "key-epsilon", "again", 100)
            except grpc.RpcError as error:
                assert refusal(error).quota == "max_stored_bytes"
                return False
            return True

        wait_until(accepted, 60, "writes accepted after deletes", stored.log_tail, interval=0.5)
