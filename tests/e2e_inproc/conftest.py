"""gRPC-level tests against a server process (tests/e2e_inproc/serve.py)
that wires the blackboard and the message bus, over loopback only."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

API_KEYS = {"key-alpha": "alpha", "key-beta": "beta"}
ALPHA = (("x-api-key", "key-alpha"),)
BETA = (("x-api-key", "key-beta"),)
REPO = Path(__file__).resolve().parents[2]


@dataclass
class ServerProcess:
    """A running server process with one address per replica."""

    data_dir: Path
    replicas: int = 1
    bb_limits: dict[str, object] = field(default_factory=dict)
    bus_limits: dict[str, object] = field(default_factory=dict)
    addresses: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        ready = self.data_dir / f"ready-{time.time_ns()}"
        args = [
            sys.executable,
            "-m",
            "tests.e2e_inproc.serve",
            "--data-dir",
            str(self.data_dir),
            "--ready-file",
            str(ready),
            "--replicas",
            str(self.replicas),
        ]
        for key, tenant in API_KEYS.items():
            args += ["--api-key", f"{key}={tenant}"]
        for name, value in self.bb_limits.items():
            args += ["--bb-limit", f"{name}={value}"]
        for name, value in self.bus_limits.items():
            args += ["--bus-limit", f"{name}={value}"]
        log = open(self.data_dir / "server.log", "ab")  # noqa: SIM115 - lives with the process
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.process = subprocess.Popen(args, stdout=log, stderr=log, cwd=REPO, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.log()}")
            if ready.exists() and ready.read_text().endswith("\n"):
                self.addresses = ready.read_text().split()
                return
            time.sleep(0.05)
        raise RuntimeError(f"server not ready after {timeout}s:\n{self.log()}")

    def log(self) -> str:
        path = self.data_dir / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_server(path: Path, **options: object) -> ServerProcess:
    server = ServerProcess(path, **options)  # type: ignore[arg-type]
    server.start()
    return server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Two replicas over one store, shared by the tests of a module."""
    proc = start_server(
        tmp_path_factory.mktemp("server"),
        replicas=2,
        bb_limits={"expiry_sweep_interval_seconds": 0.05, "min_progress_interval_seconds": 0.01},
        bus_limits={"sweep_interval_seconds": 0.05, "idle_poll_seconds": 0.2},
    )
    yield proc
    proc.stop()


def aio_channel(address: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(address)
