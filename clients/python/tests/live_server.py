"""A real `statekeeper serve` process for the adapter tests of this package.

The server runs as its own process (the `statekeeper` command installed next
to this Python, or STATEKEEPER_BIN) on a free loopback port:

* embedded (always): the embedded store in a fresh data directory;
* production (when STATEKEEPER_CLIENT_TEST_PRODUCTION=1): PostgreSQL and Redis
  of `scripts/services.sh start DIR && . DIR/env` (STATEKEEPER_TEST_POSTGRES_DSN,
  STATEKEEPER_TEST_REDIS_URL), a Redis key prefix of its own; with the
  variable set and the services missing, the tests fail rather than skip.

The server is started with a pool of API keys, each its own tenant, so each
test can have a store no other test (nor an earlier run on the same
database) has written to: `LiveServer.fresh_key()`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from statekeeper_client import Client

PRODUCTION_ENV = "STATEKEEPER_CLIENT_TEST_PRODUCTION"
POSTGRES_ENV = "STATEKEEPER_TEST_POSTGRES_DSN"
REDIS_ENV = "STATEKEEPER_TEST_REDIS_URL"
BIN_ENV = "STATEKEEPER_BIN"
FACTOR_ENV = "STATEKEEPER_TEST_TIMEOUT_FACTOR"
EMBEDDED = "embedded"
PRODUCTION = "production"
# Tenants (API keys) a server is started with.
KEYS = 200
START_SECONDS = 90.0
STOP_SECONDS = 30.0


def backends() -> list[str]:
    """The backends to run on: embedded, plus production when asked for."""
    if os.environ.get(PRODUCTION_ENV) == "1":
        return [EMBEDDED, PRODUCTION]
    return [EMBEDDED]


def scaled(base_seconds: float) -> float:
    """`base_seconds` stretched by the machine's load per CPU (a busy machine
    is slow, not broken) and STATEKEEPER_TEST_TIMEOUT_FACTOR."""
    try:
        per_cpu = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        per_cpu = 1.0
    return base_seconds * min(max(1.0, per_cpu), 20.0) * float(os.environ.get(FACTOR_ENV, "1"))


def statekeeper_command() -> str | None:
    explicit = os.environ.get(BIN_ENV)
    if explicit:
        return explicit
    beside = Path(sys.executable).parent / "statekeeper"
    if beside.exists():
        return str(beside)
    return shutil.which("statekeeper")


@dataclass
class LiveServer:
    address: str
    backend: str
    keys: list[str]
    log: Path
    _next: int = field(default=0)

    def fresh_key(self) -> str:
        """An API key whose tenant no test has used yet."""
        if self._next >= len(self.keys):
            raise RuntimeError(f"all {len(self.keys)} tenants of the test server are used")
        key = self.keys[self._next]
        self._next += 1
        return key


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serving(backend: str, workdir: Path) -> Iterator[LiveServer]:
    """A started server on `backend`, stopped (SIGTERM, then SIGKILL) after."""
    command = statekeeper_command()
    if command is None:
        pytest.skip(f"the statekeeper server is not installed (set {BIN_ENV})")
    run = uuid.uuid4().hex[:8]
    keys = [f"key-{run}-{index}" for index in range(KEYS)]
    port = _free_port()
    args = [
        command,
        "serve",
        "--listen",
        f"127.0.0.1:{port}",
        "--data-dir",
        str(workdir / "data"),
        "--log-format",
        "text",
        "--log-level",
        "WARNING",
        "--sweep-interval-seconds",
        "1",
    ]
    for index, key in enumerate(keys):
        args += ["--api-key", f"{key}=adk-{run}-{index}"]
    if backend == PRODUCTION:
        dsn, redis_url = os.environ.get(POSTGRES_ENV), os.environ.get(REDIS_ENV)
        if not dsn or not redis_url:
            pytest.fail(
                f"{PRODUCTION_ENV}=1 needs {POSTGRES_ENV} and {REDIS_ENV}: "
                "scripts/services.sh start DIR && . DIR/env"
            )
        args += [
            "--postgres-dsn",
            dsn,
            "--redis-url",
            redis_url,
            "--redis-key-prefix",
            f"client-tests-{run}",
            "--migrate-on-start",
        ]
    log = workdir / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT)
    server = LiveServer(f"127.0.0.1:{port}", backend, keys, log)
    try:
        _wait_serving(process, server)
        yield server
    finally:
        _stop(process)


def _wait_serving(process: subprocess.Popen[bytes], server: LiveServer) -> None:
    deadline = time.monotonic() + scaled(START_SECONDS)
    with Client(server.address, api_key=server.keys[0], timeout=5) as client:
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"statekeeper serve exited with {process.returncode}:\n"
                    + server.log.read_text(errors="replace")[-4000:]
                )
            try:
                if client.health() == "SERVING":
                    return
            except Exception:  # not listening yet
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"statekeeper serve did not answer on {server.address}:\n"
                    + server.log.read_text(errors="replace")[-4000:]
                )
            time.sleep(0.1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=scaled(STOP_SECONDS))
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=scaled(STOP_SECONDS))
