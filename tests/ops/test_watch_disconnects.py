"""A client that goes away while a Watch's write waits for it (the client
stopped reading, so HTTP/2 flow control holds the write) ends the call as
CANCELLED: gRPC's core fails that write (ExecuteBatchError) before it cancels
the call's task, and the server used to take that for its own error, log
"unexpected error in Watch" with a traceback and count the call INTERNAL."""

from __future__ import annotations

import time

import grpc

from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from tests.harness.deadlines import wait_until
from tests.harness.servers import ServerProcess
from tests.ops.test_telemetry import access_lines, scrape, value
from tests.ops.test_watch_bytes import KEY, WATCH

BOARD = "backlog"
# More history than the HTTP/2 windows hold, so the server's write waits.
ENTRIES, ENTRY_BYTES = 160, 64 * 1024
# Each disconnect met the failed write about two times in five before the fix.
DISCONNECTS = 20


def test_a_client_leaving_while_a_watch_write_waits_is_cancelled_not_internal(
    server: tuple[ServerProcess, int],
) -> None:
    proc, port = server
    with grpc.insecure_channel(proc.address) as channel:
        stub = BlackboardServiceStub(channel)
        entry = pb.BlackboardValue(payload=common_pb2.Payload(data=b"x" * ENTRY_BYTES))
        for index in range(ENTRIES):
            stub.PutEntry(
                pb.PutEntryRequest(board=BOARD, key=f"k{index}", value=entry), metadata=KEY
            )
    for _ in range(DISCONNECTS):
        channel = grpc.insecure_channel(proc.address)
        stream = BlackboardServiceStub(channel).Watch(  # type: ignore[no-untyped-call]
            pb.WatchRequest(board=BOARD, start_revision=1), metadata=KEY
        )
        next(stream)  # WatchStarted
        assert next(stream).events.events  # the history is on its way
        time.sleep(0.2)  # not reading: the server's writes fill the windows and wait
        channel.close()

    def watches() -> list[dict[str, object]]:
        return [line for line in access_lines(proc) if "Watch" in str(line["rpc_method"])]

    wait_until(lambda: len(watches()) >= DISCONNECTS, 60, "every watch ended", proc.log_tail)
    assert [line["grpc_code"] for line in watches()] == ["CANCELLED"] * DISCONNECTS
    # Who left is logged: the peer is read as the stream starts.
    assert all(str(line["peer"]).startswith("ipv4:127.0.0.1:") for line in watches())
    assert "unexpected error" not in proc.log()
    samples = scrape(port)
    assert value(samples, "grpc_server_handled_total", **WATCH, grpc_code="INTERNAL") == 0
    assert value(samples, "grpc_server_handled_total", **WATCH, grpc_code="CANCELLED") == (
        DISCONNECTS
    )
