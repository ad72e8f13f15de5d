"""AppendMessages under concurrency, against the database floor of the same box.

Each client is an agent appending one message at a time to its own session
(unconditional, with a fresh request id, as a client that retries safely
sends). Measured side by side, rounds interleaved:

* production (`statekeeper serve` on PostgreSQL + Redis) against a raw
  asyncpg INSERT of the same message row into a table of the same shape on
  the same PostgreSQL (autocommit: one WAL flush, like one append), with 1,
  8 and 64 clients (the raw side gets one connection per client). Goals:
  1 client p50 <= 3x raw; 64 clients throughput >= 0.5x raw.
* embedded (`statekeeper serve` on SQLite), 64 clients. Goal: >= 1,500
  appends/s.

The clients are grpc.aio tasks in this process (one channel per 8 clients);
they share the 2 cores with the server, like the raw driver shares them with
PostgreSQL. The load average is printed: the machine is shared.

Run: `make bench-appends` (or `.venv/bin/python -m bench.session_appends`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.production import fresh_database, server, services
from statekeeper.core.sessions.models import Message, Role
from statekeeper.storage.sql import MESSAGE_INSERT_COLUMNS, message_values
from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub

CONTENT = "Find me a train from Paris to Lyon tomorrow morning, before nine if possible."
CLIENTS = (1, 8, 64)
CLIENTS_PER_CHANNEL = 8
SessionMessage: Any = pb.SessionMessage


@dataclass
class Run:
    """One timed run: per-op latencies (seconds) and the wall time."""

    latencies: list[float]
    seconds: float

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds

    @property
    def p50_us(self) -> float:
        return statistics.median(self.latencies) * 1e6


async def drive(clients: int, seconds: float, op: Callable[[int], Awaitable[object]]) -> Run:
    """`clients` loops calling op(client) until the time is up."""
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def loop(client: int) -> None:
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            await op(client)
            latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    await asyncio.gather(*(loop(c) for c in range(clients)))
    return Run(latencies, time.perf_counter() - start)


class RawInserts:
    """The floor: INSERT of the same message row, one connection per client."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._pool: asyncpg.Pool[asyncpg.Record] | None = None
        self._sequence = 0

    async def __aenter__(self) -> RawInserts:
        self._pool = await asyncpg.create_pool(
            self._dsn, min_size=max(CLIENTS), max_size=max(CLIENTS)
        )
        await self._pool.execute(
            "CREATE TABLE raw_messages (tenant text NOT NULL, session_id text NOT NULL,"
            " sequence bigint NOT NULL, message_id text NOT NULL, role integer NOT NULL,"
            " content text NOT NULL, name text NOT NULL, tool_calls text NOT NULL,"
            " tool_call_id text NOT NULL, metadata text NOT NULL, token_count integer NOT NULL,"
            " create_time double precision NOT NULL, rolled_back boolean NOT NULL,"
            " tool_call_ids text NOT NULL, PRIMARY KEY (tenant, session_id, sequence))"
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._pool is not None:
            await self._pool.close()

    async def run(self, clients: int, seconds: float) -> Run:
        assert self._pool is not None
        pool = self._pool
        marks = ",".join(f"${n}" for n in range(1, 15))
        sql = (
            f"INSERT INTO raw_messages (tenant, session_id, {MESSAGE_INSERT_COLUMNS})"
            f" VALUES ({marks})"
        )
        connections = [await pool.acquire() for _ in range(clients)]

        async def insert(client: int) -> None:
            self._sequence += 1
            message = Message(self._sequence, uuid.uuid4().hex, Role.USER, CONTENT, token_count=20)
            await connections[client].execute(sql, *message_values("t", f"s{client}", message))

        try:
            return await drive(clients, seconds, insert)
        finally:
            for connection in connections:
                await pool.release(connection)


class Appends:
    """AppendMessages through gRPC, one session per client."""

    def __init__(self, address: str, name: str) -> None:
        self._address = address
        self._name = name
        self._channels: list[grpc.aio.Channel] = []
        self._stubs: list[SessionServiceStub] = []

    async def __aenter__(self) -> Appends:
        for _ in range(max(CLIENTS) // CLIENTS_PER_CHANNEL):
            channel = grpc.aio.insecure_channel(self._address)
            self._channels.append(channel)
            self._stubs.append(SessionServiceStub(channel))
        for client in range(max(CLIENTS)):
            await self._stub(client).CreateSession(
                pb.CreateSessionRequest(
                    session_id=f"{self._name}-{client}", session=pb.Session(user_id="u")
                )
            )
        return self

    async def __aexit__(self, *exc: object) -> None:
        for channel in self._channels:
            await channel.close()

    def _stub(self, client: int) -> SessionServiceStub:
        return self._stubs[client % len(self._stubs)]

    async def run(self, clients: int, seconds: float) -> Run:
        message = SessionMessage(role=pb.ROLE_USER, content=CONTENT)

        async def append(client: int) -> None:
            await self._stub(client).AppendMessages(
                pb.AppendMessagesRequest(
                    session_id=f"{self._name}-{client}",
                    messages=[message],
                    request_id=uuid.uuid4().hex,
                )
            )

        await drive(clients, 0.2, append)  # warm the channels and caches
        return await drive(clients, seconds, append)


def load_text() -> str:
    return "/".join(f"{value:.2f}" for value in os.getloadavg())


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


async def compare_production(
    address: str, dsn: str, rounds: int, seconds: float
) -> dict[int, tuple[list[Run], list[Run]]]:
    results: dict[int, tuple[list[Run], list[Run]]] = {n: ([], []) for n in CLIENTS}
    async with RawInserts(dsn) as raw, Appends(address, "prod") as ours:
        for _ in range(rounds):
            for clients in CLIENTS:
                results[clients][1].append(await raw.run(clients, seconds))
                results[clients][0].append(await ours.run(clients, seconds))
    return results


def report_production(results: dict[int, tuple[list[Run], list[Run]]]) -> None:
    print(
        f"\nproduction AppendMessages vs raw asyncpg INSERT, same PostgreSQL (load {load_text()})"
    )
    print(
        f"  {'clients':>7}{'ours p50 us':>13}{'raw p50 us':>12}{'p50 ratio':>11}"
        f"{'ours ops/s':>12}{'raw ops/s':>11}{'throughput':>12}"
    )
    for clients, (ours, raw) in results.items():
        o50 = statistics.median(r.p50_us for r in ours)
        r50 = statistics.median(r.p50_us for r in raw)
        orate = statistics.median(r.rate for r in ours)
        rrate = statistics.median(r.rate for r in raw)
        print(
            f"  {clients:>7}{o50:>13.0f}{r50:>12.0f}{o50 / r50:>10.2f}x"
            f"{orate:>12.0f}{rrate:>11.0f}{orate / rrate:>11.2f}x"
        )
        if clients == 1:
            print(f"          goal: 1 client p50 <= 3x raw: {verdict(o50 / r50 <= 3)}")
        if clients == max(CLIENTS):
            print(
                f"          goal: {clients} clients >= 0.5x raw throughput:"
                f" {verdict(orate / rrate >= 0.5)}"
            )


async def embedded_rate(address: str, rounds: int, seconds: float) -> tuple[list[Run], list[Run]]:
    """Appends at 64 clients, and the gRPC floor of the same server and
    clients (Health.Check, which does no work), rounds interleaved."""
    floors: list[Run] = []
    runs: list[Run] = []
    async with Appends(address, "emb") as ours:
        for _ in range(rounds):
            floors.append(await health_floor(address, max(CLIENTS), seconds))
            runs.append(await ours.run(max(CLIENTS), seconds))
    return runs, floors


async def health_floor(address: str, clients: int, seconds: float) -> Run:
    channels = [grpc.aio.insecure_channel(address) for _ in range(clients // CLIENTS_PER_CHANNEL)]
    stubs = [health_pb2_grpc.HealthStub(channel) for channel in channels]
    request = health_pb2.HealthCheckRequest()

    async def check(client: int) -> None:
        await stubs[client % len(stubs)].Check(request)

    try:
        await drive(clients, 0.2, check)
        return await drive(clients, seconds, check)
    finally:
        for channel in channels:
            await channel.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--embedded-only", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {load_text()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        with server(Path(tmp) / "embedded") as address:
            runs, floors = asyncio.run(embedded_rate(address, args.rounds, args.seconds))
        rate = statistics.median(r.rate for r in runs)
        p50 = statistics.median(r.p50_us for r in runs)
        floor = statistics.median(r.rate for r in floors)
        print(
            f"\nembedded AppendMessages, {max(CLIENTS)} clients (load {load_text()}):"
            f" {rate:.0f} appends/s, p50 {p50 / 1000:.1f} ms"
            f" (rounds: {', '.join(f'{r.rate:.0f}' for r in runs)});"
            f" goal >= 1,500/s: {verdict(rate >= 1500)}"
        )
        print(
            f"  gRPC floor of the same server and clients (Health.Check, no work):"
            f" {floor:.0f} calls/s; appends reach {rate / floor:.2f}x of it"
        )
        if args.embedded_only:
            return
        with services() as (dsn, url):
            database = asyncio.run(fresh_database(dsn))
            extra = ["--postgres-dsn", database, "--migrate-on-start", "--redis-url", url]
            with server(Path(tmp) / "production", *extra) as address:
                results = asyncio.run(
                    compare_production(address, database, args.rounds, args.seconds)
                )
        report_production(results)


if __name__ == "__main__":
    main()
