"""Checkpoint records, drafts, queries and errors (rules: core/checkpoints/service.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statekeeper.core.errors import (
    FailedPreconditionError,
)
from statekeeper.core.schema_upgrades import Payload

# Audit records of checkpoint mutations are about the execution: that is what
# an operator looks up ("who deleted thread X?").
EXECUTION_ENTITY = "execution"


class CheckpointDeletedError(FailedPreconditionError):
    """A write names a checkpoint removed by DeleteExecution or DeleteRuns."""

    def __init__(self, execution_id: str, checkpoint_id: str) -> None:
        super().__init__(
            f"checkpoint {checkpoint_id!r} of execution {execution_id!r} was deleted;"
            " a write from before the deletion cannot bring it back",
            condition="CHECKPOINT_DELETED",
            checkpoint_id=checkpoint_id,
        )


class OwnershipSupersededError(FailedPreconditionError):
    """The writer's ownership epoch is older than the execution's."""

    def __init__(self, execution_id: str, sent_epoch: int, current_epoch: int) -> None:
        super().__init__(
            f"execution {execution_id!r} is owned under epoch {current_epoch};"
            f" a write with epoch {sent_epoch} was refused",
            condition="OWNERSHIP_SUPERSEDED",
            current_epoch=str(current_epoch),
        )


class ChannelValueMissingError(FailedPreconditionError):
    """A channel names a version or hash whose value is not stored."""

    def __init__(self, channel: str, why: str) -> None:
        super().__init__(
            f"channel {channel!r}: {why}; send the value inline",
            condition="CHANNEL_VALUE_MISSING",
            channel=channel,
        )


@dataclass(frozen=True)
class CheckpointLimits:
    """Limits of the checkpoint capability (see README, "Limits")."""

    # Execution ids, namespaces, checkpoint ids, task ids, channel names.
    max_key_bytes: int = 512
    # State, inline channel values and metadata of one SaveCheckpoint.
    max_checkpoint_bytes: int = 4 * 1024 * 1024
    # Values of one PutWrites.
    max_writes_bytes: int = 4 * 1024 * 1024
    max_channels: int = 4096
    max_writes_per_call: int = 4096
    max_metadata_bytes: int = 64 * 1024
    # Entries of GetChannelValues, DeleteRuns and PruneCheckpoints.
    max_batch: int = 1000
    default_keep_last: int = 10
    default_page_size: int = 50
    max_page_size: int = 1000
    # How long deleted checkpoint ids are remembered to refuse late writes.
    tombstone_retention_seconds: float = 30 * 24 * 3600.0


@dataclass(frozen=True)
class ChannelEntry:
    """One channel of a checkpoint: its version and (the hash of) its value."""

    version: str
    value: Payload | None = None
    content_hash: str = ""


@dataclass(frozen=True)
class CheckpointDraft:
    """A checkpoint to save. `checkpoint_id` "" asks the server for one;
    `create_time_ns` 0 means the time the server receives it."""

    execution_id: str
    namespace: str = ""
    checkpoint_id: str = ""
    parent_checkpoint_id: str = ""
    step: int = 0
    step_name: str = ""
    state: Payload = field(default_factory=Payload)
    channels: Mapping[str, ChannelEntry] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    run_id: str = ""
    create_time_ns: int = 0


@dataclass(frozen=True)
class PendingWrite:
    """One write of a task against a checkpoint."""

    task_id: str
    task_path: str
    index: int
    channel: str
    value: Payload


@dataclass(frozen=True)
class StoredCheckpoint:
    """A saved checkpoint as read back."""

    execution_id: str
    namespace: str
    checkpoint_id: str
    parent_checkpoint_id: str
    step: int
    step_name: str
    state: Payload
    channels: Mapping[str, ChannelEntry]
    metadata: Mapping[str, Any]
    run_id: str
    create_time_ns: int
    sequence: int
    pending_writes: tuple[PendingWrite, ...] = ()


@dataclass(frozen=True)
class SaveOutcome:
    checkpoint_id: str
    sequence: int
    create_time_ns: int
    replaced: bool


@dataclass(frozen=True)
class WriteEntry:
    index: int
    channel: str
    value: Payload


@dataclass(frozen=True)
class WritesDraft:
    """The writes of one task against one checkpoint."""

    execution_id: str
    namespace: str
    checkpoint_id: str
    task_id: str
    task_path: str
    writes: tuple[WriteEntry, ...]


@dataclass(frozen=True)
class WritesOutcome:
    stored: int
    duplicates: int


@dataclass(frozen=True, order=True)
class Position:
    """Where a checkpoint sits in the listing order (newest first):
    `create_time_ns`, then `sequence`, then ids for cross-execution ties."""

    create_time_ns: int
    sequence: int
    execution_id: str = ""
    namespace: str = ""

    def to_token(self) -> list[Any]:
        return [self.create_time_ns, self.sequence, self.execution_id, self.namespace]


@dataclass(frozen=True)
class CheckpointQuery:
    """Filters of ListCheckpoints; "" / None mean "any"."""

    execution_id: str = ""
    namespace: str | None = None
    metadata_filter: Mapping[str, Any] = field(default_factory=dict)
    run_id: str = ""
    # Only checkpoints whose id sorts strictly before this one, byte by byte
    # (UTF-8); "" means no bound. An id comparison, not a position: the id
    # need not name a stored checkpoint (LangGraph bounds a subgraph's
    # history by a parent checkpoint's id; its ids, UUIDv6, sort by time).
    before_checkpoint_id: str = ""


@dataclass(frozen=True)
class ReadOptions:
    include_values: bool = True
    include_writes: bool = True


@dataclass(frozen=True)
class RemovalCounts:
    checkpoints: int = 0
    writes: int = 0
    channel_values: int = 0
