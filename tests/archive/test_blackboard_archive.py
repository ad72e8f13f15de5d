"""Blackboard history in the archive tier, end to end on real `statekeeper
serve` processes: with --archive-blackboard-history the history that
retention compacts is archived first, and reads, listings and watches at
compacted revisions answer exactly as they did while it was hot (embedded
and production, local directory and S3); tenants never see each other's
history; EraseUser rewrites archived chunks; a kill -9 under write load
loses no revision and archives none twice."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from statekeeper_client.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    blackboard_pb2,
    blackboard_pb2_grpc,
    common_pb2,
)
from tests.archive.conftest import ArchiveView, S3Endpoint
from tests.archive.helpers import auth, chunk_lines, serve
from tests.e2e.errors import error_info
from tests.harness.backends import EMBEDDED, PRODUCTION, backend
from tests.harness.deadlines import scaled, wait_until
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.servers import ServerProcess

pb = blackboard_pb2
BOARD = "plan"
# Retention keeps one second of history; the archiver passes every 0.3 s.
ARCHIVE_HISTORY = [
    "--archive-blackboard-history",
    "--archive-interval-seconds",
    "0.3",
    "--limit",
    "blackboard.history_retention_seconds=1",
    "--limit",
    "blackboard.compaction_interval_seconds=0.3",
]
UNIT = re.compile(r"v1/([^/]+)/blackboard/r(\d{16})-(\d{16})/manifest\.json")


@contextlib.contextmanager
def archive_store(
    kind: str, tmp: Path, s3: S3Endpoint | None
) -> Iterator[tuple[list[str], dict[str, str], ArchiveView]]:
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


def stub_of(channel: grpc.Channel) -> blackboard_pb2_grpc.BlackboardServiceStub:
    return blackboard_pb2_grpc.BlackboardServiceStub(channel)  # type: ignore[no-untyped-call]


def put(stub: Any, tenant: str, key: str, text: str) -> int:
    value = pb.BlackboardValue(payload=common_pb2.Payload(data=text.encode()))
    reply = stub.PutEntry(
        pb.PutEntryRequest(board=BOARD, key=key, value=value), metadata=auth(tenant), timeout=60
    )
    return int(reply.header.revision)


def delete(stub: Any, tenant: str, key: str) -> None:
    stub.DeleteEntry(pb.DeleteEntryRequest(board=BOARD, key=key), metadata=auth(tenant), timeout=60)


def write_history(stub: Any, tenant: str) -> int:
    """Puts, overwrites and deletes under two users' prefixes and a shared
    one; returns the last revision."""
    last = 0
    for step in range(12):
        last = put(stub, tenant, f"u1/k{step % 3}", f"{tenant} u1 {step}")
        last = put(stub, tenant, f"u2/k{step % 2}", f"{tenant} u2 {step} ✓")
        if step % 4 == 3:
            delete(stub, tenant, f"u1/k{step % 3}")
        last = put(stub, tenant, "shared", f"{tenant} shared {step}")
    return last


def header(stub: Any, tenant: str) -> pb.BlackboardHeader:
    reply = stub.GetEntry(pb.GetEntryRequest(board=BOARD, key="shared"), metadata=auth(tenant))
    return reply.header


def view_at(stub: Any, tenant: str, revision: int) -> tuple[Any, ...]:
    """What GetEntry and ListEntries (pages of 2) answer at `revision`,
    serialized (headers without `oldest_revision`, which compaction moves)."""
    meta = auth(tenant)
    gets = []
    for key in ("u1/k0", "u1/k1", "u2/k1", "shared", "missing"):
        reply = stub.GetEntry(
            pb.GetEntryRequest(board=BOARD, key=key, revision=revision), metadata=meta
        )
        assert reply.header.revision == revision
        gets.append((reply.found, reply.entry.SerializeToString(deterministic=True)))
    listed: list[bytes] = []
    token = ""
    for _ in range(100):
        page = stub.ListEntries(
            pb.ListEntriesRequest(board=BOARD, revision=revision, page_size=2, page_token=token),
            metadata=meta,
        )
        listed += [entry.SerializeToString(deterministic=True) for entry in page.entries]
        token = page.next_page_token
        if not token:
            break
    return tuple(gets), tuple(listed)


def watch_events(
    stub: Any, tenant: str, start: int, through: int, snapshot: bool = False
) -> list[bytes]:
    """The events (and snapshot entries) a watch from `start` delivers up
    to revision `through`."""
    call = stub.Watch(
        pb.WatchRequest(
            board=BOARD, start_revision=start, prev_value=True, initial_snapshot=snapshot
        ),
        metadata=auth(tenant),
        timeout=scaled(60),
    )
    seen: list[bytes] = []
    try:
        for response in call:
            kind = response.WhichOneof("kind")
            if kind == "snapshot_chunk":
                seen += [
                    b"S" + e.SerializeToString(deterministic=True)
                    for e in response.snapshot_chunk.entries
                ]
            if kind == "events":
                seen += [e.SerializeToString(deterministic=True) for e in response.events.events]
                if response.events.events[-1].revision >= through:
                    break
    finally:
        call.cancel()
    return seen


def units(view: ArchiveView, tenant: str) -> list[tuple[int, int]]:
    found = []
    for key in view.all_keys():
        match = UNIT.fullmatch(key)
        if match and match[1] == tenant:
            found.append((int(match[2]), int(match[3])))
    return sorted(found)


def assert_contiguous(ranges: list[tuple[int, int]], first: int, oldest_hot: int) -> None:
    """Units cover [first, oldest_hot - 1] once each: no gap, no overlap."""
    assert ranges, "nothing archived"
    assert ranges[0][0] == first
    for (_, high), (low, _) in itertools.pairwise(ranges):
        assert low == high + 1, ranges
    assert ranges[-1][1] == oldest_hot - 1, (ranges, oldest_hot)


def archived_rows_under(view: ArchiveView, tenant: str, prefix: str) -> int:
    """The history rows in the tenant's chunks whose key begins with `prefix`."""
    total = 0
    for key in view.all_keys():
        if "/blackboard/" in key and key.endswith(".zst") and key.split("/")[1] == tenant:
            lines = chunk_lines(view.read(key))
            columns = {table["name"]: table["columns"] for table in lines[0]["tables"]}
            at = columns["bb_versions"].index("key")
            total += sum(
                1
                for line in lines
                if line.get("t") == "bb_versions" and str(line["r"][at]).startswith(prefix)
            )
    return total


@pytest.mark.parametrize(("backend_name", "store"), [(EMBEDDED, "local"), (PRODUCTION, "s3")])
def test_archived_history_reads_as_if_hot(
    backend_name: str, store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    s3 = request.getfixturevalue("s3") if store == "s3" else None
    with (
        backend(backend_name, "bbarch") as where,
        archive_store(store, tmp_path, s3) as (store_args, env, view),
    ):
        base = [*(where.serve_args() if where else []), *key_args(API_KEYS), *store_args]
        server = ServerProcess(tmp_path / "server", env=env, extra_args=base)
        server.start()
        try:
            with grpc.insecure_channel(server.address) as channel:
                stub = stub_of(channel)
                last = {tenant: write_history(stub, tenant) for tenant in ("alpha", "beta")}
                # beta compacts part of its history before archiving is on:
                # that part is gone for good (below the archive's floor).
                stub.CompactBlackboard(
                    pb.CompactBlackboardRequest(revision=5), metadata=auth("beta")
                )
                first = {"alpha": 1, "beta": 5}
                truth = {
                    tenant: {
                        r: view_at(stub, tenant, r) for r in range(first[tenant], last[tenant] + 1)
                    }
                    for tenant in last
                }
                watched = {t: watch_events(stub, t, first[t], last[t]) for t in last}
                snapshot = watch_events(stub, "alpha", 10, last["alpha"], snapshot=True)

            serve(server, [*base, *ARCHIVE_HISTORY])
            with grpc.insecure_channel(server.address) as channel:
                stub = stub_of(channel)
                for tenant in last:
                    wait_until(
                        lambda t=tenant: header(stub, t).oldest_revision == last[t],
                        120,
                        f"{tenant}'s history archived and compacted",
                        server.log_tail,
                    )
                    assert_contiguous(units(view, tenant), first[tenant], last[tenant])
                    # A tenant's chunks live under its prefix and hold its rows.
                    for key in view.all_keys():
                        if "/blackboard/" in key and key.endswith(".zst"):
                            lines = chunk_lines(view.read(key))
                            assert lines[0]["tenant"] == key.split("/")[1]
                # Reads, listings and watches answer as they did hot.
                for tenant in last:
                    for revision, expected in truth[tenant].items():
                        assert view_at(stub, tenant, revision) == expected, (tenant, revision)
                    assert (
                        watch_events(stub, tenant, first[tenant], last[tenant]) == watched[tenant]
                    )
                assert watch_events(stub, "alpha", 10, last["alpha"], snapshot=True) == snapshot
                # A watch from archived history continues live: no gap, no duplicate.
                follow = put(stub, "alpha", "u2/k0", "after the archive")
                replay = watch_events(stub, "alpha", 1, follow)
                assert replay[: len(watched["alpha"])] == watched["alpha"]
                assert len(replay) == len(watched["alpha"]) + 1

                # Below what was archived: OUT_OF_RANGE with the oldest readable.
                with pytest.raises(grpc.RpcError) as below:
                    stub.GetEntry(
                        pb.GetEntryRequest(board=BOARD, key="shared", revision=4),
                        metadata=auth("beta"),
                    )
                assert below.value.code() == grpc.StatusCode.OUT_OF_RANGE
                assert error_info(below.value).metadata["oldest_revision"] == "5"

                # EraseUser: u1's rows leave the archived chunks too.
                admin = admin_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]
                # Once the archiver is idle (nothing more is due), counted.
                wait_until(lambda: header(stub, "alpha").oldest_revision == follow, 120, "archived")
                archived_u1 = archived_rows_under(view, "alpha", "u1/")
                assert archived_u1 > 0
                counted = {}
                for dry_run in (True, False):
                    reply = admin.EraseUser(
                        admin_pb2.EraseUserRequest(
                            user_id="u1", blackboard_key_prefixes=["u1/"], dry_run=dry_run
                        ),
                        metadata=auth("alpha"),
                        timeout=120,
                    )
                    counted[dry_run] = {(c.capability, c.kind): c.count for c in reply.counts}
                    if dry_run:  # counted, nothing rewritten
                        assert archived_rows_under(view, "alpha", "u1/") == archived_u1
                for dry_run in (True, False):
                    assert counted[dry_run][("blackboard", "archived_versions")] == archived_u1
                assert archived_rows_under(view, "alpha", "u1/") == 0
                for revision in range(1, last["alpha"] + 1):
                    gets, listed = view_at(stub, "alpha", revision)
                    expected_gets, expected_listed = truth["alpha"][revision]
                    assert gets[0] == (False, b"") and gets[1] == (False, b"")
                    assert gets[2:] == expected_gets[2:]
                    assert len(listed) == len([e for e in expected_listed if b"u1/" not in e])
                # beta's history is untouched by alpha's erasure.
                for revision, expected in truth["beta"].items():
                    assert view_at(stub, "beta", revision) == expected
        finally:
            server.stop()


def test_compact_blackboard_archives_first(tmp_path: Path) -> None:
    directory = tmp_path / "archive"
    view = ArchiveView(directory=directory)
    args = [*key_args(API_KEYS), "--archive-url", str(directory), "--archive-blackboard-history"]
    server = ServerProcess(tmp_path / "server", extra_args=args)
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = stub_of(channel)
            last = write_history(stub, "alpha")
            truth = {r: view_at(stub, "alpha", r) for r in range(1, last + 1)}
            reply = stub.CompactBlackboard(
                pb.CompactBlackboardRequest(revision=last - 3), metadata=auth("alpha")
            )
            assert reply.header.oldest_revision == last - 3
            assert units(view, "alpha") == [(1, last - 4)]
            for revision, expected in truth.items():
                assert view_at(stub, "alpha", revision) == expected
    finally:
        server.stop()


def test_kill_nine_under_write_load_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "archive"
    view = ArchiveView(directory=directory)
    args = [
        *key_args(API_KEYS),
        "--archive-url",
        str(directory),
        *ARCHIVE_HISTORY,
        "--limit",
        "blackboard.history_max_revisions=20",
    ]
    server = ServerProcess(tmp_path / "server", extra_args=args)
    server.start()
    acknowledged: dict[int, str] = {}
    try:
        for round_number in range(3):
            stop = threading.Event()

            def write(number: int = round_number, stop: threading.Event = stop) -> None:
                with grpc.insecure_channel(server.address) as channel:
                    stub = stub_of(channel)
                    for step in range(100_000):
                        if stop.is_set():
                            return
                        text = f"round {number} step {step}"
                        try:
                            revision = put(stub, "alpha", f"k{step % 7}", text)
                        except grpc.RpcError:
                            return  # the server died under us
                        acknowledged[revision] = text

            writer = threading.Thread(target=write)
            writer.start()
            wait_until(
                lambda n=round_number: len(units(view, "alpha")) > 2 * n + 1,
                120,
                "units archived under load",
                server.log_tail,
            )
            server.kill()
            stop.set()
            writer.join(timeout=scaled(60))
            server.start()
        with grpc.insecure_channel(server.address) as channel:
            stub = stub_of(channel)
            last = put(stub, "alpha", "final", "done")
            events = watch_events(stub, "alpha", 1, last)
            revisions = []
            for raw in events:
                event = pb.BlackboardEvent.FromString(raw)
                revisions.append(event.revision)
                if event.revision in acknowledged:
                    assert event.entry.value.payload.data.decode() == acknowledged[event.revision]
            # Every revision once, in order, archived or hot; every
            # acknowledged write among them.
            assert revisions == list(range(1, last + 1))
            assert set(acknowledged) <= set(revisions)
            # Units cover the compacted history once each (repair at start
            # removed any unit whose compaction a kill interrupted: its
            # revisions had stayed hot) and meet the hot history.
            wait_until(
                lambda: header(stub, "alpha").oldest_revision == last,
                120,
                "the history archived up to the last revision",
                server.log_tail,
            )
            assert_contiguous(units(view, "alpha"), 1, last)
    finally:
        server.stop()


def test_sealed_history_stays_sealed_in_the_archive(tmp_path: Path) -> None:
    """A sensitive tenant's history is archived as stored (sealed values)
    and reads through in the clear."""
    keys = tmp_path / "keys"
    keys.write_text(f"k1 {base64.b64encode(os.urandom(32)).decode()}\n")
    keys.chmod(0o600)
    directory = tmp_path / "archive"
    view = ArchiveView(directory=directory)
    base = [
        *key_args(API_KEYS),
        "--archive-url",
        str(directory),
        "--encryption-keys-file",
        str(keys),
        "--sensitive-tenant",
        "alpha",
    ]
    server = ServerProcess(tmp_path / "server", extra_args=base)
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = stub_of(channel)
            last = write_history(stub, "alpha")
            truth = {r: view_at(stub, "alpha", r) for r in range(1, last + 1)}
            watched = watch_events(stub, "alpha", 1, last)
        assert any(b"alpha shared" in entry for entry in truth[last][1])  # plaintext API
        serve(server, [*base, *ARCHIVE_HISTORY])
        with grpc.insecure_channel(server.address) as channel:
            stub = stub_of(channel)
            wait_until(
                lambda: header(stub, "alpha").oldest_revision == last,
                120,
                "alpha's history archived",
                server.log_tail,
            )
            chunks = [key for key in view.all_keys() if "/blackboard/" in key and "/chunk-" in key]
            assert chunks
            values = [
                base64.b64decode(value["b64"]) if isinstance(value, dict) else str(value).encode()
                for key in chunks
                for line in chunk_lines(view.read(key))[1:-1]
                for value in line["r"]
            ]
            assert any(b"~sk1" in value for value in values)  # sealed tokens
            assert not any(b"alpha shared" in value for value in values)
            for revision, expected in truth.items():
                assert view_at(stub, "alpha", revision) == expected
            assert watch_events(stub, "alpha", 1, last) == watched
    finally:
        server.stop()


def place_interrupted_unit(stub: Any, directory: Path, manifest: dict[str, Any]) -> Path:
    """Writes the manifest of a unit starting at the oldest hot revision
    (what a kill -9 before its compaction leaves), once no pass in flight
    moved the oldest revision past it."""
    for _ in range(20):  # bounded: a pass in flight may archive meanwhile
        oldest = header(stub, "alpha").oldest_revision
        unit = f"r{oldest:016d}-{oldest + 3:016d}"
        path = directory / f"v1/alpha/blackboard/{unit}/manifest.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({**manifest, "unit": unit, "chunks": []}))
        time.sleep(1.0)  # more than an archiver pass
        if header(stub, "alpha").oldest_revision == oldest:
            return path
        path.unlink()
        path.parent.rmdir()
    raise AssertionError("the archiver never paused")


def test_a_unit_left_by_a_crash_blocks_its_tenant_until_repair(tmp_path: Path) -> None:
    """A manifest whose revisions are still hot (what a kill -9 between the
    manifest and the compaction leaves) keeps the archiver off that tenant,
    so no revision is archived twice; `repair` at start removes it (hot
    rows win) and archiving resumes."""
    directory = tmp_path / "archive"
    view = ArchiveView(directory=directory)
    args = [*key_args(API_KEYS), "--archive-url", str(directory), *ARCHIVE_HISTORY]
    server = ServerProcess(tmp_path / "server", extra_args=args)
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = stub_of(channel)
            first = write_history(stub, "alpha")
            wait_until(lambda: header(stub, "alpha").oldest_revision == first, 120, "archived")
            real = next(key for key in view.all_keys() if key.endswith("manifest.json"))
            last = write_history(stub, "alpha")
            manifest = json.loads(view.read(real))
            path = place_interrupted_unit(stub, directory, manifest)
            oldest = header(stub, "alpha").oldest_revision
            # Due after one second of retention, yet left alone for many passes.
            time.sleep(scaled(3))
            assert header(stub, "alpha").oldest_revision == oldest < last
            assert path.exists()
        serve(server, args)  # repair at start
        with grpc.insecure_channel(server.address) as channel:
            stub = stub_of(channel)
            wait_until(
                lambda: header(stub, "alpha").oldest_revision == last,
                120,
                "archiving resumed after repair",
                server.log_tail,
            )
            assert not path.exists()
            assert_contiguous(units(view, "alpha"), 1, last)
    finally:
        server.stop()
