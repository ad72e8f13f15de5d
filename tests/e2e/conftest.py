"""A real `statekeeper serve` process on a free port, driven through the
generated stubs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from statekeeper_client.v1 import session_pb2_grpc

API_KEYS = {"key-alpha": "alpha", "key-beta": "beta"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServerProcess:
    """A running server; `restart()` and `kill()` simulate operations and crashes."""

    data_dir: Path
    extra_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        self.port = self.port or free_port()
        self.log_path = self.data_dir / f"server-{self.port}-{time.time_ns()}.log"
        args = [
            sys.executable,
            "-m",
            "statekeeper",
            "serve",
            "--listen",
            self.address,
            "--data-dir",
            str(self.data_dir),
            *self.extra_args,
        ]
        env = {**os.environ, **self.env}
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
        self.wait_serving()

    def wait_serving(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        with grpc.insecure_channel(self.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                assert self.process is not None
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited early:\n{self.log()}")
                try:
                    reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    pass
                time.sleep(0.05)
        raise RuntimeError(f"server not serving after {timeout}s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path else ""

    def kill(self) -> None:
        """kill -9: no chance to flush or clean up."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def terminate(self, timeout: float = 30.0) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout)

    def restart(self) -> None:
        self.kill()
        self.start()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A multi-tenant server shared by the tests of one module."""
    keys = [arg for key, tenant in API_KEYS.items() for arg in ("--api-key", f"{key}={tenant}")]
    proc = ServerProcess(
        tmp_path_factory.mktemp("server"),
        extra_args=[
            *keys,
            "--sweep-interval-seconds",
            "0.3",
            "--expired-retention-seconds",
            "1",
        ],
    )
    proc.start()
    yield proc
    proc.kill()


def channel_for(server: ServerProcess) -> grpc.Channel:
    return grpc.insecure_channel(server.address)


def auth(key: str = "key-alpha") -> list[tuple[str, str]]:
    return [("x-api-key", key)]


@pytest.fixture
def sessions(server: ServerProcess) -> Iterator[session_pb2_grpc.SessionServiceStub]:
    with channel_for(server) as channel:
        yield session_pb2_grpc.SessionServiceStub(channel)
