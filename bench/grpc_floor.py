"""The gRPC floor of the blackboard benchmarks: a server that answers
BlackboardService's PutEntry and GetEntry at once with a canned entry
(stamped with a counter, so a compare-and-swap loop goes on), through the
same Python gRPC stack as `statekeeper serve` (grpcio's asyncio server,
and the same garbage-collector settings), with no store, no checks and no
interceptors (a health service answers the bench's readiness check). What
it serves per second is what no statekeeper process can beat on the same
machine; bench/versus_etcd.py runs it next to etcd.

Run: `.venv/bin/python -m bench.grpc_floor 127.0.0.1:PORT` (stops on SIGTERM).
"""

from __future__ import annotations

import asyncio
import signal
import sys

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from statekeeper.cli import settle_garbage_collector
from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import blackboard_pb2_grpc


class FloorBlackboard(blackboard_pb2_grpc.BlackboardServiceServicer):
    def __init__(self) -> None:
        self._revision = 0

    def _entry(self, key: str) -> pb.BlackboardEntry:
        self._revision += 1
        return pb.BlackboardEntry(key=key, mod_revision=self._revision)

    async def PutEntry(
        self, request: pb.PutEntryRequest, context: grpc.aio.ServicerContext
    ) -> pb.PutEntryResponse:
        return pb.PutEntryResponse(entry=self._entry(request.key))

    async def GetEntry(
        self, request: pb.GetEntryRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetEntryResponse:
        return pb.GetEntryResponse(entry=self._entry(request.key))


async def serve(address: str) -> None:
    server = grpc.aio.server()
    blackboard_pb2_grpc.add_BlackboardServiceServicer_to_server(FloorBlackboard(), server)  # type: ignore[no-untyped-call]
    # Health only for the bench's readiness check, as statekeeper answers it.
    checks = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    if server.add_insecure_port(address) == 0:
        raise SystemExit(f"grpc_floor: cannot listen on {address}")
    await server.start()
    await checks.set("", health_pb2.HealthCheckResponse.SERVING)
    settle_garbage_collector()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(None)


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1]))
