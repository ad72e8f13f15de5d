"""Issue 19 through gRPC on both backends: every Duration and Timestamp of a
request is checked in one place (INVALID_ARGUMENT naming the field), and each
CompleteStep refusal carries the reason checkpoint.proto documents."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import grpc
import pytest
from google.protobuf import duration_pb2, timestamp_pb2

from statekeeper_client.v1 import checkpoint_pb2 as cp
from statekeeper_client.v1 import (
    checkpoint_pb2_grpc,
    common_pb2,
    memory_pb2,
    memory_pb2_grpc,
    message_pb2_grpc,
)
from statekeeper_client.v1 import message_pb2 as msg
from tests.e2e.errors import bad_field, error_info
from tests.harness.servers import ServerProcess
from tests.hostile.conftest import ALPHA

CheckpointStub = checkpoint_pb2_grpc.CheckpointServiceStub


@pytest.fixture
def channel(statekeeper: ServerProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(statekeeper.address) as opened:
        yield opened


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def invalid_field(call: Callable[[], object]) -> str:
    """Runs a call that must fail INVALID_ARGUMENT; the field it names."""
    with pytest.raises(grpc.RpcError) as failure:
        call()
    assert failure.value.code() == grpc.StatusCode.INVALID_ARGUMENT, failure.value.details()
    assert error_info(failure.value).reason == "INVALID_FIELD"
    return bad_field(failure.value)


# ----- durations ----------------------------------------------------------------------------

MALFORMED_DURATIONS = {
    "negative": duration_pb2.Duration(seconds=-5),
    "negative nanos only": duration_pb2.Duration(nanos=-1),
    "nanos over a second": duration_pb2.Duration(seconds=1, nanos=1_000_000_000),
    "nanos under minus a second": duration_pb2.Duration(seconds=-1, nanos=-1_000_000_000),
    "signs disagree": duration_pb2.Duration(seconds=5, nanos=-3),
    "over 100 years": duration_pb2.Duration(seconds=4_000_000_000),
}


def test_request_reply_with_a_negative_ttl_names_ttl(channel: grpc.Channel) -> None:
    stub = message_pb2_grpc.MessageServiceStub(channel)
    request = msg.RequestReplyRequest(
        from_agent=unique("asker"),
        to_agent=unique("replier"),
        timeout=duration_pb2.Duration(seconds=5),
        ttl=duration_pb2.Duration(seconds=-1),
    )
    started = time.monotonic()
    assert invalid_field(lambda: stub.RequestReply(request, metadata=ALPHA, timeout=10)) == "ttl"
    assert time.monotonic() - started < 5, "refused before waiting for a reply"


@pytest.mark.parametrize("case", MALFORMED_DURATIONS)
def test_malformed_send_message_ttl(channel: grpc.Channel, case: str) -> None:
    stub = message_pb2_grpc.MessageServiceStub(channel)
    request = msg.SendMessageRequest(to_agent=unique("inbox"), ttl=MALFORMED_DURATIONS[case])
    assert invalid_field(lambda: stub.SendMessage(request, metadata=ALPHA)) == "ttl"


@pytest.mark.parametrize("case", MALFORMED_DURATIONS)
def test_malformed_claim_lease_duration(channel: grpc.Channel, case: str) -> None:
    stub = CheckpointStub(channel)
    request = cp.ClaimStepsRequest(worker_id="w", lease_duration=MALFORMED_DURATIONS[case])
    assert invalid_field(lambda: stub.ClaimSteps(request, metadata=ALPHA)) == "lease_duration"


@pytest.mark.parametrize("case", MALFORMED_DURATIONS)
def test_malformed_retry_initial_interval(channel: grpc.Channel, case: str) -> None:
    stub = CheckpointStub(channel)
    backoff = cp.StepBackoffPolicy(initial_interval=MALFORMED_DURATIONS[case])
    request = cp.StartWorkflowRequest(
        workflow_id=unique("wf"),
        steps=[cp.WorkflowStepSpec(step_id="a"), cp.WorkflowStepSpec(step_id="b", backoff=backoff)],
    )
    field = invalid_field(lambda: stub.StartWorkflow(request, metadata=ALPHA))
    assert field == "steps[1].backoff.initial_interval"


def test_the_largest_duration_allowed_is_accepted(channel: grpc.Channel) -> None:
    stub = message_pb2_grpc.MessageServiceStub(channel)
    request = msg.SendMessageRequest(
        to_agent=unique("inbox"), ttl=duration_pb2.Duration(seconds=3600, nanos=999_999_999)
    )
    assert stub.SendMessage(request, metadata=ALPHA).message_id


# ----- timestamps ---------------------------------------------------------------------------

MALFORMED_TIMESTAMPS = {
    "negative nanos": timestamp_pb2.Timestamp(seconds=1_700_000_000, nanos=-1),
    "nanos over a second": timestamp_pb2.Timestamp(seconds=1_700_000_000, nanos=10**9),
    "year 9999": timestamp_pb2.Timestamp(seconds=253_402_300_799, nanos=999_999_999),
    "past the timestamp range": timestamp_pb2.Timestamp(seconds=10**12),
    "year 1": timestamp_pb2.Timestamp(seconds=-62_135_596_800),
}


@pytest.mark.parametrize("case", MALFORMED_TIMESTAMPS)
def test_malformed_timestamps_are_refused_in_every_rpc(channel: grpc.Channel, case: str) -> None:
    stamp = MALFORMED_TIMESTAMPS[case]
    stub = memory_pb2_grpc.MemoryServiceStub(channel)
    episode = memory_pb2.RecordEpisodeRequest(user_id="u", user_message="hi", occur_time=stamp)
    assert invalid_field(lambda: stub.RecordEpisode(episode, metadata=ALPHA)) == "occur_time"
    checkpoints = CheckpointStub(channel)
    save = cp.SaveCheckpointRequest(
        checkpoint=cp.Checkpoint(
            execution_id="e", checkpoint_id="c1", create_time=stamp, state=common_pb2.Payload()
        )
    )
    field = invalid_field(lambda: checkpoints.SaveCheckpoint(save, metadata=ALPHA))
    assert field == "checkpoint.create_time"


# ----- CompleteStep reasons -----------------------------------------------------------------


def start(stub: CheckpointStub, *step_ids: str) -> str:
    workflow_id = unique("wf")
    # A retry left, so an expired lease makes the step claimable again.
    steps = [cp.WorkflowStepSpec(step_id=step_id, max_retries=1) for step_id in step_ids]
    stub.StartWorkflow(
        cp.StartWorkflowRequest(workflow_id=workflow_id, steps=steps), metadata=ALPHA
    )
    return workflow_id


def claim(stub: CheckpointStub, workflow_id: str, step_id: str, lease_seconds: float = 30.0) -> str:
    """The lease id of the claim of `step_id` (the only ready step asked)."""
    lease = duration_pb2.Duration()
    lease.FromNanoseconds(round(lease_seconds * 1e9))
    request = cp.ClaimStepsRequest(
        worker_id=unique("worker"),
        workflow_id=workflow_id,
        step_names=[step_id],
        lease_duration=lease,
    )
    (claimed,) = stub.ClaimSteps(request, metadata=ALPHA).steps
    assert claimed.step.step_id == step_id
    return str(claimed.lease_id)


def complete(stub: CheckpointStub, workflow_id: str, step_id: str, lease_id: str) -> object:
    request = cp.CompleteStepRequest(workflow_id=workflow_id, step_id=step_id, lease_id=lease_id)
    return stub.CompleteStep(request, metadata=ALPHA)


def refusal(call: Callable[[], object]) -> str:
    with pytest.raises(grpc.RpcError) as failure:
        call()
    assert failure.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    return error_info(failure.value).metadata["condition"]


def expired_then_reclaimed(stub: CheckpointStub, workflow_id: str, step_id: str) -> tuple[str, str]:
    """(the first lease, which expired; the lease that took the step over)."""
    first = claim(stub, workflow_id, step_id, lease_seconds=0.3)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.2)
        request = cp.ClaimStepsRequest(
            worker_id="taker", workflow_id=workflow_id, step_names=[step_id]
        )
        taken = stub.ClaimSteps(request, metadata=ALPHA).steps
        if taken:
            return first, str(taken[0].lease_id)
    raise AssertionError("the expired step was never claimed again")


def test_a_finished_workflow_answers_workflow_finished(channel: grpc.Channel) -> None:
    stub = CheckpointStub(channel)
    workflow_id = start(stub, "a")
    first, second = expired_then_reclaimed(stub, workflow_id, "a")
    complete(stub, workflow_id, "a", second)  # the workflow ends in SUCCESS
    assert refusal(lambda: complete(stub, workflow_id, "a", first)) == "WORKFLOW_FINISHED"
    assert refusal(lambda: complete(stub, workflow_id, "a", "forged")) == "WORKFLOW_FINISHED"
    repeat = complete(stub, workflow_id, "a", second)
    assert repeat.already_completed  # type: ignore[attr-defined]


def test_an_expired_lease_of_a_step_still_to_do_answers_lease_expired(
    channel: grpc.Channel,
) -> None:
    stub = CheckpointStub(channel)
    workflow_id = start(stub, "a")
    first, _ = expired_then_reclaimed(stub, workflow_id, "a")
    assert refusal(lambda: complete(stub, workflow_id, "a", first)) == "LEASE_EXPIRED"


def test_a_lease_of_a_step_finished_under_another_answers_lease_mismatch(
    channel: grpc.Channel,
) -> None:
    stub = CheckpointStub(channel)
    workflow_id = start(stub, "a", "b")  # b keeps the workflow running
    first, second = expired_then_reclaimed(stub, workflow_id, "a")
    complete(stub, workflow_id, "a", second)
    assert refusal(lambda: complete(stub, workflow_id, "a", first)) == "LEASE_MISMATCH"


def test_a_lease_that_never_held_the_step_answers_lease_mismatch(channel: grpc.Channel) -> None:
    stub = CheckpointStub(channel)
    workflow_id = start(stub, "a")
    claim(stub, workflow_id, "a")
    assert refusal(lambda: complete(stub, workflow_id, "a", "forged")) == "LEASE_MISMATCH"
