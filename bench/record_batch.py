"""RecordEpisodes throughput with client vectors, next to the raw floor.

Batches of 1,000 episodes (384-d client embeddings, server deduplication at
its configured near-duplicate threshold) through a real `statekeeper serve`
process per backend, one call at a time, against a raw batch insert of the
same rows on the same box in one transaction per batch:

* embedded: SQLite (WAL, synchronous=FULL) `executemany` INSERT plus a FAISS
  add of the batch;
* production (PostgreSQL + Redis): asyncpg `executemany` INSERT.

Printed: episodes/s of each, the ratio, the load average (the rates are
only comparable on an otherwise idle machine) and the server's CPU time per
1,000 episodes (its process and worker processes; PostgreSQL's not counted),
which depends much less on the load, and the client's CPU time per 1,000
episodes while it sends them (it shares the machine with the server).

Needs Redis and PostgreSQL for production: uses STATEKEEPER_TEST_POSTGRES_DSN
and STATEKEEPER_TEST_REDIS_URL when set, else starts both with
scripts/services.sh. Run: `.venv/bin/python -m bench.record_batch
[--batches N] [--batch-size N] [--users N]
[--backend embedded|production|both]`. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import tempfile
import time
from pathlib import Path

import asyncpg
import grpc
import numpy as np

from bench.memory import DIMENSION, Matrix, embedding_like
from bench.production import fresh_database, server, services
from statekeeper.core.memory.config import IndexConfig
from statekeeper.core.memory.faiss_index import FaissIndexFactory
from statekeeper_client.v1 import memory_pb2 as pb
from statekeeper_client.v1 import memory_pb2_grpc


def requests(vectors: Matrix, batch_size: int, users: int) -> list[pb.RecordEpisodesRequest]:
    batches = []
    for start in range(0, len(vectors), batch_size):
        items = [
            pb.RecordEpisodeRequest(
                user_id=f"user-{row % users}",
                user_message=f"episode {row}: what the user said about topic {row % 97}",
                assistant_response=f"the answer to episode {row}",
                embedding=vectors[row].tolist(),
            )
            for row in range(start, min(start + batch_size, len(vectors)))
        ]
        batches.append(pb.RecordEpisodesRequest(episodes=items))
    return batches


def process_tree_cpu(marker: str) -> float:
    """CPU seconds (user + system) of the process whose command line holds
    `marker` and of its child processes (Linux /proc; 0 elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    seconds: dict[int, float] = {}
    roots: set[int] = set()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue  # ended meanwhile
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        seconds[pid] = (int(fields[11]) + int(fields[12])) / tick
        if marker in command and "serve" in command:
            roots.add(pid)
    tree = set(roots) | {pid for pid, parent in parents.items() if parent in roots}
    return sum(seconds[pid] for pid in tree)


def through_grpc(address: str, batches: list[pb.RecordEpisodesRequest]) -> tuple[float, float]:
    """Episodes per second over every batch, sent one call at a time, and
    the client's CPU milliseconds per 1,000 episodes (serializing the
    requests, gRPC, parsing the responses; the requests are built before)."""
    with grpc.insecure_channel(
        address, options=[("grpc.max_send_message_length", 64 * 1024 * 1024)]
    ) as channel:
        stub = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
        created = 0
        started, cpu_started = time.perf_counter(), time.process_time()
        for batch in batches:
            response = stub.RecordEpisodes(batch, timeout=120)
            created += response.created_count
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    total = sum(len(batch.episodes) for batch in batches)
    if created != total:
        print(f"  (note: {total - created} of {total} items were not created)")
    return total / elapsed, cpu * 1e6 / total


def rows_of(vectors: Matrix) -> list[tuple[str, str, str, str, bytes]]:
    return [
        (f"e-{row}", f"user-{row % 4}", f"episode {row}", f"answer {row}", vector.tobytes())
        for row, vector in enumerate(vectors)
    ]


def raw_sqlite(vectors: Matrix, batch_size: int) -> float:
    """One transaction per batch: executemany INSERT, COMMIT, FAISS add."""
    faiss_index = FaissIndexFactory(IndexConfig(kind="flat")).create(DIMENSION, len(vectors))
    rows = rows_of(vectors)
    with tempfile.TemporaryDirectory() as scratch:
        db = sqlite3.connect(Path(scratch) / "raw.sqlite3", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute(
            "CREATE TABLE e (k INTEGER PRIMARY KEY, id TEXT, u TEXT, m TEXT, r TEXT, v BLOB)"
        )
        started = time.perf_counter()
        for start in range(0, len(rows), batch_size):
            db.execute("BEGIN")
            db.executemany(
                "INSERT INTO e (id, u, m, r, v) VALUES (?, ?, ?, ?, ?)",
                rows[start : start + batch_size],
            )
            db.execute("COMMIT")
            keys = np.arange(start, start + len(rows[start : start + batch_size]), dtype=np.int64)
            faiss_index.add(keys, vectors[start : start + batch_size])
        elapsed = time.perf_counter() - started
        db.close()
    return len(rows) / elapsed


async def raw_postgres(dsn: str, vectors: Matrix, batch_size: int) -> float:
    """One transaction per batch: asyncpg executemany INSERT."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(
            "CREATE TABLE raw_episodes (k bigserial PRIMARY KEY, id text, u text, m text,"
            " r text, v bytea)"
        )
        rows = rows_of(vectors)
        started = time.perf_counter()
        for start in range(0, len(rows), batch_size):
            async with conn.transaction():
                await conn.executemany(
                    "INSERT INTO raw_episodes (id, u, m, r, v) VALUES ($1, $2, $3, $4, $5)",
                    rows[start : start + batch_size],
                )
        return len(rows) / (time.perf_counter() - started)
    finally:
        await conn.close()


def report(
    name: str, ours: float, raw: float, raw_name: str, cpu_ms: float, client_ms: float
) -> None:
    print(f"{name}")
    print(f"  RecordEpisodes gRPC   {ours:9.0f} episodes/s")
    print(f"  server CPU            {cpu_ms:9.0f} ms per 1,000 episodes")
    print(f"  client CPU            {client_ms:9.0f} ms per 1,000 episodes")
    print(f"  {raw_name:<21} {raw:9.0f} episodes/s")
    print(f"  ratio raw / gRPC      {raw / ours:9.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--backend", choices=("embedded", "production", "both"), default="both")
    args = parser.parse_args()
    vectors = embedding_like(args.batches * args.batch_size, seed=7)
    batches = requests(vectors, args.batch_size, args.users)
    warmup = requests(embedding_like(args.batch_size, seed=8), args.batch_size, 1)
    for item in warmup[0].episodes:
        item.user_id = "warmup"
    print(f"load average before: {os.getloadavg()}")
    print(
        f"{len(vectors)} episodes in batches of {args.batch_size}, {args.users} users,"
        f" {DIMENSION}-d client vectors"
    )
    with services() as (dsn, url), tempfile.TemporaryDirectory() as tmp:
        backends = {"embedded": [], "production": ["--redis-url", url]}
        for name, extra in backends.items():
            if args.backend not in ("both", name):
                continue
            if name != "embedded":
                database = asyncio.run(fresh_database(dsn))
                extra = ["--postgres-dsn", database, "--migrate-on-start", *extra]
            data_dir = Path(tmp) / name
            with server(data_dir, "--embedder-kind", "none", *extra) as address:
                through_grpc(address, warmup)
                cpu_before = process_tree_cpu(str(data_dir))
                ours, client_ms = through_grpc(address, batches)
                cpu_ms = (process_tree_cpu(str(data_dir)) - cpu_before) * 1e6 / len(vectors)
            if name == "embedded":
                raw = raw_sqlite(vectors, args.batch_size)
                report(name, ours, raw, "raw SQLite + faiss", cpu_ms, client_ms)
            else:
                raw = asyncio.run(raw_postgres(database, vectors, args.batch_size))
                report(name, ours, raw, "raw asyncpg INSERT", cpu_ms, client_ms)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
