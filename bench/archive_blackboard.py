"""The archive tier for blackboard history: how fast the history retention
compacts moves to the archive, and what a read at an archived revision
(read through, never restored) costs next to the same read while hot.

A real `statekeeper serve` on the embedded store with the archive in a
local directory (or S3 with --archive-url s3://... and the AWS_* variables):

1. R revisions are written (puts over K keys);
2. GetEntry is timed at random past revisions while the history is hot;
3. the server is restarted with --archive-blackboard-history and one
   second of retention; the archiver's "archive pass done" log lines give
   rows and seconds (rows/s: history and log rows of the chunks);
4. GetEntry is timed at the same revisions again: the first read of a unit
   fetches and parses its chunk (cold), later ones read the parsed unit
   that the server keeps in memory (warm).

Printed: rows/s archived, p50/p95 of hot and warm reads, the cold read, and
the load average (comparable only on an idle machine). Run:
`.venv/bin/python -m bench.archive_blackboard [--revisions R] [--keys K]`.
Not part of `make test`.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

import grpc

from bench.archive import KEY, p, pass_lines, serve
from statekeeper_client.v1 import blackboard_pb2, blackboard_pb2_grpc, common_pb2

pb = blackboard_pb2
BOARD = "bench"


def stub_of(channel: grpc.Channel) -> blackboard_pb2_grpc.BlackboardServiceStub:
    return blackboard_pb2_grpc.BlackboardServiceStub(channel)  # type: ignore[no-untyped-call]


def write_history(address: str, revisions: int, keys: int) -> int:
    last = 0
    with grpc.insecure_channel(address) as channel:
        stub = stub_of(channel)
        for number in range(revisions):
            value = pb.BlackboardValue(
                payload=common_pb2.Payload(data=f"value {number} ".encode() * 8)
            )
            reply = stub.PutEntry(
                pb.PutEntryRequest(board=BOARD, key=f"key-{number % keys}", value=value),
                metadata=KEY,
                timeout=60,
            )
            last = int(reply.header.revision)
    return last


def timed_reads(address: str, reads: list[tuple[str, int]]) -> list[float]:
    samples: list[float] = []
    with grpc.insecure_channel(address) as channel:
        stub = stub_of(channel)
        for key, revision in reads:
            request = pb.GetEntryRequest(board=BOARD, key=key, revision=revision)
            start = time.perf_counter()
            stub.GetEntry(request, metadata=KEY, timeout=60)
            samples.append(time.perf_counter() - start)
    return samples


def oldest(address: str) -> int:
    with grpc.insecure_channel(address) as channel:
        reply = stub_of(channel).GetEntry(
            pb.GetEntryRequest(board=BOARD, key="key-0"), metadata=KEY, timeout=60
        )
    return int(reply.header.oldest_revision)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--revisions", type=int, default=10_000)
    parser.add_argument("--keys", type=int, default=500)
    parser.add_argument("--reads", type=int, default=300)
    parser.add_argument("--archive-url", default="", help="default: DATA_DIR/archive")
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="bench-archive-bb-") as scratch:
        data_dir, log = Path(scratch) / "data", Path(scratch) / "server.log"
        url = ["--archive-url", args.archive_url] if args.archive_url else []
        with serve(data_dir, log, *url) as address:
            last = write_history(address, args.revisions, args.keys)
            reads = [
                (f"key-{rng.randrange(args.keys)}", rng.randrange(1, last))
                for _ in range(args.reads)
            ]
            hot = timed_reads(address, reads)
        policy = ["--archive-blackboard-history", "--archive-interval-seconds", "0.5"]
        policy += ["--limit", "blackboard.history_retention_seconds=1"]
        with serve(data_dir, log, *url, *policy) as address:
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and oldest(address) < last:  # bounded
                time.sleep(0.2)
            if oldest(address) < last:
                raise SystemExit(f"the archiver did not finish; log in {log}")
            done = [line for line in pass_lines(log) if line.get("units")]
            cold = timed_reads(address, reads[:1])
            warm = timed_reads(address, reads)
    rows = sum(int(str(line["rows"])) for line in done)
    seconds = sum(
        int(str(line["rows"])) / max(float(str(line["rows_per_second"])), 1e-9) for line in done
    )
    load = os.getloadavg()
    print(f"blackboard history: {last} revisions over {args.keys} keys, {rows} rows archived")
    print(f"  archived: {rows / max(seconds, 1e-9):,.0f} rows/s")
    hot_p = f"p50 {p(hot, 0.5):.1f} ms, p95 {p(hot, 0.95):.1f} ms"
    warm_p = f"p50 {p(warm, 0.5):.1f} ms, p95 {p(warm, 0.95):.1f} ms"
    print(f"  GetEntry at a past revision, hot:      {hot_p}")
    print(f"  GetEntry read-through, first of a unit: {cold[0] * 1000:.1f} ms (fetch + parse)")
    print(f"  GetEntry read-through, unit in memory: {warm_p}")
    print(f"  read-through / hot (p50): {p(warm, 0.5) / max(p(hot, 0.5), 1e-9):.1f}x")
    print(f"  load average: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
