"""Session append and get through gRPC on the embedded store, measured side by
side with the physical floor on the same box: a raw SQLite transaction (WAL,
synchronous=FULL, like the server) inserting the same message row and
updating the same session row, a raw SQLite primary-key read, and the cost of
one gRPC round trip to the same server (health Check), which no RPC can beat.

Run: `make bench` (or `.venv/bin/python -m bench.sessions [--ops N]`).
Prints p50/p99 in microseconds and the ratio statekeeper / raw.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub

CONTENT = "Find me a train from Paris to Lyon tomorrow morning, before nine if possible."


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e6, p99 * 1e6


def timed(operation: Callable[[int], object], count: int) -> list[float]:
    samples = []
    for index in range(count):
        start = time.perf_counter()
        operation(index)
        samples.append(time.perf_counter() - start)
    return samples


def start_server(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"127.0.0.1:{port}"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "statekeeper",
            "serve",
            "--listen",
            address,
            "--data-dir",
            str(data_dir),
            "--log-level",
            "WARNING",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for _ in range(300):
            try:
                if stub.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                    return process, address
            except grpc.RpcError:
                time.sleep(0.05)
    process.kill()
    raise RuntimeError("server did not start")


def bench_statekeeper(address: str, ops: int) -> dict[str, list[float]]:
    with grpc.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        floor = timed(lambda i: health.Check(health_pb2.HealthCheckRequest()), ops)
        stub = SessionServiceStub(channel)
        stub.CreateSession(
            pb.CreateSessionRequest(session_id="bench", session=pb.Session(user_id="u"))
        )
        message = pb.SessionMessage(role=pb.ROLE_USER, content=CONTENT)
        append = timed(
            lambda i: stub.AppendMessages(
                pb.AppendMessagesRequest(session_id="bench", messages=[message])
            ),
            ops,
        )
        get = timed(lambda i: stub.GetSession(pb.GetSessionRequest(session_id="bench")), ops)
    return {"append": append, "get": get, "grpc_floor": floor}


def bench_raw_sqlite(path: Path, ops: int) -> dict[str, list[float]]:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute(
        "CREATE TABLE s (tenant TEXT, id TEXT, version INT, state TEXT, PRIMARY KEY (tenant, id))"
    )
    db.execute(
        "CREATE TABLE m (tenant TEXT, id TEXT, seq INT, content TEXT, meta TEXT,"
        " PRIMARY KEY (tenant, id, seq))"
    )
    state = json.dumps({"session_id": "bench", "user_id": "u", "metadata": {}})
    db.execute("INSERT INTO s VALUES ('t', 'bench', 1, ?)", (state,))

    def append(index: int) -> None:
        db.execute("BEGIN")
        db.execute("INSERT INTO m VALUES ('t', 'bench', ?, ?, '{}')", (index, CONTENT))
        db.execute(
            "UPDATE s SET version = ?, state = ? WHERE tenant='t' AND id='bench'",
            (index + 2, state),
        )
        db.execute("COMMIT")

    def get(index: int) -> None:
        db.execute("SELECT state FROM s WHERE tenant='t' AND id='bench'").fetchone()

    result = {"append": timed(append, ops), "get": timed(get, ops)}
    db.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        process, address = start_server(Path(tmp) / "server")
        try:
            ours = bench_statekeeper(address, args.ops)
        finally:
            process.terminate()
            process.wait()
        raw = bench_raw_sqlite(Path(tmp) / "raw.sqlite3", args.ops)
    print(f"sessions on the embedded store, {args.ops} sequential ops, pid {os.getpid()}")
    f50, f99 = percentiles(ours["grpc_floor"])
    print(
        f"gRPC floor (health Check round trip on the same server): p50 {f50:.0f} us,"
        f" p99 {f99:.0f} us"
    )
    print(
        f"{'operation':<10}{'statekeeper p50/p99 us':>26}{'raw sqlite p50/p99 us':>26}"
        f"{'ratio p50':>11}{'ratio p99':>11}"
    )
    for name in ("append", "get"):
        o50, o99 = percentiles(ours[name])
        r50, r99 = percentiles(raw[name])
        print(
            f"{name:<10}{o50:>13.0f}/{o99:<12.0f}{r50:>13.0f}/{r99:<12.0f}"
            f"{o50 / r50:>11.1f}{o99 / r99:>11.1f}"
        )


if __name__ == "__main__":
    main()
