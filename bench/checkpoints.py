"""LangGraph checkpoint put and get through StatekeeperSaver, on the embedded
store and on the production one (PostgreSQL), measured side by side on the
same box with:

* the gRPC floor: one health Check round trip to the same server process,
  which no RPC can beat;
* LangGraph's InMemorySaver: the serde work alone, no I/O at all;
* LangGraph's SqliteSaver (`langgraph-checkpoint-sqlite`, if installed): an
  in-process SQLite checkpointer, the closest embedded peer. It runs with
  SQLite's default durability, while statekeeper commits with
  synchronous=FULL in WAL mode.
* LangGraph's PostgresSaver (`langgraph-checkpoint-postgres` and
  `psycopg[binary]`, if installed): the in-process PostgreSQL checkpointer,
  on the same PostgreSQL server (and database) as statekeeper's production
  backend, so both pay the same commit. statekeeper adds a gRPC hop and a
  server process in between, and does more per call (fencing, tombstones,
  values stored once per tenant, an audit record in the same transaction).

Each server runs in its own process, as in production. All savers run
interleaved, in rounds, so that they meet the same load of a shared machine.
The workload is a LangGraph-shaped checkpoint: a 20-message history that changes every 10th
step (so most puts name it by version only) and a counter that changes at
every step, chained by parent id.

PostgreSQL: STATEKEEPER_TEST_POSTGRES_DSN when set, else one started with
scripts/services.sh for the run (and stopped after); the bench works in a
fresh database on it and drops it at the end.

Run: `.venv/bin/python -m bench.checkpoints [--ops N] [--rounds R]` (not part of make test).
Prints p50/p99 in microseconds and the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import asyncpg
import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint, empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "adapters" / "langgraph"))  # if not pip-installed

from bench.production import services  # noqa: E402
from statekeeper_client.langgraph import StatekeeperSaver  # noqa: E402

MESSAGE = {"role": "user", "content": "Find me a train from Paris to Lyon tomorrow morning."}
Op = Callable[[int], object]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e6, p99 * 1e6


def timed(operation: Op, count: int) -> list[float]:
    samples = []
    for index in range(count):
        start = time.perf_counter()
        operation(index)
        samples.append(time.perf_counter() - start)
    return samples


# ----- the workload ---------------------------------------------------------------------


def workload(saver: BaseCheckpointSaver[Any], thread_id: str, ops: int) -> dict[str, list[float]]:
    """put (chained), get latest, get by id, put_writes: `ops` each."""
    configs: list[dict[str, Any]] = []
    parent: dict[str, Any] = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}

    def put(index: int) -> None:
        nonlocal parent
        history_version = str(index // 10 + 1)
        cp: Checkpoint = empty_checkpoint()
        cp["channel_values"] = {
            "messages": [MESSAGE] * 20 + [{"role": "tool", "content": history_version}],
            "counter": index,
        }
        cp["channel_versions"] = {"messages": history_version, "counter": str(index + 1)}
        new = {"counter": str(index + 1)}
        if index % 10 == 0:
            new["messages"] = history_version
        parent = saver.put(parent, cp, {"source": "loop", "step": index}, new)
        configs.append(parent)

    samples = {"put": timed(put, ops)}
    latest = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    samples["get latest"] = timed(lambda i: saver.get_tuple(latest), ops)
    samples["get by id"] = timed(lambda i: saver.get_tuple(configs[i % len(configs)]), ops)
    samples["put_writes"] = timed(
        lambda i: saver.put_writes(configs[i % len(configs)], [("counter", i)], f"task-{i}"), ops
    )
    return samples


# ----- the server process ---------------------------------------------------------------------


async def serve(data_dir: Path, port: int, postgres_dsn: str) -> None:
    sys.path.insert(0, str(REPO))
    from tests.langgraph.harness import CheckpointServer  # the real servicer and interceptor

    # On this process's one event loop, as `statekeeper serve` runs it (and
    # the floor next to it), not on a loop of its own in another thread.
    server = CheckpointServer(data_dir, postgres_dsn=postgres_dsn)
    ready: Future[None] = Future()
    serving = asyncio.create_task(server.serve(ready, asyncio.Event()))
    while not ready.done() and not serving.done():
        await asyncio.sleep(0.01)
    if serving.done():
        serving.result()  # raises what stopped it
    floor = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), floor)
    floor.add_insecure_port(f"127.0.0.1:{port}")
    await floor.start()
    (data_dir / "address").write_text(server.address)
    await floor.wait_for_termination()


def start_server(
    data_dir: Path, postgres_dsn: str = ""
) -> tuple[subprocess.Popen[bytes], str, str]:
    """Returns the process, the checkpoint address and the health address.
    With `postgres_dsn`, the server uses the PostgreSQL stores."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data_dir.mkdir(parents=True)
    serve_args = ["--serve", str(data_dir), str(port), postgres_dsn]
    process = subprocess.Popen([sys.executable, "-m", "bench.checkpoints", *serve_args], cwd=REPO)
    for _ in range(600):
        if (data_dir / "address").exists():
            return process, (data_dir / "address").read_text(), f"127.0.0.1:{port}"
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("bench server did not start")


def grpc_floor(address: str, ops: int) -> list[float]:
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        stub.Check(health_pb2.HealthCheckRequest())
        return timed(lambda i: stub.Check(health_pb2.HealthCheckRequest()), ops)


@contextmanager
def statekeeper_saver(data_dir: Path, postgres_dsn: str = "") -> Iterator[tuple[Any, str]]:
    """StatekeeperSaver on a server process of its own (on the PostgreSQL
    stores with `postgres_dsn`), and that server's health address."""
    process, address, health_address = start_server(data_dir, postgres_dsn)
    try:
        with StatekeeperSaver(address) as saver:
            yield saver, health_address
    finally:
        process.terminate()
        process.wait()


def peer_savers(stack: ExitStack, tmp: Path, dsn: str) -> dict[str, BaseCheckpointSaver[Any]]:
    """LangGraph's own savers that are installed, by column name."""
    peers: dict[str, BaseCheckpointSaver[Any]] = {"InMemorySaver": InMemorySaver()}
    try:
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        connection = sqlite3.connect(tmp / "sqlite-saver.db", check_same_thread=False)
        stack.callback(connection.close)
        peers["SqliteSaver"] = SqliteSaver(connection)
    except ImportError:
        print("langgraph-checkpoint-sqlite is not installed: SqliteSaver column skipped")
    try:
        from langgraph.checkpoint.postgres import PostgresSaver

        peers["PostgresSaver"] = stack.enter_context(PostgresSaver.from_conn_string(dsn))
    except ImportError:
        print(
            "langgraph-checkpoint-postgres (with psycopg[binary]) is not installed:"
            " PostgresSaver column skipped"
        )
    for saver in peers.values():
        setup = getattr(saver, "setup", None)
        if setup is not None:
            setup()
    return peers


def run_rounds(
    savers: dict[str, BaseCheckpointSaver[Any]], health_address: str, ops: int, rounds: int
) -> tuple[dict[str, dict[str, list[float]]], list[float]]:
    """The workload on every saver, interleaved in `rounds` (a new thread
    each), so that all of them meet the same load of a shared machine."""
    results: dict[str, dict[str, list[float]]] = {name: {} for name in savers}
    floor: list[float] = []
    for name, saver in savers.items():
        workload(saver, f"warmup-{name}", 50)
    for round_index in range(rounds):
        for name, saver in savers.items():
            samples = workload(saver, f"bench-{round_index}", ops // rounds)
            for operation, values in samples.items():
                results[name].setdefault(operation, []).extend(values)
        floor += grpc_floor(health_address, ops // rounds)
    return results, floor


@contextmanager
def bench_database() -> Iterator[str]:
    """A fresh database on the configured (or a started) PostgreSQL server."""
    with services() as (dsn, _):
        name = f"bench_cp_{uuid.uuid4().hex[:8]}"
        asyncio.run(_admin(dsn, f"CREATE DATABASE {name}"))
        try:
            yield dsn.rsplit("/", 1)[0] + "/" + name
        finally:
            asyncio.run(_admin(dsn, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


async def _admin(dsn: str, statement: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


# (ours, peer): the comparisons printed as ratios, like for like.
PAIRS = [
    ("statekeeper embedded", "SqliteSaver"),
    ("statekeeper embedded", "InMemorySaver"),
    ("statekeeper postgres", "PostgresSaver"),
]


def report(
    ops: int, results: dict[str, dict[str, list[float]]], floor: list[float], load: str
) -> None:
    f50, f99 = percentiles(floor)
    print(f"LangGraph checkpoints, {ops} sequential ops each, pid {os.getpid()}")
    print(f"load average (1/5/15 min) before the rounds {load}, after {load_average()}")
    print(
        f"gRPC floor (health Check round trip to the server process): p50 {f50:.0f} us,"
        f" p99 {f99:.0f} us"
    )
    names = list(results)
    print(f"{'p50/p99 us':<12}" + "".join(f"{name:>22}" for name in names))
    for operation in results[names[0]]:
        cells = []
        for name in names:
            p50, p99 = percentiles(results[name][operation])
            cells.append(f"{p50:>14.0f}/{p99:<7.0f}")
        print(f"{operation:<12}" + "".join(cells))
    for ours, peer in PAIRS:
        if ours not in results or peer not in results:
            continue
        print(f"{ours} / {peer} (p50 ratio, p99 ratio):")
        for operation, samples in results[ours].items():
            o50, o99 = percentiles(samples)
            p50, p99 = percentiles(results[peer][operation])
            print(f"  {operation:<12}{o50 / p50:>8.1f}x{o99 / p99:>8.1f}x")
    for name in names:
        if name.startswith("statekeeper"):
            put, get = (percentiles(results[name][op])[0] for op in ("put", "get latest"))
            print(f"{name} p50 in gRPC floors: put {put / f50:.1f}, get latest {get / f50:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--serve", nargs=3, metavar=("DATA_DIR", "HEALTH_PORT", "DSN"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(Path(args.serve[0]), int(args.serve[1]), args.serve[2]))
        return
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        dsn = stack.enter_context(bench_database())
        embedded, health_address = stack.enter_context(statekeeper_saver(tmp / "embedded"))
        production, _ = stack.enter_context(statekeeper_saver(tmp / "postgres", dsn))
        savers = {"statekeeper embedded": embedded, "statekeeper postgres": production}
        savers.update(peer_savers(stack, tmp, dsn))
        load = load_average()
        results, floor = run_rounds(savers, health_address, args.ops, args.rounds)
    report(args.ops, results, floor, load)


def load_average() -> str:
    """The machine's load: the figures of a shared box are only comparable
    side by side, and only when it was not saturated."""
    return "/".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
