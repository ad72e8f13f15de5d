"""kill -9 of the server while appends are in flight, then restart: every
acknowledged append is present, and none is duplicated, even after clients
retry the calls whose answers they never got."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import grpc

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.e2e.conftest import ServerProcess
from tests.harness.deadlines import scaled, wait_until

WRITERS = 6
CYCLES = 3
# Appends acknowledged in each cycle before the kill (however long that takes).
ACKS_PER_CYCLE = 20


def writer(
    address: str,
    session_id: str,
    name: str,
    stop: threading.Event,
    acked: list[str],
    unacked: list[str],
) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = SessionServiceStub(channel)
        index = 0
        while not stop.is_set() and index < 100_000:
            content = f"{name}-{index}"
            try:
                stub.AppendMessages(
                    pb.AppendMessagesRequest(
                        session_id=session_id,
                        messages=[pb.SessionMessage(role=pb.ROLE_USER, content=content)],
                        request_id=content,
                    ),
                    timeout=scaled(30),
                )
                acked.append(content)
            except grpc.RpcError:
                unacked.append(content)
                return  # the server is gone; this writer's run ends here
            index += 1


def all_contents(stub: SessionServiceStub, session_id: str) -> list[str]:
    contents: list[str] = []
    token = ""
    while True:
        page = stub.ListMessages(
            pb.ListMessagesRequest(session_id=session_id, page_size=1000, page_token=token)
        )
        contents.extend(m.content for m in page.messages)
        token = page.next_page_token
        if not token:
            return contents


def test_acknowledged_appends_survive_kill_9(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path)
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            SessionServiceStub(channel).CreateSession(
                pb.CreateSessionRequest(session_id="crashy", session=pb.Session(user_id="u"))
            )
        acked: list[str] = []
        unacked: list[str] = []
        for cycle in range(CYCLES):
            stop = threading.Event()
            threads = [
                threading.Thread(
                    target=writer,
                    args=(server.address, "crashy", f"c{cycle}w{n}", stop, acked, unacked),
                )
                for n in range(WRITERS)
            ]
            target = len(acked) + ACKS_PER_CYCLE
            for thread in threads:
                thread.start()
            wait_until(
                lambda target=target: len(acked) >= target,  # type: ignore[misc]
                60,
                "appends acknowledged",
                server.log_tail,
            )
            server.kill()  # while the writers are mid-call
            stop.set()
            for thread in threads:
                thread.join(timeout=scaled(30))
            server.start()
        with grpc.insecure_channel(server.address) as channel:
            stub = SessionServiceStub(channel)
            # Clients retry what they never saw answered, with the same key.
            for content in unacked:
                stub.AppendMessages(
                    pb.AppendMessagesRequest(
                        session_id="crashy",
                        messages=[pb.SessionMessage(role=pb.ROLE_USER, content=content)],
                        request_id=content,
                    )
                )
            stored = Counter(all_contents(stub, "crashy"))
        missing = [c for c in acked if stored[c] != 1]
        assert missing == [], f"acknowledged appends lost or duplicated: {missing[:10]}"
        assert all(n == 1 for n in stored.values()), "an append was stored twice"
        assert set(stored) == set(acked) | set(unacked)
        print(f"{len(acked)} acknowledged, {len(unacked)} retried, {sum(stored.values())} stored")
    finally:
        server.kill()
