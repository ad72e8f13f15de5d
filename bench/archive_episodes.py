"""The archive tier for episodes: how fast the episodes of idle users move
to the archive, and what a read that restores them costs next to a hot read.

A real `statekeeper serve` on the embedded store (no embedder; episodes carry
client vectors) with the archive in a local directory (or S3 with
--archive-url s3://... and the AWS_* variables):

1. U users with E episodes each are recorded (RecordEpisodes batches);
2. the server is restarted with an episodes policy that finds them all
   idle; the archiver's "archive pass done" log lines give rows and
   seconds (rows/s: episodes, each with its vector);
3. the server is restarted without a policy; for half of the users
   ListEpisodes is timed twice (the first restores the user's episodes),
   for the other half Recall with include_archived (restores, then ranks)
   and again (hot).

Printed: rows/s archived, p50/p95 of each read-through next to its hot
read, and the load average. Run: `.venv/bin/python -m bench.archive_episodes
[--users U] [--episodes E]`. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import grpc
import numpy as np

from bench.archive import KEY, p, pass_lines, serve
from statekeeper_client.v1 import memory_pb2, memory_pb2_grpc

DIMENSION = 64
NO_EMBEDDER = ["--embedder-kind", "none"]


def record_users(address: str, users: int, episodes: int) -> None:
    rng = np.random.default_rng(0)
    with grpc.insecure_channel(address) as channel:
        stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
        for number in range(users):
            items = [
                memory_pb2.RecordEpisodeRequest(
                    user_id=f"u{number}",
                    session_id=f"s{turn // 10}",
                    user_message=f"question {turn} of user {number} " * 5,
                    assistant_response=f"answer {turn} about the harbour " * 10,
                    embedding=[float(x) for x in rng.normal(size=DIMENSION)],
                )
                for turn in range(episodes)
            ]
            stub.RecordEpisodes(
                memory_pb2.RecordEpisodesRequest(episodes=items), metadata=KEY, timeout=120
            )


def timed_reads(address: str, users: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {
        "list restoring": [],
        "list hot": [],
        "recall restoring": [],
        "recall hot": [],
    }
    query = [float(x) for x in np.random.default_rng(1).normal(size=DIMENSION)]
    with grpc.insecure_channel(address) as channel:
        stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
        # An id nobody has, with every user archived: looked for in every
        # archived unit (their manifests read the first time, then known).
        for name in ("get missing, manifests read", "get missing, manifests known"):
            start = time.perf_counter()
            try:
                stub.GetEpisode(
                    memory_pb2.GetEpisodeRequest(episode_id="e-none"), metadata=KEY, timeout=60
                )
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.NOT_FOUND, exc
            samples[name] = [time.perf_counter() - start]
        for number in range(users):
            user_id = f"u{number}"
            if number % 2 == 0:
                listing = memory_pb2.ListEpisodesRequest(user_id=user_id, page_size=50)
                calls = [("list restoring", listing), ("list hot", listing)]
                for name, request in calls:
                    start = time.perf_counter()
                    stub.ListEpisodes(request, metadata=KEY, timeout=60)
                    samples[name].append(time.perf_counter() - start)
                continue
            recall = memory_pb2.RecallRequest(user_id=user_id, top_k=10, include_archived=True)
            recall.query_vector.values[:] = query
            for name in ("recall restoring", "recall hot"):
                start = time.perf_counter()
                stub.Recall(recall, metadata=KEY, timeout=60)
                samples[name].append(time.perf_counter() - start)
    return samples


def archive_all(data_dir: Path, log: Path, url: list[str], users: int) -> tuple[int, float]:
    """Runs the archiver until every user is archived: (rows, rows/s)."""
    policy = ["--archive-episodes-after-days", "0.00001", "--archive-interval-seconds", "0.5"]
    policy += ["--archive-batch-size", "100"]
    with serve(data_dir, log, *NO_EMBEDDER, *url, *policy):
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:  # bounded
            done = [line for line in pass_lines(log) if line.get("units")]
            if sum(int(str(line["units"])) for line in done) >= users:
                break
            time.sleep(0.2)
        else:
            raise SystemExit(f"the archiver did not finish; log in {log}")
    rows = sum(int(str(line["rows"])) for line in done)
    seconds = sum(int(str(line["rows"])) / float(str(line["rows_per_second"])) for line in done)
    return rows, rows / max(seconds, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--archive-url", default="", help="default: DATA_DIR/archive")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-archive-episodes-") as scratch:
        data_dir, log = Path(scratch) / "data", Path(scratch) / "server.log"
        url = ["--archive-url", args.archive_url] if args.archive_url else []
        with serve(data_dir, log, *NO_EMBEDDER, *url) as address:
            record_users(address, args.users, args.episodes)
        time.sleep(1.0)  # every user idle for the policy below
        rows, rate = archive_all(data_dir, log, url, args.users)
        with serve(data_dir, log, *NO_EMBEDDER, *url) as address:
            samples = timed_reads(address, args.users)
    load = os.getloadavg()
    print(f"archive: {args.users} users x {args.episodes} episodes ({DIMENSION}-d), {rows} rows")
    print(f"  archived: {rate:,.0f} rows/s ({rate / args.episodes:,.1f} users/s)")
    for read in ("list", "recall"):
        through, hot = samples[f"{read} restoring"], samples[f"{read} hot"]
        print(
            f"  {read}: restoring p50 {p(through, 0.5):.1f} ms / p95 {p(through, 0.95):.1f} ms;"
            f" hot p50 {p(hot, 0.5):.1f} ms / p95 {p(hot, 0.95):.1f} ms"
            f" ({p(through, 0.5) / max(p(hot, 0.5), 1e-9):.1f}x)"
        )
    for name in ("get missing, manifests read", "get missing, manifests known"):
        print(f"  GetEpisode of an unknown id ({name}): {samples[name][0] * 1000:.1f} ms")
    print(f"  load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
