import datetime

from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from statekeeper_client.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WorkflowStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WORKFLOW_STATUS_UNSPECIFIED: _ClassVar[WorkflowStatus]
    WORKFLOW_STATUS_RUNNING: _ClassVar[WorkflowStatus]
    WORKFLOW_STATUS_SUCCESS: _ClassVar[WorkflowStatus]
    WORKFLOW_STATUS_FAILED: _ClassVar[WorkflowStatus]
    WORKFLOW_STATUS_CANCELLED: _ClassVar[WorkflowStatus]

class WorkflowStepStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WORKFLOW_STEP_STATUS_UNSPECIFIED: _ClassVar[WorkflowStepStatus]
    WORKFLOW_STEP_STATUS_PENDING: _ClassVar[WorkflowStepStatus]
    WORKFLOW_STEP_STATUS_RUNNING: _ClassVar[WorkflowStepStatus]
    WORKFLOW_STEP_STATUS_SUCCESS: _ClassVar[WorkflowStepStatus]
    WORKFLOW_STEP_STATUS_FAILED: _ClassVar[WorkflowStepStatus]
    WORKFLOW_STEP_STATUS_SKIPPED: _ClassVar[WorkflowStepStatus]
    WORKFLOW_STEP_STATUS_RETRYING: _ClassVar[WorkflowStepStatus]
    WORKFLOW_STEP_STATUS_CANCELLED: _ClassVar[WorkflowStepStatus]
WORKFLOW_STATUS_UNSPECIFIED: WorkflowStatus
WORKFLOW_STATUS_RUNNING: WorkflowStatus
WORKFLOW_STATUS_SUCCESS: WorkflowStatus
WORKFLOW_STATUS_FAILED: WorkflowStatus
WORKFLOW_STATUS_CANCELLED: WorkflowStatus
WORKFLOW_STEP_STATUS_UNSPECIFIED: WorkflowStepStatus
WORKFLOW_STEP_STATUS_PENDING: WorkflowStepStatus
WORKFLOW_STEP_STATUS_RUNNING: WorkflowStepStatus
WORKFLOW_STEP_STATUS_SUCCESS: WorkflowStepStatus
WORKFLOW_STEP_STATUS_FAILED: WorkflowStepStatus
WORKFLOW_STEP_STATUS_SKIPPED: WorkflowStepStatus
WORKFLOW_STEP_STATUS_RETRYING: WorkflowStepStatus
WORKFLOW_STEP_STATUS_CANCELLED: WorkflowStepStatus

class ChannelValue(_message.Message):
    __slots__ = ("version", "value", "content_hash")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    version: str
    value: _common_pb2.Payload
    content_hash: str
    def __init__(self, version: _Optional[str] = ..., value: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ..., content_hash: _Optional[str] = ...) -> None: ...

class PendingWrite(_message.Message):
    __slots__ = ("task_id", "task_path", "index", "channel", "value")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_PATH_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    task_path: str
    index: int
    channel: str
    value: _common_pb2.Payload
    def __init__(self, task_id: _Optional[str] = ..., task_path: _Optional[str] = ..., index: _Optional[int] = ..., channel: _Optional[str] = ..., value: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ...) -> None: ...

class Checkpoint(_message.Message):
    __slots__ = ("execution_id", "namespace", "checkpoint_id", "parent_checkpoint_id", "step", "step_name", "state", "channels", "metadata", "run_id", "create_time", "sequence", "pending_writes")
    class ChannelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: ChannelValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[ChannelValue, _Mapping]] = ...) -> None: ...
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STEP_NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CHANNELS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    PENDING_WRITES_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    namespace: str
    checkpoint_id: str
    parent_checkpoint_id: str
    step: int
    step_name: str
    state: _common_pb2.Payload
    channels: _containers.MessageMap[str, ChannelValue]
    metadata: _struct_pb2.Struct
    run_id: str
    create_time: _timestamp_pb2.Timestamp
    sequence: int
    pending_writes: _containers.RepeatedCompositeFieldContainer[PendingWrite]
    def __init__(self, execution_id: _Optional[str] = ..., namespace: _Optional[str] = ..., checkpoint_id: _Optional[str] = ..., parent_checkpoint_id: _Optional[str] = ..., step: _Optional[int] = ..., step_name: _Optional[str] = ..., state: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ..., channels: _Optional[_Mapping[str, ChannelValue]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., run_id: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., sequence: _Optional[int] = ..., pending_writes: _Optional[_Iterable[_Union[PendingWrite, _Mapping]]] = ...) -> None: ...

class SaveCheckpointRequest(_message.Message):
    __slots__ = ("checkpoint", "ownership_epoch")
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    OWNERSHIP_EPOCH_FIELD_NUMBER: _ClassVar[int]
    checkpoint: Checkpoint
    ownership_epoch: int
    def __init__(self, checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ..., ownership_epoch: _Optional[int] = ...) -> None: ...

class SaveCheckpointResponse(_message.Message):
    __slots__ = ("checkpoint_id", "sequence", "create_time", "replaced")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    REPLACED_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    sequence: int
    create_time: _timestamp_pb2.Timestamp
    replaced: bool
    def __init__(self, checkpoint_id: _Optional[str] = ..., sequence: _Optional[int] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., replaced: _Optional[bool] = ...) -> None: ...

class GetCheckpointRequest(_message.Message):
    __slots__ = ("execution_id", "namespace", "checkpoint_id", "omit_channel_values", "omit_pending_writes")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    OMIT_CHANNEL_VALUES_FIELD_NUMBER: _ClassVar[int]
    OMIT_PENDING_WRITES_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    namespace: str
    checkpoint_id: str
    omit_channel_values: bool
    omit_pending_writes: bool
    def __init__(self, execution_id: _Optional[str] = ..., namespace: _Optional[str] = ..., checkpoint_id: _Optional[str] = ..., omit_channel_values: _Optional[bool] = ..., omit_pending_writes: _Optional[bool] = ...) -> None: ...

class GetCheckpointResponse(_message.Message):
    __slots__ = ("checkpoint",)
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    checkpoint: Checkpoint
    def __init__(self, checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ...) -> None: ...

class ListCheckpointsRequest(_message.Message):
    __slots__ = ("execution_id", "namespace", "metadata_filter", "before_checkpoint_id", "run_id", "page_size", "page_token", "omit_channel_values", "omit_pending_writes")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FILTER_FIELD_NUMBER: _ClassVar[int]
    BEFORE_CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OMIT_CHANNEL_VALUES_FIELD_NUMBER: _ClassVar[int]
    OMIT_PENDING_WRITES_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    namespace: str
    metadata_filter: _struct_pb2.Struct
    before_checkpoint_id: str
    run_id: str
    page_size: int
    page_token: str
    omit_channel_values: bool
    omit_pending_writes: bool
    def __init__(self, execution_id: _Optional[str] = ..., namespace: _Optional[str] = ..., metadata_filter: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., before_checkpoint_id: _Optional[str] = ..., run_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., omit_channel_values: _Optional[bool] = ..., omit_pending_writes: _Optional[bool] = ...) -> None: ...

class ListCheckpointsResponse(_message.Message):
    __slots__ = ("checkpoints", "next_page_token")
    CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    checkpoints: _containers.RepeatedCompositeFieldContainer[Checkpoint]
    next_page_token: str
    def __init__(self, checkpoints: _Optional[_Iterable[_Union[Checkpoint, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class WriteInput(_message.Message):
    __slots__ = ("index", "channel", "value")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    index: int
    channel: str
    value: _common_pb2.Payload
    def __init__(self, index: _Optional[int] = ..., channel: _Optional[str] = ..., value: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ...) -> None: ...

class PutWritesRequest(_message.Message):
    __slots__ = ("execution_id", "namespace", "checkpoint_id", "task_id", "task_path", "writes", "ownership_epoch")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_PATH_FIELD_NUMBER: _ClassVar[int]
    WRITES_FIELD_NUMBER: _ClassVar[int]
    OWNERSHIP_EPOCH_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    namespace: str
    checkpoint_id: str
    task_id: str
    task_path: str
    writes: _containers.RepeatedCompositeFieldContainer[WriteInput]
    ownership_epoch: int
    def __init__(self, execution_id: _Optional[str] = ..., namespace: _Optional[str] = ..., checkpoint_id: _Optional[str] = ..., task_id: _Optional[str] = ..., task_path: _Optional[str] = ..., writes: _Optional[_Iterable[_Union[WriteInput, _Mapping]]] = ..., ownership_epoch: _Optional[int] = ...) -> None: ...

class PutWritesResponse(_message.Message):
    __slots__ = ("stored_count", "duplicate_count")
    STORED_COUNT_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_COUNT_FIELD_NUMBER: _ClassVar[int]
    stored_count: int
    duplicate_count: int
    def __init__(self, stored_count: _Optional[int] = ..., duplicate_count: _Optional[int] = ...) -> None: ...

class GetChannelValuesRequest(_message.Message):
    __slots__ = ("content_hashes",)
    CONTENT_HASHES_FIELD_NUMBER: _ClassVar[int]
    content_hashes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, content_hashes: _Optional[_Iterable[str]] = ...) -> None: ...

class GetChannelValuesResponse(_message.Message):
    __slots__ = ("values", "missing_hashes")
    class ValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _common_pb2.Payload
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ...) -> None: ...
    VALUES_FIELD_NUMBER: _ClassVar[int]
    MISSING_HASHES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.MessageMap[str, _common_pb2.Payload]
    missing_hashes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, values: _Optional[_Mapping[str, _common_pb2.Payload]] = ..., missing_hashes: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteExecutionRequest(_message.Message):
    __slots__ = ("execution_id",)
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    def __init__(self, execution_id: _Optional[str] = ...) -> None: ...

class DeleteExecutionResponse(_message.Message):
    __slots__ = ("deleted_checkpoints", "deleted_writes")
    DELETED_CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    DELETED_WRITES_FIELD_NUMBER: _ClassVar[int]
    deleted_checkpoints: int
    deleted_writes: int
    def __init__(self, deleted_checkpoints: _Optional[int] = ..., deleted_writes: _Optional[int] = ...) -> None: ...

class DeleteRunsRequest(_message.Message):
    __slots__ = ("run_ids",)
    RUN_IDS_FIELD_NUMBER: _ClassVar[int]
    run_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, run_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteRunsResponse(_message.Message):
    __slots__ = ("deleted_checkpoints", "deleted_writes")
    DELETED_CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    DELETED_WRITES_FIELD_NUMBER: _ClassVar[int]
    deleted_checkpoints: int
    deleted_writes: int
    def __init__(self, deleted_checkpoints: _Optional[int] = ..., deleted_writes: _Optional[int] = ...) -> None: ...

class CopyExecutionRequest(_message.Message):
    __slots__ = ("source_execution_id", "target_execution_id", "until_checkpoint_id")
    SOURCE_EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    UNTIL_CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    source_execution_id: str
    target_execution_id: str
    until_checkpoint_id: str
    def __init__(self, source_execution_id: _Optional[str] = ..., target_execution_id: _Optional[str] = ..., until_checkpoint_id: _Optional[str] = ...) -> None: ...

class CopyExecutionResponse(_message.Message):
    __slots__ = ("copied_checkpoints", "copied_writes")
    COPIED_CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    COPIED_WRITES_FIELD_NUMBER: _ClassVar[int]
    copied_checkpoints: int
    copied_writes: int
    def __init__(self, copied_checkpoints: _Optional[int] = ..., copied_writes: _Optional[int] = ...) -> None: ...

class PruneCheckpointsRequest(_message.Message):
    __slots__ = ("execution_ids", "all_executions", "keep_last", "dry_run")
    EXECUTION_IDS_FIELD_NUMBER: _ClassVar[int]
    ALL_EXECUTIONS_FIELD_NUMBER: _ClassVar[int]
    KEEP_LAST_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    execution_ids: _containers.RepeatedScalarFieldContainer[str]
    all_executions: bool
    keep_last: int
    dry_run: bool
    def __init__(self, execution_ids: _Optional[_Iterable[str]] = ..., all_executions: _Optional[bool] = ..., keep_last: _Optional[int] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class PruneCheckpointsResponse(_message.Message):
    __slots__ = ("deleted_checkpoints", "deleted_writes", "deleted_channel_values")
    DELETED_CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    DELETED_WRITES_FIELD_NUMBER: _ClassVar[int]
    DELETED_CHANNEL_VALUES_FIELD_NUMBER: _ClassVar[int]
    deleted_checkpoints: int
    deleted_writes: int
    deleted_channel_values: int
    def __init__(self, deleted_checkpoints: _Optional[int] = ..., deleted_writes: _Optional[int] = ..., deleted_channel_values: _Optional[int] = ...) -> None: ...

class ClaimExecutionRequest(_message.Message):
    __slots__ = ("execution_id",)
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    def __init__(self, execution_id: _Optional[str] = ...) -> None: ...

class ClaimExecutionResponse(_message.Message):
    __slots__ = ("ownership_epoch",)
    OWNERSHIP_EPOCH_FIELD_NUMBER: _ClassVar[int]
    ownership_epoch: int
    def __init__(self, ownership_epoch: _Optional[int] = ...) -> None: ...

class StepBackoffPolicy(_message.Message):
    __slots__ = ("initial_interval", "multiplier", "max_interval")
    INITIAL_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    MAX_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    initial_interval: _duration_pb2.Duration
    multiplier: float
    max_interval: _duration_pb2.Duration
    def __init__(self, initial_interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., multiplier: _Optional[float] = ..., max_interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class WorkflowStepSpec(_message.Message):
    __slots__ = ("step_id", "name", "depends_on", "inputs", "max_retries", "backoff")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    BACKOFF_FIELD_NUMBER: _ClassVar[int]
    step_id: str
    name: str
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    inputs: _common_pb2.Payload
    max_retries: int
    backoff: StepBackoffPolicy
    def __init__(self, step_id: _Optional[str] = ..., name: _Optional[str] = ..., depends_on: _Optional[_Iterable[str]] = ..., inputs: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ..., max_retries: _Optional[int] = ..., backoff: _Optional[_Union[StepBackoffPolicy, _Mapping]] = ...) -> None: ...

class WorkflowStepError(_message.Message):
    __slots__ = ("message", "type", "details", "retryable", "attempt", "time")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    message: str
    type: str
    details: _struct_pb2.Struct
    retryable: bool
    attempt: int
    time: _timestamp_pb2.Timestamp
    def __init__(self, message: _Optional[str] = ..., type: _Optional[str] = ..., details: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., retryable: _Optional[bool] = ..., attempt: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class WorkflowStep(_message.Message):
    __slots__ = ("step_id", "name", "depends_on", "inputs", "max_retries", "backoff", "status", "attempt", "outputs", "errors", "next_retry_time", "worker_id", "lease_expire_time", "start_time", "end_time", "reason")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    BACKOFF_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    NEXT_RETRY_TIME_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    step_id: str
    name: str
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    inputs: _common_pb2.Payload
    max_retries: int
    backoff: StepBackoffPolicy
    status: WorkflowStepStatus
    attempt: int
    outputs: _common_pb2.Payload
    errors: _containers.RepeatedCompositeFieldContainer[WorkflowStepError]
    next_retry_time: _timestamp_pb2.Timestamp
    worker_id: str
    lease_expire_time: _timestamp_pb2.Timestamp
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    reason: str
    def __init__(self, step_id: _Optional[str] = ..., name: _Optional[str] = ..., depends_on: _Optional[_Iterable[str]] = ..., inputs: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ..., max_retries: _Optional[int] = ..., backoff: _Optional[_Union[StepBackoffPolicy, _Mapping]] = ..., status: _Optional[_Union[WorkflowStepStatus, str]] = ..., attempt: _Optional[int] = ..., outputs: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ..., errors: _Optional[_Iterable[_Union[WorkflowStepError, _Mapping]]] = ..., next_retry_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., worker_id: _Optional[str] = ..., lease_expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class Workflow(_message.Message):
    __slots__ = ("workflow_id", "status", "steps", "metadata", "execution_id", "create_time", "update_time", "end_time", "etag")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    status: WorkflowStatus
    steps: _containers.RepeatedCompositeFieldContainer[WorkflowStep]
    metadata: _struct_pb2.Struct
    execution_id: str
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    etag: str
    def __init__(self, workflow_id: _Optional[str] = ..., status: _Optional[_Union[WorkflowStatus, str]] = ..., steps: _Optional[_Iterable[_Union[WorkflowStep, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., execution_id: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., etag: _Optional[str] = ...) -> None: ...

class StartWorkflowRequest(_message.Message):
    __slots__ = ("workflow_id", "steps", "metadata", "execution_id")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    steps: _containers.RepeatedCompositeFieldContainer[WorkflowStepSpec]
    metadata: _struct_pb2.Struct
    execution_id: str
    def __init__(self, workflow_id: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[WorkflowStepSpec, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., execution_id: _Optional[str] = ...) -> None: ...

class StartWorkflowResponse(_message.Message):
    __slots__ = ("workflow",)
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    workflow: Workflow
    def __init__(self, workflow: _Optional[_Union[Workflow, _Mapping]] = ...) -> None: ...

class GetWorkflowRequest(_message.Message):
    __slots__ = ("workflow_id",)
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    def __init__(self, workflow_id: _Optional[str] = ...) -> None: ...

class GetWorkflowResponse(_message.Message):
    __slots__ = ("workflow",)
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    workflow: Workflow
    def __init__(self, workflow: _Optional[_Union[Workflow, _Mapping]] = ...) -> None: ...

class ListWorkflowsRequest(_message.Message):
    __slots__ = ("status", "page_size", "page_token", "include_steps")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_STEPS_FIELD_NUMBER: _ClassVar[int]
    status: WorkflowStatus
    page_size: int
    page_token: str
    include_steps: bool
    def __init__(self, status: _Optional[_Union[WorkflowStatus, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., include_steps: _Optional[bool] = ...) -> None: ...

class ListWorkflowsResponse(_message.Message):
    __slots__ = ("workflows", "next_page_token")
    WORKFLOWS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    workflows: _containers.RepeatedCompositeFieldContainer[Workflow]
    next_page_token: str
    def __init__(self, workflows: _Optional[_Iterable[_Union[Workflow, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ClaimStepsRequest(_message.Message):
    __slots__ = ("workflow_id", "worker_id", "step_names", "max_steps", "lease_duration", "wait_timeout")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_NAMES_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    LEASE_DURATION_FIELD_NUMBER: _ClassVar[int]
    WAIT_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    worker_id: str
    step_names: _containers.RepeatedScalarFieldContainer[str]
    max_steps: int
    lease_duration: _duration_pb2.Duration
    wait_timeout: _duration_pb2.Duration
    def __init__(self, workflow_id: _Optional[str] = ..., worker_id: _Optional[str] = ..., step_names: _Optional[_Iterable[str]] = ..., max_steps: _Optional[int] = ..., lease_duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., wait_timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ClaimedStep(_message.Message):
    __slots__ = ("workflow_id", "step", "lease_id", "lease_expire_time", "dependency_outputs")
    class DependencyOutputsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _common_pb2.Payload
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ...) -> None: ...
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    DEPENDENCY_OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    step: WorkflowStep
    lease_id: str
    lease_expire_time: _timestamp_pb2.Timestamp
    dependency_outputs: _containers.MessageMap[str, _common_pb2.Payload]
    def __init__(self, workflow_id: _Optional[str] = ..., step: _Optional[_Union[WorkflowStep, _Mapping]] = ..., lease_id: _Optional[str] = ..., lease_expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., dependency_outputs: _Optional[_Mapping[str, _common_pb2.Payload]] = ...) -> None: ...

class ClaimStepsResponse(_message.Message):
    __slots__ = ("steps",)
    STEPS_FIELD_NUMBER: _ClassVar[int]
    steps: _containers.RepeatedCompositeFieldContainer[ClaimedStep]
    def __init__(self, steps: _Optional[_Iterable[_Union[ClaimedStep, _Mapping]]] = ...) -> None: ...

class CompleteStepRequest(_message.Message):
    __slots__ = ("workflow_id", "step_id", "lease_id", "outputs")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    step_id: str
    lease_id: str
    outputs: _common_pb2.Payload
    def __init__(self, workflow_id: _Optional[str] = ..., step_id: _Optional[str] = ..., lease_id: _Optional[str] = ..., outputs: _Optional[_Union[_common_pb2.Payload, _Mapping]] = ...) -> None: ...

class CompleteStepResponse(_message.Message):
    __slots__ = ("step", "already_completed", "workflow_status")
    STEP_FIELD_NUMBER: _ClassVar[int]
    ALREADY_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_STATUS_FIELD_NUMBER: _ClassVar[int]
    step: WorkflowStep
    already_completed: bool
    workflow_status: WorkflowStatus
    def __init__(self, step: _Optional[_Union[WorkflowStep, _Mapping]] = ..., already_completed: _Optional[bool] = ..., workflow_status: _Optional[_Union[WorkflowStatus, str]] = ...) -> None: ...

class FailStepRequest(_message.Message):
    __slots__ = ("workflow_id", "step_id", "lease_id", "error", "retryable", "retry_delay")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    RETRY_DELAY_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    step_id: str
    lease_id: str
    error: WorkflowStepError
    retryable: bool
    retry_delay: _duration_pb2.Duration
    def __init__(self, workflow_id: _Optional[str] = ..., step_id: _Optional[str] = ..., lease_id: _Optional[str] = ..., error: _Optional[_Union[WorkflowStepError, _Mapping]] = ..., retryable: _Optional[bool] = ..., retry_delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class FailStepResponse(_message.Message):
    __slots__ = ("step", "already_recorded", "workflow_status")
    STEP_FIELD_NUMBER: _ClassVar[int]
    ALREADY_RECORDED_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_STATUS_FIELD_NUMBER: _ClassVar[int]
    step: WorkflowStep
    already_recorded: bool
    workflow_status: WorkflowStatus
    def __init__(self, step: _Optional[_Union[WorkflowStep, _Mapping]] = ..., already_recorded: _Optional[bool] = ..., workflow_status: _Optional[_Union[WorkflowStatus, str]] = ...) -> None: ...

class SkipStepRequest(_message.Message):
    __slots__ = ("workflow_id", "step_id", "lease_id", "reason")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    step_id: str
    lease_id: str
    reason: str
    def __init__(self, workflow_id: _Optional[str] = ..., step_id: _Optional[str] = ..., lease_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class SkipStepResponse(_message.Message):
    __slots__ = ("step", "workflow_status")
    STEP_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_STATUS_FIELD_NUMBER: _ClassVar[int]
    step: WorkflowStep
    workflow_status: WorkflowStatus
    def __init__(self, step: _Optional[_Union[WorkflowStep, _Mapping]] = ..., workflow_status: _Optional[_Union[WorkflowStatus, str]] = ...) -> None: ...

class RenewStepLeaseRequest(_message.Message):
    __slots__ = ("workflow_id", "step_id", "lease_id", "lease_duration")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_DURATION_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    step_id: str
    lease_id: str
    lease_duration: _duration_pb2.Duration
    def __init__(self, workflow_id: _Optional[str] = ..., step_id: _Optional[str] = ..., lease_id: _Optional[str] = ..., lease_duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class RenewStepLeaseResponse(_message.Message):
    __slots__ = ("lease_expire_time",)
    LEASE_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    lease_expire_time: _timestamp_pb2.Timestamp
    def __init__(self, lease_expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CancelWorkflowRequest(_message.Message):
    __slots__ = ("workflow_id", "reason", "expected_etag")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_ETAG_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    reason: str
    expected_etag: str
    def __init__(self, workflow_id: _Optional[str] = ..., reason: _Optional[str] = ..., expected_etag: _Optional[str] = ...) -> None: ...

class CancelWorkflowResponse(_message.Message):
    __slots__ = ("workflow",)
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    workflow: Workflow
    def __init__(self, workflow: _Optional[_Union[Workflow, _Mapping]] = ...) -> None: ...
