"""`statekeeper serve --workers N` and the listen port (statekeeper/workers.py).

* A second, unrelated server on a port already in use exits non-zero with
  one line naming the address (gRPC's default SO_REUSEPORT would have let
  it bind and take half the clients).
* `--workers 2` on the production tier: two processes serve the one port,
  each a full replica (a watch through one sees a write through the other);
  a lone server still cannot join them; SIGTERM stops every worker, and a
  parent killed with -9 takes its workers with it.

Which worker holds a connection is read from /proc (the sockets each
process has open), so the test knows it really talks to both.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from tests.harness.deadlines import scaled, wait_until
from tests.harness.servers import ServerProcess
from tests.services import configured, create_database, drop_database, reachable

TCP_LISTEN, TCP_ESTABLISHED = "0A", "01"


def second_server(address: str, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "statekeeper", "serve", "--listen", address]
    command += ["--data-dir", str(data_dir), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=scaled(60))


def assert_refused(result: subprocess.CompletedProcess[str], address: str) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0, result.stderr
    assert len(lines) == 1, f"expected one line, got:\n{result.stderr}"
    assert f"cannot listen on {address}" in lines[0]


def test_a_second_server_on_a_taken_port_exits_with_one_line(tmp_path: Path) -> None:
    first = ServerProcess(tmp_path / "first")
    first.start()
    try:
        assert_refused(second_server(first.address, tmp_path / "second"), first.address)
        assert first.is_ready(), "the first server still serves"
    finally:
        first.stop()


# ----- /proc: which process holds which socket ---------------------------------------


def _sockets(port: int, state: str) -> set[int]:
    """Inodes of the TCP sockets with local `port` in `state`."""
    inodes: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == state:
                    inodes.add(int(fields[9]))
    return inodes


def _inodes_of(pid: int) -> set[int]:
    inodes: set[int] = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except FileNotFoundError:
                continue
            if link.startswith("socket:["):
                inodes.add(int(link[8:-1]))
    except FileNotFoundError:
        pass
    return inodes


def _workers_of(parent: int) -> list[int]:
    """The worker processes (multiprocessing spawn children) of `parent`."""
    workers = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"spawn_main" in cmdline:
            workers.append(int(entry))
    return sorted(workers)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _holder(workers: list[int], port: int, before: dict[int, set[int]]) -> int | None:
    """The worker that got a new established connection since `before`."""
    established = _sockets(port, TCP_ESTABLISHED)
    for pid in workers:
        if (_inodes_of(pid) & established) - before[pid]:
            return pid
    return None


# ----- production workers -------------------------------------------------------------


@pytest.fixture
def database() -> Iterator[str]:
    services = configured()
    asyncio.run(reachable(services))
    dsn = asyncio.run(create_database(services))
    try:
        yield dsn
    finally:
        asyncio.run(drop_database(services, dsn))


def start_workers(tmp_path: Path, dsn: str) -> tuple[ServerProcess, list[int]]:
    services = configured()
    server = ServerProcess(
        tmp_path / "workers",
        extra_args=[
            "--workers",
            "2",
            "--postgres-dsn",
            dsn,
            "--redis-url",
            services.redis_url,
            "--redis-key-prefix",
            f"workers-{tmp_path.name}",
            "--migrate-on-start",
        ],
    )
    server.start()
    assert server.process is not None
    parent = server.process.pid

    def both_listening() -> list[int] | None:
        workers = _workers_of(parent)
        listening = _sockets(server.port, TCP_LISTEN)
        ready = [pid for pid in workers if _inodes_of(pid) & listening]
        return workers if len(workers) == 2 and len(ready) == 2 else None

    try:
        workers = wait_until(both_listening, 60, "both workers listening", server.log_tail)
    except BaseException:
        server.kill()
        raise
    return server, workers


def channels_on_both(server: ServerProcess, workers: list[int]) -> dict[int, grpc.Channel]:
    """One channel per worker: new channels until each worker holds one."""
    found: dict[int, grpc.Channel] = {}
    for _ in range(40):  # bounded: connections land on a worker by hash
        before = {pid: _inodes_of(pid) for pid in workers}
        # A channel of its own connection (channels share them by default).
        channel = grpc.insecure_channel(
            server.address, options=[("grpc.use_local_subchannel_pool", 1)]
        )
        BlackboardServiceStub(channel).GetEntry(  # type: ignore[no-untyped-call]
            pb.GetEntryRequest(board="b", key="probe"), timeout=scaled(30)
        )
        holder = _holder(workers, server.port, before)
        if holder is None or holder in found:
            channel.close()
        else:
            found[holder] = channel
        if len(found) == len(workers):
            return found
    for channel in found.values():
        channel.close()
    pytest.fail("40 connections all landed on the same worker")


def test_two_workers_serve_one_port_as_replicas(tmp_path: Path, database: str) -> None:
    server, workers = start_workers(tmp_path, database)
    try:
        channels = channels_on_both(server, workers)
        watching, writing = (BlackboardServiceStub(channels[pid]) for pid in workers)  # type: ignore[no-untyped-call]
        stream = watching.Watch(pb.WatchRequest(board="b", prefix="plan/"), timeout=scaled(60))
        first = next(stream)
        assert first.HasField("started")
        value = pb.BlackboardValue(payload=common_pb2.Payload(data=b"done"))
        put = writing.PutEntry(pb.PutEntryRequest(board="b", key="plan/step-3", value=value))
        for response in stream:
            if response.HasField("events"):
                (event,) = response.events.events
                assert event.entry.key == "plan/step-3"
                assert event.entry.mod_revision == put.entry.mod_revision
                break
        stream.cancel()
        for channel in channels.values():
            channel.close()

        address = server.address
        assert_refused(second_server(address, tmp_path / "lone"), address)
        assert_refused(
            second_server(
                address, tmp_path / "group", "--workers", "2", "--postgres-dsn", database
            ),
            address,
        )

        assert server.terminate(timeout=60) == 0
        assert not any(_alive(pid) for pid in workers), "SIGTERM stops every worker"
    finally:
        server.kill()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_workers_die_with_a_killed_parent(tmp_path: Path, database: str) -> None:
    server, workers = start_workers(tmp_path, database)
    try:
        server.kill()
        wait_until(
            lambda: not any(_alive(pid) for pid in workers) or None,
            30,
            "workers gone after kill -9 of their parent",
            server.log_tail,
        )
        # The port is free again: a new server can take it at once.
        again = ServerProcess(tmp_path / "again", port=server.port)
        again.start()
        again.stop()
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
