"""gRPC-level tests against server processes of the blackboard and message
bus assembly (tests.harness.assemblies.blackboard_bus), over loopback only.

Every test of the shared `server` fixture runs on each backend:

* embedded:   one process, two replicas over one embedded store;
* production: two processes (one replica each) sharing one PostgreSQL
  database (fresh for the module) and one Redis (a prefix of their own),
  so replicas reach each other only through PostgreSQL and Redis.

The production backend is skipped with the reason printed when the test
services are not running (tests/services.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest

from tests.harness import backends
from tests.harness.deploy import (
    API_KEYS,
    BlackboardBusProcess,
    Deployment,
    blackboard_bus_deployment,
    production_options,
)

__all__ = [
    "ALPHA",
    "API_KEYS",
    "BACKENDS",
    "BETA",
    "Deployment",
    "ServerProcess",
    "aio_channel",
    "backend_options",
    "start_deployment",
    "start_server",
]

ALPHA = (("x-api-key", "key-alpha"),)
BETA = (("x-api-key", "key-beta"),)
BACKENDS = backends.BACKENDS
# Sweeps fast enough that expiry and redelivery show within a test.
FAST_BLACKBOARD = {"expiry_sweep_interval_seconds": 0.05, "min_progress_interval_seconds": 0.01}
FAST_BUS = {"sweep_interval_seconds": 0.05, "idle_poll_seconds": 0.2}

# The name these tests and their helpers have always used.
ServerProcess = BlackboardBusProcess


def start_server(path: Path, **options: object) -> BlackboardBusProcess:
    """One started assembly process (killed again if it never gets ready)."""
    server = BlackboardBusProcess(path, **options)  # type: ignore[arg-type]
    server.start()
    return server


@contextmanager
def backend_options(backend: str) -> Iterator[dict[str, object]]:
    """BlackboardBusProcess options of `backend`: nothing for embedded; for
    production, a fresh PostgreSQL database (dropped afterwards) and a Redis
    prefix of its own."""
    with backends.backend(backend, kind="e2e") as where:
        yield production_options(where)


def start_deployment(
    path: Path, backend_settings: dict[str, object], replicas: int = 2, **options: object
) -> Deployment:
    """`replicas` replicas: one process for embedded (no backend_settings),
    one process each for production."""
    if not backend_settings:
        return blackboard_bus_deployment(path, None, replicas, **options)
    where = backends.Production(
        str(backend_settings["postgres_dsn"]),
        str(backend_settings["redis_url"]),
        str(backend_settings["redis_prefix"]),
    )
    return blackboard_bus_deployment(path, where, replicas, **options)


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    """Two replicas of one backend, shared by the tests of a module."""
    with backends.backend(request.param, kind="e2e") as where:
        deployment = blackboard_bus_deployment(
            tmp_path_factory.mktemp("server"),
            where,
            bb_limits=FAST_BLACKBOARD,
            bus_limits=FAST_BUS,
        )
        try:
            yield deployment
        finally:
            deployment.stop()


def aio_channel(address: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(address)
