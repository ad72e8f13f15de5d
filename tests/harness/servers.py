"""Server processes: the real `statekeeper serve`, and test assemblies
(`python -m tests.harness.assemblies.NAME`) that serve a subset of the
services with limits the CLI does not expose yet.

Both start the same way: spawn (tests.harness.processes), then poll for
readiness until a load-scaled deadline; if the process exits first or the
deadline passes, the process is killed and the error carries its log tail.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.harness import processes
from tests.harness.deadlines import wait_until

# Seconds a server may take to serve on an idle machine (scaled with load).
START_SECONDS = 60.0
# Log lines that mean another process took the port we picked.
PORT_TAKEN = ("cannot listen on", "Failed to bind", "Address already in use")
PORT_ATTEMPTS = 3


class ServerExitedError(RuntimeError):
    """The server process ended before it was ready."""


@dataclass
class ManagedProcess:
    """A server process of a test: start, readiness, log, stop, kill."""

    data_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    # Seconds to get ready on an idle machine (load-scaled).
    start_seconds: float = START_SECONDS

    def command(self) -> list[str]:
        raise NotImplementedError

    def is_ready(self) -> bool:
        raise NotImplementedError

    def start(self) -> None:
        """Spawns the server and returns once it is ready; raises (with the
        log tail) and leaves nothing running if it never gets there."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / f"server-{time.time_ns()}.log"
        self.process = processes.spawn(self.command(), self.log_path, self.env)
        try:
            wait_until(self._ready_while_alive, self.start_seconds, "server ready", self.log_tail)
        except BaseException:
            self.kill()
            raise

    def _ready_while_alive(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise ServerExitedError(
                f"server exited early ({self.process.returncode}):\n{self.log_tail()}"
            )
        return self.is_ready()

    def log(self) -> str:
        """The whole log of the current (or last) run."""
        return self.log_path.read_text(errors="replace") if self.log_path else ""

    def log_tail(self) -> str:
        return processes.log_tail(self.log_path)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """kill -9: no chance to flush or clean up."""
        if self.process is not None:
            processes.kill(self.process)

    def terminate(self, timeout: float = 30.0) -> int:
        """SIGTERM; the exit code once it exits. Killed, and an error, if it
        does not exit within the (load-scaled) `timeout`."""
        assert self.process is not None
        code = processes.terminate(self.process, timeout)
        if code is None:
            raise TimeoutError(f"server did not exit on SIGTERM:\n{self.log_tail()}")
        return code

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after the grace period; never raises for a
        slow drain (fixture teardown)."""
        if self.process is not None:
            processes.terminate(self.process, grace)

    def restart(self) -> None:
        self.kill()
        self.start()


@dataclass
class ServerProcess(ManagedProcess):
    """A real `statekeeper serve` on 127.0.0.1, ready when its health
    service answers SERVING. `port` 0 picks a free one (retried on a new
    port if another process takes it first)."""

    extra_args: list[str] = field(default_factory=list)
    port: int = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return processes.python_module(
            "statekeeper",
            "serve",
            "--listen",
            self.address,
            "--data-dir",
            str(self.data_dir),
            *self.extra_args,
        )

    def start(self) -> None:
        if self.port:
            super().start()
            return
        for attempt in range(PORT_ATTEMPTS):
            self.port = processes.free_port()
            try:
                super().start()
                return
            except ServerExitedError:
                if attempt + 1 == PORT_ATTEMPTS or not any(m in self.log() for m in PORT_TAKEN):
                    raise

    def is_ready(self) -> bool:
        """Health answers SERVING, and with `--workers N` every worker has
        said it serves: health answers from whichever listens first, and a
        worker still starting would do its start-up work (a repair, a
        cache warm-up) while the test already runs."""
        if not workers_serving(self.log()):
            return False
        with grpc.insecure_channel(self.address) as channel:
            try:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=2
                )
            except grpc.RpcError:
                return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

    def wait_serving(self, timeout: float = START_SECONDS) -> None:
        """Waits (load-scaled) until health answers SERVING again."""
        wait_until(self._ready_while_alive, timeout, "server SERVING", self.log_tail)


@dataclass
class AssemblyProcess(ManagedProcess):
    """`python -m MODULE ARGS --ready-file FILE`: a test assembly that writes
    its gRPC addresses, one per line, to FILE once it serves."""

    module: str = ""
    args: list[str] = field(default_factory=list)
    addresses: list[str] = field(default_factory=list)
    ready_file: Path | None = None

    @property
    def address(self) -> str:
        return self.addresses[0]

    def command(self) -> list[str]:
        self.ready_file = self.data_dir / f"ready-{time.time_ns()}"
        return processes.python_module(
            self.module, *self.args, "--ready-file", str(self.ready_file)
        )

    def is_ready(self) -> bool:
        assert self.ready_file is not None
        if not self.ready_file.exists():
            return False
        text = self.ready_file.read_text()
        if not text.endswith("\n"):  # written but not complete yet
            return False
        self.addresses = text.split()
        return True


def worker_count(log: str) -> int | None:
    """N of a `serve --workers N` run, from its log; None for a lone process
    (it logs no worker count)."""
    workers = re.search(r"serving on \S+ with (\d+) workers", log)
    return int(workers[1]) if workers else None


def workers_serving(log: str) -> bool:
    """True once each worker process has logged that it serves (at once for
    a lone process: health answering SERVING says it)."""
    count = worker_count(log)
    return count is None or len(re.findall(r"serving on \S+ \(port \d+", log)) >= count
