"""Checkpoint histories in the archive tier, end to end on a real
`statekeeper serve`: an idle execution's history (every checkpoint but the
newest of each namespace) moves to the object store and comes back, byte
for byte, when a read or an operation needs it; the newest checkpoints stay
hot; values shared with hot checkpoints stay hot; tenants never see each
other's histories; a kill -9 mid-archive loses and duplicates nothing."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, TypedDict

import asyncpg
import grpc
import pytest
from google.protobuf import struct_pb2

from statekeeper_client.v1 import checkpoint_pb2, checkpoint_pb2_grpc, common_pb2
from tests.archive.conftest import ArchiveView, S3Endpoint
from tests.archive.helpers import auth, chunk_lines, erase_user, serve
from tests.archive.test_archive import archive_store, manifests
from tests.harness.backends import EMBEDDED, PRODUCTION, Production, backend
from tests.harness.deadlines import Deadline, wait_until
from tests.harness.deploy import API_KEYS, key_args
from tests.harness.servers import ServerProcess

# A newest checkpoint older than 0.00002 days (1.7 s) is idle; passes every 0.3 s.
ARCHIVE_NOW = ["--archive-checkpoints-after-days", "0.00002", "--archive-interval-seconds", "0.3"]
# The conformance saver's pause before a read (the archiver's idle time is
# 0.086 s and it runs every 0.05 s).
IDLE_SECONDS = 0.15
CP_TABLES = ("cp_checkpoints", "cp_channels", "cp_writes", "cp_blobs")
Stub = checkpoint_pb2_grpc.CheckpointServiceStub


def payload(text: str) -> common_pb2.Payload:
    return common_pb2.Payload(content_type="application/json", data=text.encode())


def save(
    stub: Stub,
    tenant: str,
    execution: str,
    namespace: str,
    checkpoint_id: str,
    parent: str,
    step: int,
    channels: dict[str, tuple[str, str]],
    run_id: str = "",
    user: str = "",
) -> None:
    metadata = struct_pb2.Struct()
    metadata.update({"step": step, "source": "loop", **({"user_id": user} if user else {})})
    stub.SaveCheckpoint(
        checkpoint_pb2.SaveCheckpointRequest(
            checkpoint=checkpoint_pb2.Checkpoint(
                execution_id=execution,
                namespace=namespace,
                checkpoint_id=checkpoint_id,
                parent_checkpoint_id=parent,
                step=step,
                state=payload(f'{{"step": {step}, "ns": "{namespace}"}}'),
                channels={
                    name: checkpoint_pb2.ChannelValue(version=version, value=payload(value))
                    for name, (version, value) in channels.items()
                },
                metadata=metadata,
                run_id=run_id,
            )
        ),
        metadata=auth(tenant),
        timeout=60,
    )


def put_write(stub: Stub, tenant: str, execution: str, namespace: str, checkpoint_id: str) -> None:
    stub.PutWrites(
        checkpoint_pb2.PutWritesRequest(
            execution_id=execution,
            namespace=namespace,
            checkpoint_id=checkpoint_id,
            task_id=f"task-{checkpoint_id}",
            writes=[checkpoint_pb2.WriteInput(index=0, channel="messages", value=payload('"w"'))],
        ),
        metadata=auth(tenant),
        timeout=60,
    )


def make_history(
    stub: Stub, tenant: str, execution: str, steps: int, run: str = "", user: str = ""
) -> list[str]:
    """A thread of `steps` checkpoints in the root namespace and a subgraph
    namespace: a channel shared by every checkpoint (one value), one that
    changes each step, one whose value another execution shares; writes on
    each. Returns the root namespace's ids, oldest first."""
    ids: list[str] = []
    for namespace in ("", "sub:1"):
        parent = ""
        for step in range(steps):
            checkpoint_id = f"{execution}-{namespace or 'root'}-{step:03d}"
            channels = {
                "constant": ("1", '"the same value"'),
                "messages": (str(step + 1), f'["{tenant} {execution} {namespace} {step}"]'),
                "shared": ("1", f'"shared by every execution of {tenant}, step {step}"'),
            }
            save(
                stub, tenant, execution, namespace, checkpoint_id, parent, step, channels, run, user
            )
            put_write(stub, tenant, execution, namespace, checkpoint_id)
            parent = checkpoint_id
            if not namespace:
                ids.append(checkpoint_id)
    return ids


def everything(stub: Stub, tenant: str, execution: str) -> list[bytes]:
    """All the API shows of an execution (restores its history if archived)."""
    listed = stub.ListCheckpoints(
        checkpoint_pb2.ListCheckpointsRequest(execution_id=execution, page_size=1000),
        metadata=auth(tenant),
        timeout=60,
    ).checkpoints
    return [item.SerializeToString(deterministic=True) for item in listed]


def get(stub: Stub, tenant: str, execution: str, namespace: str, checkpoint_id: str) -> bytes:
    reply = stub.GetCheckpoint(
        checkpoint_pb2.GetCheckpointRequest(
            execution_id=execution, namespace=namespace, checkpoint_id=checkpoint_id
        ),
        metadata=auth(tenant),
        timeout=60,
    )
    return bytes(reply.checkpoint.SerializeToString(deterministic=True))


def db_rows(server: ServerProcess, where: Production | None) -> dict[str, list[Any]]:
    """The checkpoint tables' rows, read from the database itself."""
    if where is None:
        path = server.data_dir / "statekeeper.sqlite3"
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return {
                t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in CP_TABLES
            }
        finally:
            db.close()

    async def query() -> dict[str, list[Any]]:
        conn = await asyncpg.connect(where.postgres_dsn)
        try:
            return {
                t: sorted(
                    (tuple(r.values()) for r in await conn.fetch(f"SELECT * FROM {t}")), key=repr
                )
                for t in CP_TABLES
            }
        finally:
            await conn.close()

    return asyncio.run(query())


def hot_ids(server: ServerProcess, where: Production | None) -> set[tuple[str, str, str, str]]:
    rows = db_rows(server, where)["cp_checkpoints"]
    return {(row[0], row[1], row[2], row[3]) for row in rows}


class Total(TypedDict):
    total: int


def history_manifests(view: ArchiveView) -> list[str]:
    return [key for key in manifests(view) if "/checkpoints/" in key]


@pytest.mark.parametrize(
    ("backend_name", "store"),
    [(EMBEDDED, "local"), (PRODUCTION, "local"), (PRODUCTION, "s3")],
)
def test_history_archived_and_read_back_byte_for_byte(
    backend_name: str, store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    s3: S3Endpoint | None = request.getfixturevalue("s3") if store == "s3" else None
    with (
        backend(backend_name, "cparch") as where,
        archive_store(store, tmp_path, s3) as (store_args, env, view),
    ):
        base = [*(where.serve_args() if where else []), *key_args(API_KEYS), *store_args]
        server = ServerProcess(tmp_path / "server", env=env, extra_args=base)
        server.start()
        try:
            with grpc.insecure_channel(server.address) as channel:
                stub = Stub(channel)  # type: ignore[no-untyped-call]
                ids = {}
                for tenant in ("alpha", "beta"):
                    for execution in ("t-1", "t 2/ü"):  # the same ids in both tenants
                        ids[tenant, execution] = make_history(stub, tenant, execution, 4, "run-1")
                before = {key: everything(stub, *key) for key in ids}
            rows_before = db_rows(server, where)

            serve(server, [*base, *ARCHIVE_NOW])
            wait_until(
                lambda: len(history_manifests(view)) == len(ids),
                120,
                "every history archived",
                lambda: f"{view.all_keys()}\n{server.log_tail()}",
            )
            # The newest checkpoint of each namespace stays hot, nothing else.
            expected_hot = {
                (tenant, execution, namespace, f"{execution}-{namespace or 'root'}-003")
                for tenant, execution in ids
                for namespace in ("", "sub:1")
            }
            wait_until(lambda: hot_ids(server, where) == expected_hot, 60, "only newest hot")
            rows_archived = db_rows(server, where)
            # Values the newest checkpoints reference stay hot (shared).
            hashes_hot = {row[-1] for row in rows_archived["cp_channels"]}
            assert {row[1] for row in rows_archived["cp_blobs"]} == hashes_hot
            for key in view.all_keys():
                if "/chunk-" in key:
                    lines = chunk_lines(view.read(key))
                    tenant = key.split("/")[1]
                    assert lines[0]["tenant"] == tenant
                    assert lines[-1]["counts"]["cp_checkpoints"] == 6

            serve(server, base)  # archiver off: reads restore
            with grpc.insecure_channel(server.address) as channel:
                stub = Stub(channel)  # type: ignore[no-untyped-call]
                # The newest checkpoint reads without a restore.
                newest = stub.GetCheckpoint(
                    checkpoint_pb2.GetCheckpointRequest(execution_id="t-1"),
                    metadata=auth("alpha"),
                    timeout=60,
                ).checkpoint
                assert newest.checkpoint_id == "t-1-root-003"
                assert len(history_manifests(view)) == len(ids)
                # An archived id brings beta's t-1 back, and only it.
                old = get(stub, "beta", "t-1", "", ids["beta", "t-1"][0])
                assert old in before["beta", "t-1"]
                assert len(history_manifests(view)) == len(ids) - 1
                assert not any("/beta/checkpoints/t-1/" in k for k in view.all_keys())
                for key in ids:
                    assert everything(stub, *key) == before[key], key
                assert history_manifests(view) == []
            assert db_rows(server, where) == rows_before
        finally:
            server.stop()


@pytest.fixture
def archiving_server(tmp_path: Path) -> Iterator[tuple[ServerProcess, ArchiveView, list[str]]]:
    """An embedded server with a local archive, archiver off (`serve` it
    with ARCHIVE_NOW to archive)."""
    directory = tmp_path / "archive"
    base = [*key_args(API_KEYS), "--archive-url", str(directory)]
    server = ServerProcess(tmp_path / "server", extra_args=base)
    server.start()
    try:
        yield server, ArchiveView(directory=directory), base
    finally:
        server.stop()


def archive_all(server: ServerProcess, view: ArchiveView, base: list[str], units: int) -> None:
    serve(server, [*base, *ARCHIVE_NOW])
    # Done when the archiver says so: a manifest is written before the hot
    # rows are deleted, and a restart in between leaves the history hot (the
    # repair at start then removes the objects).
    wait_until(
        lambda: len(history_manifests(view)) == units and archived_units(server) >= units,
        120,
        f"{units} histories archived",
        lambda: f"{view.all_keys()}\n{server.log_tail()}",
    )
    serve(server, base)


def archived_units(server: ServerProcess) -> int:
    """Histories this run of the server has archived, from its log."""
    return sum(
        int(json.loads(line).get("units", 0))
        for line in server.log().splitlines()
        if line.startswith("{") and '"archived a batch of checkpoints"' in line
    )


def test_operations_on_archived_histories(
    archiving_server: tuple[ServerProcess, ArchiveView, list[str]],
) -> None:
    server, view, base = archiving_server
    executions = (
        *("copy-me", "delete-me", "runs", "prune-me", "writes", "values", "saves", "gone"),
        "by-run",
    )
    with grpc.insecure_channel(server.address) as channel:
        stub = Stub(channel)  # type: ignore[no-untyped-call]
        ids = {e: make_history(stub, "alpha", e, 3, run=f"run-{e}") for e in executions}
        save(stub, "alpha", "gone", "", "gone-newest", "gone-root-002", 3, {}, run_id="run-newest")
        before = {e: everything(stub, "alpha", e) for e in executions}
        oldest = checkpoint_pb2.Checkpoint.FromString(before["values"][-1])
        hashes = {name: entry.content_hash for name, entry in oldest.channels.items()}
    archive_all(server, view, base, len(executions))
    meta = auth("alpha")
    with grpc.insecure_channel(server.address) as channel:
        stub = Stub(channel)  # type: ignore[no-untyped-call]
        # A tenant-wide listing of one run restores the histories holding it.
        by_run = stub.ListCheckpoints(
            checkpoint_pb2.ListCheckpointsRequest(run_id="run-by-run", page_size=100),
            metadata=meta,
            timeout=60,
        ).checkpoints
        assert len(by_run) == 6
        assert len(history_manifests(view)) == len(executions) - 1

        # CopyExecution copies the whole history.
        copied = stub.CopyExecution(
            checkpoint_pb2.CopyExecutionRequest(
                source_execution_id="copy-me", target_execution_id="copy"
            ),
            metadata=meta,
            timeout=60,
        )
        assert copied.copied_checkpoints == 6
        assert len(everything(stub, "alpha", "copy")) == 6

        # DeleteExecution leaves no archived copy; the deleted ids are final.
        deleted = stub.DeleteExecution(
            checkpoint_pb2.DeleteExecutionRequest(execution_id="delete-me"),
            metadata=meta,
            timeout=60,
        )
        assert deleted.deleted_checkpoints == 6
        assert not any("/delete-me/" in key for key in view.all_keys())
        with pytest.raises(grpc.RpcError) as refused:
            put_write(stub, "alpha", "delete-me", "", ids["delete-me"][0])
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION

        # DeleteRuns finds the run in the archived history.
        runs = stub.DeleteRuns(
            checkpoint_pb2.DeleteRunsRequest(run_ids=["run-runs"]), metadata=meta, timeout=60
        )
        assert runs.deleted_checkpoints == 6
        assert everything(stub, "alpha", "runs") == []

        # The newest checkpoint deleted (its run is not in the archived
        # history): the namespace's newest is then the archived one before it.
        stub.DeleteRuns(
            checkpoint_pb2.DeleteRunsRequest(run_ids=["run-newest"]), metadata=meta, timeout=60
        )
        assert any("/gone/" in key for key in view.all_keys())
        newest = stub.GetCheckpoint(
            checkpoint_pb2.GetCheckpointRequest(execution_id="gone"), metadata=meta, timeout=60
        )
        assert newest.checkpoint.checkpoint_id == "gone-root-002"

        # PruneCheckpoints counts and removes the archived checkpoints too.
        pruned = stub.PruneCheckpoints(
            checkpoint_pb2.PruneCheckpointsRequest(execution_ids=["prune-me"], keep_last=2),
            metadata=meta,
            timeout=60,
        )
        assert pruned.deleted_checkpoints == 2
        assert len(everything(stub, "alpha", "prune-me")) == 4

        # A write against an archived checkpoint restores it first.
        put_write(stub, "alpha", "writes", "sub:1", ids["writes"][0].replace("root", "sub:1"))
        assert not any("/writes/" in key for key in view.all_keys())

        # Values only the archived history references come back by hash.
        values = stub.GetChannelValues(
            checkpoint_pb2.GetChannelValuesRequest(content_hashes=[hashes["messages"]]),
            metadata=meta,
            timeout=60,
        )
        assert list(values.missing_hashes) == []
        assert not any("/values/" in key for key in view.all_keys())
        assert everything(stub, "alpha", "values") == before["values"]

        # A checkpoint saved after the archive, one reusing an archived id,
        # then the restore: the new ones stay as saved, the history returns.
        save(stub, "alpha", "saves", "", "saves-new", "saves-root-002", 3, {"n": ("1", '"new"')})
        save(stub, "alpha", "saves", "", "saves-root-000", "", 0, {"n": ("1", '"again"')})
        listed = [
            checkpoint_pb2.Checkpoint.FromString(raw) for raw in everything(stub, "alpha", "saves")
        ]
        assert len(listed) == 7
        again = next(item for item in listed if item.checkpoint_id == "saves-root-000")
        assert again.channels["n"].value.data == b'"again"'
        assert {item.checkpoint_id for item in listed} >= set(ids["saves"])
    assert history_manifests(view) == [], "every history was restored by its operation"


def test_saver_history_archived_and_read_back(
    archiving_server: tuple[ServerProcess, ArchiveView, list[str]],
) -> None:
    """A LangGraph graph's thread through StatekeeperSaver: after its history
    is archived, the saver lists and gets it as before and resumes it."""
    graph_lib = pytest.importorskip("langgraph.graph")
    saver_lib = pytest.importorskip("statekeeper_client.langgraph")
    server, view, base = archiving_server
    saver = saver_lib.StatekeeperSaver(server.address, api_key="key-alpha")

    def add(state: Total) -> dict[str, Any]:
        return {"total": state["total"] + 1}

    builder = graph_lib.StateGraph(Total)
    builder.add_node("add", add)
    builder.add_edge(graph_lib.START, "add")
    builder.add_edge("add", graph_lib.END)
    try:
        graph = builder.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "saver-thread"}}
        for _ in range(3):
            graph.invoke({"total": 0}, config)
        history = [
            (t.config, t.checkpoint, t.metadata, t.pending_writes) for t in saver.list(config)
        ]
        assert len(history) >= 6
        oldest = history[-1][0]
        archive_all(server, view, base, 1)
        # The saver's client reconnects to the restarted server.
        assert saver.get_tuple(oldest).checkpoint == history[-1][1]
        again = [(t.config, t.checkpoint, t.metadata, t.pending_writes) for t in saver.list(config)]
        assert again == history
        assert graph.invoke({"total": 10}, config)["total"] == 11
    finally:
        saver.close()


def test_tenant_isolation(archiving_server: tuple[ServerProcess, ArchiveView, list[str]]) -> None:
    server, view, base = archiving_server
    with grpc.insecure_channel(server.address) as channel:
        stub = Stub(channel)  # type: ignore[no-untyped-call]
        make_history(stub, "alpha", "same", 3)
        beta = make_history(stub, "beta", "other", 3)
        make_history(stub, "beta", "mine", 3, user="u1")
        # Only its newest checkpoint (which stays hot) names the user.
        make_history(stub, "beta", "late", 3)
        save(stub, "beta", "late", "", "late-newest", "late-root-002", 3, {}, user="u2")
    archive_all(server, view, base, 4)
    with grpc.insecure_channel(server.address) as channel:
        stub = Stub(channel)  # type: ignore[no-untyped-call]
        # alpha asks for beta's archived checkpoint by id: not found, and
        # beta's history stays archived.
        with pytest.raises(grpc.RpcError) as missing:
            get(stub, "alpha", "other", "", beta[0])
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND
        # alpha's tenant-wide listing restores alpha's histories only.
        listed = stub.ListCheckpoints(
            checkpoint_pb2.ListCheckpointsRequest(page_size=1000),
            metadata=auth("alpha"),
            timeout=60,
        ).checkpoints
        assert {item.execution_id for item in listed} == {"same"}
        assert len(listed) == 6
        assert [key for key in history_manifests(view) if "/alpha/" in key] == []
        assert len([key for key in history_manifests(view) if "/beta/" in key]) == 3

        # An execution whose checkpoints name one user is that user's:
        # EraseUser removes its archived history with the hot rows.
        for user, execution in (("u1", "mine"), ("u2", "late")):
            assert f"v1/beta/users/{user}/checkpoints/{execution}" in view.all_keys()
            erase_user(channel, "beta", user)
            assert not any(f"/{execution}/" in key for key in view.all_keys())
            assert not any(f"/{user}/" in key for key in view.all_keys())
            assert everything(stub, "beta", execution) == []
        assert len(everything(stub, "beta", "other")) == 6


class Writer(threading.Thread):
    """Saves new checkpoints to existing threads and writes against their
    oldest checkpoint (which the archiver may be archiving, or have
    archived), retrying each until acknowledged (idempotent: a replayed
    save replaces with the same content, a replayed write is a duplicate)."""

    def __init__(self, address: str, executions: list[str], stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.address = address
        self.executions = executions
        self.stop = stop
        self.saved: dict[str, list[str]] = {}
        self.tasks: dict[str, list[str]] = {}
        self.error: BaseException | None = None

    def run(self) -> None:
        rng = random.Random(7)
        number = 0
        try:
            while not self.stop.is_set():  # bounded by the test's stop event
                execution = rng.choice(self.executions)
                checkpoint_id = f"{execution}-late-{number:04d}"
                number += 1
                self._retried(partial(late_save, execution=execution, checkpoint_id=checkpoint_id))
                self.saved.setdefault(execution, []).append(checkpoint_id)
                task = f"late-{number:04d}"
                self._retried(partial(old_write, execution=execution, task=task))
                self.tasks.setdefault(execution, []).append(task)
                time.sleep(rng.uniform(0.05, 0.2))
        except BaseException as exc:
            self.error = exc

    def _retried(self, call: Callable[[Stub], object]) -> None:
        deadline = Deadline(120)
        while True:  # bounded by the deadline
            try:
                with grpc.insecure_channel(self.address) as channel:
                    call(Stub(channel))  # type: ignore[no-untyped-call]
                return
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.UNAVAILABLE or deadline.expired():
                    raise
                time.sleep(0.2)


def late_save(stub: Stub, execution: str, checkpoint_id: str) -> None:
    save(stub, "alpha", execution, "", checkpoint_id, "", 9, {"n": ("9", '"late"')})


def old_write(stub: Stub, execution: str, task: str) -> None:
    stub.PutWrites(
        checkpoint_pb2.PutWritesRequest(
            execution_id=execution,
            checkpoint_id=f"{execution}-root-000",
            task_id=task,
            writes=[checkpoint_pb2.WriteInput(index=0, channel="late", value=payload('"w"'))],
        ),
        metadata=auth("alpha"),
        timeout=60,
    )


def oldest_tasks(stub: Stub, execution: str) -> list[str]:
    reply = stub.GetCheckpoint(
        checkpoint_pb2.GetCheckpointRequest(
            execution_id=execution, checkpoint_id=f"{execution}-root-000"
        ),
        metadata=auth("alpha"),
        timeout=60,
    )
    return [write.task_id for write in reply.checkpoint.pending_writes]


@pytest.mark.parametrize("backend_name", [EMBEDDED, PRODUCTION])
def test_kill_mid_archive_loses_and_duplicates_nothing(backend_name: str, tmp_path: Path) -> None:
    with backend(backend_name, "cpkill") as where:
        directory = tmp_path / "archive"
        base = [*(where.serve_args() if where else []), *key_args(API_KEYS)]
        base += ["--archive-url", str(directory)]
        kill_mid_archive(ServerProcess(tmp_path / "server", extra_args=base), base, directory)


def kill_mid_archive(server: ServerProcess, base: list[str], directory: Path) -> None:
    view = ArchiveView(directory=directory)
    server.start()
    try:
        executions = [f"e-{number:02d}" for number in range(25)]
        with grpc.insecure_channel(server.address) as channel:
            stub = Stub(channel)  # type: ignore[no-untyped-call]
            for execution in executions:
                make_history(stub, "alpha", execution, 3)
        stop = threading.Event()
        writer = Writer(server.address, executions[::5], stop)
        server.stop()
        server.extra_args = [*base, *ARCHIVE_NOW, "--archive-batch-size", "3"]
        time.sleep(2)  # every history idle
        for kill in range(3):
            server.start()
            if kill == 0:
                writer.start()
            wait_until(
                lambda: "archived a batch of checkpoints" in server.log(),
                120,
                "a batch archived",
                server.log_tail,
            )
            time.sleep(random.uniform(0, 0.3))
            server.kill()
        server.extra_args = base
        server.start()
        stop.set()
        writer.join(timeout=180)
        assert writer.error is None, writer.error
        with grpc.insecure_channel(server.address) as channel:
            stub = Stub(channel)  # type: ignore[no-untyped-call]
            for execution in executions:
                listed = [
                    checkpoint_pb2.Checkpoint.FromString(raw).checkpoint_id
                    for raw in everything(stub, "alpha", execution)
                ]
                expected = [
                    f"{execution}-{ns}-{step:03d}" for ns in ("root", "sub:1") for step in range(3)
                ] + writer.saved.get(execution, [])
                assert sorted(listed) == sorted(expected), execution
                tasks = [f"task-{execution}-root-000", *writer.tasks.get(execution, [])]
                assert sorted(oldest_tasks(stub, execution)) == sorted(tasks), execution
        # Every history restored by its listing; repair removed what a kill left.
        assert history_manifests(view) == []
    finally:
        server.stop()


def test_langgraph_conformance_suite_with_archiving_on(tmp_path: Path) -> None:
    """LangGraph's checkpointer conformance suite against a server whose
    archiver moves every history out as soon as it is 0.1 s idle, so the
    suite's reads keep meeting archived histories."""
    conformance = pytest.importorskip("langgraph.checkpoint.conformance")
    saver_lib = pytest.importorskip("statekeeper_client.langgraph")
    directory = tmp_path / "archive"
    args = [
        *key_args(API_KEYS),
        "--archive-url",
        str(directory),
        "--archive-checkpoints-after-days",
        "0.000001",
        "--archive-interval-seconds",
        "0.05",
    ]
    server = ServerProcess(tmp_path / "server", extra_args=args)
    server.start()
    try:

        class IdleSaver(saver_lib.StatekeeperSaver):  # type: ignore[misc,name-defined]
            """Pauses before each read, long enough for the archiver to move
            the history out (the suite writes, then reads at once)."""

            async def aget_tuple(self, config: Any) -> Any:
                await asyncio.sleep(IDLE_SECONDS)
                return await super().aget_tuple(config)

            async def alist(self, config: Any, **kwargs: Any) -> Any:
                await asyncio.sleep(IDLE_SECONDS)
                async for item in super().alist(config, **kwargs):
                    yield item

        @conformance.checkpointer_test(name="StatekeeperSaver")
        async def statekeeper_saver() -> Any:
            saver = IdleSaver(server.address, api_key="key-alpha")
            yield saver
            await saver.aclose()

        report = asyncio.run(conformance.validate(statekeeper_saver))
        failures = {n: r.failures for n, r in report.results.items() if r.failures}
        assert failures == {}
        assert report.conformance_level() == "FULL"
        assert "archived a batch of checkpoints" in server.log()
        # The suite's reads met archived histories and brought them back.
        assert "restored an archived unit" in server.log()
    finally:
        server.stop()


def test_sealed_history_stays_sealed_in_the_archive(tmp_path: Path) -> None:
    """A sensitive tenant's history is archived as stored (sealed) and
    reads back in the clear once restored."""
    keys = tmp_path / "keys"
    keys.write_text(f"k1 {base64.b64encode(os.urandom(32)).decode()}\n")
    keys.chmod(0o600)
    directory = tmp_path / "archive"
    base = [
        *key_args(API_KEYS),
        "--archive-url",
        str(directory),
        "--encryption-keys-file",
        str(keys),
        "--sensitive-tenant",
        "alpha",
    ]
    view = ArchiveView(directory=directory)
    server = ServerProcess(tmp_path / "server", extra_args=base)
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = Stub(channel)  # type: ignore[no-untyped-call]
            make_history(stub, "alpha", "secret", 3)
            before = everything(stub, "alpha", "secret")
        assert b"alpha secret" in b"".join(before)  # the API shows plaintext
        archive_all(server, view, base, 1)
        chunks = [key for key in view.all_keys() if "/chunk-" in key]
        assert len(chunks) == 1
        values = [
            base64.b64decode(value["b64"]) if isinstance(value, dict) else str(value).encode()
            for line in chunk_lines(view.read(chunks[0]))[1:-1]
            for value in line["r"]
        ]
        assert any(b"~sk1" in value for value in values)  # sealed tokens
        assert not any(b"alpha secret" in value for value in values)
        with grpc.insecure_channel(server.address) as channel:
            stub = Stub(channel)  # type: ignore[no-untyped-call]
            assert everything(stub, "alpha", "secret") == before
    finally:
        server.stop()
