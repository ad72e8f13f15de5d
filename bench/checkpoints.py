"""LangGraph checkpoint put and get through StatekeeperSaver on the embedded
store, measured side by side on the same box with:

* the gRPC floor: one health Check round trip to the same server process,
  which no RPC can beat;
* LangGraph's InMemorySaver: the serde work alone, no I/O at all;
* LangGraph's SqliteSaver (`langgraph-checkpoint-sqlite`, if installed): an
  in-process SQLite checkpointer, the closest embedded peer. It runs with
  SQLite's default durability, while statekeeper commits with
  synchronous=FULL in WAL mode.

The server runs in its own process, as in production. The workload is a
LangGraph-shaped checkpoint: a 20-message history that changes every 10th
step (so most puts name it by version only) and a counter that changes at
every step, chained by parent id. The comparison with PostgresSaver comes
with the PostgreSQL backend.

Run: `.venv/bin/python -m bench.checkpoints [--ops N]` (not part of make test).
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint, empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "adapters" / "langgraph"))  # if not pip-installed

from statekeeper_langgraph import StatekeeperSaver  # noqa: E402

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


async def serve(data_dir: Path, port: int) -> None:
    sys.path.insert(0, str(REPO))
    from tests.langgraph.harness import CheckpointServer  # the real servicer and interceptor

    server = CheckpointServer(data_dir)
    server.start()
    floor = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), floor)
    floor.add_insecure_port(f"127.0.0.1:{port}")
    await floor.start()
    (data_dir / "address").write_text(server.address)
    await floor.wait_for_termination()


def start_server(data_dir: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    """Returns the process, the checkpoint address and the health address."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data_dir.mkdir(parents=True)
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.checkpoints", "--serve", str(data_dir), str(port)],
        cwd=REPO,
    )
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


def sqlite_saver_samples(path: Path, ops: int) -> dict[str, list[float]] | None:
    try:
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError:
        return None
    connection = sqlite3.connect(path, check_same_thread=False)
    try:
        saver = SqliteSaver(connection)
        saver.setup()
        return workload(saver, "bench", ops)
    finally:
        connection.close()


def report(ops: int, results: dict[str, dict[str, list[float]]], floor: list[float]) -> None:
    f50, f99 = percentiles(floor)
    print(f"LangGraph checkpoints, {ops} sequential ops each, pid {os.getpid()}")
    print(
        f"gRPC floor (health Check round trip to the server process): p50 {f50:.0f} us,"
        f" p99 {f99:.0f} us"
    )
    names = list(results)
    print(
        f"{'p50/p99 us':<12}"
        + "".join(f"{name:>18}" for name in names)
        + "".join(f"{'p50 x ' + name:>22}" for name in names[1:])
    )
    for operation, ours in results["statekeeper"].items():
        cells = []
        for name in names:
            p50, p99 = percentiles(results[name][operation])
            cells.append(f"{p50:>10.0f}/{p99:<7.0f}")
        ours_p50 = percentiles(ours)[0]
        ratios = [
            f"{ours_p50 / percentiles(results[name][operation])[0]:>22.1f}" for name in names[1:]
        ]
        print(f"{operation:<12}" + "".join(cells) + "".join(ratios))
    put, get = (percentiles(results["statekeeper"][op])[0] for op in ("put", "get latest"))
    print(f"statekeeper p50 in gRPC floors: put {put / f50:.1f}, get latest {get / f50:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument(
        "--serve", nargs=2, metavar=("DATA_DIR", "HEALTH_PORT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(Path(args.serve[0]), int(args.serve[1])))
        return
    with tempfile.TemporaryDirectory() as tmp:
        process, address, health_address = start_server(Path(tmp) / "server")
        try:
            with StatekeeperSaver(address) as saver:
                workload(saver, "warmup", 50)
                results = {"statekeeper": workload(saver, "bench", args.ops)}
            floor = grpc_floor(health_address, args.ops)
        finally:
            process.terminate()
            process.wait()
        results["InMemorySaver"] = workload(InMemorySaver(), "bench", args.ops)
        sqlite = sqlite_saver_samples(Path(tmp) / "sqlite-saver.db", args.ops)
        if sqlite is not None:
            results["SqliteSaver"] = sqlite
        else:
            print("langgraph-checkpoint-sqlite is not installed: SqliteSaver column skipped")
    report(args.ops, results, floor)


if __name__ == "__main__":
    main()
