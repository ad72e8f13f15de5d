"""A server stopped while its watchers are behind: the writes in flight end
with their calls, none runs on after them (no loop error in the log)."""

from __future__ import annotations

from pathlib import Path

import grpc

from statekeeper_client.v1 import blackboard_pb2 as pb
from statekeeper_client.v1 import common_pb2
from statekeeper_client.v1.blackboard_pb2_grpc import BlackboardServiceStub
from tests.e2e_inproc.conftest import ALPHA, start_server


def test_stopping_with_slow_watchers_leaves_no_write_behind(tmp_path: Path) -> None:
    server = start_server(tmp_path, bb_limits={"watch_buffer_responses": 100_000})
    big = pb.BlackboardValue(payload=common_pb2.Payload(data=b"x" * 60_000))
    # Watchers that stop reading after their first response: the server's
    # writes to them back up behind HTTP/2 flow control (no bandwidth
    # probing, so their windows stay small).
    options = [("grpc.http2.bdp_probe", 0)]
    channels = [grpc.insecure_channel(server.address, options=options) for _ in range(8)]
    try:
        for channel in channels:
            call = BlackboardServiceStub(channel).Watch(
                pb.WatchRequest(board="slow"), metadata=ALPHA
            )
            next(call)
        with grpc.insecure_channel(server.address) as writer_channel:
            writer = BlackboardServiceStub(writer_channel)
            for n in range(60):
                request = pb.PutEntryRequest(board="slow", key=f"k{n % 5}", value=big)
                writer.PutEntry(request, metadata=ALPHA)
        server.stop()
    finally:
        for channel in channels:
            channel.close()
    log = server.log()
    for sign in ("Exception in callback", "InvalidStateError", "never retrieved"):
        assert sign not in log, log[-3000:]
