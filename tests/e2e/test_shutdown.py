"""SIGTERM drains: health turns NOT_SERVING, in-flight calls finish, the
process exits 0, and every acknowledged write is there after a restart."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.e2e.conftest import ServerProcess


def test_sigterm_drains_and_exits_cleanly(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path)
    server.start()
    acked: list[str] = []
    codes: set[grpc.StatusCode] = set()
    stop = threading.Event()

    def write(name: str) -> None:
        with grpc.insecure_channel(server.address) as channel:
            stub = SessionServiceStub(channel)
            for index in range(10_000):
                if stop.is_set():
                    return
                content = f"{name}-{index}"
                try:
                    stub.AppendMessages(
                        pb.AppendMessagesRequest(
                            session_id="drain",
                            messages=[pb.Message(role=pb.ROLE_USER, content=content)],
                        ),
                        timeout=5,
                    )
                    acked.append(content)
                except grpc.RpcError as error:
                    codes.add(error.code())
                    return

    try:
        with grpc.insecure_channel(server.address) as channel:
            SessionServiceStub(channel).CreateSession(
                pb.CreateSessionRequest(session_id="drain", session=pb.Session(user_id="u"))
            )
        threads = [threading.Thread(target=write, args=(f"w{n}",)) for n in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        exit_code = server.terminate()
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        assert exit_code == 0, server.log()
        assert "draining" in server.log() and "stopped" in server.log()
        # Calls refused during the drain are UNAVAILABLE, never INTERNAL.
        assert codes <= {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED}, codes
        server.start()
        with grpc.insecure_channel(server.address) as channel:
            stub = SessionServiceStub(channel)
            stored = stub.ListMessages(
                pb.ListMessagesRequest(session_id="drain", page_size=1000)
            ).messages
            contents = [m.content for m in stored]
            health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert len(acked) > 20
        assert set(acked) <= set(contents)
        assert len(contents) == len(set(contents))
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        server.kill()
