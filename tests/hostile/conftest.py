"""A full `statekeeper serve` process (every service) on each backend, for
tests that send what a hostile or careless caller would.

The `statekeeper` fixture runs each test on the embedded store and on the
production tier (PostgreSQL + Redis, a fresh database per module). The
production DSN carries a password parameter (PostgreSQL in the test services
trusts local connections, so it is ignored) that the server log must never
show: see test_issue14_defects.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from tests.harness.backends import BACKENDS, backend
from tests.harness.deploy import statekeeper_replicas
from tests.harness.servers import ServerProcess

ALPHA = (("x-api-key", "key-alpha"),)
DSN_PASSWORD = "pw-marker-5e1f0c"


def with_password_parameter(dsn: str) -> str:
    return f"{dsn}{'&' if '?' in dsn else '?'}password={DSN_PASSWORD}"


@pytest.fixture(scope="module", params=BACKENDS)
def statekeeper(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """One server of the backend named by the parameter, shared by a module."""
    with backend(request.param, "hostile") as where:
        if where is not None:
            dsn = with_password_parameter(where.postgres_dsn)
            where = dataclasses.replace(where, postgres_dsn=dsn)
        path = tmp_path_factory.mktemp(f"hostile-{request.param}")
        # JSON logs carry the `extra` fields too (the change feed logs its DSN there).
        with statekeeper_replicas(path, where, extra_args=["--log-format", "json"]) as servers:
            yield servers[0]


def postgres_dsn_of(server: ServerProcess) -> str | None:
    """The DSN a production server was started with (None: embedded)."""
    args = server.extra_args
    return args[args.index("--postgres-dsn") + 1] if "--postgres-dsn" in args else None
