"""The archiver under write load, killed (-9) mid-batch again and again:
nothing acknowledged is lost, nothing is duplicated, and every session is
hot or archived (both only in the one consistent in-between state: the
manifest written, the hot rows not deleted yet, at the same version)."""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path

import grpc
import pytest

from statekeeper_client.v1 import session_pb2, session_pb2_grpc
from tests.archive.helpers import auth, hot
from tests.harness.backends import EMBEDDED, PRODUCTION, Production, backend
from tests.harness.deadlines import Deadline, wait_until
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.servers import ServerProcess

KILLS = 4
WRITERS = 3
# Seconds (load-scaled) one call may keep failing while the server restarts.
RETRY_SECONDS = 120.0


class Writer(threading.Thread):
    """Creates sessions and appends to them (new and old ones, which may be
    archived by then), retrying each call until it is acknowledged
    (idempotent: the same request_id, ALREADY_EXISTS on a create that
    had committed)."""

    def __init__(self, address: str, name: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.address = address
        self.prefix = name
        self.stop = stop
        self.sessions: dict[str, list[str]] = {}
        self.error: BaseException | None = None
        self.calls = 0

    def run(self) -> None:
        rng = random.Random(self.prefix)
        try:
            with grpc.insecure_channel(self.address) as channel:
                stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
                number = 0
                while not self.stop.is_set():  # bounded by the test's stop event
                    if not self.sessions or rng.random() < 0.6:
                        session_id = f"{self.prefix}-{number}"
                        number += 1
                        self._create(stub, session_id)
                    else:
                        session_id = rng.choice(sorted(self.sessions))
                    self._append(stub, session_id)
                    time.sleep(rng.uniform(0, 0.05))
        except BaseException as exc:
            self.error = exc

    def _retry(self, call: object, what: str) -> None:
        deadline = Deadline(RETRY_SECONDS)
        while True:  # bounded by the deadline
            try:
                call()  # type: ignore[operator]
                self.calls += 1
                return
            except grpc.RpcError as exc:
                if exc.code() == grpc.StatusCode.ALREADY_EXISTS and what == "create":
                    return
                if exc.code() not in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    grpc.StatusCode.CANCELLED,
                    grpc.StatusCode.UNKNOWN,
                ):
                    raise
                if deadline.expired():
                    raise
                time.sleep(0.1)

    def _create(self, stub: session_pb2_grpc.SessionServiceStub, session_id: str) -> None:
        request = session_pb2.CreateSessionRequest(
            session_id=session_id, session=session_pb2.Session(user_id="u", agent_id="a")
        )
        self._retry(
            lambda: stub.CreateSession(request, metadata=auth("alpha"), timeout=30), "create"
        )
        self.sessions[session_id] = []

    def _append(self, stub: session_pb2_grpc.SessionServiceStub, session_id: str) -> None:
        turn = len(self.sessions[session_id])
        texts = [f"{session_id} turn {turn} q", f"{session_id} turn {turn} a"]
        request = session_pb2.AppendMessagesRequest(
            session_id=session_id,
            request_id=f"{session_id}.{turn}",
            messages=[
                session_pb2.SessionMessage(role=session_pb2.ROLE_USER, content=texts[0]),
                session_pb2.SessionMessage(role=session_pb2.ROLE_ASSISTANT, content=texts[1]),
            ],
        )
        self._retry(
            lambda: stub.AppendMessages(request, metadata=auth("alpha"), timeout=30), "append"
        )
        self.sessions[session_id].append(f"{turn}")


def archived_a_batch(server: ServerProcess, writers: list[Writer]) -> bool:
    """True once this run of the server has archived a batch; raises a
    writer's error at once (a writer that stopped writes nothing more)."""
    for writer in writers:
        if writer.error is not None:
            raise AssertionError(f"{writer.prefix}: {writer.error!r}\n{server.log_tail()}")
    return "archived a batch" in server.log()


def archived_units(directory: Path) -> dict[str, int]:
    units = {}
    for path in directory.rglob("manifest.json"):
        manifest = json.loads(path.read_text())
        assert manifest["tenant"] == "alpha"
        units[manifest["unit"]] = manifest["session_version"]
    return units


@pytest.mark.parametrize("backend_name", [EMBEDDED, PRODUCTION])
def test_kill_9_mid_batch_loses_and_duplicates_nothing(backend_name: str, tmp_path: Path) -> None:
    with backend(backend_name, "archcrash") as where:
        crash_cycles(tmp_path, where)


def crash_cycles(tmp_path: Path, where: Production | None) -> None:
    archive = tmp_path / "archive"
    policy = [
        "--archive-url",
        str(archive),
        "--archive-sessions-after-days",
        "0.00001",  # idle 0.9 s
        "--archive-interval-seconds",
        "0.2",
        "--archive-batch-size",
        "3",
    ]
    base = [*(where.serve_args() if where else []), *key_args(API_KEYS)]
    server = ServerProcess(tmp_path / "server", extra_args=[*base, *policy])
    server.start()
    stop = threading.Event()
    writers = [Writer(server.address, f"w{i}", stop) for i in range(WRITERS)]
    try:
        for writer in writers:
            writer.start()
        rng = random.Random(18)
        for _ in range(KILLS):
            # Let sessions go idle and the archiver work, then kill it mid-way.
            wait_until(
                lambda: archived_a_batch(server, writers),
                120,
                "the archiver moving a batch",
                server.log_tail,
            )
            time.sleep(rng.uniform(0.0, 0.5))
            server.kill()
            time.sleep(rng.uniform(0.1, 0.5))
            server.start()
        time.sleep(1.0)
        stop.set()
        for writer in writers:
            writer.join(timeout=300)
            assert not writer.is_alive()
            assert writer.error is None, repr(writer.error)
        server.stop()
        assert server.process is not None and server.process.returncode is not None

        # Hot + archive = everything, and a session is in both only at one version.
        expected = {sid: turns for w in writers for sid, turns in w.sessions.items()}
        hot_now = {sid: version for (_, sid), version in hot(server, where).items()}
        archived = archived_units(archive)
        assert set(expected) <= set(hot_now) | set(archived)
        for session_id in set(hot_now) & set(archived):
            assert hot_now[session_id] == archived[session_id], session_id
        assert archived

        # Read everything back (the archiver off): exactly the acknowledged appends.
        server.extra_args = [*base, "--archive-url", str(archive)]
        server.start()
        with grpc.insecure_channel(server.address) as channel:
            stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
            for session_id, turns in expected.items():
                messages = stub.ListMessages(
                    session_pb2.ListMessagesRequest(session_id=session_id, page_size=1000),
                    metadata=auth("alpha"),
                    timeout=60,
                ).messages
                want = [f"{session_id} turn {t} {x}" for t in turns for x in ("q", "a")]
                assert [m.content for m in messages] == want, session_id
        # Every unit is hot again; leftovers of the killed passes are repaired.
        wait_until(
            lambda: not [p for p in archive.rglob("*") if p.is_file()],
            60,
            "an empty archive",
            lambda: "\n".join(str(p) for p in archive.rglob("*") if p.is_file()),
        )
        assert set(hot(server, where)) == {("alpha", sid) for sid in expected}
    finally:
        stop.set()
        server.stop()
