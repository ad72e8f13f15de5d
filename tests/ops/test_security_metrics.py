"""Security signals an operator watches: quota refusals and failed
authentications on /metrics, and an access log a flood of refusals cannot
flood (one line per second per method and code, saying how many calls it
stands for)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import grpc
import pytest

from statekeeper.api.access_log import AccessLog
from statekeeper.core.tenancy import Authenticator
from statekeeper.telemetry import CallRecord
from statekeeper_client.v1 import blackboard_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from tests.harness.deadlines import scaled, wait_until
from tests.harness.processes import free_port
from tests.harness.servers import ServerProcess
from tests.ops.test_telemetry import access_lines, scrape, value

KEY = "sk-security-metrics-alpha"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[ServerProcess, int]]:
    port = free_port()
    process = ServerProcess(
        tmp_path,
        extra_args=[
            *("--api-key", f"{KEY}=alpha"),
            *("--metrics-listen", f"127.0.0.1:{port}"),
            # One request a second, no burst beyond it: the second call in a
            # second is refused.
            *("--quota", "requests_per_second=1", "--quota", "requests_burst=1"),
        ],
    )
    process.start()
    try:
        yield process, port
    finally:
        process.stop()


def test_refusals_and_failed_logins_are_counted_and_not_logged_per_call(
    server: tuple[ServerProcess, int],
) -> None:
    process, port = server
    with grpc.insecure_channel(process.address) as channel:
        stub = BlackboardServiceStub(channel)
        request = blackboard_pb2.GetEntryRequest(board="b", key="k")
        for _ in range(30):
            with pytest.raises(grpc.RpcError) as refused:
                stub.GetEntry(request, metadata=[("x-api-key", "sk-wrong")], timeout=scaled(10))
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        codes = []
        for _ in range(30):
            try:
                stub.GetEntry(request, metadata=[("x-api-key", KEY)], timeout=scaled(10))
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as error:
                codes.append(error.code())
        assert grpc.StatusCode.RESOURCE_EXHAUSTED in codes

    def counted() -> bool:
        samples = scrape(port)
        refused = value(
            samples, "statekeeper_quota_refusals_total", tenant="alpha", quota="requests_per_second"
        )
        return value(samples, "statekeeper_auth_failures_total") >= 30 and refused >= 1

    wait_until(lambda: counted() or None, 30, "refusals on /metrics")
    samples = scrape(port)
    refusals = value(
        samples, "statekeeper_quota_refusals_total", tenant="alpha", quota="requests_per_second"
    )
    assert refusals == codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED)
    # 30 bad keys in well under the flood interval on a quiet box; on a busy
    # one a few seconds: never one line each.
    unauthenticated = [
        line for line in access_lines(process) if line["grpc_code"] == "UNAUTHENTICATED"
    ]
    assert 1 <= len(unauthenticated) < 30


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_access_log_holds_back_repeated_refusals(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    access = AccessLog(Authenticator({}, {}), sample_rate=1.0, clock=clock)
    context = SimpleNamespace(
        peer=lambda: "ipv4:127.0.0.1:1", invocation_metadata=lambda: (), auth_context=lambda: {}
    )

    def call(code: str, method: str = "/statekeeper.v1.BlackboardService/GetEntry") -> None:
        access.write(CallRecord(method, "unary", code, 0.001, 10, 0), context)  # type: ignore[arg-type]

    def lines() -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.name == "statekeeper.access_log"]

    with caplog.at_level(logging.INFO, logger="statekeeper.access_log"):
        for _ in range(50):
            call("UNAUTHENTICATED")
        assert len(lines()) == 1 and not hasattr(lines()[0], "calls")
        call("NOT_FOUND")  # other codes are logged every time
        call("NOT_FOUND")
        call("RESOURCE_EXHAUSTED")  # another code: its own line
        assert len(lines()) == 4
        clock.now += 1.0
        call("UNAUTHENTICATED")
        # The next line stands for itself and the 49 held back.
        assert len(lines()) == 5 and getattr(lines()[-1], "calls", None) == 50
