"""The port rules of `serve --workers` (statekeeper/workers.py), on real
sockets: a group reserves its port so that neither a lone server nor a
second group can take it, while its own workers (SO_REUSEPORT) can."""

from __future__ import annotations

import socket

import pytest

from statekeeper.workers import check_free, reserve


def listening(port: int = 0, reuse_port: bool = False) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def test_a_taken_port_is_refused_with_its_address() -> None:
    with listening() as server:
        address = f"127.0.0.1:{server.getsockname()[1]}"
        with pytest.raises(OSError, match=f"cannot listen on {address}"):
            check_free(address)
        with pytest.raises(OSError, match=f"cannot listen on {address}"):
            reserve(address)


def test_a_reserved_port_admits_workers_and_no_other_statekeeper() -> None:
    address, lock = reserve("127.0.0.1:0")
    port = int(address.rsplit(":", 1)[1])
    try:
        assert port != 0, "port 0 resolves to a free port"
        with pytest.raises(OSError, match=f"cannot listen on {address}"):
            check_free(address)  # a lone server, before the workers listen
        with pytest.raises(OSError, match=f"cannot listen on {address}"):
            reserve(address)  # a second group
        with (
            listening(port, reuse_port=True),
            listening(port, reuse_port=True),
            pytest.raises(OSError),
        ):
            listening(port)  # anything without SO_REUSEPORT, once workers listen
    finally:
        lock.close()
    assert check_free(address) == port, "released with the group"
