"""Checkpoints of graph-shaped executions (LangGraph threads).

An execution holds checkpoints in namespaces. Order within an execution is
`create_time`, ties broken by the server-assigned `sequence`, never the
lexical order of ids: clients pick ids that need not sort by time. The one
exception is the `before` bound of a listing, which compares ids (see
CheckpointQuery): that is what LangGraph's savers do, and LangGraph relies
on it when it replays a subgraph from a parent's checkpoint id, an id that
names no checkpoint of the subgraph's namespace.

Channel values are stored once, by content hash; a checkpoint names each
channel's version and the hash of its value. Deletion (of an execution, or of
runs) is final: the deleted ids are remembered as tombstones, so that a
worker still holding one cannot bring the execution back. Pruning is not
final. Ownership epochs fence writers: a write with an epoch older than the
execution's current one stores nothing.

Every mutation hands the store an audit record (who, what, when) to write in
the same transaction; its revision is the checkpoint's sequence where there
is one, filled in by the store.

This module validates input and applies the schema upgrades on read; the
store (core/checkpoints/store.py) does everything that must be atomic.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from statekeeper.core import paging
from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.audit.service import Actor, record_for
from statekeeper.core.checkpoints.models import (
    EXECUTION_ENTITY,
    ChannelEntry,
    ChannelValueMissingError,
    CheckpointDraft,
    CheckpointLimits,
    CheckpointQuery,
    PendingWrite,
    Position,
    ReadOptions,
    RemovalCounts,
    SaveOutcome,
    StoredCheckpoint,
    WritesDraft,
    WritesOutcome,
)
from statekeeper.core.errors import (
    InvalidArgumentError,
    LimitExceededError,
    NotFoundError,
)
from statekeeper.core.schema_upgrades import Payload, UpgradeRegistry
from statekeeper.core.validation import check_non_negative

if TYPE_CHECKING:
    from statekeeper.core.checkpoints.store import CheckpointStore

ClockNs = Callable[[], int]


_CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")
_CONTENT_HASH = re.compile(r"^[0-9a-f]{64}$")
_MAX_SAFE_INTEGER = 2**53


# ----- errors ------------------------------------------------------------------


# ----- limits ------------------------------------------------------------------


# ----- records -----------------------------------------------------------------


# ----- the capability ----------------------------------------------------------


class HistoryRestorer(Protocol):
    """Brings archived checkpoint histories back (core/archive/checkpoints.py
    ArchivedHistories); each returns True when it restored something."""

    async def execution(self, tenant: str, execution_id: str) -> bool: ...

    async def tenant(self, tenant: str) -> bool: ...

    async def runs(self, tenant: str, run_ids: Sequence[str]) -> bool: ...

    async def values(self, tenant: str, content_hashes: Sequence[str]) -> bool: ...

    async def discard(self, tenant: str, execution_id: str) -> None: ...


class CheckpointManager:
    """The checkpoint capability, independent of transport and storage."""

    def __init__(
        self,
        store: CheckpointStore,
        limits: CheckpointLimits,
        upgrades: UpgradeRegistry,
        clock_ns: ClockNs = time.time_ns,
    ) -> None:
        self._store = store
        self._limits = limits
        self._upgrades = upgrades
        self._clock_ns = clock_ns
        # Set when the archive tier keeps checkpoint histories: what reads
        # and whole-history operations use to restore them first.
        self.histories: HistoryRestorer | None = None

    async def save(self, actor: Actor, draft: CheckpointDraft, ownership_epoch: int) -> SaveOutcome:
        self._check_draft(draft)
        check_non_negative("ownership_epoch", ownership_epoch)
        record = replace(
            draft,
            channels={name: _hashed(entry) for name, entry in draft.channels.items()},
            metadata=canonical_json("checkpoint.metadata", draft.metadata),
            run_id=draft.run_id or _run_id_from(draft.metadata),
            create_time_ns=draft.create_time_ns or self._clock_ns(),
        )
        audit = self._audit(
            actor,
            draft.execution_id,
            f"saved checkpoint {draft.checkpoint_id or '(server id)'}"
            f" in namespace {draft.namespace!r}",
        )
        try:
            return await self._store.save_checkpoint(actor.tenant, record, ownership_epoch, audit)
        except ChannelValueMissingError:
            # A channel named by version whose value only the archived
            # history holds: restored, the save resolves it.
            if not await self._restore_execution(actor.tenant, draft.execution_id):
                raise
            return await self._store.save_checkpoint(actor.tenant, record, ownership_epoch, audit)

    async def get(
        self,
        tenant: str,
        execution_id: str,
        namespace: str,
        checkpoint_id: str,
        options: ReadOptions,
    ) -> StoredCheckpoint:
        self._check_key("execution_id", execution_id)
        self._check_key("namespace", namespace, required=False)
        self._check_key("checkpoint_id", checkpoint_id, required=False)
        found = await self._store.get_checkpoint(
            tenant, execution_id, namespace, checkpoint_id or None, options
        )
        # Not hot: an archived checkpoint, or (its newest ones deleted since)
        # the namespace's newest is in the archived history.
        if found is None and await self._restore_execution(tenant, execution_id):
            found = await self._store.get_checkpoint(
                tenant, execution_id, namespace, checkpoint_id or None, options
            )
        if found is None:
            what = f"checkpoint {checkpoint_id!r}" if checkpoint_id else "a checkpoint"
            raise NotFoundError(
                f"execution {execution_id!r} has no {what} in namespace {namespace!r}"
            )
        return self._upgraded(found)

    async def list_checkpoints(
        self,
        tenant: str,
        query: CheckpointQuery,
        requested_page_size: int,
        page_token: str,
        options: ReadOptions,
    ) -> tuple[list[StoredCheckpoint], str]:
        size = self._page_size(requested_page_size)
        query = replace(
            query, metadata_filter=canonical_json("metadata_filter", query.metadata_filter)
        )
        self._check_query(query)
        filters = _query_digest(query, options)
        after = _position_from(paging.decode(page_token, "checkpoints", filters))
        if self.histories is not None:
            # Archived checkpoints may sort anywhere among the hot ones (of
            # other namespaces): the history comes back before any page.
            if query.execution_id:
                await self.histories.execution(tenant, query.execution_id)
            elif query.run_id:
                await self.histories.runs(tenant, [query.run_id])
            else:
                await self.histories.tenant(tenant)
        found = await self._store.list_checkpoints(tenant, query, after, size + 1, options)
        next_token = ""
        if len(found) > size:
            found = found[:size]
            next_token = paging.encode("checkpoints", filters, _position(found[-1]).to_token())
        return [self._upgraded(checkpoint) for checkpoint in found], next_token

    async def put_writes(
        self, actor: Actor, draft: WritesDraft, ownership_epoch: int
    ) -> WritesOutcome:
        self._check_writes(draft)
        check_non_negative("ownership_epoch", ownership_epoch)
        audit = self._audit(
            actor,
            draft.execution_id,
            f"stored {len(draft.writes)} write(s) of task {draft.task_id}"
            f" against checkpoint {draft.checkpoint_id} in namespace {draft.namespace!r}",
        )
        try:
            return await self._store.put_writes(actor.tenant, draft, ownership_epoch, audit)
        except NotFoundError:
            if not await self._restore_execution(actor.tenant, draft.execution_id):
                raise
            return await self._store.put_writes(actor.tenant, draft, ownership_epoch, audit)

    async def channel_values(
        self, tenant: str, content_hashes: Sequence[str]
    ) -> tuple[dict[str, Payload], list[str]]:
        """The stored values by hash, and the hashes that have none."""
        if not content_hashes:
            raise InvalidArgumentError("content_hashes", "must not be empty")
        self._check_batch("content_hashes", content_hashes)
        for index, content_hash in enumerate(content_hashes):
            _check_content_hash(f"content_hashes[{index}]", content_hash)
        wanted = list(dict.fromkeys(content_hashes))
        found = await self._store.get_channel_values(tenant, wanted)
        missing = [key for key in wanted if key not in found]
        if missing and self.histories and await self.histories.values(tenant, missing):
            found = await self._store.get_channel_values(tenant, wanted)
        values = {key: self._upgrades.upgrade(value) for key, value in found.items()}
        return values, [key for key in wanted if key not in found]

    async def delete_execution(self, actor: Actor, execution_id: str) -> RemovalCounts:
        self._check_key("execution_id", execution_id)
        audit = self._audit(actor, execution_id, "deleted the execution (final)")
        # Restored first, so that its ids are remembered as deleted too.
        await self._restore_execution(actor.tenant, execution_id)
        counts = await self._store.delete_execution(
            actor.tenant, execution_id, self._clock_ns(), audit
        )
        if self.histories is not None:
            await self.histories.discard(actor.tenant, execution_id)
        return counts

    async def delete_runs(self, actor: Actor, run_ids: Sequence[str]) -> RemovalCounts:
        self._check_batch("run_ids", run_ids)
        for index, run_id in enumerate(run_ids):
            self._check_key(f"run_ids[{index}]", run_id, required=False)
        wanted = sorted({run_id for run_id in run_ids if run_id})
        if not wanted:
            return RemovalCounts()
        shown = ", ".join(wanted[:10]) + (" ..." if len(wanted) > 10 else "")
        audit = self._audit(actor, "", f"deleted the checkpoints of runs {shown} (final)")
        if self.histories is not None:
            await self.histories.runs(actor.tenant, wanted)
        return await self._store.delete_runs(actor.tenant, wanted, self._clock_ns(), audit)

    async def copy_execution(
        self, actor: Actor, source_id: str, target_id: str, until_checkpoint_id: str
    ) -> RemovalCounts:
        """Returns the numbers of checkpoints and writes copied."""
        self._check_key("source_execution_id", source_id)
        self._check_key("target_execution_id", target_id)
        self._check_key("until_checkpoint_id", until_checkpoint_id, required=False)
        if source_id == target_id:
            raise InvalidArgumentError("target_execution_id", "must differ from the source")
        until = f" until checkpoint {until_checkpoint_id}" if until_checkpoint_id else ""
        audit = self._audit(actor, target_id, f"copied from execution {source_id}{until}")
        await self._restore_execution(actor.tenant, source_id)
        return await self._store.copy_execution(
            actor.tenant, source_id, target_id, until_checkpoint_id or None, audit
        )

    async def prune(
        self,
        actor: Actor,
        execution_ids: Sequence[str],
        all_executions: bool,
        keep_last: int | None,
        dry_run: bool,
    ) -> RemovalCounts:
        keep = self._limits.default_keep_last if keep_last is None else keep_last
        check_non_negative("keep_last", keep)
        if execution_ids and all_executions:
            raise InvalidArgumentError(
                "all_executions", "must be unset when execution_ids are given"
            )
        self._check_batch("execution_ids", execution_ids)
        for index, execution_id in enumerate(execution_ids):
            self._check_key(f"execution_ids[{index}]", execution_id)
        if not execution_ids and not all_executions:
            return RemovalCounts()
        targets = None if all_executions else sorted(set(execution_ids))
        if self.histories is not None:
            if targets is None:
                await self.histories.tenant(actor.tenant)
            for execution_id in targets or ():
                await self.histories.execution(actor.tenant, execution_id)
        audit = None if dry_run else self._audit(actor, "", f"pruned to the newest {keep}")
        return await self._store.prune(actor.tenant, targets, keep, dry_run, audit)

    async def claim_execution(self, actor: Actor, execution_id: str) -> int:
        self._check_key("execution_id", execution_id)
        audit = self._audit(actor, execution_id, "claimed write ownership")
        return await self._store.claim_execution(actor.tenant, execution_id, audit)

    async def sweep_tombstones(self, batch: int = 1000, max_batches: int = 100) -> int:
        """Forgets deleted checkpoint ids older than the retention; returns
        how many. Bounded per call; the next sweep continues."""
        cutoff = self._clock_ns() - int(self._limits.tombstone_retention_seconds * 1e9)
        total = 0
        for _ in range(max_batches):
            forgotten = await self._store.forget_tombstones(cutoff, batch)
            total += forgotten
            if forgotten < batch:
                break
        return total

    # ----- helpers -----------------------------------------------------------

    async def _restore_execution(self, tenant: str, execution_id: str) -> bool:
        """Brings the execution's archived history back; True if it did."""
        if self.histories is None:
            return False
        return await self.histories.execution(tenant, execution_id)

    def _audit(self, actor: Actor, execution_id: str, summary: str) -> AuditRecord:
        """The record of one mutation; the store sets the revision (and the
        execution, for removals that span several)."""
        return record_for(actor, EXECUTION_ENTITY, execution_id, 0, self._clock_ns() / 1e9, summary)

    def _upgraded(self, checkpoint: StoredCheckpoint) -> StoredCheckpoint:
        """`checkpoint` with every payload at its newest schema version. The
        registry returns a payload unchanged when it has nothing to do (the
        usual case), and then so does this: no copies on every read."""
        upgrade = self._upgrades.upgrade
        state = upgrade(checkpoint.state)
        channels = {
            name: entry if entry.value is None else _with_value(entry, upgrade(entry.value))
            for name, entry in checkpoint.channels.items()
        }
        writes = tuple(
            _with_value(write, upgrade(write.value)) for write in checkpoint.pending_writes
        )
        unchanged = (
            state is checkpoint.state
            and all(channels[name] is entry for name, entry in checkpoint.channels.items())
            and all(new is old for new, old in zip(writes, checkpoint.pending_writes, strict=True))
        )
        if unchanged:
            return checkpoint
        return replace(checkpoint, state=state, channels=channels, pending_writes=writes)

    def _page_size(self, requested: int) -> int:
        check_non_negative("page_size", requested)
        if requested == 0:
            return self._limits.default_page_size
        return min(requested, self._limits.max_page_size)

    def _check_key(self, field_name: str, value: str, required: bool = True) -> None:
        check_key(field_name, value, self._limits.max_key_bytes, required)

    def _check_batch(self, field_name: str, items: Sequence[Any]) -> None:
        if len(items) > self._limits.max_batch:
            raise LimitExceededError(field_name, self._limits.max_batch, f"has {len(items)} items")

    def _check_draft(self, draft: CheckpointDraft) -> None:
        self._check_key("checkpoint.execution_id", draft.execution_id)
        self._check_key("checkpoint.namespace", draft.namespace, required=False)
        self._check_key("checkpoint.checkpoint_id", draft.checkpoint_id, required=False)
        self._check_key(
            "checkpoint.parent_checkpoint_id", draft.parent_checkpoint_id, required=False
        )
        self._check_key("checkpoint.step_name", draft.step_name, required=False)
        self._check_key("checkpoint.run_id", draft.run_id, required=False)
        check_non_negative("checkpoint.create_time", draft.create_time_ns)
        if len(draft.channels) > self._limits.max_channels:
            raise LimitExceededError(
                "checkpoint.channels", self._limits.max_channels, f"has {len(draft.channels)}"
            )
        for name, entry in draft.channels.items():
            self._check_channel(f"checkpoint.channels[{name!r}]", name, entry)
        metadata_bytes = json_size("checkpoint.metadata", draft.metadata)
        if metadata_bytes > self._limits.max_metadata_bytes:
            raise LimitExceededError(
                "checkpoint.metadata", self._limits.max_metadata_bytes, f"is {metadata_bytes} bytes"
            )
        total = (
            draft.state.size
            + metadata_bytes
            + sum(entry.value.size for entry in draft.channels.values() if entry.value)
        )
        if total > self._limits.max_checkpoint_bytes:
            raise LimitExceededError(
                "checkpoint", self._limits.max_checkpoint_bytes, f"is {total} bytes"
            )

    def _check_channel(self, field_name: str, name: str, entry: ChannelEntry) -> None:
        self._check_key(field_name, name)
        self._check_key(f"{field_name}.version", entry.version)
        if entry.value is not None and entry.content_hash:
            raise InvalidArgumentError(field_name, "names both a value and a content_hash")
        if entry.content_hash:
            _check_content_hash(f"{field_name}.content_hash", entry.content_hash)

    def _check_writes(self, draft: WritesDraft) -> None:
        self._check_key("execution_id", draft.execution_id)
        self._check_key("namespace", draft.namespace, required=False)
        self._check_key("checkpoint_id", draft.checkpoint_id)
        self._check_key("task_id", draft.task_id)
        self._check_key("task_path", draft.task_path, required=False)
        if not draft.writes:
            raise InvalidArgumentError("writes", "must not be empty")
        if len(draft.writes) > self._limits.max_writes_per_call:
            raise LimitExceededError(
                "writes", self._limits.max_writes_per_call, f"has {len(draft.writes)} items"
            )
        seen: set[int] = set()
        for position, write in enumerate(draft.writes):
            if write.index in seen:
                raise InvalidArgumentError(
                    f"writes[{position}].index", f"repeats index {write.index}"
                )
            seen.add(write.index)
            self._check_key(f"writes[{position}].channel", write.channel)
        total = sum(write.value.size for write in draft.writes)
        if total > self._limits.max_writes_bytes:
            raise LimitExceededError("writes", self._limits.max_writes_bytes, f"is {total} bytes")

    def _check_query(self, query: CheckpointQuery) -> None:
        self._check_key("execution_id", query.execution_id, required=False)
        if query.namespace is not None:
            self._check_key("namespace", query.namespace, required=False)
        self._check_key("run_id", query.run_id, required=False)
        self._check_key("before_checkpoint_id", query.before_checkpoint_id, required=False)
        for key in query.metadata_filter:
            if not key:
                raise InvalidArgumentError("metadata_filter", "keys must not be empty")
        size = json_size("metadata_filter", query.metadata_filter)
        if size > self._limits.max_metadata_bytes:
            raise LimitExceededError(
                "metadata_filter", self._limits.max_metadata_bytes, f"is {size} bytes"
            )


# ----- shared rules (also used by the stores) ----------------------------------


def check_key(field_name: str, value: str, max_bytes: int, required: bool = True) -> None:
    """Keys chosen by LangGraph (thread ids, `a:b|c:d` namespaces, channel
    names) are free text: any printable text up to `max_bytes`."""
    if not value:
        if required:
            raise InvalidArgumentError(field_name, "is required")
        return
    if len(value.encode("utf-8")) > max_bytes:
        raise InvalidArgumentError(field_name, f"is longer than {max_bytes} bytes")
    if _CONTROL_CHARACTERS.search(value):
        raise InvalidArgumentError(field_name, "must not contain control characters")


def canonical_json(field_name: str, value: Mapping[str, Any]) -> dict[str, Any]:
    """`value` with integral numbers as ints, so that equal JSON values
    (1 and 1.0, as protobuf Struct sends every number) store and compare the
    same. Non-finite numbers are refused: they are not JSON."""
    return {str(key): _canonical(f"{field_name}[{key!r}]", item) for key, item in value.items()}


def _canonical(field_name: str, value: Any) -> Any:
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgumentError(field_name, "numbers must be finite")
        if value.is_integer() and abs(value) < _MAX_SAFE_INTEGER:
            return int(value)
        return value
    if isinstance(value, Mapping):
        return canonical_json(field_name, value)
    if isinstance(value, (list, tuple)):
        return [_canonical(f"{field_name}[{index}]", item) for index, item in enumerate(value)]
    raise InvalidArgumentError(field_name, f"is not a JSON value ({type(value).__name__})")


def json_size(field_name: str, value: Mapping[str, Any]) -> int:
    try:
        return len(json.dumps(value, separators=(",", ":"), allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(field_name, f"is not JSON: {exc}") from exc


def server_checkpoint_id(sequence: int) -> str:
    """Ids the server assigns: zero-padded sequence numbers, which sort
    lexically in save order."""
    return f"{sequence:020d}"


def _check_content_hash(field_name: str, content_hash: str) -> None:
    if not _CONTENT_HASH.match(content_hash):
        raise InvalidArgumentError(field_name, "must be 64 lower-case hex digits (SHA-256)")


def _hashed(entry: ChannelEntry) -> ChannelEntry:
    if entry.value is None:
        return entry
    return replace(entry, content_hash=entry.value.content_hash())


_Valued = TypeVar("_Valued", ChannelEntry, PendingWrite)


def _with_value(item: _Valued, value: Payload) -> _Valued:
    """`item` itself when `value` is already its value, else a copy with it."""
    return item if value is item.value else replace(item, value=value)


def _run_id_from(metadata: Mapping[str, Any]) -> str:
    run_id = metadata.get("run_id")
    return run_id if isinstance(run_id, str) else ""


def _position(checkpoint: StoredCheckpoint) -> Position:
    return Position(
        checkpoint.create_time_ns,
        checkpoint.sequence,
        checkpoint.execution_id,
        checkpoint.namespace,
    )


def _position_from(token: Any) -> Position | None:
    if token is None:
        return None
    try:
        create_time_ns, sequence, execution_id, namespace = token
        return Position(int(create_time_ns), int(sequence), str(execution_id), str(namespace))
    except (TypeError, ValueError):
        raise InvalidArgumentError("page_token", "is malformed") from None


def _query_digest(query: CheckpointQuery, options: ReadOptions) -> Any:
    return [
        query.execution_id,
        query.namespace,
        dict(query.metadata_filter),
        query.run_id,
        query.before_checkpoint_id,
        options.include_values,
        options.include_writes,
    ]
