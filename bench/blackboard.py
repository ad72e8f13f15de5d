"""Blackboard latency through gRPC on the embedded store, side by side with
the gRPC round-trip floor of the same server (health Check), which no RPC
can beat.

Measures, with one client process against one server process:

* GetEntry and PutEntry round trips (PutEntry includes the fsync of the
  commit: SQLite WAL with synchronous=FULL);
* Watch publish-to-receive with 1, 10 and 100 subscribers: from the moment
  the publisher calls PutEntry to the moment each subscriber's stream yields
  the event (so it includes the put's commit), one publication at a time.

Raw Redis PUBLISH/SUBSCRIBE and GET comparisons come with the production
backend. Until `statekeeper serve` wires the blackboard, the server process
is tests/e2e_inproc/serve.py.

Run: `.venv/bin/python -m bench.blackboard [--ops N] [--publications N]`.
Prints p50/p99 in microseconds and each p50 and p99 as a multiple of the
floor's.
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
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from statekeeper.v1 import blackboard_pb2 as pb
from statekeeper.v1 import common_pb2
from statekeeper.v1.blackboard_pb2_grpc import BlackboardServiceStub

REPO = Path(__file__).resolve().parents[1]
SUBSCRIBER_COUNTS = (1, 10, 100)


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e6, p99 * 1e6


def start_server(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    ready = data_dir / "ready"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.e2e_inproc.serve",
            "--data-dir",
            str(data_dir),
            "--ready-file",
            str(ready),
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    for _ in range(600):
        if ready.exists() and ready.read_text().endswith("\n"):
            return process, ready.read_text().split()[0]
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("server did not start")


async def timed(operation: Callable[[], Awaitable[object]], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        await operation()
        samples.append(time.perf_counter() - start)
    return samples


def value(data: bytes) -> pb.BlackboardValue:
    return pb.BlackboardValue(payload=common_pb2.Payload(data=data))


async def bench_round_trips(channel: grpc.aio.Channel, ops: int) -> dict[str, list[float]]:
    health = health_pb2_grpc.HealthStub(channel)
    stub = BlackboardServiceStub(channel)
    await stub.PutEntry(pb.PutEntryRequest(board="bench", key="k", value=value(b"x" * 100)))
    check = health_pb2.HealthCheckRequest()
    get = pb.GetEntryRequest(board="bench", key="k")
    put = pb.PutEntryRequest(board="bench", key="k", value=value(b"y" * 100))
    await timed(lambda: health.Check(check), 200)  # warm up
    return {
        "grpc floor (health Check)": await timed(lambda: health.Check(check), ops),
        "GetEntry": await timed(lambda: stub.GetEntry(get), ops),
        "PutEntry (fsync)": await timed(lambda: stub.PutEntry(put), ops),
    }


async def bench_watch(
    channel: grpc.aio.Channel, subscribers: int, publications: int
) -> list[float]:
    """Publish-to-receive latency of every (publication, subscriber) pair."""
    stub = BlackboardServiceStub(channel)
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
        await stub.PutEntry(pb.PutEntryRequest(board=board, key="k", value=value(sent)))
        await asyncio.wait_for(received.wait(), 30)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return latencies


def report(results: dict[str, list[float]]) -> None:
    floor50, floor99 = percentiles(results["grpc floor (health Check)"])
    print(f"{'operation':<38} {'p50 us':>9} {'p99 us':>9} {'p50 x floor':>12} {'p99 x floor':>12}")
    for name, samples in results.items():
        p50, p99 = percentiles(samples)
        print(f"{name:<38} {p50:9.0f} {p99:9.0f} {p50 / floor50:12.1f} {p99 / floor99:12.1f}")


async def run(address: str, ops: int, publications: int) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        results = await bench_round_trips(channel, ops)
        for count in SUBSCRIBER_COUNTS:
            name = f"watch publish->receive, {count} sub"
            results[name] = await bench_watch(channel, count, publications)
    report(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--publications", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        process, address = start_server(Path(directory))
        try:
            asyncio.run(run(address, args.ops, args.publications))
        finally:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
