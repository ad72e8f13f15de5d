"""The checkpoint store contract.

Every backend (embedded SQLite now, PostgreSQL next) implements this, and
tests/contract/test_checkpoint_store.py runs against each. The general rules
of storage/interfaces.py hold (tenant isolation, durability on return,
`StorageUnavailableError`, no partial change). These MUST rules are what
core/checkpoints/service.py relies on, and nothing else:

* Identity: a checkpoint is `(tenant, execution_id, namespace,
  checkpoint_id)`. Executions of different tenants never meet, whatever ids
  they use.
* Order: `sequence` is assigned from a per-(tenant, execution) counter that
  only grows, also across deletions; a replaced checkpoint keeps its
  sequence. Newest first means `create_time_ns` descending, then `sequence`
  descending, then (across executions only) `execution_id` and `namespace`
  descending: exactly `Position` order, reversed.
* Channel values are stored once per `(tenant, content_hash)`. A value is
  kept while any checkpoint of the tenant references its hash, and deleted
  in the same transaction that removes its last reference. A channel given
  without value and hash resolves to the value most recently saved for the
  same `(execution, namespace, channel, version)` among the stored
  checkpoints.
* Fencing: every write carries `fence_epoch` (0: not fenced). A fenced write
  whose epoch is below the execution's current ownership epoch MUST raise
  `OwnershipSupersededError` and store nothing; an epoch above it was never
  issued and MUST raise `InvalidArgumentError("ownership_epoch")`.
* Tombstones: DeleteExecution and DeleteRuns remember every id they remove,
  per (tenant, execution, namespace), until `forget_tombstones`. A save whose
  parent or own id is remembered, and writes against a remembered id, MUST
  raise `CheckpointDeletedError` and store nothing. Pruning leaves no
  tombstones. Copying onto a target forgets the target's tombstones of the
  ids it copies.
* Counts returned by removals count rows actually removed (or, in a dry
  run, that would have been), never requested ids.
* Audit: a mutation given an `AuditRecord` MUST store it in the same
  transaction as the change, and only if the change is stored: with revision
  = the checkpoint's sequence (save, writes), the new epoch (claim), or the
  execution's last sequence (delete, copy). Removals spanning executions
  (delete_runs, prune) store one record per execution they changed, with
  `entity_id` set to it.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.checkpoints.models import (
    CheckpointDraft,
    CheckpointQuery,
    Position,
    ReadOptions,
    RemovalCounts,
    SaveOutcome,
    StoredCheckpoint,
    WritesDraft,
    WritesOutcome,
)
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.schema_upgrades import Payload


class CheckpointStore(abc.ABC):
    """Durable store of checkpoints, their channel values and pending writes."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Creates or migrates the store's schema. Idempotent; MUST be called
        after the backend is started and before any other method."""

    @abc.abstractmethod
    async def save_checkpoint(
        self,
        tenant: str,
        record: CheckpointDraft,
        fence_epoch: int,
        audit: AuditRecord | None = None,
    ) -> SaveOutcome:
        """Saves `record` atomically.

        `record.create_time_ns` is set and every inline channel value carries
        its `content_hash`. `record.checkpoint_id` "" asks the store to assign
        `server_checkpoint_id(sequence)`. If the id exists, the checkpoint's
        content is replaced, its `sequence` and pending writes are kept, and
        `replaced` is True. MUST raise, storing nothing:
        `OwnershipSupersededError` / `InvalidArgumentError` per the fencing
        rule; `CheckpointDeletedError` if the parent or the id itself is a
        tombstone; `ChannelValueMissingError` if a channel's `content_hash`
        names no stored value, or a channel with neither value nor hash has
        no stored value for its version.
        """

    @abc.abstractmethod
    async def get_checkpoint(
        self,
        tenant: str,
        execution_id: str,
        namespace: str,
        checkpoint_id: str | None,
        options: ReadOptions,
    ) -> StoredCheckpoint | None:
        """Returns the named checkpoint, or the newest of the namespace when
        `checkpoint_id` is None; None if there is none.

        Channels always carry version and hash; values only if
        `options.include_values`. Pending writes (if `include_writes`) are
        ordered by (task_path, task_id, index).
        """

    @abc.abstractmethod
    async def list_checkpoints(
        self,
        tenant: str,
        query: CheckpointQuery,
        after: Position | None,
        limit: int,
        options: ReadOptions,
    ) -> list[StoredCheckpoint]:
        """Returns up to `limit` checkpoints matching `query`, newest first.

        With `after`, only checkpoints strictly after it in newest-first
        order. `query.before_checkpoint_id` keeps checkpoints whose id sorts
        strictly before it, byte by byte (an id comparison: it need not name
        a stored checkpoint). `query.metadata_filter` keeps checkpoints
        whose metadata has every key with an equal JSON value (numbers by
        value, objects and arrays by content).
        """

    @abc.abstractmethod
    async def put_writes(
        self,
        tenant: str,
        draft: WritesDraft,
        fence_epoch: int,
        audit: AuditRecord | None = None,
    ) -> WritesOutcome:
        """Stores the writes of one task atomically.

        Per (checkpoint, task_id, index): index >= 0 keeps the first write
        and counts a repeat as a duplicate; index < 0 replaces. MUST raise,
        storing nothing: fencing errors as for saves; `CheckpointDeletedError`
        if the checkpoint is a tombstone; `NotFoundError` if it does not
        exist.
        """

    @abc.abstractmethod
    async def get_channel_values(
        self, tenant: str, content_hashes: Sequence[str]
    ) -> dict[str, Payload]:
        """The stored values among `content_hashes`, by hash."""

    @abc.abstractmethod
    async def delete_execution(
        self, tenant: str, execution_id: str, now_ns: int, audit: AuditRecord | None = None
    ) -> RemovalCounts:
        """Removes every checkpoint and write of the execution in every
        namespace, and the channel values nothing references any more;
        tombstones every removed id with time `now_ns`. The ownership epoch
        and the sequence counter survive."""

    @abc.abstractmethod
    async def delete_runs(
        self,
        tenant: str,
        run_ids: Sequence[str],
        now_ns: int,
        audit: AuditRecord | None = None,
    ) -> RemovalCounts:
        """As delete_execution, for the checkpoints (of any execution and
        namespace) whose run_id is in `run_ids`, with their writes."""

    @abc.abstractmethod
    async def copy_execution(
        self,
        tenant: str,
        source_id: str,
        target_id: str,
        until_checkpoint_id: str | None,
        audit: AuditRecord | None = None,
    ) -> RemovalCounts:
        """Copies every checkpoint (same ids, sequences, times, metadata,
        channel references) and pending write of `source_id` to `target_id`,
        atomically; returns the numbers copied (channel_values 0).

        With `until_checkpoint_id`, only checkpoints at or before that
        root-namespace checkpoint's position. MUST raise `NotFoundError` if
        the source has no checkpoints or `until_checkpoint_id` names none in
        its root namespace, and `AlreadyExistsError` if the target has any
        checkpoint. The target's sequence counter ends at least at the
        source's.
        """

    @abc.abstractmethod
    async def prune(
        self,
        tenant: str,
        execution_ids: Sequence[str] | None,
        keep_last: int,
        dry_run: bool,
        audit: AuditRecord | None = None,
    ) -> RemovalCounts:
        """Keeps the newest `keep_last` checkpoints of every (execution,
        namespace) of `execution_ids` (None: every execution of the tenant),
        with their writes and every channel value they reference; removes the
        rest, their writes, and values no longer referenced. No tombstones.
        With `dry_run`, counts only and changes nothing."""

    @abc.abstractmethod
    async def claim_execution(
        self, tenant: str, execution_id: str, audit: AuditRecord | None = None
    ) -> int:
        """Returns a new ownership epoch, greater than every epoch before it
        for the execution (which need not have checkpoints)."""

    @abc.abstractmethod
    async def forget_tombstones(self, older_than_ns: int, limit: int) -> int:
        """Forgets up to `limit` tombstones (any tenant) deleted before
        `older_than_ns`; returns how many."""

    @abc.abstractmethod
    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        """Deletes every execution (all namespaces: checkpoints, channel
        references, writes, tombstones) with a checkpoint whose metadata has
        `user_id` equal to `subject.user_id`, then the blobs nothing refers
        to any more, in bounded batches. Returns the rows deleted per kind;
        `dry_run` deletes nothing. Idempotent."""
