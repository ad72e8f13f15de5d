"""A real `statekeeper serve` process on a free port, driven through the
generated stubs (tests.harness.servers.ServerProcess)."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from statekeeper_client.v1 import session_pb2_grpc
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.processes import free_port
from tests.harness.servers import ServerProcess

__all__ = ["API_KEYS", "ServerProcess", "auth", "channel_for", "free_port"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A multi-tenant server shared by the tests of one module."""
    proc = ServerProcess(
        tmp_path_factory.mktemp("server"),
        extra_args=[
            *key_args(API_KEYS),
            "--sweep-interval-seconds",
            "0.3",
            "--expired-retention-seconds",
            "1",
        ],
    )
    proc.start()
    try:
        yield proc
    finally:
        proc.kill()


def channel_for(server: ServerProcess) -> grpc.Channel:
    return grpc.insecure_channel(server.address)


def auth(key: str = "key-alpha") -> list[tuple[str, str]]:
    return [("x-api-key", key)]


@pytest.fixture
def sessions(server: ServerProcess) -> Iterator[session_pb2_grpc.SessionServiceStub]:
    with channel_for(server) as channel:
        yield session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
