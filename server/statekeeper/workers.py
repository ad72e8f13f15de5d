"""`statekeeper serve --workers N`: N server processes on one port.

Each worker is a full replica (its own event loop, storage pools and watch
hub) of the production tier, so one box uses all its cores; the kernel
spreads new connections over the workers (SO_REUSEPORT).

SO_REUSEPORT is set deliberately, for the workers only. gRPC sets it on
every listening socket by default, which lets a second, unrelated server
bind a port already in use and silently take half the new connections
(and serve them from another data set). So a single server binds with it
off (`grpc.so_reuseport` 0: a taken port fails its start), and a worker
group is guarded by its parent:

1. the parent takes the port's lock: an abstract Unix socket named after
   the port (`statekeeper-serve-port-<port>`), which the kernel releases
   when the parent dies and which, like the port, belongs to the network
   namespace. A second group (or a lone server, which checks it too)
   finds it taken and exits with one line naming the address;
2. it probes the address with a socket that does *not* set SO_REUSEPORT:
   any other server there (statekeeper or not) makes it fail the same way;
3. only then do the workers start and bind with SO_REUSEPORT.

What stays open: a program that is not statekeeper and sets SO_REUSEPORT
on purpose under the same user id (Linux admits only sockets of the same
effective uid into a group); and a lone server that binds in the
microseconds between its own check and its bind, which then makes the
group's workers fail to bind (loudly: the group exits non-zero), never a
silent split.

The parent forwards SIGTERM/SIGINT to every worker, which drains like a
single server, and exits non-zero if a worker fails. Workers die with
their parent (PR_SET_PDEATHSIG), so a parent killed with -9 leaves no
worker holding the port.
"""

from __future__ import annotations

import ctypes
import dataclasses
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from types import FrameType

from statekeeper import logs
from statekeeper.config import Settings
from statekeeper.telemetry import worker_metrics_listen

log = logging.getLogger("statekeeper")

# Seconds a worker gets to stop after the grace period before it is killed.
STOP_MARGIN_SECONDS = 10.0
PR_SET_PDEATHSIG = 1


def reserve(listen: str) -> tuple[str, socket.socket]:
    """Checks that nothing serves on `listen` (HOST:PORT) and reserves its
    port for a worker group; returns the address with its port resolved
    (port 0 picks a free one) and the lock to keep open while the group
    runs. Raises OSError naming the address when it is taken."""
    port = _probe_all(listen)
    lock = _lock_port(port, listen)
    try:
        resolved = f"{listen.rpartition(':')[0]}:{port}"
        _probe_all(resolved)  # a server that came between the probe and the lock
    except OSError:
        lock.close()
        raise
    return resolved, lock


def check_free(listen: str) -> int:
    """Raises OSError naming `listen` if a server or a worker group already
    has its port; returns the port (port 0: a free one). A lone server
    checks before it opens storage, so that it fails at once with one clear
    line (gRPC's own bind, without SO_REUSEPORT, would fail too, but only
    after startup and with a C-core log line)."""
    port = _probe_all(listen)
    if not listen.endswith(":0"):
        _lock_port(port, listen).close()
    return port


def _probe_all(listen: str) -> int:
    """Probes every address `listen` resolves to; returns the port (port 0:
    the free one the first probe got, used for the others)."""
    host, _, port_text = listen.rpartition(":")
    port = int(port_text)
    infos = socket.getaddrinfo(
        host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )
    for family, kind, proto, _, sockaddr in infos:
        port = _probe(family, kind, proto, (sockaddr[0], port, *sockaddr[2:]), listen)
    return port


def _lock_port(port: int, listen: str) -> socket.socket:
    lock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        lock.bind(f"\0statekeeper-serve-port-{port}")
    except OSError as exc:
        lock.close()
        raise OSError(
            exc.errno,
            f"cannot listen on {listen}: Address already in use (by statekeeper workers)",
        ) from exc
    return lock


def _probe(family: int, kind: int, proto: int, address: tuple[object, ...], listen: str) -> int:
    """Binds without SO_REUSEPORT (as a lone server would) and lets go;
    returns the port bound."""
    with socket.socket(family, kind, proto) as probe:
        # As gRPC does: a port whose old connections linger is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot listen on {listen}: {exc.strerror}") from exc
        return int(probe.getsockname()[1])


def serve_workers(settings: Settings, serve_one: Callable[[Settings, bool], int]) -> int:
    """Runs `settings.worker_count` workers on the listen port until
    SIGTERM/SIGINT; `serve_one(settings, reuse_port)` is one server's main."""
    try:
        address, lock = reserve(settings.listen)
    except OSError as exc:
        log.error("cannot start: %s", exc.strerror or exc)
        return 1
    count = settings.worker_count
    worker_settings = dataclasses.replace(settings, listen=address, workers=1)
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(
            target=_worker_main,
            args=(
                # Each worker serves its own metrics, on the next port.
                dataclasses.replace(
                    worker_settings,
                    metrics_listen=worker_metrics_listen(settings.metrics_listen, index),
                ),
                serve_one,
                os.getpid(),
            ),
            name=f"statekeeper-worker-{index}",
        )
        for index in range(count)
    ]
    stopping: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for worker in workers:
            worker.start()
        log.info("statekeeper serving on %s with %d workers", address, count)
        failed = _supervise(workers, stopping)
        _stop(workers, settings.shutdown_grace_seconds + STOP_MARGIN_SECONDS)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        lock.close()
    return 1 if failed else 0


def _supervise(workers: Sequence[multiprocessing.process.BaseProcess], stopping: list[int]) -> bool:
    """Waits for a stop signal (returns False) or a worker's exit (True)."""
    by_sentinel = {worker.sentinel: worker for worker in workers}
    while not stopping:
        # A short timeout: signal handlers run between waits.
        ready = multiprocessing.connection.wait(list(by_sentinel), timeout=0.2)
        if not ready:
            continue
        exited = by_sentinel[ready[0]]  # type: ignore[index]
        exited.join(1.0)
        # The group's SIGTERM may reach a worker before this process's
        # handler has run: a worker that stops during a stop is no failure.
        if not stopping:
            log.error(
                "worker %s exited with code %s; stopping the others", exited.name, exited.exitcode
            )
            return True
    return False


def _stop(workers: Sequence[multiprocessing.process.BaseProcess], timeout: float) -> None:
    for worker in workers:
        if worker.is_alive() and worker.pid is not None:
            os.kill(worker.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            log.error("worker %s did not stop in time; killing it", worker.name)
            worker.kill()
            worker.join()


def _worker_main(
    settings: Settings, serve_one: Callable[[Settings, bool], int], parent: int
) -> None:
    """A worker process: dies with the parent, then serves like a single
    server with SO_REUSEPORT on."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before prctl took effect
        sys.exit(1)
    logs.configure(settings.log_level, settings.log_format)
    sys.exit(serve_one(settings, True))
