"""CheckpointService: translates requests into CheckpointManager and
WorkflowManager calls, and domain records back into protos. No rules live
here beyond what only makes sense on the wire (field presence, enum numbers,
durations)."""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import duration_pb2, struct_pb2, timestamp_pb2

from statekeeper.api.convert import dict_to_struct, struct_to_dict, timestamp
from statekeeper.api.interceptor import current_actor, current_tenant
from statekeeper.core.checkpoints.models import (
    ChannelEntry,
    CheckpointDraft,
    CheckpointQuery,
    PendingWrite,
    ReadOptions,
    StoredCheckpoint,
    WriteEntry,
    WritesDraft,
)
from statekeeper.core.checkpoints.service import CheckpointManager
from statekeeper.core.errors import InvalidArgumentError
from statekeeper.core.schema_upgrades import Payload
from statekeeper.core.workflows.models import (
    Backoff,
    ClaimedStep,
    ClaimRequest,
    FailureReport,
    Step,
    StepError,
    StepSpec,
    Workflow,
    WorkflowStatus,
)
from statekeeper.core.workflows.service import WorkflowManager
from statekeeper_client.v1 import checkpoint_pb2 as pb
from statekeeper_client.v1 import checkpoint_pb2_grpc, common_pb2


def register(
    server: grpc.aio.Server, checkpoints: CheckpointManager, workflows: WorkflowManager
) -> None:
    """Adds CheckpointService to `server`."""
    servicer = CheckpointServicer(checkpoints, workflows)
    checkpoint_pb2_grpc.add_CheckpointServiceServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]


class CheckpointServicer(checkpoint_pb2_grpc.CheckpointServiceServicer):
    def __init__(self, checkpoints: CheckpointManager, workflows: WorkflowManager) -> None:
        self._checkpoints = checkpoints
        self._workflows = workflows

    # ----- checkpoints -------------------------------------------------------------

    async def SaveCheckpoint(
        self, request: pb.SaveCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> pb.SaveCheckpointResponse:
        outcome = await self._checkpoints.save(
            current_actor(), checkpoint_draft(request.checkpoint), request.ownership_epoch
        )
        return pb.SaveCheckpointResponse(
            checkpoint_id=outcome.checkpoint_id,
            sequence=outcome.sequence,
            create_time=timestamp_ns(outcome.create_time_ns),
            replaced=outcome.replaced,
        )

    async def GetCheckpoint(
        self, request: pb.GetCheckpointRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetCheckpointResponse:
        found = await self._checkpoints.get(
            current_tenant(),
            request.execution_id,
            request.namespace,
            request.checkpoint_id,
            read_options(request.omit_channel_values, request.omit_pending_writes),
        )
        return pb.GetCheckpointResponse(checkpoint=checkpoint_to_proto(found))

    async def ListCheckpoints(
        self, request: pb.ListCheckpointsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListCheckpointsResponse:
        query = CheckpointQuery(
            execution_id=request.execution_id,
            namespace=request.namespace if request.HasField("namespace") else None,
            metadata_filter=struct_to_dict(request.metadata_filter),
            run_id=request.run_id,
            before_checkpoint_id=request.before_checkpoint_id,
        )
        found, next_token = await self._checkpoints.list_checkpoints(
            current_tenant(),
            query,
            request.page_size,
            request.page_token,
            read_options(request.omit_channel_values, request.omit_pending_writes),
        )
        return pb.ListCheckpointsResponse(
            checkpoints=[checkpoint_to_proto(c) for c in found], next_page_token=next_token
        )

    async def PutWrites(
        self, request: pb.PutWritesRequest, context: grpc.aio.ServicerContext
    ) -> pb.PutWritesResponse:
        draft = WritesDraft(
            execution_id=request.execution_id,
            namespace=request.namespace,
            checkpoint_id=request.checkpoint_id,
            task_id=request.task_id,
            task_path=request.task_path,
            writes=tuple(
                WriteEntry(w.index, w.channel, payload_from_proto(w.value)) for w in request.writes
            ),
        )
        outcome = await self._checkpoints.put_writes(
            current_actor(), draft, request.ownership_epoch
        )
        return pb.PutWritesResponse(stored_count=outcome.stored, duplicate_count=outcome.duplicates)

    async def GetChannelValues(
        self, request: pb.GetChannelValuesRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetChannelValuesResponse:
        values, missing = await self._checkpoints.channel_values(
            current_tenant(), list(request.content_hashes)
        )
        return pb.GetChannelValuesResponse(
            values={key: payload_to_proto(value) for key, value in values.items()},
            missing_hashes=missing,
        )

    async def DeleteExecution(
        self, request: pb.DeleteExecutionRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteExecutionResponse:
        counts = await self._checkpoints.delete_execution(current_actor(), request.execution_id)
        return pb.DeleteExecutionResponse(
            deleted_checkpoints=counts.checkpoints, deleted_writes=counts.writes
        )

    async def DeleteRuns(
        self, request: pb.DeleteRunsRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteRunsResponse:
        counts = await self._checkpoints.delete_runs(current_actor(), list(request.run_ids))
        return pb.DeleteRunsResponse(
            deleted_checkpoints=counts.checkpoints, deleted_writes=counts.writes
        )

    async def CopyExecution(
        self, request: pb.CopyExecutionRequest, context: grpc.aio.ServicerContext
    ) -> pb.CopyExecutionResponse:
        counts = await self._checkpoints.copy_execution(
            current_actor(),
            request.source_execution_id,
            request.target_execution_id,
            request.until_checkpoint_id,
        )
        return pb.CopyExecutionResponse(
            copied_checkpoints=counts.checkpoints, copied_writes=counts.writes
        )

    async def PruneCheckpoints(
        self, request: pb.PruneCheckpointsRequest, context: grpc.aio.ServicerContext
    ) -> pb.PruneCheckpointsResponse:
        counts = await self._checkpoints.prune(
            current_actor(),
            list(request.execution_ids),
            request.all_executions,
            request.keep_last if request.HasField("keep_last") else None,
            request.dry_run,
        )
        return pb.PruneCheckpointsResponse(
            deleted_checkpoints=counts.checkpoints,
            deleted_writes=counts.writes,
            deleted_channel_values=counts.channel_values,
        )

    async def ClaimExecution(
        self, request: pb.ClaimExecutionRequest, context: grpc.aio.ServicerContext
    ) -> pb.ClaimExecutionResponse:
        epoch = await self._checkpoints.claim_execution(current_actor(), request.execution_id)
        return pb.ClaimExecutionResponse(ownership_epoch=epoch)

    # ----- workflows ---------------------------------------------------------------

    async def StartWorkflow(
        self, request: pb.StartWorkflowRequest, context: grpc.aio.ServicerContext
    ) -> pb.StartWorkflowResponse:
        specs = [step_spec(f"steps[{i}]", spec) for i, spec in enumerate(request.steps)]
        workflow = await self._workflows.start(
            current_actor(),
            request.workflow_id,
            specs,
            struct_to_dict(request.metadata),
            request.execution_id,
        )
        return pb.StartWorkflowResponse(workflow=workflow_to_proto(workflow, include_steps=True))

    async def GetWorkflow(
        self, request: pb.GetWorkflowRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetWorkflowResponse:
        workflow = await self._workflows.get(current_tenant(), request.workflow_id)
        return pb.GetWorkflowResponse(workflow=workflow_to_proto(workflow, include_steps=True))

    async def ListWorkflows(
        self, request: pb.ListWorkflowsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListWorkflowsResponse:
        workflows, next_token = await self._workflows.list_workflows(
            current_tenant(),
            workflow_status_from_proto("status", request.status),
            request.page_size,
            request.page_token,
        )
        return pb.ListWorkflowsResponse(
            workflows=[workflow_to_proto(w, request.include_steps) for w in workflows],
            next_page_token=next_token,
        )

    async def ClaimSteps(
        self, request: pb.ClaimStepsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ClaimStepsResponse:
        claim = ClaimRequest(
            worker_id=request.worker_id,
            workflow_id=request.workflow_id,
            step_names=tuple(request.step_names),
            max_steps=request.max_steps,
            lease_seconds=seconds("lease_duration", request.lease_duration),
            wait_seconds=seconds("wait_timeout", request.wait_timeout),
        )
        claimed = await self._workflows.claim(current_actor(), claim, context.time_remaining())
        return pb.ClaimStepsResponse(steps=[claimed_to_proto(c) for c in claimed])

    async def CompleteStep(
        self, request: pb.CompleteStepRequest, context: grpc.aio.ServicerContext
    ) -> pb.CompleteStepResponse:
        result = await self._workflows.complete(
            current_actor(),
            request.workflow_id,
            request.step_id,
            request.lease_id,
            payload_from_proto(request.outputs) if request.HasField("outputs") else None,
        )
        return pb.CompleteStepResponse(
            step=step_to_proto(result.step),
            already_completed=result.repeated,
            workflow_status=int(result.workflow_status),  # type: ignore[arg-type]
        )

    async def FailStep(
        self, request: pb.FailStepRequest, context: grpc.aio.ServicerContext
    ) -> pb.FailStepResponse:
        report = FailureReport(
            error=StepError(
                message=request.error.message,
                type=request.error.type,
                details=struct_to_dict(request.error.details) or None,
            ),
            retryable=request.retryable,
            retry_delay_seconds=(
                seconds("retry_delay", request.retry_delay)
                if request.HasField("retry_delay")
                else None
            ),
        )
        result = await self._workflows.fail(
            current_actor(), request.workflow_id, request.step_id, request.lease_id, report
        )
        return pb.FailStepResponse(
            step=step_to_proto(result.step),
            already_recorded=result.repeated,
            workflow_status=int(result.workflow_status),  # type: ignore[arg-type]
        )

    async def SkipStep(
        self, request: pb.SkipStepRequest, context: grpc.aio.ServicerContext
    ) -> pb.SkipStepResponse:
        result = await self._workflows.skip(
            current_actor(), request.workflow_id, request.step_id, request.lease_id, request.reason
        )
        return pb.SkipStepResponse(
            step=step_to_proto(result.step),
            workflow_status=int(result.workflow_status),  # type: ignore[arg-type]
        )

    async def RenewStepLease(
        self, request: pb.RenewStepLeaseRequest, context: grpc.aio.ServicerContext
    ) -> pb.RenewStepLeaseResponse:
        expiry = await self._workflows.renew(
            current_actor(),
            request.workflow_id,
            request.step_id,
            request.lease_id,
            (
                seconds("lease_duration", request.lease_duration)
                if request.HasField("lease_duration")
                else None
            ),
        )
        return pb.RenewStepLeaseResponse(lease_expire_time=timestamp(expiry))

    async def CancelWorkflow(
        self, request: pb.CancelWorkflowRequest, context: grpc.aio.ServicerContext
    ) -> pb.CancelWorkflowResponse:
        workflow = await self._workflows.cancel(
            current_actor(), request.workflow_id, request.reason, request.expected_etag
        )
        return pb.CancelWorkflowResponse(workflow=workflow_to_proto(workflow, include_steps=True))


# ----- conversions: checkpoints ----------------------------------------------------------


def payload_from_proto(payload: common_pb2.Payload) -> Payload:
    return Payload(payload.content_type, payload.schema_version, payload.data)


def payload_to_proto(payload: Payload) -> common_pb2.Payload:
    return common_pb2.Payload(
        content_type=payload.content_type,
        schema_version=payload.schema_version,
        data=payload.data,
    )


def timestamp_ns(nanoseconds: int) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(nanoseconds)
    return stamp


def read_options(omit_values: bool, omit_writes: bool) -> ReadOptions:
    return ReadOptions(include_values=not omit_values, include_writes=not omit_writes)


def checkpoint_draft(checkpoint: pb.Checkpoint) -> CheckpointDraft:
    return CheckpointDraft(
        execution_id=checkpoint.execution_id,
        namespace=checkpoint.namespace,
        checkpoint_id=checkpoint.checkpoint_id,
        parent_checkpoint_id=checkpoint.parent_checkpoint_id,
        step=checkpoint.step,
        step_name=checkpoint.step_name,
        state=payload_from_proto(checkpoint.state),
        channels={name: channel_entry(value) for name, value in checkpoint.channels.items()},
        metadata=struct_to_dict(checkpoint.metadata),
        run_id=checkpoint.run_id,
        create_time_ns=(
            checkpoint.create_time.ToNanoseconds() if checkpoint.HasField("create_time") else 0
        ),
    )


def channel_entry(channel: pb.ChannelValue) -> ChannelEntry:
    value = payload_from_proto(channel.value) if channel.HasField("value") else None
    return ChannelEntry(channel.version, value, channel.content_hash)


def checkpoint_to_proto(checkpoint: StoredCheckpoint) -> pb.Checkpoint:
    return pb.Checkpoint(
        execution_id=checkpoint.execution_id,
        namespace=checkpoint.namespace,
        checkpoint_id=checkpoint.checkpoint_id,
        parent_checkpoint_id=checkpoint.parent_checkpoint_id,
        step=checkpoint.step,
        step_name=checkpoint.step_name,
        state=payload_to_proto(checkpoint.state),
        channels={
            name: pb.ChannelValue(
                version=entry.version,
                value=payload_to_proto(entry.value) if entry.value is not None else None,
                content_hash=entry.content_hash,
            )
            for name, entry in checkpoint.channels.items()
        },
        metadata=dict_to_struct(dict(checkpoint.metadata)),
        run_id=checkpoint.run_id,
        create_time=timestamp_ns(checkpoint.create_time_ns),
        sequence=checkpoint.sequence,
        pending_writes=[pending_write_to_proto(w) for w in checkpoint.pending_writes],
    )


def pending_write_to_proto(write: PendingWrite) -> pb.PendingWrite:
    return pb.PendingWrite(
        task_id=write.task_id,
        task_path=write.task_path,
        index=write.index,
        channel=write.channel,
        value=payload_to_proto(write.value),
    )


# ----- conversions: workflows ---------------------------------------------------------------


def seconds(field_name: str, duration: duration_pb2.Duration) -> float:
    value = duration.seconds + duration.nanos / 1e9
    if value < 0:
        raise InvalidArgumentError(field_name, "must not be negative")
    return value


def workflow_status_from_proto(field_name: str, value: int) -> WorkflowStatus | None:
    if value == pb.WORKFLOW_STATUS_UNSPECIFIED:
        return None
    try:
        return WorkflowStatus(value)
    except ValueError:
        raise InvalidArgumentError(field_name, f"unknown workflow status {value}") from None


def step_spec(field_name: str, spec: pb.WorkflowStepSpec) -> StepSpec:
    backoff = spec.backoff
    return StepSpec(
        step_id=spec.step_id,
        name=spec.name,
        depends_on=tuple(spec.depends_on),
        inputs=payload_from_proto(spec.inputs) if spec.HasField("inputs") else None,
        max_retries=spec.max_retries,
        backoff=Backoff(
            initial_seconds=seconds(
                f"{field_name}.backoff.initial_interval", backoff.initial_interval
            ),
            multiplier=backoff.multiplier,
            max_seconds=seconds(f"{field_name}.backoff.max_interval", backoff.max_interval),
        ),
    )


def duration(value: float) -> duration_pb2.Duration:
    result = duration_pb2.Duration()
    result.FromNanoseconds(round(value * 1e9))
    return result


def step_to_proto(step: Step) -> pb.WorkflowStep:
    return pb.WorkflowStep(
        step_id=step.step_id,
        name=step.name,
        depends_on=list(step.depends_on),
        inputs=payload_to_proto(step.inputs) if step.inputs is not None else None,
        max_retries=step.max_retries,
        backoff=pb.StepBackoffPolicy(
            initial_interval=duration(step.backoff.initial_seconds),
            multiplier=step.backoff.multiplier,
            max_interval=duration(step.backoff.max_seconds),
        ),
        status=int(step.status),  # type: ignore[arg-type]
        attempt=step.attempt,
        outputs=payload_to_proto(step.outputs) if step.outputs is not None else None,
        errors=[step_error_to_proto(e) for e in step.errors],
        next_retry_time=timestamp(step.next_retry_time),
        worker_id=step.worker_id,
        lease_expire_time=timestamp(step.lease_expire_time),
        start_time=timestamp(step.start_time),
        end_time=timestamp(step.end_time),
        reason=step.reason,
    )


def step_error_to_proto(error: StepError) -> pb.WorkflowStepError:
    details: struct_pb2.Struct | None = (
        dict_to_struct(dict(error.details)) if error.details else None
    )
    return pb.WorkflowStepError(
        message=error.message,
        type=error.type,
        details=details,
        retryable=error.retryable,
        attempt=error.attempt,
        time=timestamp(error.time),
    )


def workflow_to_proto(workflow: Workflow, include_steps: bool) -> pb.Workflow:
    return pb.Workflow(
        workflow_id=workflow.workflow_id,
        status=int(workflow.status),  # type: ignore[arg-type]
        steps=[step_to_proto(s) for s in workflow.steps] if include_steps else [],
        metadata=dict_to_struct(dict(workflow.metadata)),
        execution_id=workflow.execution_id,
        create_time=timestamp(workflow.create_time),
        update_time=timestamp(workflow.update_time),
        end_time=timestamp(workflow.end_time),
        etag=workflow.etag,
    )


def claimed_to_proto(claimed: ClaimedStep) -> pb.ClaimedStep:
    step = claimed.step
    outputs: dict[str, Any] = {
        key: payload_to_proto(value) for key, value in claimed.dependency_outputs.items()
    }
    return pb.ClaimedStep(
        workflow_id=claimed.workflow_id,
        step=step_to_proto(step),
        lease_id=step.lease_id,
        lease_expire_time=timestamp(step.lease_expire_time),
        dependency_outputs=outputs,
    )
