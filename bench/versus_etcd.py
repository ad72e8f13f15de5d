"""statekeeper's blackboard against etcd, driven by one Go program.

`make bench-etcd` runs this: it installs etcd-server (Debian) when missing
and starts it on loopback (scripts/etcd.sh: temp dir, free ports, WAL
fsynced on every commit), starts statekeeper twice - embedded (one process,
SQLite with synchronous=FULL) and production (two replicas over one
PostgreSQL and one Redis, started like scripts/services.sh does unless
STATEKEEPER_TEST_POSTGRES_DSN and STATEKEEPER_TEST_REDIS_URL are set) - and
runs bench/etcd (Go: go.etcd.io/etcd/client/v3 and clients/go), which
interleaves its rounds over the three systems and prints p50/p99, 32-writer
throughput and Watch put->receive with 1/10/100 watchers, each as a ratio
to etcd. Everything it started is stopped on exit.

The machine is shared: the load average is printed before and after, and
figures from a busy box are noisy. Extra arguments go to the Go program
(e.g. `make bench-etcd ARGS="-rounds 5"`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from bench.production import free_address, fresh_database, services, serving, wait_serving

ROOT = Path(__file__).resolve().parents[1]
ETCD_SCRIPT = ROOT / "scripts" / "etcd.sh"


@contextmanager
def etcd(directory: Path) -> Iterator[str]:
    """An etcd on loopback; yields its client address."""
    started = subprocess.run(
        [str(ETCD_SCRIPT), "start", str(directory)], check=True, capture_output=True, text=True
    )
    try:
        yield started.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run([str(ETCD_SCRIPT), "stop", str(directory)], check=False)


@contextmanager
def server(data_dir: Path, *args: str) -> Iterator[str]:
    """A `statekeeper serve` process logging to data_dir/server.log."""
    address = free_address()
    data_dir.mkdir(parents=True)
    command = [sys.executable, "-m", "statekeeper", "serve", "--listen", address]
    command += ["--data-dir", str(data_dir), "--log-level", "WARNING", *args]
    with open(data_dir / "server.log", "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        try:
            wait_serving(address)
        except RuntimeError:
            sys.stderr.write((data_dir / "server.log").read_text())
            raise
        yield address
    finally:
        process.terminate()
        process.wait()


@contextmanager
def grpc_floor() -> Iterator[str]:
    """bench/grpc_floor.py: PutEntry and GetEntry answered at once through
    the same Python gRPC stack, no store (the column no server can beat)."""
    address = free_address()
    process = subprocess.Popen([sys.executable, "-m", "bench.grpc_floor", address], cwd=ROOT)
    with serving(process, address):
        yield address


def build_driver(directory: Path) -> Path:
    binary = directory / "etcdbench"
    subprocess.run(["go", "build", "-o", str(binary), "."], cwd=ROOT / "bench" / "etcd", check=True)
    return binary


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> None:
    directory = Path(tempfile.mkdtemp(prefix="statekeeper-bench-etcd-"))
    try:
        with ExitStack() as stack:
            binary = build_driver(directory)
            etcd_address = stack.enter_context(etcd(directory / "etcd"))
            embedded = stack.enter_context(server(directory / "embedded"))
            dsn, url = stack.enter_context(services())
            database = asyncio.run(fresh_database(dsn))
            # Two replicas of one worker each, on two ports: the driver knows
            # which replica each connection reaches (watches cross replicas).
            options = ("--postgres-dsn", database, "--redis-url", url, "--migrate-on-start")
            options += ("--workers", "1")
            replica_a = stack.enter_context(server(directory / "replica-a", *options))
            replica_b = stack.enter_context(server(directory / "replica-b", *options))
            floor = stack.enter_context(grpc_floor())
            print(f"before: {load()}", flush=True)
            command = [
                str(binary),
                "-etcd",
                etcd_address,
                "-target",
                f"embedded={embedded}",
                "-target",
                f"production={replica_a},{replica_b}",
                "-floor",
                floor,
                *sys.argv[1:],
            ]
            subprocess.run(command, check=True)
            print(f"after: {load()} (figures are noisy when the machine is busy)")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
