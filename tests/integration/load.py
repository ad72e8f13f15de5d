"""Write load for fault tests: threads appending unique messages through
one or more replicas, recording what was acknowledged, then checking that
every acknowledged message is stored exactly once."""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import grpc

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.harness.deadlines import scaled, wait_until


def append_request(session_id: str, content: str) -> pb.AppendMessagesRequest:
    # The content doubles as the idempotency key, so a retry cannot duplicate.
    return pb.AppendMessagesRequest(
        session_id=session_id,
        messages=[pb.SessionMessage(role=pb.ROLE_USER, content=content)],
        request_id=content,
    )


def stored_contents(stub: SessionServiceStub, session_id: str) -> Counter[str]:
    contents: Counter[str] = Counter()
    token = ""
    while True:
        page = stub.ListMessages(
            pb.ListMessagesRequest(session_id=session_id, page_size=1000, page_token=token),
            timeout=30,
        )
        contents.update(m.content for m in page.messages)
        token = page.next_page_token
        if not token:
            return contents


@dataclass
class AppendLoad:
    """`writers` threads appending to `session_id`, spread over `addresses`.

    Writers keep going through errors (a failed call is remembered as
    unacknowledged and retried at the end with the same request id)."""

    addresses: list[str]
    session_id: str
    writers: int = 6
    name: str = "w"
    pause_after_error: float = 0.05
    acked: list[str] = field(default_factory=list)
    unacked: list[str] = field(default_factory=list)
    codes: Counter[grpc.StatusCode] = field(default_factory=Counter)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        for index in range(self.writers):
            address = self.addresses[index % len(self.addresses)]
            thread = threading.Thread(target=self._run, args=(address, f"{self.name}{index}"))
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def _run(self, address: str, name: str) -> None:
        with grpc.insecure_channel(address) as channel:
            stub = SessionServiceStub(channel)
            for index in itertools.count():
                if self._stop.is_set():
                    return
                content = f"{name}-{index}"
                try:
                    stub.AppendMessages(
                        append_request(self.session_id, content), timeout=scaled(30)
                    )
                except grpc.RpcError as error:
                    with self._lock:
                        self.unacked.append(content)
                        self.codes[error.code()] += 1
                    time.sleep(self.pause_after_error)
                    continue
                with self._lock:
                    self.acked.append(content)
                    self.codes[grpc.StatusCode.OK] += 1

    def wait_for_acks(self, more: int, phase: str) -> None:
        """Waits until `more` further appends are acknowledged: the load goes
        on in this phase (however fast the machine lets it)."""
        target = len(self.acked) + more
        wait_until(
            lambda: len(self.acked) >= target,
            60,
            f"{more} more acknowledged appends {phase}",
            lambda: f"failed calls so far: {dict(self.codes)}",
        )

    def settle(self, address: str, deadline_seconds: float = 60.0) -> Counter[str]:
        """Retries every unacknowledged append (as a client would), then
        returns what is stored."""
        deadline = time.monotonic() + scaled(deadline_seconds)
        with grpc.insecure_channel(address) as channel:
            stub = SessionServiceStub(channel)
            for content in self.unacked:
                while True:
                    try:
                        stub.AppendMessages(
                            append_request(self.session_id, content), timeout=scaled(30)
                        )
                        break
                    except grpc.RpcError:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.1)
            return stored_contents(stub, self.session_id)

    def assert_nothing_lost(self, stored: Counter[str]) -> None:
        lost = [c for c in self.acked if stored[c] == 0]
        duplicated = [c for c, n in stored.items() if n > 1]
        assert lost == [], f"{len(lost)} acknowledged appends lost, e.g. {lost[:5]}"
        assert duplicated == [], f"{len(duplicated)} appends stored twice, e.g. {duplicated[:5]}"
        assert set(self.acked) | set(self.unacked) <= set(stored)
