"""A server process with the blackboard and the message bus wired in, for the
tests and the benchmark until `statekeeper serve` wires them.

    python -m tests.e2e_inproc.serve --data-dir DIR --ready-file FILE
        [--replicas N] [--api-key KEY=TENANT ...] [--bb-limit NAME=VALUE ...]
        [--bus-limit NAME=VALUE ...]
        [--postgres-dsn DSN [--redis-url URL] [--redis-prefix PREFIX]]

Runs N gRPC servers ("replicas") on 127.0.0.1 ephemeral ports, each with its
own Blackboard and MessageBus, with the real DomainInterceptor and the
health service. Writes the addresses, one per line, to the ready file once
serving; drains on SIGTERM.

Embedded (default): the replicas share one embedded store. Production
(--postgres-dsn): each replica has its own production stores (PostgreSQL,
Redis Streams feed, Redis wake-ups and reply waiters), so replicas reach
each other only through PostgreSQL and Redis, as separate processes do.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import logging
import signal
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from statekeeper.api import blackboard_servicer, messagebus_servicer
from statekeeper.api.interceptor import DomainInterceptor
from statekeeper.core.blackboard.models import BlackboardLimits
from statekeeper.core.blackboard.service import Blackboard
from statekeeper.core.messagebus.models import MessageBusLimits
from statekeeper.core.messagebus.service import MessageBus
from statekeeper.core.tenancy import Authenticator
from statekeeper.storage.embedded.blackboard import EmbeddedBlackboardStore
from statekeeper.storage.embedded.messagebus import (
    EmbeddedMessageStore,
    InProcessInboxNotifier,
    InProcessReplyWaiters,
)
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.postgres.blackboard import PostgresBlackboardStore
from statekeeper.storage.postgres.messagebus import PostgresMessageStore
from statekeeper.storage.postgres.sessions import PostgresStorage
from statekeeper.storage.redis.bus import RedisInboxNotifier, RedisReplyWaiters


def overrides(cls: type[Any], pairs: list[str]) -> Any:
    """An instance of the limits dataclass `cls` with NAME=VALUE overrides."""
    kinds: dict[str, Any] = {f.name: type(f.default) for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for pair in pairs:
        name, _, raw = pair.partition("=")
        values[name] = kinds[name](raw)
    return cls(**values)


async def serve(args: argparse.Namespace) -> None:
    async with contextlib.AsyncExitStack() as stack:
        if args.postgres_dsn:
            domains = await production_domains(args, stack)
        else:
            domains = await embedded_domains(args, stack)
        keys = dict(pair.split("=", 1) for pair in args.api_key)
        replicas = []
        for blackboard, bus in domains:
            replicas.append(await start_replica(blackboard, bus, keys))
        addresses = [address for _, _, _, address in replicas]
        Path(args.ready_file).write_text("\n".join(addresses) + "\n")
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await stop.wait()
        for server, blackboard, bus, _ in replicas:
            await blackboard.stop()
            await bus.stop()
            await server.stop(1)


def limits(args: argparse.Namespace) -> tuple[BlackboardLimits, MessageBusLimits]:
    return overrides(BlackboardLimits, args.bb_limit), overrides(MessageBusLimits, args.bus_limit)


async def embedded_domains(
    args: argparse.Namespace, stack: contextlib.AsyncExitStack
) -> list[tuple[Blackboard, MessageBus]]:
    """N replicas over one embedded store and in-process fan-out."""
    storage = EmbeddedStorage(Path(args.data_dir))
    await storage.start()
    stack.push_async_callback(storage.close)
    bb_store = EmbeddedBlackboardStore(storage)
    await bb_store.start()
    stack.push_async_callback(bb_store.close)
    bus_store = EmbeddedMessageStore(storage)
    await bus_store.start()
    notifier, waiters = InProcessInboxNotifier(), InProcessReplyWaiters()
    bb_limits, bus_limits = limits(args)
    return [
        (Blackboard(bb_store, bb_limits), MessageBus(bus_store, notifier, waiters, bus_limits))
        for _ in range(args.replicas)
    ]


async def production_domains(
    args: argparse.Namespace, stack: contextlib.AsyncExitStack
) -> list[tuple[Blackboard, MessageBus]]:
    """N replicas, each with its own PostgreSQL pool and Redis clients: the
    wiring `statekeeper serve` gets for the production tier."""
    bb_limits, bus_limits = limits(args)
    domains = []
    for _ in range(args.replicas):
        db = PostgresStorage(args.postgres_dsn, pool_size=8, migrate_on_start=True)
        await db.start()
        stack.push_async_callback(db.close)
        bb_store = PostgresBlackboardStore(db, args.redis_url, args.redis_prefix)
        bus_store = PostgresMessageStore(db)
        notifier = RedisInboxNotifier(args.redis_url, args.redis_prefix)
        waiters = RedisReplyWaiters(args.redis_url, args.redis_prefix)
        await bb_store.start()
        stack.push_async_callback(bb_store.close)
        await bus_store.start()
        await notifier.start()
        stack.push_async_callback(notifier.stop)
        await waiters.start()
        stack.push_async_callback(waiters.stop)
        bus = MessageBus(bus_store, notifier, waiters, bus_limits)
        domains.append((Blackboard(bb_store, bb_limits), bus))
    return domains


async def start_replica(
    blackboard: Blackboard, bus: MessageBus, keys: dict[str, str]
) -> tuple[grpc.aio.Server, Blackboard, MessageBus, str]:
    await blackboard.start()
    await bus.start()
    server = grpc.aio.server(interceptors=[DomainInterceptor(Authenticator(keys))])
    blackboard_servicer.register(server, blackboard)
    messagebus_servicer.register(server, bus)
    checker = health.aio.HealthServicer()
    await checker.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, blackboard, bus, f"127.0.0.1:{port}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--api-key", action="append", default=[])
    parser.add_argument("--bb-limit", action="append", default=[])
    parser.add_argument("--bus-limit", action="append", default=[])
    parser.add_argument("--postgres-dsn", default="")
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--redis-prefix", default="sk")
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
