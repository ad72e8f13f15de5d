"""Fixtures of the operations tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.deploy import API_KEYS, key_args
from tests.harness.processes import free_port
from tests.harness.servers import ServerProcess


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[ServerProcess, int]]:
    """A server of the harness's API keys with its metrics endpoint, and
    that endpoint's port (a module's own `server` fixture overrides it)."""
    metrics_port = free_port()
    proc = ServerProcess(
        tmp_path,
        extra_args=[*key_args(API_KEYS), "--metrics-listen", f"127.0.0.1:{metrics_port}"],
    )
    proc.start()
    try:
        yield proc, metrics_port
    finally:
        proc.stop()
