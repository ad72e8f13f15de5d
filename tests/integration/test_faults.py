"""Faults under load, with real processes: Redis flushed and restarted,
PostgreSQL stopped and started. Nothing acknowledged is ever lost, no replica
reads a version older than one another replica acknowledged, and the server
recovers by itself."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import grpc
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.e2e.conftest import ServerProcess
from tests.e2e.errors import error_info
from tests.harness.deadlines import scaled, wait_until
from tests.integration.conftest import ServerFactory
from tests.integration.load import AppendLoad
from tests.services import Services


@dataclass
class StaleReadChecker:
    """Writes through one replica, reads through the other, alternating:
    every read must show at least the version the write acknowledged."""

    first: str
    second: str
    session_id: str
    checks: int = 0
    stale: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(timeout=scaled(60))

    def wait_for_checks(self, more: int, phase: str) -> None:
        """Waits until `more` further write/read checks completed in this phase."""
        target = self.checks + more
        wait_until(lambda: self.checks >= target, 60, f"{more} more checks {phase}")

    def _run(self) -> None:
        with grpc.insecure_channel(self.first) as a, grpc.insecure_channel(self.second) as b:
            stubs = [SessionServiceStub(a), SessionServiceStub(b)]
            while not self._stop.is_set():
                writer, reader = stubs if self.checks % 2 == 0 else stubs[::-1]
                self._check(writer, reader)

    def _check(self, writer: SessionServiceStub, reader: SessionServiceStub) -> None:
        update = pb.UpdateSessionRequest(
            session=pb.Session(session_id=self.session_id, metadata={"n": str(self.checks)})
        )
        try:
            written = writer.UpdateSession(update, timeout=scaled(30)).session.version
            read = reader.GetSession(
                pb.GetSessionRequest(session_id=self.session_id), timeout=scaled(30)
            ).session.version
        except grpc.RpcError:
            time.sleep(0.05)
            return
        self.checks += 1
        if read < written:
            self.stale.append(f"acknowledged version {written}, then read {read}")


def create_session(address: str, session_id: str) -> None:
    with grpc.insecure_channel(address) as channel:
        SessionServiceStub(channel).CreateSession(
            pb.CreateSessionRequest(session_id=session_id, session=pb.Session(user_id="u"))
        )


def health_of(server: ServerProcess) -> int:
    with grpc.insecure_channel(server.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        return int(stub.Check(health_pb2.HealthCheckRequest(), timeout=2).status)


def wait_health(server: ServerProcess, status: int, timeout: float) -> float:
    """Seconds until health reports `status` (a load-scaled deadline)."""
    started = time.monotonic()
    wait_until(lambda: health_of(server) == status, timeout, f"health {status}", server.log_tail)
    return time.monotonic() - started


def progress(load: AppendLoad, checker: StaleReadChecker, phase: str) -> None:
    """Both loads keep succeeding in this phase."""
    load.wait_for_acks(10, phase)
    checker.wait_for_checks(3, phase)


def test_redis_flush_and_restart_during_load_lose_nothing(
    production_server: ServerFactory, services: Services
) -> None:
    a, b = production_server(), production_server()
    create_session(a.address, "hot")
    create_session(a.address, "checked")
    load = AppendLoad([a.address, b.address], "hot", writers=6)
    checker = StaleReadChecker(a.address, b.address, "checked")
    load.start()
    checker.start()
    try:
        # Each wait proves the calls go on through that phase of the fault.
        progress(load, checker, "before the fault")
        redis.Redis.from_url(services.redis_url).flushall()
        progress(load, checker, "after FLUSHALL")
        services.control("stop-redis")
        progress(load, checker, "while Redis is down")
        services.control("start-redis")
        progress(load, checker, "after Redis restarted")
    finally:
        load.stop()
        checker.stop()
    stored = load.settle(a.address)
    load.assert_nothing_lost(stored)
    failures = {code: n for code, n in load.codes.items() if code != grpc.StatusCode.OK}
    assert failures == {}, f"Redis faults must not fail calls: {failures}"
    assert checker.stale == [], checker.stale[:5]
    cached = redis.Redis.from_url(services.redis_url).keys("*:s:hot")
    assert cached, "the cache was not used again after Redis came back"
    print(
        f"Redis FLUSHALL + restart: {len(load.acked)} acknowledged, 0 lost, 0 failed calls;"
        f" {checker.checks} cross-replica write/read checks, 0 stale"
    )


def test_postgres_stop_start_unavailable_then_recovers(
    production_server: ServerFactory, services: Services
) -> None:
    server = production_server()
    create_session(server.address, "durable")
    load = AppendLoad([server.address], "durable", writers=6)
    load.start()
    load.wait_for_acks(10, "before the fault")
    acked_before = len(load.acked)
    services.control("stop-postgres")
    try:
        to_not_serving = wait_health(server, health_pb2.HealthCheckResponse.NOT_SERVING, 10)
        with grpc.insecure_channel(server.address) as channel, pytest_raises() as failure:
            SessionServiceStub(channel).AppendMessages(
                pb.AppendMessagesRequest(
                    session_id="durable",
                    messages=[pb.SessionMessage(role=pb.ROLE_USER, content="x")],
                ),
                timeout=scaled(30),
            )
        # The load's own calls meet the outage too.
        wait_until(lambda: load.codes[grpc.StatusCode.UNAVAILABLE] > 0, 30, "UNAVAILABLE")
    finally:
        services.control("start-postgres")
    to_serving = wait_health(server, health_pb2.HealthCheckResponse.SERVING, 30)
    acked_at_recovery = len(load.acked)
    try:
        load.wait_for_acks(10, "after recovery")
    finally:
        load.stop()
    assert server.process is not None and server.process.poll() is None, "the server died"
    error = failure.value
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert error_info(error).reason == "STORAGE_UNAVAILABLE"
    assert "PostgreSQL" in (error.details() or "")
    assert load.codes[grpc.StatusCode.UNAVAILABLE] > 0
    assert len(load.acked) > acked_at_recovery, "writes did not resume after recovery"
    stored = load.settle(server.address)
    load.assert_nothing_lost(stored)
    print(
        f"PostgreSQL stop/start: {acked_before} acknowledged before, NOT_SERVING after"
        f" {to_not_serving:.2f}s, {load.codes[grpc.StatusCode.UNAVAILABLE]} UNAVAILABLE"
        f" while down, SERVING {to_serving:.2f}s after restart, {len(load.acked)}"
        f" acknowledged in all, 0 lost"
    )


class pytest_raises:  # noqa: N801 - reads like pytest.raises, for grpc.RpcError
    """`with pytest_raises() as failure:` captures the grpc.RpcError raised."""

    value: grpc.RpcError

    def __enter__(self) -> pytest_raises:
        return self

    def __exit__(self, kind: type | None, value: BaseException | None, tb: object) -> bool:
        assert isinstance(value, grpc.RpcError), f"expected an RpcError, got {value!r}"
        self.value = value
        return True
