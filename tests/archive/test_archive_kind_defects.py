"""Defects of the archive's unit kinds (checkpoint histories, episodes,
audit days), each against a real `statekeeper serve` or the real stores:
a history whose checkpoints name several users is erased with its users;
a damaged or foreign archive object answers UNAVAILABLE naming its key
(never INTERNAL) and fails only the reads that need it; paging through an
archived audit day too large to keep parsed does not fetch it again; a
lookup of histories by run id reads each manifest once."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from statekeeper.core.archive.audit import ArchivedAudit, AuditUnits
from statekeeper.core.archive.checkpoints import ArchivedHistories
from statekeeper.core.archive.service import Archive, ArchivePolicy
from statekeeper.core.audit.models import AuditFilter
from statekeeper.storage import schemas
from statekeeper.storage.archive.audit_embedded import EmbeddedAuditArchive
from statekeeper.storage.archive.embedded import EmbeddedArchiveDatabase
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.objects import open_store
from statekeeper_client.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    checkpoint_pb2,
    checkpoint_pb2_grpc,
    memory_pb2,
    memory_pb2_grpc,
)
from statekeeper_client.v1 import blackboard_pb2 as bb
from tests.archive.conftest import ArchiveView
from tests.archive.helpers import auth, erase_user
from tests.archive.test_audit_archive import day_start, past_records, seed
from tests.archive.test_blackboard_archive import stub_of as blackboard_stub
from tests.archive.test_blackboard_archive import write_history
from tests.archive.test_checkpoint_archive import (
    archive_all,
    history_manifests,
    save,
)
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.servers import ServerProcess

Stub = checkpoint_pb2_grpc.CheckpointServiceStub


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[ServerProcess, ArchiveView, list[str]]]:
    """An embedded server with a local archive, archiver off."""
    directory = tmp_path / "archive"
    base = [*key_args(API_KEYS), "--archive-url", str(directory)]
    process = ServerProcess(tmp_path / "server", extra_args=base)
    process.start()
    try:
        yield process, ArchiveView(directory=directory), base
    finally:
        process.stop()


def thread(stub: Stub, execution: str, users: list[str]) -> None:
    """A root-namespace thread of one checkpoint per user (in that order)."""
    parent = ""
    for step, user in enumerate(users):
        checkpoint_id = f"{execution}-{step:03d}"
        channels = {"messages": (str(step + 1), f'["{execution} {step}"]')}
        save(stub, "alpha", execution, "", checkpoint_id, parent, step, channels, "", user)
        parent = checkpoint_id


def manifest(view: ArchiveView, execution: str) -> dict[str, object]:
    key = f"v1/alpha/checkpoints/{execution}/manifest.json"
    loaded: dict[str, object] = json.loads(view.read(key))
    return loaded


def archived_checkpoints(answer: admin_pb2.EraseUserResponse) -> int:
    return sum(
        count.count
        for count in answer.counts
        if count.capability == "archive" and count.kind == "checkpoints"
    )


def test_a_checkpoint_history_naming_two_users_is_erased_with_the_first(
    server: tuple[ServerProcess, ArchiveView, list[str]],
) -> None:
    """Its manifest's user is the first of them (by id), whose marker
    EraseUser finds, as the hot erasure deletes an execution with any
    checkpoint tagged with the user (before: no marker, never erased)."""
    process, view, base = server
    with grpc.insecure_channel(process.address) as channel:
        stub = checkpoint_pb2_grpc.CheckpointServiceStub(channel)  # type: ignore[no-untyped-call]
        thread(stub, "shared-thread", ["u-b", "u-a", "u-b"])
    archive_all(process, view, base, 1)
    assert manifest(view, "shared-thread")["user_id"] == "u-a"
    with grpc.insecure_channel(process.address) as channel:
        answer = erase_user(channel, "alpha", "u-a")
    assert archived_checkpoints(answer) == 1
    assert history_manifests(view) == []
    assert not any("/shared-thread" in key for key in view.all_keys()), view.all_keys()


def test_a_checkpoint_history_naming_two_users_is_erased_with_the_second(
    server: tuple[ServerProcess, ArchiveView, list[str]],
) -> None:
    process, view, base = server
    with grpc.insecure_channel(process.address) as channel:
        stub = checkpoint_pb2_grpc.CheckpointServiceStub(channel)  # type: ignore[no-untyped-call]
        thread(stub, "shared-thread", ["u-a", "u-b", "u-a"])
    archive_all(process, view, base, 1)
    with grpc.insecure_channel(process.address) as channel:
        answer = erase_user(channel, "alpha", "u-b")
    assert archived_checkpoints(answer) == 1
    assert not any("/shared-thread" in key for key in view.all_keys()), view.all_keys()


def plant(view: ArchiveView, key: str, data: bytes) -> None:
    assert view.directory is not None
    path = view.directory / key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def code_and_details(call: object) -> tuple[grpc.StatusCode, str]:
    try:
        call()  # type: ignore[operator]
    except grpc.RpcError as error:
        return error.code(), str(error.details())
    return grpc.StatusCode.OK, ""


def test_damaged_or_foreign_checkpoint_episode_audit_objects_answer_unavailable(
    server: tuple[ServerProcess, ArchiveView, list[str]],
) -> None:
    process, view, base = server
    with grpc.insecure_channel(process.address) as channel:
        stub = checkpoint_pb2_grpc.CheckpointServiceStub(channel)  # type: ignore[no-untyped-call]
        thread(stub, "kept", ["u-a", "u-a", "u-a"])
    archive_all(process, view, base, 1)

    # Another tenant's chunk under beta's prefix, its manifest pointing at it
    # (the sha256 matches: only the chunk's header tells).
    alpha = manifest(view, "kept")
    chunk = alpha["chunks"][0]  # type: ignore[index]
    foreign_key = chunk["key"].replace("v1/alpha/", "v1/beta/")
    plant(view, foreign_key, view.read(chunk["key"]))
    beta = {**alpha, "tenant": "beta", "chunks": [{**chunk, "key": foreign_key}]}
    plant(view, "v1/beta/checkpoints/kept/manifest.json", json.dumps(beta).encode())
    # Manifests that are not JSON, of one history, one user's episodes and one audit day.
    for key in (
        "v1/alpha/checkpoints/garbled/manifest.json",
        "v1/alpha/episodes/u-garbled/manifest.json",
        "v1/alpha/audit/2020-01-02/manifest.json",
    ):
        plant(view, key, b"{not json")

    with grpc.insecure_channel(process.address) as channel:
        stub = checkpoint_pb2_grpc.CheckpointServiceStub(channel)  # type: ignore[no-untyped-call]
        memory = memory_pb2_grpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
        admin = admin_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]

        def get(tenant: str, execution: str) -> object:
            request = checkpoint_pb2.GetCheckpointRequest(
                execution_id=execution, checkpoint_id=f"{execution}-000"
            )
            return lambda: stub.GetCheckpoint(request, metadata=auth(tenant), timeout=60)

        code, details = code_and_details(get("beta", "kept"))
        assert code == grpc.StatusCode.UNAVAILABLE, (code, details)
        assert "v1/beta/checkpoints/kept/" in details
        code, details = code_and_details(get("alpha", "garbled"))
        assert code == grpc.StatusCode.UNAVAILABLE, (code, details)
        assert "v1/alpha/checkpoints/garbled/" in details

        # A lookup over every history (by run id) skips the garbled one.
        by_run = checkpoint_pb2.ListCheckpointsRequest(run_id="no-such-run", page_size=10)
        code, details = code_and_details(
            lambda: stub.ListCheckpoints(by_run, metadata=auth("alpha"), timeout=60)
        )
        assert code == grpc.StatusCode.OK, (code, details)
        # The history that is whole still comes back.
        code, details = code_and_details(get("alpha", "kept"))
        assert code == grpc.StatusCode.OK, (code, details)

        # GetEpisode of an id in no unit looks through every unit: NOT_FOUND.
        missing = memory_pb2.GetEpisodeRequest(episode_id="no-such-episode")
        code, details = code_and_details(
            lambda: memory.GetEpisode(missing, metadata=auth("alpha"), timeout=60)
        )
        assert code == grpc.StatusCode.NOT_FOUND, (code, details)
        # The garbled user's own episodes cannot be read.
        listing = memory_pb2.ListEpisodesRequest(user_id="u-garbled", page_size=10)
        code, details = code_and_details(
            lambda: memory.ListEpisodes(listing, metadata=auth("alpha"), timeout=60)
        )
        assert code == grpc.StatusCode.UNAVAILABLE, (code, details)
        assert "v1/alpha/episodes/u-garbled/" in details

        # An audit listing that reaches the garbled day fails (its records
        # would be missing unnoticed); one with a time range after it does not.
        audit = admin_pb2.ListAuditRecordsRequest(page_size=10)
        code, details = code_and_details(
            lambda: admin.ListAuditRecords(audit, metadata=auth("alpha"), timeout=60)
        )
        assert code == grpc.StatusCode.UNAVAILABLE, (code, details)
        assert "v1/alpha/audit/2020-01-02/manifest.json" in details
        recent = admin_pb2.ListAuditRecordsRequest(page_size=10)
        recent.start_time.FromSeconds(int(time.time()) - 86_400)
        code, details = code_and_details(
            lambda: admin.ListAuditRecords(recent, metadata=auth("alpha"), timeout=60)
        )
        assert code == grpc.StatusCode.OK, (code, details)
    assert "archive scan skipped an unreadable unit" in process.log_tail()


def test_an_audit_day_too_large_to_keep_parsed_is_fetched_once(tmp_path: Path) -> None:
    asyncio.run(page_through_a_large_day(tmp_path))


async def page_through_a_large_day(tmp_path: Path) -> None:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    try:
        # Every capability's tables, as a server has them (a chunk's header
        # lists them all).
        await schemas.migrate_embedded(storage)
        database = EmbeddedAuditArchive(storage, tmp_path)
        objects = open_store(str(tmp_path / "archive"), tmp_path)
        archive = Archive(
            objects,
            EmbeddedArchiveDatabase(storage, tmp_path),
            [AuditUnits(database, 1.0)],
            ArchivePolicy(),
        )
        await asyncio.to_thread(seed, None, tmp_path, past_records((3,), 12))
        assert (await archive.archive_pass()).units == 2  # alpha's day, beta's day
        # 12 records a day, 5 kept parsed: the day is too large for that cache.
        reader = ArchivedAudit(archive, database.read_chunk, cached_records=5)
        pages: list[list[int]] = []
        before = 0
        for _ in range(3):
            page = await reader.merge_page("alpha", AuditFilter(), before, 4, [])
            pages.append([record.audit_id for record in page])
            before = page[-1].audit_id
        ids = [audit_id for page in pages for audit_id in page]
        assert len(ids) == 12 and ids == sorted(ids, reverse=True)
        assert all(record.time >= day_start(3) for record in page)
        assert reader.chunk_reads == 1
    finally:
        await storage.close()


def test_a_checkpoint_lookup_by_run_reads_each_manifest_once(tmp_path: Path) -> None:
    asyncio.run(look_up_runs(tmp_path))


async def look_up_runs(tmp_path: Path) -> None:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    try:
        objects = open_store(str(tmp_path / "archive"), tmp_path)
        archive = Archive(objects, EmbeddedArchiveDatabase(storage, tmp_path), [], ArchivePolicy())
        histories = ArchivedHistories(archive)

        async def put_history(unit: str, chunk: str, run_ids: list[str]) -> None:
            prefix = f"v1/alpha/checkpoints/{unit}"
            chunk_key = f"{prefix}/chunk-{chunk}.ndjson.zst"
            await objects.put(chunk_key, b"rows")
            manifest = {
                "format": "statekeeper-archive",
                "version": 1,
                "tenant": "alpha",
                "capability": "checkpoints",
                "unit": unit,
                "user_id": "",
                "extra": {"run_ids": run_ids, "value_prefixes": []},
                "chunks": [{"key": chunk_key, "sha256": chunk * 4, "rows": 1}],
            }
            await objects.put(f"{prefix}/manifest.json", json.dumps(manifest).encode())

        for number in range(5):
            await put_history(f"e-{number}", f"{number:016x}", [f"run-{number}"])
        # No kind registered: the lookups only choose (restoring nothing).
        assert not await histories.runs("alpha", ["run-9"])
        assert histories.manifest_reads == 5
        assert not await histories.runs("alpha", ["run-8"])
        assert histories.manifest_reads == 5
        # Archived again (restored and idle again): a new chunk, read again.
        await objects.delete("v1/alpha/checkpoints/e-2/chunk-0000000000000002.ndjson.zst")
        await put_history("e-2", "00000000000000aa", ["run-2", "run-9"])
        assert not await histories.runs("alpha", ["run-9"])
        assert histories.manifest_reads == 6
    finally:
        await storage.close()


def test_a_damaged_or_foreign_blackboard_unit_answers_unavailable(tmp_path: Path) -> None:
    """A manifest that names another tenant's chunk (its sha256 matches:
    only the chunk's header tells), then one that is not JSON: a read at
    an archived revision answers UNAVAILABLE naming the unit (before: the
    other tenant's history, then INTERNAL)."""
    directory = tmp_path / "archive"
    view = ArchiveView(directory=directory)
    args = [*key_args(API_KEYS), "--archive-url", str(directory), "--archive-blackboard-history"]
    process = ServerProcess(tmp_path / "server", extra_args=args)
    process.start()
    try:
        with grpc.insecure_channel(process.address) as channel:
            stub = blackboard_stub(channel)
            for tenant in ("alpha", "beta"):
                last = write_history(stub, tenant)
                stub.CompactBlackboard(
                    bb.CompactBlackboardRequest(revision=last - 3), metadata=auth(tenant)
                )
            [alpha_key] = [k for k in history_keys(view, "alpha") if k.endswith("manifest.json")]
            [beta_key] = [k for k in history_keys(view, "beta") if k.endswith("manifest.json")]
            alpha = json.loads(view.read(alpha_key))
            alpha["chunks"] = json.loads(view.read(beta_key))["chunks"]
            unit = alpha_key.rsplit("/", 1)[0] + "/"
            read = bb.GetEntryRequest(board="plan", key="shared", revision=2)
            for damaged in (json.dumps(alpha).encode(), b"[1, 2"):
                plant(view, alpha_key, damaged)
                code, details = code_and_details(
                    lambda: stub.GetEntry(read, metadata=auth("alpha"), timeout=60)
                )
                assert code == grpc.StatusCode.UNAVAILABLE, (code, details)
                assert unit in details
    finally:
        process.stop()


def history_keys(view: ArchiveView, tenant: str) -> list[str]:
    return [key for key in view.all_keys() if key.startswith(f"v1/{tenant}/blackboard/")]
