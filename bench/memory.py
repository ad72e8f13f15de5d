"""Memory recall and record through gRPC, side by side with the floor.

* Recall: top-10 over 100,000 x 384 vectors of one user, one query at a time,
  through a real server process (gRPC, interceptor, domain, index, SQLite read
  of the 10 episodes), against a bare in-process FAISS search on an index of
  the same type over the same vectors, query by query side by side.
  Printed: p50/p99, the p50 ratio and the load average (issue 12's goal:
  <= 2x at 10,000 vectors, `--vectors 10000`), and the server's CPU time per
  Recall (Linux), which a busy machine moves less than the wall times. Each
  query is asked once: the episodes of its results are read, not cached.
* Record: RecordEpisode (384-d embedding) one at a time through gRPC, against
  raw inserts of the same rows on the same box (SQLite WAL, synchronous=FULL,
  one transaction per row, plus a FAISS add). Printed: ops/s and the ratio.
* Startup: the server rebuilds the 100k index from SQLite; its time is shown.
* For scale, the p50 of an empty gRPC round trip (health Check) is printed.

Run: `.venv/bin/python -m bench.memory [--vectors N] [--index flat|hnsw]`.
Not part of `make test`.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
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
import numpy as np
import numpy.typing as npt
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from statekeeper.core.memory.config import IndexConfig, MemoryConfig
from statekeeper.core.memory.faiss_index import FaissIndexFactory
from statekeeper.core.memory.models import Episode, ValueSource, content_hash
from statekeeper_client.v1 import memory_pb2 as pb
from statekeeper_client.v1 import memory_pb2_grpc

DIMENSION = 384
TENANT = "default"  # the single-tenant server's tenant
USER = "bench-user"
Matrix = npt.NDArray[np.float32]


def unit_rows(matrix: Matrix) -> Matrix:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def embedding_like(count: int, seed: int) -> Matrix:
    rng = np.random.default_rng(seed)
    projection = rng.standard_normal((48, DIMENSION)).astype(np.float32)
    points = rng.standard_normal((count, 48)).astype(np.float32) @ projection
    return unit_rows(points + 0.3 * rng.standard_normal((count, DIMENSION)).astype(np.float32))


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e6, ordered[int(len(ordered) * 0.99)] * 1e6


def timed(operation: Callable[[int], object], count: int) -> list[float]:
    samples = []
    for index in range(count):
        started = time.perf_counter()
        operation(index)
        samples.append(time.perf_counter() - started)
    return samples


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def interleaved(
    first: Callable[[int], object], second: Callable[[int], object], count: int
) -> tuple[list[float], list[float]]:
    """`timed` of both, one call of each per row, which goes first alternating."""
    samples: tuple[list[float], list[float]] = ([], [])
    for index in range(count):
        for side in (0, 1) if index % 2 == 0 else (1, 0):
            operation = (first, second)[side]
            started = time.perf_counter()
            operation(index)
            samples[side].append(time.perf_counter() - started)
    return samples


def config_for(index: str) -> MemoryConfig:
    jobs_off = dict(
        forgetting_interval_seconds=0.0,
        consolidation_interval_seconds=0.0,
        index_maintenance_interval_seconds=0.0,
    )
    return dataclasses.replace(MemoryConfig(), index=IndexConfig(kind=index), **jobs_off)  # type: ignore[arg-type]


# ----- the server process ------------------------------------------------------


async def serve(data_dir: Path, port: int, index: str) -> None:
    from statekeeper.api.interceptor import DomainInterceptor
    from statekeeper.core.limits import Limits
    from statekeeper.core.sessions.service import SessionManager
    from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
    from statekeeper.core.tenancy import Authenticator
    from statekeeper.core.tokens import TokenCounter
    from statekeeper.memory_app import MemoryApp, ModelEndpoints
    from statekeeper.storage.embedded.sessions import EmbeddedStorage

    storage = EmbeddedStorage(data_dir)
    await storage.start()
    counter = TokenCounter()
    sessions = SessionManager(storage.sessions, counter, ExtractiveSummarizer(counter), Limits())
    app = MemoryApp(storage, sessions, counter, None, Limits(), config_for(index), ModelEndpoints())
    started = time.perf_counter()
    await app.start(wait_for_indexes=True)
    print(f"REBUILT {time.perf_counter() - started:.2f}", flush=True)
    server = grpc.aio.server(interceptors=[DomainInterceptor(Authenticator({}))])
    app.register(server)
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("READY", flush=True)
    await server.wait_for_termination()


def start_server(data_dir: Path, index: str) -> tuple[subprocess.Popen[str], str, float]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.memory", "--serve", str(data_dir), str(port), index],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    rebuild = 0.0
    for line in process.stdout:  # ends when the server is ready or exits
        if line.startswith("REBUILT"):
            rebuild = float(line.split()[1])
        if line.strip() == "READY":
            return process, f"127.0.0.1:{port}", rebuild
    raise RuntimeError("bench server exited before serving")


# ----- loading ---------------------------------------------------------------


def load(data_dir: Path, vectors: Matrix) -> None:
    """Bulk-imports the vectors as one user's episodes into the SQLite file."""
    from statekeeper.storage.embedded.memory import EmbeddedMemoryStore
    from statekeeper.storage.embedded.sessions import EmbeddedStorage

    async def run() -> None:
        storage = EmbeddedStorage(data_dir)
        await storage.start()
        store = EmbeddedMemoryStore(storage)
        now = time.time()
        for start in range(0, len(vectors), 10_000):
            chunk = [
                Episode(
                    episode_id=f"e-{row}",
                    user_id=USER,
                    session_id="",
                    user_message=f"bench message {row}",
                    assistant_response="",
                    summary=f"bench {row}",
                    summary_source=ValueSource.CLIENT,
                    embedding_source=ValueSource.CLIENT,
                    embedding_model="",
                    importance=0.5,
                    metadata={},
                    occur_time=now - row,
                    create_time=now,
                    content_hash=content_hash(f"bench message {row}", ""),
                    dimension=DIMENSION,
                    embedding=vectors[row],
                )
                for row in range(start, min(start + 10_000, len(vectors)))
            ]
            await store.insert_episodes(TENANT, chunk)
        await storage.close()

    asyncio.run(run())


# ----- measurements ----------------------------------------------------------


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of the process so far (Linux), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_recall(
    address: str, vectors: Matrix, queries: Matrix, index: str, server_pid: int
) -> None:
    # The same index class the server uses, so the same FAISS settings (one
    # OpenMP thread per single-query search).
    faiss_index = FaissIndexFactory(IndexConfig(kind=index)).create(DIMENSION, len(vectors))
    faiss_index.add(np.arange(1, len(vectors) + 1, dtype=np.int64), vectors)
    weights = pb.RecallWeights(similarity=1.0, recency=0.0, importance=0.0)
    with grpc.insecure_channel(address) as channel:
        stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]

        def recall(row: int) -> object:
            return stub.Recall(
                pb.RecallRequest(
                    user_id=USER,
                    query_vector=pb.QueryVector(values=queries[row].tolist()),
                    top_k=10,
                    weights=weights,
                )
            )

        for row in range(10):
            recall(row)  # warm up: connection, index load, page cache
        cpu_before = process_cpu_seconds(server_pid)
        # Side by side, query by query (the machine's load moves during a run).
        through_grpc, bare = interleaved(
            recall, lambda row: faiss_index.search(queries[row], 10, None), len(queries)
        )
        cpu_after = process_cpu_seconds(server_pid)
    grpc_p50, grpc_p99 = percentiles(through_grpc)
    bare_p50, bare_p99 = percentiles(bare)
    print(
        f"recall top-10 over {len(vectors)} x {DIMENSION} ({faiss_index.description}),"
        f" {len(queries)} queries one at a time"
    )
    print(f"  statekeeper gRPC    p50 {grpc_p50:9.0f} us   p99 {grpc_p99:9.0f} us")
    print(f"  in-process faiss    p50 {bare_p50:9.0f} us   p99 {bare_p99:9.0f} us")
    ratio = grpc_p50 / bare_p50
    print(f"  ratio gRPC / faiss  p50 {ratio:9.2f}x   (load average {load_average()})")
    if cpu_before is not None and cpu_after is not None:
        # Less sensitive to the machine's load than the wall times above.
        per_call = (cpu_after - cpu_before) / len(queries) * 1e6
        print(f"  server CPU per Recall {per_call:7.0f} us (its process, every thread)")


def bench_record(address: str, count: int) -> None:
    vectors = embedding_like(count, seed=99)
    with grpc.insecure_channel(address) as channel:
        stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]

        def record(row: int) -> object:
            return stub.RecordEpisode(
                pb.RecordEpisodeRequest(
                    user_id="writer",
                    user_message=f"record {row}",
                    assistant_response="ok",
                    summary="s",
                    embedding=vectors[row].tolist(),
                    near_duplicate_threshold=1.0,
                )
            )

        grpc_seconds = sum(timed(record, count))
        floor = health_pb2_grpc.HealthStub(channel)  # type: ignore[no-untyped-call]
        round_trip = statistics.median(
            timed(lambda _: floor.Check(health_pb2.HealthCheckRequest()), 200)
        )
    raw_seconds = raw_inserts(vectors)
    grpc_rate, raw_rate = count / grpc_seconds, count / raw_seconds
    print(f"record {count} episodes one at a time (384-d embedding, durable before reply)")
    print(f"  statekeeper gRPC    {grpc_rate:9.0f} ops/s")
    print(f"  raw SQLite + faiss  {raw_rate:9.0f} ops/s")
    print(f"  ratio raw / gRPC    {raw_rate / grpc_rate:9.2f}x")
    print(f"  (one empty gRPC round trip on this box: p50 {round_trip * 1e6:.0f} us)")


def raw_inserts(vectors: Matrix) -> float:
    """The physical floor of a durable record: one SQLite transaction (WAL,
    synchronous=FULL) per row, then a FAISS add."""
    faiss_index = FaissIndexFactory(IndexConfig(kind="flat")).create(DIMENSION, len(vectors))
    with tempfile.TemporaryDirectory() as scratch:
        db = sqlite3.connect(Path(scratch) / "raw.sqlite3", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE e (k INTEGER PRIMARY KEY, id TEXT, body TEXT, v BLOB)")
        started = time.perf_counter()
        for row, vector in enumerate(vectors):
            db.execute("BEGIN")
            cursor = db.execute(
                "INSERT INTO e (id, body, v) VALUES (?, ?, ?)",
                (f"e-{row}", f"record {row}", vector.tobytes()),
            )
            db.execute("COMMIT")
            faiss_index.add(np.asarray([cursor.lastrowid], dtype=np.int64), vector[None, :])
        elapsed = time.perf_counter() - started
        db.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--index", choices=("flat", "hnsw"), default="flat")
    parser.add_argument(
        "--serve", nargs=3, metavar=("DIR", "PORT", "INDEX"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(Path(args.serve[0]), int(args.serve[1]), args.serve[2]))
        return
    vectors = embedding_like(args.vectors, seed=1)
    queries = unit_rows(vectors[: args.queries] + 0.05 * embedding_like(args.queries, seed=2))
    with tempfile.TemporaryDirectory() as data_dir:
        load(Path(data_dir), vectors)
        process, address, rebuild = start_server(Path(data_dir), args.index)
        try:
            print(f"server start: index rebuilt from SQLite in {rebuild:.2f} s")
            bench_recall(address, vectors, queries, args.index, process.pid)
            bench_record(address, args.records)
        finally:
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
