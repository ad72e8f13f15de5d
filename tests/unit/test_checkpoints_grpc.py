"""CheckpointService over real gRPC: the servicer behind the real
DomainInterceptor, on loopback. Checks the wire contract: codes, ErrorInfo
reasons and conditions, field names, tenancy."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import struct_pb2, timestamp_pb2

from statekeeper.core.audit.models import AuditFilter
from statekeeper.core.tenancy import key_id
from statekeeper_client.v1 import checkpoint_pb2 as pb
from statekeeper_client.v1 import checkpoint_pb2_grpc, common_pb2
from tests.e2e.errors import bad_field, error_info
from tests.langgraph.harness import CheckpointServer

ALPHA = (("x-api-key", "key-alpha"),)
BETA = (("x-api-key", "key-beta"),)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[CheckpointServer]:
    running = CheckpointServer(tmp_path, api_keys={"key-alpha": "alpha", "key-beta": "beta"})
    running.start()
    yield running
    running.stop()


@pytest.fixture
async def stub(
    server: CheckpointServer,
) -> AsyncIterator[checkpoint_pb2_grpc.CheckpointServiceStub]:
    async with grpc.aio.insecure_channel(server.address) as channel:
        yield checkpoint_pb2_grpc.CheckpointServiceStub(channel)  # type: ignore[no-untyped-call]


def text(value: str) -> common_pb2.Payload:
    return common_pb2.Payload(content_type="text/plain", data=value.encode())


def checkpoint(
    checkpoint_id: str, parent: str = "", seconds: int = 100, **kw: object
) -> pb.Checkpoint:
    metadata = struct_pb2.Struct()
    metadata.update({"source": "loop", "step": 1})
    return pb.Checkpoint(
        execution_id=str(kw.get("execution_id", "thread-1")),
        namespace=str(kw.get("namespace", "")),
        checkpoint_id=checkpoint_id,
        parent_checkpoint_id=parent,
        state=common_pb2.Payload(content_type="application/json", schema_version=1, data=b"{}"),
        channels=kw.get("channels", {"messages": pb.ChannelValue(version="1", value=text("hi"))}),  # type: ignore[arg-type]
        metadata=metadata,
        create_time=timestamp_pb2.Timestamp(seconds=seconds),
    )


async def save(
    stub: checkpoint_pb2_grpc.CheckpointServiceStub, cp: pb.Checkpoint, **kw: object
) -> pb.SaveCheckpointResponse:
    request = pb.SaveCheckpointRequest(checkpoint=cp, **kw)  # type: ignore[arg-type]
    return await stub.SaveCheckpoint(request, metadata=ALPHA)  # type: ignore[no-any-return]


async def test_calls_need_credentials(stub: checkpoint_pb2_grpc.CheckpointServiceStub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await stub.GetCheckpoint(pb.GetCheckpointRequest(execution_id="x"))
    assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_save_get_list_round_trip(stub: checkpoint_pb2_grpc.CheckpointServiceStub) -> None:
    saved = await save(stub, checkpoint("c1"))
    assert saved.checkpoint_id == "c1" and saved.sequence == 1 and not saved.replaced
    await save(
        stub,
        checkpoint(
            "c2", parent="c1", seconds=200, channels={"messages": pb.ChannelValue(version="1")}
        ),
    )
    await stub.PutWrites(
        pb.PutWritesRequest(
            execution_id="thread-1",
            checkpoint_id="c2",
            task_id="task",
            task_path="~a",
            writes=[pb.WriteInput(index=0, channel="messages", value=text("w"))],
        ),
        metadata=ALPHA,
    )
    got = (
        await stub.GetCheckpoint(pb.GetCheckpointRequest(execution_id="thread-1"), metadata=ALPHA)
    ).checkpoint
    assert got.checkpoint_id == "c2" and got.parent_checkpoint_id == "c1"
    assert got.channels["messages"].value.data == b"hi", "value reused by version"
    assert got.metadata["step"] == 1 and got.create_time.seconds == 200
    assert [(w.task_id, w.task_path, w.value.data) for w in got.pending_writes] == [
        ("task", "~a", b"w")
    ]
    listed = await stub.ListCheckpoints(
        pb.ListCheckpointsRequest(execution_id="thread-1", page_size=1), metadata=ALPHA
    )
    assert [c.checkpoint_id for c in listed.checkpoints] == ["c2"] and listed.next_page_token
    rest = await stub.ListCheckpoints(
        pb.ListCheckpointsRequest(
            execution_id="thread-1", page_size=1, page_token=listed.next_page_token
        ),
        metadata=ALPHA,
    )
    assert [c.checkpoint_id for c in rest.checkpoints] == ["c1"]


async def test_values_can_be_omitted_and_fetched_by_hash(
    stub: checkpoint_pb2_grpc.CheckpointServiceStub,
) -> None:
    await save(stub, checkpoint("c1"))
    got = (
        await stub.GetCheckpoint(
            pb.GetCheckpointRequest(execution_id="thread-1", omit_channel_values=True),
            metadata=ALPHA,
        )
    ).checkpoint
    channel = got.channels["messages"]
    assert not channel.HasField("value") and len(channel.content_hash) == 64
    fetched = await stub.GetChannelValues(
        pb.GetChannelValuesRequest(content_hashes=[channel.content_hash, "0" * 64]), metadata=ALPHA
    )
    assert fetched.values[channel.content_hash].data == b"hi"
    assert list(fetched.missing_hashes) == ["0" * 64]


async def test_invalid_input_names_the_field(
    stub: checkpoint_pb2_grpc.CheckpointServiceStub,
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await save(stub, checkpoint("c1", execution_id=""))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert bad_field(error.value) == "checkpoint.execution_id"
    with pytest.raises(grpc.aio.AioRpcError) as both:
        await save(
            stub,
            checkpoint(
                "c1",
                channels={
                    "a": pb.ChannelValue(version="1", value=text("x"), content_hash="0" * 64)
                },
            ),
        )
    assert bad_field(both.value) == "checkpoint.channels['a']"
    with pytest.raises(grpc.aio.AioRpcError) as token:
        await stub.ListCheckpoints(pb.ListCheckpointsRequest(page_token="%%%"), metadata=ALPHA)
    assert bad_field(token.value) == "page_token"


async def test_oversized_batches_are_resource_exhausted(
    stub: checkpoint_pb2_grpc.CheckpointServiceStub,
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await stub.GetChannelValues(
            pb.GetChannelValuesRequest(content_hashes=["a" * 64] * 1001), metadata=ALPHA
        )
    assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert error_info(error.value).reason == "LIMIT_EXCEEDED"


async def test_late_write_after_delete_fails_precondition(
    stub: checkpoint_pb2_grpc.CheckpointServiceStub,
) -> None:
    await save(stub, checkpoint("c1"))
    deleted = await stub.DeleteExecution(
        pb.DeleteExecutionRequest(execution_id="thread-1"), metadata=ALPHA
    )
    assert deleted.deleted_checkpoints == 1
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await save(stub, checkpoint("c2", parent="c1"))
    assert error.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    info = error_info(error.value)
    assert (
        info.reason == "FAILED_PRECONDITION" and info.metadata["condition"] == "CHECKPOINT_DELETED"
    )
    with pytest.raises(grpc.aio.AioRpcError) as writes:
        await stub.PutWrites(
            pb.PutWritesRequest(
                execution_id="thread-1",
                checkpoint_id="c1",
                task_id="t",
                writes=[pb.WriteInput(channel="x")],
            ),
            metadata=ALPHA,
        )
    assert error_info(writes.value).metadata["condition"] == "CHECKPOINT_DELETED"
    fresh = await save(stub, checkpoint("c3"))
    assert fresh.sequence == 2


async def test_ownership_fences_stale_writers(
    stub: checkpoint_pb2_grpc.CheckpointServiceStub,
) -> None:
    first = (
        await stub.ClaimExecution(pb.ClaimExecutionRequest(execution_id="thread-1"), metadata=ALPHA)
    ).ownership_epoch
    second = (
        await stub.ClaimExecution(pb.ClaimExecutionRequest(execution_id="thread-1"), metadata=ALPHA)
    ).ownership_epoch
    assert second > first > 0
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await save(stub, checkpoint("c1"), ownership_epoch=first)
    info = error_info(error.value)
    assert info.metadata["condition"] == "OWNERSHIP_SUPERSEDED"
    assert info.metadata["current_epoch"] == str(second)
    await save(stub, checkpoint("c1"), ownership_epoch=second)


async def test_missing_channel_value_is_a_precondition(
    stub: checkpoint_pb2_grpc.CheckpointServiceStub,
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await save(stub, checkpoint("c1", channels={"messages": pb.ChannelValue(version="9")}))
    info = error_info(error.value)
    assert info.metadata == {"condition": "CHANNEL_VALUE_MISSING", "channel": "messages"}


async def test_missing_checkpoint_is_not_found(
    stub: checkpoint_pb2_grpc.CheckpointServiceStub,
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await stub.GetCheckpoint(pb.GetCheckpointRequest(execution_id="nope"), metadata=ALPHA)
    assert error.value.code() == grpc.StatusCode.NOT_FOUND
    listed = await stub.ListCheckpoints(
        pb.ListCheckpointsRequest(execution_id="nope"), metadata=ALPHA
    )
    assert list(listed.checkpoints) == []


async def test_tenants_are_isolated(stub: checkpoint_pb2_grpc.CheckpointServiceStub) -> None:
    await save(stub, checkpoint("c1"))
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await stub.GetCheckpoint(pb.GetCheckpointRequest(execution_id="thread-1"), metadata=BETA)
    assert error.value.code() == grpc.StatusCode.NOT_FOUND
    deleted = await stub.DeleteExecution(
        pb.DeleteExecutionRequest(execution_id="thread-1"), metadata=BETA
    )
    assert deleted.deleted_checkpoints == 0
    await stub.GetCheckpoint(pb.GetCheckpointRequest(execution_id="thread-1"), metadata=ALPHA)


async def test_copy_prune_and_delete_runs(stub: checkpoint_pb2_grpc.CheckpointServiceStub) -> None:
    parent = ""
    for index in range(12):
        await save(stub, checkpoint(f"c{index:02d}", parent=parent, seconds=100 + index))
        parent = f"c{index:02d}"
    copied = await stub.CopyExecution(
        pb.CopyExecutionRequest(source_execution_id="thread-1", target_execution_id="fork"),
        metadata=ALPHA,
    )
    assert copied.copied_checkpoints == 12
    with pytest.raises(grpc.aio.AioRpcError) as busy:
        await stub.CopyExecution(
            pb.CopyExecutionRequest(source_execution_id="thread-1", target_execution_id="fork"),
            metadata=ALPHA,
        )
    assert busy.value.code() == grpc.StatusCode.ALREADY_EXISTS
    pruned = await stub.PruneCheckpoints(
        pb.PruneCheckpointsRequest(execution_ids=["thread-1"]), metadata=ALPHA
    )
    assert pruned.deleted_checkpoints == 2, "keep_last defaults to 10"
    dry = await stub.PruneCheckpoints(
        pb.PruneCheckpointsRequest(all_executions=True, keep_last=0, dry_run=True), metadata=ALPHA
    )
    assert dry.deleted_checkpoints == 22 and dry.deleted_channel_values == 1
    with pytest.raises(grpc.aio.AioRpcError) as both:
        await stub.PruneCheckpoints(
            pb.PruneCheckpointsRequest(execution_ids=["x"], all_executions=True), metadata=ALPHA
        )
    assert bad_field(both.value) == "all_executions"
    runs = await stub.DeleteRuns(pb.DeleteRunsRequest(run_ids=["unknown"]), metadata=ALPHA)
    assert runs.deleted_checkpoints == 0


async def test_mutations_leave_an_audit_trail_and_failures_none(
    server: CheckpointServer, stub: checkpoint_pb2_grpc.CheckpointServiceStub
) -> None:
    await save(stub, checkpoint("c1"))
    await stub.DeleteExecution(pb.DeleteExecutionRequest(execution_id="thread-1"), metadata=ALPHA)
    with pytest.raises(grpc.aio.AioRpcError):
        await save(stub, checkpoint("c2", parent="c1"))  # refused: no record
    await stub.StartWorkflow(
        pb.StartWorkflowRequest(workflow_id="w", steps=[pb.WorkflowStepSpec(step_id="a")]),
        metadata=ALPHA,
    )
    assert server.storage is not None
    records = await asyncio.wrap_future(
        asyncio.run_coroutine_threadsafe(
            server.storage.audit.list_audit("alpha", AuditFilter(), 0, 100), server.loop
        )
    )
    trail = [(r.method, r.entity_type, r.entity_id, r.revision) for r in reversed(records)]
    assert trail == [
        ("SaveCheckpoint", "execution", "thread-1", 1),
        ("DeleteExecution", "execution", "thread-1", 1),
        ("StartWorkflow", "workflow", "w", 1),
    ]
    assert {r.principal for r in records} == {key_id("key-alpha")}
    assert {r.service for r in records} == {"statekeeper.v1.CheckpointService"}
