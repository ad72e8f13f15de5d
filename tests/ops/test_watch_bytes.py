"""A Watch's sent bytes are counted although its live events are written
by the hub's dispatch, outside the call's own task: the metrics (and the
access log, which reads the same count) show at least the bytes the client
received."""

from __future__ import annotations

import grpc

from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from tests.harness.deadlines import wait_until
from tests.harness.servers import ServerProcess
from tests.ops.test_telemetry import scrape, value

KEY = [("x-api-key", "key-alpha")]
WATCH = {
    "grpc_type": "server_stream",
    "grpc_service": "statekeeper.v1.BlackboardService",
    "grpc_method": "Watch",
}


def test_a_watch_counts_the_bytes_of_its_live_events(server: tuple[ServerProcess, int]) -> None:
    proc, port = server
    received = 0
    with grpc.insecure_channel(proc.address) as channel:
        stub = BlackboardServiceStub(channel)
        stream = stub.Watch(pb.WatchRequest(board="bytes"), metadata=KEY)  # type: ignore[no-untyped-call]
        received += next(stream).ByteSize()  # WatchStarted
        value_of = pb.BlackboardValue(payload=common_pb2.Payload(data=b"x" * 1000))
        for index in range(5):
            stub.PutEntry(
                pb.PutEntryRequest(board="bytes", key=f"k{index}", value=value_of), metadata=KEY
            )
            response = next(stream)
            assert [e.entry.key for e in response.events.events] == [f"k{index}"]
            received += response.ByteSize()
        stream.cancel()
    assert received > 5000
    wait_until(
        lambda: value(scrape(port), "grpc_server_handled_total", **WATCH, grpc_code="CANCELLED"),
        30,
        "the watch handled",
    )
    assert value(scrape(port), "statekeeper_rpc_sent_bytes_total", **WATCH) >= received
