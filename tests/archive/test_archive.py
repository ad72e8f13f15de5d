"""The archive tier end to end: a real `statekeeper serve` moves idle
sessions to an object store (a local directory, or S3 on a loopback moto
server) and brings them back on read, byte for byte; tenants never see
each other's objects; EraseUser removes a user's archived sessions."""

from __future__ import annotations

import contextlib
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from statekeeper_client.v1 import admin_pb2, admin_pb2_grpc, session_pb2, session_pb2_grpc
from tests.archive.conftest import ArchiveView, S3Endpoint
from tests.archive.helpers import (
    auth,
    chunk_lines,
    erase_user,
    hot,
    hot_rows,
    hot_sessions,
    make_session,
    not_found,
    read_all,
    serve,
)
from tests.harness.backends import EMBEDDED, PRODUCTION, backend
from tests.harness.deadlines import wait_until
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.processes import free_port
from tests.harness.servers import ServerProcess

# Idle for 0.00002 days (1.7 s) is old enough; passes every 0.3 s.
ARCHIVE_NOW = ["--archive-sessions-after-days", "0.00002", "--archive-interval-seconds", "0.3"]
SESSIONS = (
    ("alpha", "s-1", "u1", 3),
    ("alpha", "s-2", "u1", 5),
    ("alpha", "..:3", "u2", 2),  # an id that is not a plain path segment
    ("beta", "s-1", "u1", 4),  # the same ids in another tenant
)


@contextlib.contextmanager
def archive_store(
    kind: str, tmp: Path, s3: S3Endpoint | None
) -> Iterator[tuple[list[str], dict[str, str], ArchiveView]]:
    """Server flags, environment and a view of the archive of one kind."""
    if kind == "local":
        directory = tmp / "archive"
        yield ["--archive-url", str(directory)], {}, ArchiveView(directory=directory)
        return
    assert s3 is not None
    bucket = s3.new_bucket()
    yield (
        ["--archive-url", f"s3://{bucket}/cold"],
        dict(s3.env),
        ArchiveView(endpoint=s3, bucket=bucket, prefix="cold"),
    )


def scrape(address: str) -> str:
    try:
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as reply:
            return str(reply.read().decode())
    except OSError:
        return ""


def manifests(view: ArchiveView) -> list[str]:
    return [key for key in view.all_keys() if key.endswith("/manifest.json")]


@pytest.mark.parametrize(
    ("backend_name", "store"),
    [(EMBEDDED, "local"), (EMBEDDED, "s3"), (PRODUCTION, "local"), (PRODUCTION, "s3")],
)
def test_archive_and_read_back_byte_for_byte(
    backend_name: str, store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    s3 = request.getfixturevalue("s3") if store == "s3" else None
    with (
        backend(backend_name, "arch") as where,
        archive_store(store, tmp_path, s3) as (store_args, env, view),
    ):
        base = [*(where.serve_args() if where else []), *key_args(API_KEYS), *store_args]
        server = ServerProcess(tmp_path / "server", env=env, extra_args=base)
        server.start()
        try:
            with grpc.insecure_channel(server.address) as channel:
                stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
                for tenant, session_id, user_id, turns in SESSIONS:
                    make_session(stub, tenant, session_id, user_id, turns, tag=tenant)
                before = {(t, s): read_all(stub, t, s) for t, s, _, _ in SESSIONS}
            rows_before = hot_rows(server.data_dir) if where is None else None

            # The archiver moves every idle session out, then nothing is hot.
            serve(server, [*base, *ARCHIVE_NOW])
            wait_until(
                lambda: len(manifests(view)) == len(SESSIONS),
                120,
                "every session archived",
                lambda: f"{view.all_keys()}\n{server.log_tail()}",
            )
            wait_until(lambda: not hot(server, where), 60, "no hot session")
            if where is None:
                assert all(not rows for rows in hot_rows(server.data_dir).values())
            wait_until(lambda: "archived a batch of sessions" in server.log(), 60, "batch log")

            # Objects of a tenant live under its prefix and hold only its rows.
            for key in view.all_keys():
                tenant = key.split("/")[1]
                assert tenant in ("alpha", "beta"), key
                if "/chunk-" in key:
                    lines = chunk_lines(view.read(key))
                    assert lines[0]["format"] == "statekeeper-export"
                    assert lines[0]["tenant"] == tenant
                    assert lines[-1]["kind"] == "trailer"
                    assert sum(lines[-1]["counts"].values()) == len(lines) - 2
                    for line in lines[1:-1]:
                        assert tenant in line["r"], (key, line)

            # Read back with the archiver off: every read restores first.
            serve(server, base)
            with grpc.insecure_channel(server.address) as channel:
                stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
                # beta's s-1 comes back as beta's; alpha's s-1 stays archived.
                assert read_all(stub, "beta", "s-1") == before[("beta", "s-1")]
                assert [k for k in manifests(view) if "/beta/" in k] == []
                assert any("/alpha/sessions/s-1/" in k for k in manifests(view))
                for tenant, session_id, _, _ in SESSIONS:
                    assert read_all(stub, tenant, session_id) == before[(tenant, session_id)]
                assert view.all_keys() == []
            if rows_before is not None:
                server.stop()
                assert hot_rows(server.data_dir) == rows_before  # byte for byte
        finally:
            server.stop()


def test_creating_an_archived_id_is_refused_and_restores_it(tmp_path: Path) -> None:
    metrics = f"127.0.0.1:{free_port()}"
    server = ServerProcess(
        tmp_path / "server",
        extra_args=[*key_args(API_KEYS), *ARCHIVE_NOW, "--metrics-listen", metrics],
    )
    server.start()
    view = ArchiveView(directory=server.data_dir / "archive")
    try:
        # Each archiver pass is a sweeper run for /metrics.
        wait_until(lambda: 'sweeper="archiver"' in scrape(metrics), 60, "archiver in /metrics")
        with grpc.insecure_channel(server.address) as channel:
            stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
            make_session(stub, "alpha", "taken", "u1", 1)
            wait_until(lambda: manifests(view), 120, "archived", server.log_tail)
            with pytest.raises(grpc.RpcError) as refused:
                make_session(stub, "alpha", "taken", "u9", 0)
            assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
            session = stub.GetSession(
                session_pb2.GetSessionRequest(session_id="taken"), metadata=auth("alpha")
            ).session
            assert session.user_id == "u1"
            # A restored session takes writes like any other.
            stub.AppendMessages(
                session_pb2.AppendMessagesRequest(
                    session_id="taken",
                    messages=[
                        session_pb2.SessionMessage(role=session_pb2.ROLE_USER, content="again")
                    ],
                ),
                metadata=auth("alpha"),
                timeout=60,
            )
            assert not_found(
                lambda: stub.GetSession(
                    session_pb2.GetSessionRequest(session_id="never"), metadata=auth("alpha")
                )
            )
        # What moved is counted per capability and direction.
        text = scrape(metrics)
        for direction in ("archived", "restored"):
            moved = units_moved(text, "sessions", direction)
            assert moved is not None and moved >= 1, (direction, text)
        assert "statekeeper_archive_failed_passes_total 0.0" in text
    finally:
        server.stop()


def units_moved(text: str, capability: str, direction: str) -> float | None:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "statekeeper_archive_units_total" and sample.labels == {
                "capability": capability,
                "direction": direction,
            }:
                return float(sample.value)
    return None


def test_erase_user_removes_archived_sessions(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "server", extra_args=[*key_args(API_KEYS), *ARCHIVE_NOW])
    server.start()
    view = ArchiveView(directory=server.data_dir / "archive")
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
            make_session(stub, "alpha", "a-1", "gone", 2)
            make_session(stub, "alpha", "a-2", "gone", 1)
            make_session(stub, "alpha", "b-1", "kept", 2)
            make_session(stub, "beta", "c-1", "gone", 2)  # same user id, other tenant
            wait_until(lambda: len(manifests(view)) == 4, 120, "archived", server.log_tail)
            # The archive's participant runs before and after the sessions'
            # (a read in between cannot restore one): a dry run counts once.
            keys = view.all_keys()
            answer = erase_user(channel, "alpha", "gone", dry_run=True)
            counts = {(c.capability, c.kind): c.count for c in answer.counts}
            assert counts[("archive", "sessions")] == 2, counts
            assert view.all_keys() == keys
            answer = erase_user(channel, "alpha", "gone")
            counts = {(c.capability, c.kind): c.count for c in answer.counts}
            assert counts[("archive", "sessions")] == 2, counts
            left = view.all_keys()
            assert not [k for k in left if k.startswith("v1/alpha/") and "/a-" in k], left
            assert not [k for k in left if k.startswith("v1/alpha/users/gone/")], left
            assert any(k.startswith("v1/alpha/sessions/b-1/") for k in left)
            assert any(k.startswith("v1/beta/sessions/c-1/") for k in left)
            for session_id in ("a-1", "a-2"):
                assert not_found(
                    lambda sid=session_id: stub.GetSession(
                        session_pb2.GetSessionRequest(session_id=sid), metadata=auth("alpha")
                    )
                )
            kept = stub.GetSession(
                session_pb2.GetSessionRequest(session_id="b-1"), metadata=auth("alpha")
            ).session
            assert kept.user_id == "kept"
    finally:
        server.stop()


def test_restore_archived_brings_back_a_user_then_the_tenant(tmp_path: Path) -> None:
    base = [*key_args(API_KEYS)]
    server = ServerProcess(tmp_path / "server", extra_args=[*base, *ARCHIVE_NOW])
    server.start()
    view = ArchiveView(directory=server.data_dir / "archive")
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
            make_session(stub, "alpha", "r-1", "u1", 1)
            make_session(stub, "alpha", "r-2", "u1", 2)
            make_session(stub, "alpha", "r-3", "u2", 1)
            make_session(stub, "beta", "r-1", "u1", 1)
        wait_until(lambda: len(manifests(view)) == 4, 120, "archived", server.log_tail)
        serve(server, base)  # the archiver off
        assert not hot_sessions(server.data_dir)
        with grpc.insecure_channel(server.address) as channel:
            admin = admin_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]
            request = admin_pb2.RestoreArchivedRequest(user_id="u1")
            answer = admin.RestoreArchived(request, metadata=auth("alpha"), timeout=120)
            assert answer.restored_sessions == 2
            assert set(hot_sessions(server.data_dir)) == {("alpha", "r-1"), ("alpha", "r-2")}
            answer = admin.RestoreArchived(request, metadata=auth("alpha"), timeout=120)
            assert answer.restored_sessions == 0  # idempotent
            answer = admin.RestoreArchived(
                admin_pb2.RestoreArchivedRequest(), metadata=auth("alpha"), timeout=120
            )
            assert answer.restored_sessions == 1
            assert ("alpha", "r-3") in hot_sessions(server.data_dir)
            # beta's session of the same id and user stays archived.
            assert ("beta", "r-1") not in hot_sessions(server.data_dir)
            assert manifests(view) == ["v1/beta/sessions/r-1/manifest.json"]
            with pytest.raises(grpc.RpcError) as bad:
                admin.RestoreArchived(
                    admin_pb2.RestoreArchivedRequest(user_id="a b"), metadata=auth("alpha")
                )
            assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        server.stop()
