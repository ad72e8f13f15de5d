"""Races between restores, erasures, deletes and the archiver, made to happen
on purpose: an in-process server whose object store calls are held at the
racy point (the store itself is the real local-directory one).

Each case once brought data back that was erased or deleted, or failed a
read that had nothing wrong with it; the used-up chunk record
(storage/archive/fences.py) is what closes them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

from statekeeper.core.errors import StorageUnavailableError
from statekeeper_client.v1 import (
    checkpoint_pb2,
    checkpoint_pb2_grpc,
    memory_pb2,
    session_pb2,
    session_pb2_grpc,
)
from tests.archive.helpers import auth, erase_user, make_session
from tests.archive.test_checkpoint_archive import save
from tests.archive.test_episode_archive import listing, memory, record
from tests.harness.deadlines import wait_until
from tests.harness.deploy import API_KEYS
from tests.harness.inproc import in_process_statekeeper, settings_for

# Everything idle at once; passes often.
SOON = 0.00002


def archiving(tmp_path: Path, **policy: float) -> Any:
    settings = settings_for(
        tmp_path / "data",
        None,
        API_KEYS,
        embedder_kind="none",
        archive_url=str(tmp_path / "archive"),
        archive_interval_seconds=0.3,
        **policy,
    )
    return in_process_statekeeper(settings)


def archived(tmp_path: Path, pattern: str) -> None:
    directory = tmp_path / "archive"
    wait_until(lambda: list(directory.rglob(pattern)), 60, f"{pattern} archived")


async def until(event: threading.Event) -> None:
    while not event.is_set():  # bounded by the test's own waits
        await asyncio.sleep(0.01)


def code_of(call: Callable[[], object]) -> str:
    try:
        call()
    except grpc.RpcError as exc:
        return str(exc.code().name)
    return "OK"


def test_a_restore_that_read_the_chunk_before_an_erasure_inserts_nothing(
    tmp_path: Path,
) -> None:
    with archiving(tmp_path, archive_episodes_after_days=SOON) as srv:
        archive = srv.server.archive
        with grpc.insecure_channel(srv.address) as channel:
            stub = memory(channel)
            for n in range(3):
                record(stub, "alpha", "u1", n)
            archived(tmp_path, "episodes/u1/manifest.json")
            # The restore of a ListEpisodes holds its chunk until the
            # erasure has removed the objects and the hot rows.
            real_get = archive.objects.get
            entered, release = threading.Event(), threading.Event()

            async def get(key: str) -> bytes | None:
                data = await real_get(key)
                if "/episodes/u1/chunk-" in key and not release.is_set():
                    entered.set()
                    await until(release)
                return data

            archive.objects.get = get
            reader = threading.Thread(target=lambda: listing(stub, "alpha", "u1"))
            reader.start()
            assert entered.wait(30)
            erase_user(channel, "alpha", "u1")
            release.set()
            reader.join(60)
            archive.objects.get = real_get
            assert listing(stub, "alpha", "u1") == []


def test_delete_runs_racing_the_archiver_deletes_the_whole_run(tmp_path: Path) -> None:
    with archiving(tmp_path, archive_checkpoints_after_days=SOON) as srv:
        archive = srv.server.archive
        manager = next(c.checkpoints for c in srv.server.capabilities if hasattr(c, "checkpoints"))
        kind = archive.kinds["checkpoints"]
        written, go, deleted = threading.Event(), threading.Event(), threading.Event()
        real_put, real_delete_hot = archive.objects.put, kind.delete_hot
        real_runs = manager.histories.runs

        async def put(key: str, data: bytes) -> None:
            await real_put(key, data)
            if key.endswith("checkpoints/x1/manifest.json") and not go.is_set():
                written.set()
                await until(go)  # the archiver, between its manifest and its delete

        async def delete_hot(tenant: str, unit: str, exported: Any) -> bool | None:
            result = await real_delete_hot(tenant, unit, exported)
            if unit == "x1":
                deleted.set()
            return result

        async def runs(tenant: str, run_ids: Any) -> Any:
            restored = await real_runs(tenant, run_ids)  # finds x1 still hot
            go.set()
            await until(deleted)  # the archiver's delete comes before DeleteRuns'
            return restored

        archive.objects.put, kind.delete_hot, manager.histories.runs = put, delete_hot, runs
        with grpc.insecure_channel(srv.address) as channel:
            stub = checkpoint_pb2_grpc.CheckpointServiceStub(channel)  # type: ignore[no-untyped-call]
            parent = ""
            for step in range(3):
                values = {"m": (str(step + 1), f'"{step}"')}
                save(stub, "alpha", "x1", "", f"c{step}", parent, step, values, run_id="r1")
                parent = f"c{step}"
            assert written.wait(60)
            stub.DeleteRuns(
                checkpoint_pb2.DeleteRunsRequest(run_ids=["r1"]), metadata=auth("alpha"), timeout=60
            )
            listed = stub.ListCheckpoints(
                checkpoint_pb2.ListCheckpointsRequest(execution_id="x1", page_size=100),
                metadata=auth("alpha"),
                timeout=60,
            ).checkpoints
            assert [c.checkpoint_id for c in listed] == []


def test_a_restore_whose_cleanup_failed_does_not_bring_a_deleted_session_back(
    tmp_path: Path,
) -> None:
    with archiving(tmp_path, archive_sessions_after_days=SOON) as srv:
        archive = srv.server.archive
        with grpc.insecure_channel(srv.address) as channel:
            stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
            make_session(stub, "alpha", "s1", "u1", 2)
            archived(tmp_path, "sessions/s1/manifest.json")
            real_delete = archive.objects.delete
            failed: list[str] = []

            async def delete(key: str) -> None:
                if key.endswith("sessions/s1/manifest.json") and not failed:
                    failed.append(key)
                    raise StorageUnavailableError("the object store timed out")
                await real_delete(key)

            def get() -> object:
                return stub.GetSession(
                    session_pb2.GetSessionRequest(session_id="s1"),
                    metadata=auth("alpha"),
                    timeout=30,
                )

            archive.objects.delete = delete
            # The restore's rows went in; removing its objects failed.
            assert code_of(get) == "UNAVAILABLE"
            archive.objects.delete = real_delete
            stub.DeleteSession(
                session_pb2.DeleteSessionRequest(session_id="s1"), metadata=auth("alpha")
            )
            assert code_of(get) == "NOT_FOUND"
            srv.call(archive.repair())
            assert code_of(get) == "NOT_FOUND"
            assert not list((tmp_path / "archive").rglob("sessions/s1/*"))


def test_damaged_manifests_answer_unavailable_and_repair_goes_on(tmp_path: Path) -> None:
    with archiving(tmp_path, archive_episodes_after_days=SOON) as srv:
        for capability, unit in (("sessions", "bad"), ("episodes", "ux")):
            path = tmp_path / "archive" / "v1" / "alpha" / capability / unit / "manifest.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b'{"format": "statekeeper-arch')  # cut short
        with grpc.insecure_channel(srv.address) as channel:
            sessions = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
            got = code_of(
                lambda: sessions.GetSession(
                    session_pb2.GetSessionRequest(session_id="bad"),
                    metadata=auth("alpha"),
                    timeout=30,
                )
            )
            assert got == "UNAVAILABLE"
            assert (
                code_of(
                    lambda: memory(channel).GetEpisode(
                        memory_pb2.GetEpisodeRequest(episode_id="e-nope"),
                        metadata=auth("alpha"),
                        timeout=30,
                    )
                )
                != "INTERNAL"
            )
        srv.call(srv.server.archive.repair())  # does not raise
        # Left for an operator, whole.
        assert (tmp_path / "archive/v1/alpha/sessions/bad/manifest.json").exists()


def test_two_restores_of_one_unit_both_succeed(tmp_path: Path) -> None:
    with archiving(tmp_path, archive_sessions_after_days=SOON) as srv:
        archive = srv.server.archive
        with grpc.insecure_channel(srv.address) as channel:
            stub = session_pb2_grpc.SessionServiceStub(channel)  # type: ignore[no-untyped-call]
            make_session(stub, "alpha", "s1", "u1", 1)
        archived(tmp_path, "sessions/s1/manifest.json")

        async def race() -> tuple[bool, bool]:
            # Two replicas (two processes' locks): B reads the manifest,
            # then waits to read the chunk until A restored and cleaned up.
            kind = archive.kinds["sessions"]
            real_get = archive.objects.get
            first_done = asyncio.Event()

            async def get(key: str) -> bytes | None:
                task = asyncio.current_task()
                if "/chunk-" in key and task is not None and task.get_name() == "replica-b":
                    await first_done.wait()
                return await real_get(key)

            archive.objects.get = get
            try:
                b = asyncio.create_task(
                    archive._restore_unit(kind, "alpha", "s1"), name="replica-b"
                )
                await asyncio.sleep(0.05)
                a = await archive._restore_unit(kind, "alpha", "s1")
                first_done.set()
                return a, await b
            finally:
                archive.objects.get = real_get

        assert srv.call(race()) == (True, False)
