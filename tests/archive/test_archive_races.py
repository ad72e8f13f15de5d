"""Archive defects of issue 18, each against a real `statekeeper serve`:
a restore that finds the session hot leaves the archive objects alone (the
archiver may be about to delete the hot rows: they become the only copy),
and a restore does not fail when another session reused an append's
request_id while this one was archived."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from statekeeper_client.v1 import session_pb2, session_pb2_grpc
from tests.archive.helpers import auth, hot, make_session, read_all, serve
from tests.harness.backends import EMBEDDED, PRODUCTION, backend
from tests.harness.deadlines import wait_until
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.servers import ServerProcess

# Idle for 0.00002 days (1.7 s) is old enough; passes every 0.3 s.
ARCHIVE_NOW = ["--archive-sessions-after-days", "0.00002", "--archive-interval-seconds", "0.3"]


def files(directory: Path) -> dict[str, bytes]:
    if not directory.exists():
        return {}
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in directory.rglob("*")
        if path.is_file() and not path.name.startswith(".")
    }


def archived(directory: Path, session_id: str) -> bool:
    return any(key.endswith(f"/sessions/{session_id}/manifest.json") for key in files(directory))


@pytest.mark.parametrize("backend_name", [EMBEDDED, PRODUCTION])
def test_restore_of_a_hot_session_keeps_the_archive_objects(
    backend_name: str, tmp_path: Path
) -> None:
    """The state between the archiver's manifest write and its delete of the
    hot rows (both there, same version): CreateSession and GetSession of that
    id must not delete the objects (the archiver's delete would then leave
    the session nowhere); repair removes them later if it stays hot."""
    archive = tmp_path / "archive"
    with backend(backend_name, "archrace") as where:
        base = [
            *(where.serve_args() if where else []),
            *key_args(API_KEYS),
            "--archive-url",
            str(archive),
        ]
        server = ServerProcess(tmp_path / "server", extra_args=[*base, *ARCHIVE_NOW])
        server.start()
        try:
            with grpc.insecure_channel(server.address) as channel:
                stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
                make_session(stub, "alpha", "s-race", "u1", 2)
                before = read_all(stub, "alpha", "s-race")
            wait_until(lambda: archived(archive, "s-race"), 120, "the session archived")
            wait_until(lambda: not hot(server, where), 60, "no hot session")
            objects = files(archive)
            assert len(objects) == 3, sorted(objects)  # manifest, chunk, marker

            # The archiver off: a read restores it and removes the objects.
            serve(server, base)
            with grpc.insecure_channel(server.address) as channel:
                stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
                assert read_all(stub, "alpha", "s-race") == before
                wait_until(lambda: not files(archive), 60, "the objects removed")

                # Put them back: the archiver's in-between state (hot, same version).
                for key, data in objects.items():
                    (archive / key).parent.mkdir(parents=True, exist_ok=True)
                    (archive / key).write_bytes(data)
                with pytest.raises(grpc.RpcError) as exists:
                    stub.CreateSession(
                        session_pb2.CreateSessionRequest(
                            session_id="s-race",
                            session=session_pb2.Session(user_id="u1", agent_id="agent-1"),
                        ),
                        metadata=auth("alpha"),
                        timeout=60,
                    )
                assert exists.value.code() == grpc.StatusCode.ALREADY_EXISTS
                assert read_all(stub, "alpha", "s-race") == before
                assert files(archive) == objects

            # Repair (at start, under the archiver's lock) removes them: still hot.
            serve(server, base)
            wait_until(lambda: not files(archive), 60, "repair removing the hot session's objects")
            with grpc.insecure_channel(server.address) as channel:
                stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
                assert read_all(stub, "alpha", "s-race") == before
        finally:
            server.stop()


@pytest.mark.parametrize("backend_name", [EMBEDDED, PRODUCTION])
def test_restore_after_another_session_reused_a_request_id(
    backend_name: str, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    with backend(backend_name, "archrid") as where:
        base = [
            *(where.serve_args() if where else []),
            *key_args(API_KEYS),
            "--archive-url",
            str(archive),
        ]
        server = ServerProcess(tmp_path / "server", extra_args=[*base, *ARCHIVE_NOW])
        server.start()
        try:
            with grpc.insecure_channel(server.address) as channel:
                stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
                # make_session's request ids are "<session>-turn-<n>".
                make_session(stub, "alpha", "s-old", "u1", 2)
                before = read_all(stub, "alpha", "s-old")
            wait_until(lambda: archived(archive, "s-old"), 120, "the session archived")
            wait_until(lambda: not hot(server, where), 60, "no hot session")

            serve(server, base)
            with grpc.insecure_channel(server.address) as channel:
                stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
                # Creating an archived id fails as for a hot one, and restores nothing.
                with pytest.raises(grpc.RpcError) as exists:
                    stub.CreateSession(
                        session_pb2.CreateSessionRequest(
                            session_id="s-old",
                            session=session_pb2.Session(user_id="u1", agent_id="agent-1"),
                        ),
                        metadata=auth("alpha"),
                        timeout=60,
                    )
                assert exists.value.code() == grpc.StatusCode.ALREADY_EXISTS
                assert not hot(server, where)
                stub.CreateSession(
                    session_pb2.CreateSessionRequest(
                        session_id="s-new",
                        session=session_pb2.Session(user_id="u1", agent_id="agent-1"),
                    ),
                    metadata=auth("alpha"),
                    timeout=60,
                )
                stub.AppendMessages(
                    session_pb2.AppendMessagesRequest(
                        session_id="s-new",
                        request_id="s-old-turn-0",  # archived with s-old
                        messages=[
                            session_pb2.SessionMessage(role=session_pb2.ROLE_USER, content="hi")
                        ],
                    ),
                    metadata=auth("alpha"),
                    timeout=60,
                )
                assert archived(archive, "s-old")
                # Restored on read, as it was (before: INTERNAL on every read).
                assert read_all(stub, "alpha", "s-old") == before
                new = stub.ListMessages(
                    session_pb2.ListMessagesRequest(session_id="s-new", page_size=100),
                    metadata=auth("alpha"),
                    timeout=60,
                ).messages
                assert [m.content for m in new] == ["hi"]
                assert not archived(archive, "s-old")
        finally:
            server.stop()
