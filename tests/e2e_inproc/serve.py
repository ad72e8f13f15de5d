"""A server process with the blackboard and the message bus wired in, for the
tests and the benchmark until `statekeeper serve` wires them.

    python -m tests.e2e_inproc.serve --data-dir DIR --ready-file FILE
        [--replicas N] [--api-key KEY=TENANT ...] [--bb-limit NAME=VALUE ...]
        [--bus-limit NAME=VALUE ...]

Runs N gRPC servers ("replicas") on 127.0.0.1 ephemeral ports, each with its
own Blackboard and MessageBus over one shared embedded store, with the real
DomainInterceptor and the health service. Writes the addresses, one per
line, to the ready file once serving; drains on SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import signal
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from statekeeper.api import blackboard_servicer, messagebus_servicer
from statekeeper.api.interceptor import DomainInterceptor
from statekeeper.core.blackboard import Blackboard
from statekeeper.core.blackboard_models import BlackboardLimits
from statekeeper.core.messagebus import MessageBus
from statekeeper.core.messagebus_models import MessageBusLimits
from statekeeper.core.tenancy import Authenticator
from statekeeper.storage.embedded import EmbeddedStorage
from statekeeper.storage.embedded_blackboard import EmbeddedBlackboardStore
from statekeeper.storage.embedded_messagebus import (
    EmbeddedMessageStore,
    InProcessInboxNotifier,
    InProcessReplyWaiters,
)


def overrides(cls: type[Any], pairs: list[str]) -> Any:
    """An instance of the limits dataclass `cls` with NAME=VALUE overrides."""
    kinds = {f.name: type(f.default) for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for pair in pairs:
        name, _, raw = pair.partition("=")
        values[name] = kinds[name](raw)
    return cls(**values)


async def serve(args: argparse.Namespace) -> None:
    storage = EmbeddedStorage(Path(args.data_dir))
    await storage.start()
    bb_store = EmbeddedBlackboardStore(storage)
    await bb_store.start()
    bus_store = EmbeddedMessageStore(storage)
    await bus_store.start()
    notifier, waiters = InProcessInboxNotifier(), InProcessReplyWaiters()
    keys = dict(pair.split("=", 1) for pair in args.api_key)
    bb_limits = overrides(BlackboardLimits, args.bb_limit)
    bus_limits = overrides(MessageBusLimits, args.bus_limit)
    replicas: list[tuple[grpc.aio.Server, Blackboard, MessageBus]] = []
    addresses = []
    for _ in range(args.replicas):
        blackboard = Blackboard(bb_store, bb_limits)
        bus = MessageBus(bus_store, notifier, waiters, bus_limits)
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
        replicas.append((server, blackboard, bus))
        addresses.append(f"127.0.0.1:{port}")
    Path(args.ready_file).write_text("\n".join(addresses) + "\n")
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    for server, blackboard, bus in replicas:
        await blackboard.stop()
        await bus.stop()
        await server.stop(1)
    await bb_store.close()
    await storage.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--api-key", action="append", default=[])
    parser.add_argument("--bb-limit", action="append", default=[])
    parser.add_argument("--bus-limit", action="append", default=[])
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
