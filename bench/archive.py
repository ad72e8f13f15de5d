"""The archive tier: how fast idle sessions move to the archive, and what a
read of an archived session (restored on access) costs next to a hot read.

A real `statekeeper serve` on the embedded store with the archive in a
local directory (or S3 with --archive-url s3://... and the AWS_* variables):

1. N sessions of M turns (two messages each) are written;
2. the server is restarted with an archive policy that finds them all
   idle; the archiver's own "archive pass done" log line gives the rows and
   seconds of the pass (rows/s, every table of a session counted);
3. the server is restarted without a policy, and GetSession is timed on
   each archived session twice: the first call restores it (read-through),
   the second is a hot read.

Printed: rows/s archived, p50/p95 of the read-through and of the hot read,
their ratio, and the load average (comparable only on an idle machine).
Run: `.venv/bin/python -m bench.archive [--sessions N] [--turns M]`. Not part
of `make test`.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc

from bench.production import wait_serving
from statekeeper_client.v1 import session_pb2, session_pb2_grpc

KEY = [("x-api-key", "bench-key")]


@contextmanager
def serve(data_dir: Path, log: Path, *args: str) -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{sock.getsockname()[1]}"
    command = [sys.executable, "-m", "statekeeper", "serve", "--listen", address]
    command += ["--data-dir", str(data_dir), "--api-key", "bench-key=bench", *args]
    with open(log, "ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_serving(address)
        yield address
    finally:
        process.terminate()
        process.wait(timeout=60)


def write_sessions(address: str, sessions: int, turns: int) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
        for number in range(sessions):
            session_id = f"bench-{number}"
            stub.CreateSession(
                session_pb2.CreateSessionRequest(
                    session_id=session_id, session=session_pb2.Session(user_id=f"u{number % 10}")
                ),
                metadata=KEY,
                timeout=60,
            )
            for turn in range(turns):
                stub.AppendMessages(
                    session_pb2.AppendMessagesRequest(
                        session_id=session_id,
                        request_id=f"{session_id}.{turn}",
                        messages=[
                            session_pb2.SessionMessage(
                                role=session_pb2.ROLE_USER, content=f"question {turn} " * 20
                            ),
                            session_pb2.SessionMessage(
                                role=session_pb2.ROLE_ASSISTANT, content=f"answer {turn} " * 40
                            ),
                        ],
                    ),
                    metadata=KEY,
                    timeout=60,
                )


def pass_lines(log: Path) -> list[dict[str, object]]:
    lines = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{") and '"archive pass done"' in line:
            lines.append(json.loads(line))
    return lines


def timed_gets(address: str, sessions: int) -> tuple[list[float], list[float]]:
    first: list[float] = []
    second: list[float] = []
    with grpc.insecure_channel(address) as channel:
        stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
        for number in range(sessions):
            request = session_pb2.GetSessionRequest(session_id=f"bench-{number}")
            for samples in (first, second):
                start = time.perf_counter()
                stub.GetSession(request, metadata=KEY, timeout=60)
                samples.append(time.perf_counter() - start)
    return first, second


def p(samples: list[float], q: float) -> float:
    return sorted(samples)[min(len(samples) - 1, int(q * len(samples)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--archive-url", default="", help="default: DATA_DIR/archive")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-archive-") as scratch:
        data_dir, log = Path(scratch) / "data", Path(scratch) / "server.log"
        url = ["--archive-url", args.archive_url] if args.archive_url else []
        with serve(data_dir, log, *url) as address:
            write_sessions(address, args.sessions, args.turns)
        time.sleep(1.0)  # every session idle for the policy below
        policy = ["--archive-sessions-after-days", "0.00001", "--archive-interval-seconds", "0.5"]
        policy += ["--archive-batch-size", "100"]
        with serve(data_dir, log, *url, *policy):
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:  # bounded
                done = [line for line in pass_lines(log) if line.get("units")]
                if sum(int(str(line["units"])) for line in done) >= args.sessions:
                    break
                time.sleep(0.2)
            else:
                raise SystemExit(f"the archiver did not finish; log in {log}")
        rows = sum(int(str(line["rows"])) for line in done)
        rate = sum(float(str(line["rows_per_second"])) * int(str(line["rows"])) for line in done)
        rate /= max(rows, 1)
        with serve(data_dir, log, *url) as address:
            through, hot = timed_gets(address, args.sessions)
    load = os.getloadavg()
    print(f"archive: {args.sessions} sessions x {args.turns} turns, {rows} rows")
    print(
        f"  archived: {rate:,.0f} rows/s ({args.sessions / max(rows / rate, 1e-9):,.0f} sessions/s)"
    )
    print(
        f"  GetSession read-through (restores): p50 {p(through, 0.5):.1f} ms,"
        f" p95 {p(through, 0.95):.1f} ms"
    )
    print(
        f"  GetSession hot:                     p50 {p(hot, 0.5):.1f} ms, p95 {p(hot, 0.95):.1f} ms"
    )
    print(f"  read-through / hot (p50): {p(through, 0.5) / max(p(hot, 0.5), 1e-9):.1f}x")
    print(f"  load average: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
