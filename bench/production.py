"""Session append and get on each backend, against the raw floor of the same
box: a raw asyncpg INSERT of the same message row (autocommit, so one WAL
flush, like our append's one commit) and a raw Redis GET of the same session
record bytes.

Measured two ways, sequentially, one op at a time:

* through gRPC: a real `statekeeper serve` process per backend (embedded,
  production = PostgreSQL + Redis, postgres = PostgreSQL without cache);
* in process: the production store's own calls (no gRPC, no domain), which
  shows what the storage layer adds to the raw floor.

Needs Redis and PostgreSQL: uses STATEKEEPER_TEST_POSTGRES_DSN and
STATEKEEPER_TEST_REDIS_URL when set, else starts both with
scripts/services.sh in a temporary directory and stops them at the end.

Run: `make bench-production` (or `.venv/bin/python -m bench.production [--ops N]`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg
import grpc
import redis.asyncio as redis_asyncio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.sessions import CONTENT, percentiles, timed
from statekeeper.core.sessions.models import (
    ChangeKind,
    Message,
    Role,
    SessionChange,
    SessionRecord,
    SessionVersion,
)
from statekeeper.storage.codec import record_to_json
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.production import ProductionStorage
from statekeeper.storage.redis.cache import SessionCache
from statekeeper.storage.sql import MESSAGE_INSERT_COLUMNS, message_values
from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub

ROOT = Path(__file__).resolve().parent.parent
Samples = dict[str, list[float]]


@contextmanager
def services() -> Iterator[tuple[str, str]]:
    """(postgres DSN, redis URL): the configured ones, or fresh ones."""
    dsn = os.environ.get("STATEKEEPER_TEST_POSTGRES_DSN")
    url = os.environ.get("STATEKEEPER_TEST_REDIS_URL")
    if dsn and url:
        yield dsn, url
        return
    directory = tempfile.mkdtemp(prefix="statekeeper-bench-")
    script = str(ROOT / "scripts" / "services.sh")
    subprocess.run([script, "start", directory], check=True)
    try:
        env = dict(
            line.removeprefix("export ").split("=", 1)
            for line in Path(directory, "env").read_text().splitlines()
        )
        yield env["STATEKEEPER_TEST_POSTGRES_DSN"], env["STATEKEEPER_TEST_REDIS_URL"]
    finally:
        subprocess.run([script, "stop", directory], check=False)
        subprocess.run(["rm", "-rf", directory], check=False)


async def fresh_database(dsn: str) -> str:
    name = f"bench_{uuid.uuid4().hex[:8]}"
    conn = await asyncpg.connect(dsn)
    await conn.execute(f"CREATE DATABASE {name}")
    await conn.close()
    return dsn.rsplit("/", 1)[0] + "/" + name


def free_address() -> str:
    """A loopback address with a port free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


@contextmanager
def serving(process: subprocess.Popen[bytes], address: str) -> Iterator[str]:
    """`address`, once the server `process` started answers health checks
    there; the process is stopped on exit."""
    try:
        wait_serving(address)
        yield address
    finally:
        process.terminate()
        process.wait()


@contextmanager
def server(data_dir: Path, *args: str) -> Iterator[str]:
    address = free_address()
    command = [sys.executable, "-m", "statekeeper", "serve", "--listen", address]
    command += ["--data-dir", str(data_dir), "--log-level", "WARNING", *args]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with serving(process, address):
        yield address


def wait_serving(address: str) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for _ in range(600):
            try:
                if stub.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.05)
    raise RuntimeError(f"server at {address} did not start")


def bench_grpc(address: str, ops: int) -> Samples:
    with grpc.insecure_channel(address) as channel:
        stub = SessionServiceStub(channel)
        stub.CreateSession(
            pb.CreateSessionRequest(session_id="bench", session=pb.Session(user_id="u"))
        )
        message = pb.SessionMessage(role=pb.ROLE_USER, content=CONTENT)
        request = pb.AppendMessagesRequest(session_id="bench", messages=[message])
        get = pb.GetSessionRequest(session_id="bench")
        stub.GetSession(get)  # warm the cache like any live session
        health = health_pb2_grpc.HealthStub(channel)
        return {
            "append": timed(lambda i: stub.AppendMessages(request), ops),
            "get": timed(lambda i: stub.GetSession(get), ops),
            "floor": timed(lambda i: health.Check(health_pb2.HealthCheckRequest()), ops),
        }


async def atimed(operation: Callable[[int], Awaitable[object]], count: int) -> list[float]:
    samples = []
    for index in range(count):
        start = time.perf_counter()
        await operation(index)
        samples.append(time.perf_counter() - start)
    return samples


def bench_message(sequence: int) -> Message:
    return Message(sequence, uuid.uuid4().hex, Role.USER, CONTENT, token_count=20)


async def bench_raw(dsn: str, url: str, record: SessionRecord, ops: int) -> Samples:
    conn = await asyncpg.connect(dsn)
    await conn.execute(
        "CREATE TABLE raw_messages (tenant text, session_id text, sequence bigint,"
        " message_id text, role integer, content text, name text, tool_calls text,"
        " tool_call_id text, metadata text, token_count integer,"
        " create_time double precision, rolled_back boolean, tool_call_ids text,"
        " PRIMARY KEY (tenant, session_id, sequence))"
    )
    insert = (
        f"INSERT INTO raw_messages (tenant, session_id, {MESSAGE_INSERT_COLUMNS})"
        " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)"
    )
    client = redis_asyncio.from_url(url)
    await client.set("bench:raw", record_to_json(record))
    try:
        return {
            "append": await atimed(
                lambda i: conn.execute(insert, *message_values("t", "s", bench_message(i + 1))),
                ops,
            ),
            "get": await atimed(lambda i: client.get("bench:raw"), ops),
        }
    finally:
        await conn.close()
        await client.aclose()


async def bench_store(dsn: str, url: str, ops: int) -> tuple[Samples, SessionRecord]:
    """The production store's own append (one transaction + cache steps) and
    get (a cache hit), in process."""
    store = ProductionStorage(
        PostgresStorage(dsn, migrate_on_start=True), SessionCache(url, prefix="bench")
    )
    await store.start()
    record = SessionRecord(session_id="s", user_id="u", version=1, create_time=time.time())
    await store.sessions.create_session("t", SessionVersion(1, 0, ChangeKind.CREATE, 0, record))
    current = record

    async def append(index: int) -> None:
        nonlocal current
        message = bench_message(index + 1)
        nxt = current.evolve(version=current.version + 1, last_sequence=message.sequence)
        version = SessionVersion(nxt.version, current.version, ChangeKind.APPEND, 0, nxt)
        await store.sessions.apply_change(
            "t", SessionChange(current.version, nxt, version, (message,))
        )
        current = nxt

    try:
        samples = {"append": await atimed(append, ops)}
        samples["get"] = await atimed(lambda i: store.sessions.get_session("t", "s"), ops)
        return samples, current
    finally:
        await store.close()


def row(name: str, ours: list[float], raw: list[float]) -> str:
    o50, o99 = percentiles(ours)
    r50, r99 = percentiles(raw)
    return (
        f"  {name:<32}{o50:>9.0f}/{o99:<9.0f}{r50:>9.0f}/{r99:<9.0f}"
        f"{o50 / r50:>9.1f}x{o99 / r99:>9.1f}x"
    )


def report(ops: int, results: dict[str, Samples], raw: Samples) -> None:
    print(f"\nsession append and get, {ops} sequential ops each, p50/p99 in microseconds")
    print("raw floor: asyncpg INSERT of the same message row (autocommit);")
    print("           Redis GET of the same session record bytes")
    print(f"  {'what':<32}{'ours p50/p99':>19}{'raw p50/p99':>19}{'p50':>10}{'p99':>10}")
    for backend, samples in results.items():
        print(row(f"{backend} append", samples["append"], raw["append"]))
        print(row(f"{backend} get", samples["get"], raw["get"]))
    floors = [s["floor"] for s in results.values() if "floor" in s]
    f50, f99 = percentiles([sample for floor in floors for sample in floor])
    print(
        f"gRPC floor on this box (health Check round trip, same servers): p50 {f50:.0f} us,"
        f" p99 {f99:.0f} us; no gRPC call can be faster"
    )


async def run_in_process(dsn: str, url: str, ops: int) -> tuple[Samples, Samples]:
    database = await fresh_database(dsn)
    store_samples, record = await bench_store(database, url, ops)
    raw = await bench_raw(database, url, record, ops)
    return store_samples, raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=2000)
    args = parser.parse_args()
    with services() as (dsn, url), tempfile.TemporaryDirectory() as tmp:
        store_samples, raw = asyncio.run(run_in_process(dsn, url, args.ops))
        results: dict[str, Samples] = {"store (in process)": store_samples}
        backends = {
            "embedded": [],
            "production": ["--redis-url", url],
            "postgres, no cache": [],
        }
        for name, extra in backends.items():
            if name != "embedded":
                database = asyncio.run(fresh_database(dsn))
                extra = ["--postgres-dsn", database, "--migrate-on-start", *extra]
            with server(Path(tmp) / name.replace(" ", "-"), *extra) as address:
                results[f"gRPC {name}"] = bench_grpc(address, args.ops)
    report(args.ops, results, raw)


if __name__ == "__main__":
    main()
