"""Vector indexes (issue 12 items 3-4): accuracy, filtered recall, restarts,
memory. Every figure is measured in this run, side by side, and printed with
the machine's load average (the box is shared; latencies move with it).

1. HNSW accuracy, in process, on what the server builds (VectorIndexes over
   an embedded store, default IndexConfig, search breadth tuned at build):
   recall@10 against an exact scan for 120k x 256 isotropic random unit
   vectors (the hard case) and 120k x 256 clustered vectors; p50 of one
   search against a bare FAISS exact scan. Filtered at 1% and 10%: recall@10
   and p50, and the exact-scan / widened-graph crossover that sets
   `exact_filter_max_vectors`.                    goal: recall@10 >= 0.95
2. A real server process on the random store, restarted with the index
   saved by section 1: time from spawn to READY and to the first Recall
   answer; then filtered Recall through gRPC at 1% / 10%: recall@10 against
   the exact top 10 of the admitted episodes, and p50.
                                   goals: first Recall <= 2 s; filtered
                                   recall@10 >= 0.95 and p50 <= 50 ms
   The same restart without the snapshot (rebuild from SQLite, recall
   answered from an exact scan meanwhile) for comparison.
3. RSS per 100k 384-d vectors (HNSW, as the server holds them), against the
   raw float32 size.
Recall p50 at 10k vectors against in-process FAISS is bench/memory.py
(`--vectors 10000`).

Run: `.venv/bin/python -m bench.memory_index [--vectors N] [--skip-rss]`.
Not part of `make test`; about 10-15 minutes on an idle 2-core box.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import dataclasses
import gc
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import numpy.typing as npt

from statekeeper.core.memory.config import IndexConfig, MemoryConfig
from statekeeper.core.memory.faiss_index import FaissIndexFactory, HnswIndex, VectorIndex
from statekeeper.core.memory.models import Episode, ValueSource, content_hash
from statekeeper.core.memory.vector_index import InProcessChangeFeed, VectorIndexes
from statekeeper.storage.embedded.memory import EmbeddedMemoryStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.index_snapshots import FileSnapshotStore
from statekeeper_client.v1 import memory_pb2 as pb
from statekeeper_client.v1 import memory_pb2_grpc

TENANT = "default"  # the single-tenant server's tenant
USER = "bench-user"
Matrix = npt.NDArray[np.float32]
ONLY_SIMILARITY = pb.RecallWeights(similarity=1.0, recency=0.0, importance=0.0)
# Filters: metadata p1 = "7" admits 1% of the rows, p10 = "3" admits 10%.
FILTERS = {"1%": ("p1", "7", 100), "10%": ("p10", "3", 10)}


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"(load {one:.1f}/{five:.1f} on {os.cpu_count()} cores)"


def unit_rows(matrix: npt.NDArray[np.floating[Any]]) -> Matrix:
    rows: Matrix = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
    return rows


def random_unit(count: int, dimension: int, seed: int) -> Matrix:
    return unit_rows(np.random.default_rng(seed).standard_normal((count, dimension)))


def clustered(count: int, dimension: int, seed: int) -> Matrix:
    """Unit vectors around 200 random centres (a topic-like structure)."""
    rng = np.random.default_rng(seed)
    centres = random_unit(200, dimension, seed + 1)
    noise = random_unit(count, dimension, seed + 2)
    return unit_rows(centres[rng.integers(0, 200, count)] + 0.4 * noise)


def embedding_like(count: int, dimension: int, seed: int) -> Matrix:
    rng = np.random.default_rng(seed)
    projection = rng.standard_normal((48, dimension)).astype(np.float32)
    points = rng.standard_normal((count, 48)).astype(np.float32) @ projection
    return unit_rows(points + 0.3 * rng.standard_normal((count, dimension)).astype(np.float32))


def p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def timed(operation: Callable[[int], object], count: int) -> list[float]:
    samples = []
    for row in range(count):
        started = time.perf_counter()
        operation(row)
        samples.append(time.perf_counter() - started)
    return samples


def exact_top(vectors: Matrix, rows: npt.NDArray[np.int64], query: Matrix, k: int) -> list[int]:
    """Keys (row + 1) of the exact top k among `rows`."""
    scores = vectors[rows] @ query
    return [int(rows[i]) + 1 for i in np.argsort(-scores, kind="stable")[:k]]


def overlap(found: list[int], truth: list[int]) -> int:
    return len(set(found) & set(truth))


# ----- the store and the index, in process -------------------------------------


async def fill_store(data_dir: Path, vectors: Matrix) -> None:
    """One user's episodes, keys 1..n in row order, with the filter metadata."""
    storage = EmbeddedStorage(data_dir)
    await storage.start()
    store = EmbeddedMemoryStore(storage)
    now = time.time()
    for start in range(0, len(vectors), 10_000):
        rows = range(start, min(start + 10_000, len(vectors)))
        await store.insert_episodes(
            TENANT,
            [
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
                    metadata={"p1": str(row % 100), "p10": str(row % 10)},
                    occur_time=now - row,
                    create_time=now,
                    content_hash=content_hash(f"bench message {row}", ""),
                    dimension=int(vectors.shape[1]),
                    embedding=vectors[row],
                )
                for row in rows
            ],
        )
    await storage.close()


async def build_and_save(data_dir: Path) -> tuple[VectorIndex, float]:
    """What a server does: load the user's index from the store (build,
    tune), then save its snapshot to the index directory."""
    storage = EmbeddedStorage(data_dir)
    await storage.start()
    config = IndexConfig()
    indexes = VectorIndexes(
        EmbeddedMemoryStore(storage),
        FaissIndexFactory(config),
        InProcessChangeFeed(),
        snapshots=FileSnapshotStore(data_dir / "indexes"),
        config=config,
    )
    started = time.perf_counter()
    await indexes.rebuild_all()
    built = time.perf_counter() - started
    await indexes.save_snapshots()
    index = indexes.index_of(TENANT, USER)
    indexes.close()
    await storage.close()
    assert index is not None
    return index, built


def bench_accuracy(name: str, index: VectorIndex, vectors: Matrix, queries: Matrix) -> None:
    import faiss

    faiss.omp_set_num_threads(1)
    bare = faiss.IndexFlatIP(vectors.shape[1])
    bare.add(vectors)
    everything = np.arange(len(vectors))
    hits = 0
    for query in queries:
        truth = exact_top(vectors, everything, query, 10)
        hits += overlap([key for key, _ in index.search(query, 10, None)], truth)
    recall = hits / (10 * len(queries))
    ours = timed(lambda row: index.search(queries[row], 10, None), len(queries))
    flat = timed(lambda row: bare.search(queries[row : row + 1], 10), len(queries))
    breadth = index.search_breadth or "exact scan"
    print(f"  {name}: {index.description}, efSearch {breadth}: recall@10 {recall:.3f}")
    print(
        f"    one search p50 {p50_ms(ours):.2f} ms vs bare FAISS exact scan"
        f" {p50_ms(flat):.2f} ms {load()}"
    )


def bench_filtered_index(index: VectorIndex, vectors: Matrix, queries: Matrix) -> None:
    for label, (_, value, modulus) in FILTERS.items():
        rows = np.arange(int(value), len(vectors), modulus)
        allowed = rows + 1
        hits = 0
        for query in queries:
            found = [key for key, _ in index.search(query, 10, allowed)]
            hits += overlap(found, exact_top(vectors, rows, query, 10))
        samples = timed(
            lambda row, a=allowed: index.search(queries[row], 10, a),  # type: ignore[misc]
            len(queries),
        )
        print(
            f"  filter admitting {label} ({len(allowed)}): recall@10"
            f" {hits / (10 * len(queries)):.3f}, p50 {p50_ms(samples):.2f} ms {load()}"
        )


def bench_crossover(index: VectorIndex, queries: Matrix, count: int) -> None:
    """p50 of the exact scan of the admitted vectors and of the widened
    graph search, by how many the filter admits."""
    if not isinstance(index, HnswIndex):
        print(f"  crossover: skipped ({index.description} index at this size)")
        return
    factory = FaissIndexFactory
    payload = index.serialize()
    exact = factory(IndexConfig(exact_filter_max_vectors=count)).restore(payload, 0)
    graph = factory(IndexConfig(exact_filter_max_vectors=0)).restore(
        payload, max(index.search_breadth, 256)
    )
    del payload
    print("  crossover (p50 ms): admitted, exact scan of them, widened graph search")
    for admitted in (1_000, 5_000, 10_000, 20_000, 40_000, 60_000):
        if admitted >= count:
            break
        allowed = np.arange(1, count + 1, count // admitted, dtype=np.int64)[:admitted]
        scan = timed(lambda row, a=allowed: exact.search(queries[row], 10, a), 30)  # type: ignore[misc]
        walk = timed(lambda row, a=allowed: graph.search(queries[row], 10, a), 30)  # type: ignore[misc]
        print(f"    {admitted:6d}  {p50_ms(scan):7.2f}  {p50_ms(walk):7.2f}")


# ----- the server process --------------------------------------------------------


async def serve(data_dir: Path, port: int) -> None:
    from statekeeper.api.interceptor import DomainInterceptor
    from statekeeper.core.limits import Limits
    from statekeeper.core.sessions.service import SessionManager
    from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
    from statekeeper.core.tenancy import Authenticator
    from statekeeper.core.tokens import TokenCounter
    from statekeeper.memory_app import MemoryApp, ModelEndpoints

    storage = EmbeddedStorage(data_dir)
    await storage.start()
    counter = TokenCounter()
    sessions = SessionManager(storage.sessions, counter, ExtractiveSummarizer(counter), Limits())
    jobs_off = dict(
        forgetting_interval_seconds=0.0,
        consolidation_interval_seconds=0.0,
        index_maintenance_interval_seconds=0.0,
    )
    config = dataclasses.replace(MemoryConfig(), **jobs_off)  # type: ignore[arg-type]
    app = MemoryApp(
        storage,
        sessions,
        counter,
        None,
        Limits(),
        config,
        ModelEndpoints(embedder_kind="none"),
        index_dir=data_dir / "indexes",
    )
    await app.start()  # serving at once; indexes load in the background
    server = grpc.aio.server(interceptors=[DomainInterceptor(Authenticator({}))])
    app.register(server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("READY", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(1)
    await app.stop()
    await storage.close()


def spawn(data_dir: Path) -> tuple[subprocess.Popen[str], str, float]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.memory_index", "--serve", str(data_dir), str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:  # ends when the server is ready or exits
        if line.strip() == "READY":
            return process, f"127.0.0.1:{port}", started
    raise RuntimeError("bench server exited before serving")


def stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def recall_request(query: Matrix, metadata: dict[str, str] | None = None) -> pb.RecallRequest:
    return pb.RecallRequest(
        user_id=USER,
        query_vector=pb.QueryVector(values=query.tolist()),
        top_k=10,
        weights=ONLY_SIMILARITY,
        filter=pb.EpisodeFilter(metadata=metadata or {}),
    )


def first_recall(address: str, query: Matrix, spawned: float, label: str) -> None:
    """Time to the first answered Recall; INDEX_LOADING answers are retried
    (counted), as a client would."""
    ready = time.perf_counter()
    retries = 0
    with grpc.insecure_channel(address) as channel:
        stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
        while True:
            try:
                reply = stub.Recall(recall_request(query))
                break
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                retries += 1
    answered = time.perf_counter()
    print(
        f"  {label}: READY {ready - spawned:.2f} s after spawn; first Recall answered"
        f" {answered - ready:.2f} s after READY ({answered - spawned:.2f} s after spawn,"
        f" {len(reply.results)} results, {retries} INDEX_LOADING retries) {load()}"
    )


def bench_filtered_grpc(address: str, vectors: Matrix, queries: Matrix) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
        for label, (key, value, modulus) in FILTERS.items():
            rows = np.arange(int(value), len(vectors), modulus)
            hits = 0
            for query in queries:
                reply = stub.Recall(recall_request(query, {key: value}))
                found = [int(r.episode.id.removeprefix("e-")) + 1 for r in reply.results]
                hits += overlap(found, exact_top(vectors, rows, query, 10))
            samples = timed(
                lambda row, k=key, v=value: stub.Recall(recall_request(queries[row], {k: v})),  # type: ignore[misc]
                len(queries),
            )
            print(
                f"  gRPC Recall, filter admitting {label} ({len(rows)}): recall@10"
                f" {hits / (10 * len(queries)):.3f}, p50 {p50_ms(samples):.2f} ms {load()}"
            )


def rss_bytes(pid: int | None = None) -> int:
    status = Path(f"/proc/{pid or 'self'}/status").read_text()
    line = next(x for x in status.splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def release_memory() -> None:
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # glibc only
        ctypes.CDLL("libc.so.6").malloc_trim(0)


async def bench_rss(count: int) -> None:
    dimension = 384
    with tempfile.TemporaryDirectory() as scratch:
        await fill_store(Path(scratch), embedding_like(count, dimension, seed=5))
        release_memory()
        before = rss_bytes()
        storage = EmbeddedStorage(Path(scratch))
        await storage.start()
        config = IndexConfig()
        indexes = VectorIndexes(
            EmbeddedMemoryStore(storage),
            FaissIndexFactory(config),
            InProcessChangeFeed(),
            config=config,
        )
        await indexes.rebuild_all()
        release_memory()
        held = rss_bytes() - before
        index = indexes.index_of(TENANT, USER)
        assert index is not None
        raw = count * dimension * 4
        scale = 100_000 / count
        print(
            f"  {count} x {dimension} ({index.description}): RSS +{held * scale / 2**20:.0f} MiB"
            f" per 100k vectors, raw float32 {raw * scale / 2**20:.0f} MiB"
            f" ({held / raw:.2f}x) {load()}"
        )
        indexes.close()
        await storage.close()


# ----- main ----------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=120_000)
    parser.add_argument("--dimension", type=int, default=256)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rss-vectors", type=int, default=100_000)
    parser.add_argument("--skip-rss", action="store_true")
    parser.add_argument("--skip-clustered", action="store_true")
    parser.add_argument("--serve", nargs=2, metavar=("DIR", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(Path(args.serve[0]), int(args.serve[1])))
        return
    count, dimension = args.vectors, args.dimension
    print(f"vector indexes: {count} x {dimension} per user {load()}")
    random_vectors = random_unit(count, dimension, seed=1)
    random_queries = random_unit(args.queries, dimension, seed=2)  # fresh points
    grouped = clustered(count + args.queries, dimension, seed=3)
    grouped, grouped_queries = grouped[:count], grouped[count:]  # unseen cluster points
    with tempfile.TemporaryDirectory() as scratch:
        random_dir, grouped_dir = Path(scratch) / "random", Path(scratch) / "clustered"
        print("1. HNSW accuracy against exact search (in process, as the server builds it)")
        datasets = [("random", random_dir, random_vectors, random_queries)]
        if not args.skip_clustered:
            datasets.append(("clustered", grouped_dir, grouped, grouped_queries))
        for name, data_dir, vectors, queries in datasets:
            asyncio.run(fill_store(data_dir, vectors))
            index, built = asyncio.run(build_and_save(data_dir))
            print(f"  {name}: built and tuned in {built:.1f} s {load()}")
            bench_accuracy(name, index, vectors, queries)
            if name == "random":
                bench_filtered_index(index, vectors, queries)
                bench_crossover(index, queries, count)
            del index
            release_memory()
        shutil.rmtree(grouped_dir, ignore_errors=True)

        print("2. server process on the random store, restarted")
        process, address, spawned = spawn(random_dir)
        try:
            first_recall(address, random_queries[0], spawned, "with its saved index")
            bench_filtered_grpc(address, random_vectors, random_queries)
            print(f"  server RSS {rss_bytes(process.pid) / 2**20:.0f} MiB {load()}")
        finally:
            stop(process)
        for snapshot in (random_dir / "indexes").glob("*.faiss"):
            snapshot.unlink()
        process, address, spawned = spawn(random_dir)
        try:
            first_recall(address, random_queries[1], spawned, "without it (rebuild)")
        finally:
            process.kill()  # not SIGTERM: exiting would wait for the graph build
            process.wait()
    if not args.skip_rss:
        print("3. memory held by an index")
        asyncio.run(bench_rss(args.rss_vectors))


if __name__ == "__main__":
    main()
