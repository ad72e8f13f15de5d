"""SIGTERM drains: health turns NOT_SERVING, in-flight calls finish, the
process exits 0, and every acknowledged write is there after a restart.

How many calls get through before the drain depends on the machine's load,
so the test asserts what happens to each call, never how many there were."""

from __future__ import annotations

import threading
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.harness.deadlines import scaled, wait_until
from tests.harness.servers import ServerProcess

WRITERS = 4


def test_sigterm_drains_and_exits_cleanly(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path)
    server.start()
    acked: list[str] = []
    # The writer threads that saw at least one acknowledgement.
    writing: set[str] = set()
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
                            messages=[pb.SessionMessage(role=pb.ROLE_USER, content=content)],
                        ),
                        timeout=scaled(30),
                    )
                    acked.append(content)
                    writing.add(name)
                except grpc.RpcError as error:
                    codes.add(error.code())
                    return

    try:
        with grpc.insecure_channel(server.address) as channel:
            SessionServiceStub(channel).CreateSession(
                pb.CreateSessionRequest(session_id="drain", session=pb.Session(user_id="u"))
            )
        threads = [threading.Thread(target=write, args=(f"w{n}",)) for n in range(WRITERS)]
        for thread in threads:
            thread.start()
        # Every writer has calls going when SIGTERM arrives.
        wait_until(
            lambda: len(writing) == WRITERS, 30, "every writer acknowledged", server.log_tail
        )
        exit_code = server.terminate()
        stop.set()
        for thread in threads:
            thread.join(timeout=scaled(30))
        assert not any(thread.is_alive() for thread in threads), "a call never returned"
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
        # Every call either completed (and its write is there) or was refused.
        assert set(acked) <= set(contents), "an acknowledged write was lost"
        assert len(contents) == len(set(contents))
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        server.kill()
