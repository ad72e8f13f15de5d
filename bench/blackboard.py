"""Blackboard latency through gRPC, on the embedded store and on the
production tier, side by side with the physical floors of the same box.

Embedded (one server process): GetEntry and PutEntry round trips (PutEntry
includes the fsync of the commit: SQLite WAL with synchronous=FULL) and
Watch publish-to-receive with 1, 10 and 100 subscribers, against the gRPC
round-trip floor of the same server (health Check), which no RPC can beat.

Production (two server processes, one PostgreSQL, one Redis): the publisher
puts through replica A, the subscribers watch through replica B, so every
event crosses replicas: PostgreSQL commit on A, XADD, XREAD on B, B's watch
hub, B's gRPC stream. Compared with, measured in the same run:

* raw Redis PUBLISH/SUBSCRIBE with as many subscriber connections (from
  PUBLISH to each subscriber's receipt), for Watch publish-to-receive;
* a raw Redis GET of a value of the same size, for GetEntry;
* in process (no gRPC, no domain): the store's own read, and the feed alone
  (a batch handed to replica A's feed until replica B's listener has it:
  XADD + XREAD, no commit), which show what each layer adds.

Publish-to-receive is timed from the moment the publisher calls PutEntry
(or PUBLISH) to the moment each subscriber has the event, one publication
at a time. The production numbers include a durable PostgreSQL commit
(fsync) that raw PUBLISH does not make.

Until `statekeeper serve` wires the blackboard, the server process is
tests/e2e_inproc/serve.py. Production needs Redis and PostgreSQL: uses
STATEKEEPER_TEST_POSTGRES_DSN and STATEKEEPER_TEST_REDIS_URL when set, else
starts both with scripts/services.sh and stops them at the end.

Run: `.venv/bin/python -m bench.blackboard [--ops N] [--publications N]
[--backend embedded|production|both]`. Prints p50/p99 in microseconds and
the ratios to the floors.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import redis.asyncio as redis_asyncio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.production import fresh_database, services
from statekeeper.core.blackboard.models import (
    Decision,
    Entry,
    Event,
    EventType,
    MutationView,
    RevisionBatch,
    Value,
)
from statekeeper.storage.postgres.blackboard import PostgresBlackboardStore
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub

REPO = Path(__file__).resolve().parents[1]
SUBSCRIBER_COUNTS = (1, 10, 100)
VALUE = b"x" * 100
Samples = dict[str, list[float]]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e6, p99 * 1e6


@contextmanager
def server(data_dir: Path, *extra: str) -> Iterator[str]:
    """A tests/e2e_inproc/serve.py process; yields its address."""
    data_dir.mkdir(parents=True, exist_ok=True)
    ready = data_dir / "ready"
    log = open(data_dir / "server.log", "wb")  # noqa: SIM115 - lives with the process
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.e2e_inproc.serve",
            "--data-dir",
            str(data_dir),
            "--ready-file",
            str(ready),
            *extra,
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=log,
        stderr=log,
    )
    try:
        for _ in range(600):
            if ready.exists() and ready.read_text().endswith("\n"):
                break
            if process.poll() is not None:
                raise RuntimeError(f"server exited early; see {data_dir / 'server.log'}")
            time.sleep(0.05)
        else:
            raise RuntimeError("server did not start")
        yield ready.read_text().split()[0]
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


async def timed(operation: Callable[[], Awaitable[object]], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        await operation()
        samples.append(time.perf_counter() - start)
    return samples


def value(data: bytes) -> pb.BlackboardValue:
    return pb.BlackboardValue(payload=common_pb2.Payload(data=data))


# ----- through gRPC ------------------------------------------------------------------


async def bench_round_trips(channel: grpc.aio.Channel, ops: int) -> Samples:
    health = health_pb2_grpc.HealthStub(channel)
    stub = BlackboardServiceStub(channel)
    await stub.PutEntry(pb.PutEntryRequest(board="bench", key="k", value=value(VALUE)))
    check = health_pb2.HealthCheckRequest()
    get = pb.GetEntryRequest(board="bench", key="k")
    put = pb.PutEntryRequest(board="bench", key="k", value=value(b"y" * 100))
    await timed(lambda: health.Check(check), 200)  # warm up
    return {
        "grpc floor (health Check)": await timed(lambda: health.Check(check), ops),
        "GetEntry": await timed(lambda: stub.GetEntry(get), ops),
        "PutEntry (durable commit)": await timed(lambda: stub.PutEntry(put), ops),
    }


async def bench_watch(
    publisher: grpc.aio.Channel, subscriber: grpc.aio.Channel, subscribers: int, publications: int
) -> list[float]:
    """Publish-to-receive latency of every (publication, subscriber) pair:
    puts through `publisher`, watches through `subscriber`."""
    stub = BlackboardServiceStub(subscriber)
    writer = BlackboardServiceStub(publisher)
    board = f"watch-{subscribers}"
    latencies: list[float] = []
    received = asyncio.Event()
    pending = 0

    async def subscribe(ready: asyncio.Event) -> None:
        nonlocal pending
        call = stub.Watch(pb.WatchRequest(board=board))
        await call.read()  # started
        ready.set()
        for _ in range(publications * 4):  # bounded: one publication per response at most
            response = await call.read()
            if response is grpc.aio.EOF:
                return
            now = time.perf_counter()
            for event in response.events.events:
                latencies.append(now - float(event.entry.value.payload.data))
                pending -= 1
                if pending == 0:
                    received.set()

    readies = [asyncio.Event() for _ in range(subscribers)]
    tasks = [asyncio.create_task(subscribe(ready)) for ready in readies]
    await asyncio.gather(*(ready.wait() for ready in readies))
    for _ in range(publications):
        pending = subscribers
        received.clear()
        sent = str(time.perf_counter()).encode()
        await writer.PutEntry(pb.PutEntryRequest(board=board, key="k", value=value(sent)))
        await asyncio.wait_for(received.wait(), 30)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return latencies


async def run_grpc(publisher: str, subscriber: str, ops: int, publications: int) -> Samples:
    async with (
        grpc.aio.insecure_channel(publisher) as writes,
        grpc.aio.insecure_channel(subscriber) as reads,
    ):
        results = await bench_round_trips(reads, ops)
        for count in SUBSCRIBER_COUNTS:
            name = f"watch publish->receive, {count} sub"
            results[name] = await bench_watch(writes, reads, count, publications)
    return results


# ----- raw Redis and the production store in process -------------------------------------


async def raw_get(url: str, ops: int) -> list[float]:
    client = redis_asyncio.from_url(url)
    await client.set("bench:raw:get", VALUE)
    try:
        await timed(lambda: client.get("bench:raw:get"), 200)  # warm up
        return await timed(lambda: client.get("bench:raw:get"), ops)
    finally:
        await client.aclose()


async def raw_pubsub(url: str, subscribers: int, publications: int) -> list[float]:
    """PUBLISH to `subscribers` connections: PUBLISH-to-receipt latencies."""
    channel = f"bench:raw:pubsub:{uuid.uuid4().hex[:8]}"
    publisher = redis_asyncio.from_url(url)
    clients = [redis_asyncio.from_url(url) for _ in range(subscribers)]
    pubsubs = [client.pubsub(ignore_subscribe_messages=True) for client in clients]
    latencies: list[float] = []
    received = asyncio.Event()
    pending = 0

    async def listen(pubsub: redis_asyncio.client.PubSub) -> None:
        nonlocal pending
        async for message in pubsub.listen():
            if message["type"] != "message":
                continue
            latencies.append(time.perf_counter() - float(message["data"]))
            pending -= 1
            if pending == 0:
                received.set()

    for pubsub in pubsubs:
        await pubsub.subscribe(channel)
    tasks = [asyncio.create_task(listen(pubsub)) for pubsub in pubsubs]
    try:
        for _ in range(100):  # until every subscription is live
            if dict(await publisher.pubsub_numsub(channel)).get(channel.encode()) == subscribers:
                break
            await asyncio.sleep(0.01)
        for _ in range(publications):
            pending = subscribers
            received.clear()
            await publisher.publish(channel, str(time.perf_counter()))
            await asyncio.wait_for(received.wait(), 30)
        return latencies
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for pubsub in pubsubs:
            await pubsub.aclose()  # type: ignore[no-untyped-call]
        for client in (publisher, *clients):
            await client.aclose()


async def bench_store(dsn: str, url: str, ops: int, publications: int) -> Samples:
    """The production store in process: its read (one statement), and its
    feed alone from replica A's publish to replica B's listener."""
    db = PostgresStorage(dsn, migrate_on_start=True)
    await db.start()
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    one = PostgresBlackboardStore(db, url, prefix)
    other = PostgresBlackboardStore(db, url, prefix)
    await one.start()
    await other.start()
    try:
        tenant = "bench"
        await one.mutate(tenant, "b", ["k"], time.time(), _put_decision)
        await timed(lambda: one.read(tenant, "b", ["k"], 0, None), 200)  # warm up
        read = await timed(lambda: one.read(tenant, "b", ["k"], 0, None), ops)
        feed = await _feed_latency(one, other, publications)
        return {"store read (in process)": read, "feed A->B (in process)": feed}
    finally:
        await other.close()
        await one.close()
        await db.close()


def _put_decision(view: MutationView) -> Decision[None]:
    entry = Entry("b", "k", Value.payload(VALUE), view.revision, view.revision, 1)
    return Decision((Event(EventType.PUT, entry, None),), None)


async def _feed_latency(
    one: PostgresBlackboardStore, other: PostgresBlackboardStore, publications: int
) -> list[float]:
    tenant = f"feed-{uuid.uuid4().hex[:8]}"
    latencies: list[float] = []
    received = asyncio.Event()

    def listener(batch: RevisionBatch) -> None:
        if batch.tenant == tenant:
            value = batch.events[0].entry.value
            assert value is not None
            latencies.append(time.perf_counter() - float(value.data))
            received.set()

    other.feed.track(tenant)
    remove = other.feed.listen(listener)
    await asyncio.sleep(0.2)  # the reader starts reading the new stream
    try:
        for revision in range(1, publications + 1):
            received.clear()
            data = str(time.perf_counter()).encode()
            entry = Entry("b", "k", Value.payload(data), 1, revision, revision)
            batch = RevisionBatch(
                tenant, "b", revision, time.time(), (Event(EventType.PUT, entry, None),)
            )
            await one.feed.publish([batch])
            await asyncio.wait_for(received.wait(), 30)
        return latencies
    finally:
        remove()
        other.feed.untrack(tenant)


async def run_raw(url: str, ops: int, publications: int) -> Samples:
    results = {"redis GET": await raw_get(url, ops)}
    for count in SUBSCRIBER_COUNTS:
        results[f"redis PUBLISH->receive, {count} sub"] = await raw_pubsub(url, count, publications)
    return results


# ----- reports -----------------------------------------------------------------------------


def report_embedded(results: Samples) -> None:
    floor50, floor99 = percentiles(results["grpc floor (health Check)"])
    print("\nembedded store (one server process), p50/p99 in microseconds")
    print(f"{'operation':<38} {'p50 us':>9} {'p99 us':>9} {'p50 x floor':>12} {'p99 x floor':>12}")
    for name, samples in results.items():
        p50, p99 = percentiles(samples)
        print(f"{name:<38} {p50:9.0f} {p99:9.0f} {p50 / floor50:12.1f} {p99 / floor99:12.1f}")


def compare(name: str, ours: list[float], raw_name: str, raw: list[float]) -> str:
    o50, o99 = percentiles(ours)
    r50, r99 = percentiles(raw)
    return (
        f"{name:<36} {o50:>8.0f}/{o99:<8.0f} {raw_name:<28} {r50:>7.0f}/{r99:<7.0f}"
        f" {o50 / r50:>7.1f}x {o99 / r99:>7.1f}x"
    )


def report_production(grpc_results: Samples, store: Samples, raw: Samples) -> None:
    print(
        "\nproduction (2 server processes, PostgreSQL + Redis; watches cross replicas),"
        " p50/p99 in microseconds"
    )
    print(f"{'ours':<36} {'p50/p99':>17} {'raw floor':<28} {'p50/p99':>15} {'p50':>8} {'p99':>8}")
    floor = grpc_results["grpc floor (health Check)"]
    print(compare("grpc floor (health Check)", floor, "redis GET", raw["redis GET"]))
    print(compare("GetEntry (gRPC)", grpc_results["GetEntry"], "redis GET", raw["redis GET"]))
    print(compare("GetEntry (gRPC)", grpc_results["GetEntry"], "grpc floor", floor))
    print(
        compare(
            "store read (in process)",
            store["store read (in process)"],
            "redis GET",
            raw["redis GET"],
        )
    )
    put = grpc_results["PutEntry (durable commit)"]
    print(compare("PutEntry (gRPC, durable commit)", put, "grpc floor", floor))
    one_sub = raw["redis PUBLISH->receive, 1 sub"]
    print(
        compare(
            "feed A->B (in process, no commit)",
            store["feed A->B (in process)"],
            "redis PUBLISH, 1 sub",
            one_sub,
        )
    )
    # What the fan-out adds to the durable write it starts from.
    watch_one = grpc_results["watch publish->receive, 1 sub"]
    print(compare("Watch put->receive, 1 sub", watch_one, "PutEntry (same run)", put))
    for count in SUBSCRIBER_COUNTS:
        ours = grpc_results[f"watch publish->receive, {count} sub"]
        theirs = raw[f"redis PUBLISH->receive, {count} sub"]
        print(
            compare(f"Watch put->receive, {count} sub", ours, f"redis PUBLISH, {count} sub", theirs)
        )


# ----- main ----------------------------------------------------------------------------------


def run_embedded(directory: Path, ops: int, publications: int) -> None:
    with server(directory / "embedded") as address:
        results = asyncio.run(run_grpc(address, address, ops, publications))
    report_embedded(results)


def run_production(directory: Path, ops: int, publications: int) -> None:
    with services() as (dsn, url):
        database = asyncio.run(fresh_database(dsn))
        options = ["--postgres-dsn", database, "--redis-url", url, "--redis-prefix", "bench"]
        with (
            server(directory / "replica-a", *options) as one,
            server(directory / "replica-b", *options) as other,
        ):
            grpc_results = asyncio.run(run_grpc(one, other, ops, publications))
        store = asyncio.run(bench_store(database, url, ops, publications))
        raw = asyncio.run(run_raw(url, ops, publications))
    report_production(grpc_results, store, raw)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--publications", type=int, default=200)
    parser.add_argument("--backend", choices=("embedded", "production", "both"), default="both")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        if args.backend in ("embedded", "both"):
            run_embedded(Path(directory), args.ops, args.publications)
        if args.backend in ("production", "both"):
            run_production(Path(directory), args.ops, args.publications)


if __name__ == "__main__":
    main()
