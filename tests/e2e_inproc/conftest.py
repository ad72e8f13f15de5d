"""gRPC-level tests against server processes (tests/e2e_inproc/serve.py)
that wire the blackboard and the message bus, over loopback only.

Every test of the shared `server` fixture runs on each backend:

* embedded:   one process, two replicas over one embedded store;
* production: two processes (one replica each) sharing one PostgreSQL
  database (fresh for the module) and one Redis (a prefix of their own),
  so replicas reach each other only through PostgreSQL and Redis.

The production backend is skipped with the reason printed when the test
services are not running (tests/services.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

from tests.services import configured, create_database, drop_database, reachable

API_KEYS = {"key-alpha": "alpha", "key-beta": "beta"}
ALPHA = (("x-api-key", "key-alpha"),)
BETA = (("x-api-key", "key-beta"),)
REPO = Path(__file__).resolve().parents[2]
BACKENDS = ("embedded", "production")


@dataclass
class ServerProcess:
    """A running server process with one address per replica."""

    data_dir: Path
    replicas: int = 1
    bb_limits: dict[str, object] = field(default_factory=dict)
    bus_limits: dict[str, object] = field(default_factory=dict)
    addresses: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None
    # Production tier (empty: the embedded store in data_dir).
    postgres_dsn: str = ""
    redis_url: str = ""
    redis_prefix: str = "sk"

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
        if self.postgres_dsn:
            args += ["--postgres-dsn", self.postgres_dsn, "--redis-prefix", self.redis_prefix]
            if self.redis_url:
                args += ["--redis-url", self.redis_url]
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


@dataclass
class Deployment:
    """The replicas of one backend: one process with N replicas (embedded)
    or N processes with one replica each (production)."""

    processes: list[ServerProcess]

    @property
    def addresses(self) -> list[str]:
        return [address for process in self.processes for address in process.addresses]

    def stop(self) -> None:
        for process in self.processes:
            process.stop()


@contextmanager
def backend_options(backend: str) -> Iterator[dict[str, object]]:
    """ServerProcess options of `backend`: nothing for embedded; for
    production, a fresh PostgreSQL database (dropped afterwards) and a Redis
    prefix of its own."""
    if backend == "embedded":
        yield {}
        return
    services = configured()
    asyncio.run(reachable(services))
    dsn = asyncio.run(create_database(services))
    try:
        yield {
            "postgres_dsn": dsn,
            "redis_url": services.redis_url,
            "redis_prefix": f"e2e-{uuid.uuid4().hex[:8]}",
        }
    finally:
        asyncio.run(drop_database(services, dsn))


def start_deployment(
    path: Path, backend_settings: dict[str, object], replicas: int = 2, **options: object
) -> Deployment:
    if not backend_settings:
        return Deployment([start_server(path, replicas=replicas, **options)])
    processes: list[ServerProcess] = []
    try:
        for index in range(replicas):
            directory = path / f"replica-{index}"
            directory.mkdir(exist_ok=True)
            processes.append(start_server(directory, **backend_settings, **options))
    except BaseException:
        Deployment(processes).stop()
        raise
    return Deployment(processes)


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    """Two replicas of one backend, shared by the tests of a module."""
    with backend_options(request.param) as settings:
        deployment = start_deployment(
            tmp_path_factory.mktemp("server"),
            settings,
            bb_limits={
                "expiry_sweep_interval_seconds": 0.05,
                "min_progress_interval_seconds": 0.01,
            },
            bus_limits={"sweep_interval_seconds": 0.05, "idle_poll_seconds": 0.2},
        )
        try:
            yield deployment
        finally:
            deployment.stop()


def aio_channel(address: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(address)
