"""Two replicas on loopback sharing one Redis and one PostgreSQL."""

from __future__ import annotations

import threading
from collections import Counter

import grpc
import pytest

from statekeeper_client.v1 import session_pb2 as pb
from statekeeper_client.v1.session_pb2_grpc import SessionServiceStub
from tests.e2e.errors import error_info
from tests.integration.conftest import ServerFactory

CLIENTS_PER_REPLICA = 16
UPDATES_PER_CLIENT = 5


def test_written_on_one_read_updated_and_listed_on_the_other(
    production_server: ServerFactory,
) -> None:
    a, b = production_server(), production_server()
    with grpc.insecure_channel(a.address) as ca, grpc.insecure_channel(b.address) as cb:
        one, other = SessionServiceStub(ca), SessionServiceStub(cb)
        created = one.CreateSession(
            pb.CreateSessionRequest(
                session_id="shared", session=pb.Session(user_id="u", metadata={"k": "1"})
            )
        ).session
        one.GetSession(pb.GetSessionRequest(session_id="shared"))  # cached on A's side too
        read = other.GetSession(pb.GetSessionRequest(session_id="shared")).session
        assert (read.version, read.metadata["k"]) == (created.version, "1")
        updated = other.UpdateSession(
            pb.UpdateSessionRequest(
                session=pb.Session(session_id="shared", metadata={"k": "2"}),
                expected_etag=read.etag,
            )
        ).session
        # The stale etag is refused on either replica.
        for stub in (one, other):
            with pytest.raises(grpc.RpcError) as stale:
                stub.UpdateSession(
                    pb.UpdateSessionRequest(
                        session=pb.Session(session_id="shared", metadata={"k": "3"}),
                        expected_etag=created.etag,
                    )
                )
            assert stale.value.code() == grpc.StatusCode.ABORTED
            assert error_info(stale.value).reason == "ETAG_MISMATCH"
        seen = one.GetSession(pb.GetSessionRequest(session_id="shared")).session
        assert (seen.version, seen.metadata["k"]) == (updated.version, "2")
        appended = one.AppendMessages(
            pb.AppendMessagesRequest(
                session_id="shared",
                messages=[pb.SessionMessage(role=pb.ROLE_USER, content="hi")],
                expected_etag=seen.etag,
            )
        ).session
        listed = other.ListSessions(pb.ListSessionsRequest()).sessions
        assert [(s.session_id, s.version) for s in listed] == [("shared", appended.version)]
        history = other.ListMessages(pb.ListMessagesRequest(session_id="shared")).messages
        assert [m.content for m in history] == ["hi"]
        other.DeleteSession(pb.DeleteSessionRequest(session_id="shared"))
        with pytest.raises(grpc.RpcError) as gone:
            one.GetSession(pb.GetSessionRequest(session_id="shared"))
        assert gone.value.code() == grpc.StatusCode.NOT_FOUND


def etag_updater(
    address: str, name: str, successes: list[tuple[int, str]], aborted: Counter[str]
) -> None:
    """Read-modify-write with the etag until UPDATES_PER_CLIENT succeed."""
    with grpc.insecure_channel(address) as channel:
        stub = SessionServiceStub(channel)
        done = 0
        while done < UPDATES_PER_CLIENT:
            current = stub.GetSession(pb.GetSessionRequest(session_id="contended")).session
            marker = f"{name}-{done}"
            try:
                reply = stub.UpdateSession(
                    pb.UpdateSessionRequest(
                        session=pb.Session(session_id="contended", metadata={"last": marker}),
                        expected_etag=current.etag,
                    ),
                    timeout=10,
                )
            except grpc.RpcError as error:
                assert error.code() == grpc.StatusCode.ABORTED, error
                aborted[name] += 1
                continue
            successes.append((reply.session.version, marker))
            done += 1


def test_etag_updates_from_two_replicas_never_collide(production_server: ServerFactory) -> None:
    replicas = [production_server(), production_server()]
    with grpc.insecure_channel(replicas[0].address) as channel:
        stub = SessionServiceStub(channel)
        stub.CreateSession(
            pb.CreateSessionRequest(session_id="contended", session=pb.Session(user_id="u"))
        )
    successes: list[tuple[int, str]] = []
    aborted: Counter[str] = Counter()
    threads = [
        threading.Thread(
            target=etag_updater, args=(replica.address, f"r{r}c{c}", successes, aborted)
        )
        for r, replica in enumerate(replicas)
        for c in range(CLIENTS_PER_REPLICA)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    expected = 2 * CLIENTS_PER_REPLICA * UPDATES_PER_CLIENT
    versions = [version for version, _ in successes]
    assert len(successes) == expected
    assert len(set(versions)) == expected, "two successful updates got the same version"
    with grpc.insecure_channel(replicas[1].address) as channel:
        stub = SessionServiceStub(channel)
        final = stub.GetSession(pb.GetSessionRequest(session_id="contended")).session
        history = stub.ListSessionVersions(
            pb.ListSessionVersionsRequest(session_id="contended", page_size=1000)
        ).versions
    # No update lost: one version per success after the create, each holding
    # the marker its writer was told it stored.
    assert final.version == 1 + expected
    stored = {v.version: v.session.metadata["last"] for v in history if v.version > 1}
    assert stored == dict(successes)
    print(
        f"2 replicas x {CLIENTS_PER_REPLICA} clients: {expected} etag updates succeeded with"
        f" {expected} distinct versions, {sum(aborted.values())} ABORTED and retried, 0 lost"
    )
