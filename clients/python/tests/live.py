"""A real statekeeper server process for the client tests: started on a free
loopback port with its own data dir, killed with SIGKILL and restarted on
the same port and data dir on demand, always stopped at the end.

The executable is $STATEKEEPER_BIN, else the repository's
.venv/bin/statekeeper. Waits are generous and scaled by
$STATEKEEPER_TEST_TIMEOUT_SCALE (default 1) for busy machines.

The embedded tier by default; with STATEKEEPER_CLIENT_TESTS_TIER=production,
the production tier on the PostgreSQL and Redis of
$STATEKEEPER_TEST_POSTGRES_DSN and $STATEKEEPER_TEST_REDIS_URL
(scripts/services.sh start DIR writes them to DIR/env). Every server gets a
tenant and a Redis key prefix of its own, kept across its restarts."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = Path(__file__).resolve().parents[3]
API_KEY = "sk-client-tests"


def scaled(seconds: float) -> float:
    """A wait scaled for slow machines."""
    return seconds * float(os.environ.get("STATEKEEPER_TEST_TIMEOUT_SCALE", "1"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_binary() -> str:
    return os.environ.get("STATEKEEPER_BIN") or str(REPO / ".venv" / "bin" / "statekeeper")


def production() -> bool:
    return os.environ.get("STATEKEEPER_CLIENT_TESTS_TIER", "embedded") == "production"


def tier_args(run: str) -> list[str]:
    """The flags of the tier the tests run against (see the module docstring)."""
    tier = os.environ.get("STATEKEEPER_CLIENT_TESTS_TIER", "embedded")
    if tier == "embedded":
        return []
    if tier != "production":
        raise ValueError(f"STATEKEEPER_CLIENT_TESTS_TIER={tier!r}: embedded or production")
    dsn = os.environ.get("STATEKEEPER_TEST_POSTGRES_DSN")
    redis_url = os.environ.get("STATEKEEPER_TEST_REDIS_URL")
    if not dsn or not redis_url:
        raise RuntimeError(
            "the production tier needs STATEKEEPER_TEST_POSTGRES_DSN and STATEKEEPER_TEST_REDIS_URL"
        )
    return [
        "--postgres-dsn",
        dsn,
        "--redis-url",
        redis_url,
        "--redis-key-prefix",
        f"client-tests-{run}",
        "--migrate-on-start",
    ]


class LiveServer:
    """`statekeeper serve` on 127.0.0.1:<port> with an API key."""

    def __init__(
        self, data_dir: Path, extra_args: tuple[str, ...] = (), replica_of: LiveServer | None = None
    ) -> None:
        self.data_dir = data_dir
        self.extra_args = extra_args
        #: Replicas (production tier) share the tenant and the Redis prefix.
        run = replica_of.run if replica_of is not None else uuid.uuid4().hex[:12]
        self.run = run
        #: A tenant of this server's own (the production tier shares a database).
        self.tenant = f"client-tests-{run}"
        self.tier_args = tier_args(run)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log_path = data_dir.parent / f"server-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        assert self.process is None, "already running"
        command = [
            server_binary(),
            "serve",
            "--listen",
            self.address,
            "--data-dir",
            str(self.data_dir),
            "--api-key",
            f"{API_KEY}={self.tenant}",
            "--log-level",
            "WARNING",
            "--shutdown-grace-seconds",
            "1",
            *self.tier_args,
            *self.extra_args,
        ]
        log = self.log_path.open("ab")
        try:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        finally:
            log.close()
        self.starts += 1
        self.wait_serving(scaled(90))

    def wait_serving(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}: {self.log()}")
            try:
                with grpc.insecure_channel(self.address) as channel:
                    status = (
                        health_pb2_grpc.HealthStub(channel)
                        .Check(health_pb2.HealthCheckRequest(), timeout=2)
                        .status
                    )
                if status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError as error:
                last = error
            time.sleep(0.2)
        raise TimeoutError(f"server not SERVING after {timeout:.0f}s ({last}): {self.log()}")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no goodbye to the clients."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=scaled(30))
        self.process = None

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=scaled(20))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=scaled(20))
        self.process = None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-3000:]
        except OSError:
            return ""
