"""Blackboard: revisioned key/value boards with compare-and-swap, transactions,
TTL, history and Watch.

Every mutation is a pure decision over the live entries of the keys it names
(`Decide`); the store runs it serialized with the tenant's other mutations
and stamps the changes with the next tenant revision. So compare-and-swap
needs no retry loop here: the decision sees exactly the state it commits on.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from statekeeper.core import observations, paging
from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.audit.service import BLACKBOARD_ENTITY, Actor, record_for
from statekeeper.core.blackboard.keys import KeyMatcher, check_board, check_key, selector
from statekeeper.core.blackboard.models import (
    BlackboardLimits,
    Decision,
    Entry,
    Event,
    EventType,
    Header,
    MutationView,
    ReadResult,
    RevisionCompactedError,
    RevisionMismatchError,
    Value,
    ValueKind,
    tombstone,
)
from statekeeper.core.blackboard.store import ArchivedHistory, BlackboardStore, HistoryCompactor
from statekeeper.core.blackboard.watch import LiveSender, WatchHub, WatchMessage, WatchSpec
from statekeeper.core.errors import InvalidArgumentError, LimitExceededError
from statekeeper.core.tasks import cancel_and_wait, repeat_every
from statekeeper.core.validation import check_non_negative

log = logging.getLogger(__name__)

Clock = Callable[[], float]


# ----- requests and results ---------------------------------------------------


class CompareTarget(enum.Enum):
    MOD_REVISION = "mod_revision"
    CREATE_REVISION = "create_revision"
    VERSION = "version"
    VALUE = "value"
    EXISTS = "exists"


class CompareOperator(enum.IntEnum):
    """Values equal the proto enum numbers."""

    EQUAL = 1
    NOT_EQUAL = 2
    GREATER = 3
    LESS = 4


@dataclass(frozen=True)
class Compare:
    key: str
    operator: CompareOperator
    target: CompareTarget
    operand: int | bool | Value


@dataclass(frozen=True)
class PutOp:
    key: str
    value: Value | None
    ttl_seconds: float | None = None
    keep_ttl: bool = False
    return_previous: bool = False


@dataclass(frozen=True)
class DeleteOp:
    key: str
    return_previous: bool = False


@dataclass(frozen=True)
class GetOp:
    key: str


Op = PutOp | DeleteOp | GetOp


@dataclass(frozen=True)
class PutResult:
    entry: Entry
    previous: Entry | None


@dataclass(frozen=True)
class DeleteResult:
    deleted: bool
    previous: Entry | None


@dataclass(frozen=True)
class GetResult:
    entry: Entry | None


OpResult = PutResult | DeleteResult | GetResult


@dataclass(frozen=True)
class PutOutcome:
    header: Header
    entry: Entry
    previous: Entry | None


@dataclass(frozen=True)
class DeleteOutcome:
    header: Header
    deleted: bool
    previous: Entry | None


@dataclass(frozen=True)
class GetOutcome:
    header: Header
    entry: Entry | None


@dataclass(frozen=True)
class ListOutcome:
    header: Header
    entries: list[Entry]
    next_page_token: str


@dataclass(frozen=True)
class TxnOutcome:
    header: Header
    succeeded: bool
    results: list[OpResult]


@dataclass(frozen=True)
class WatchRequest:
    """A Watch as the transport parsed it; the domain validates it."""

    board: str
    prefix: str | None = None
    pattern: str | None = None
    start_revision: int = 0
    initial_snapshot: bool = False
    prev_value: bool = False
    progress_interval_seconds: float | None = None
    event_types: frozenset[EventType] = frozenset()


# ----- the capability ----------------------------------------------------------


class Blackboard:
    """The blackboard capability, independent of transport and storage."""

    def __init__(
        self,
        store: BlackboardStore,
        limits: BlackboardLimits | None = None,
        clock: Clock = time.time,
    ) -> None:
        self._store = store
        self._limits = limits or BlackboardLimits()
        self._clock = clock
        self.hub = WatchHub(store, self._limits)
        self._tasks: list[asyncio.Task[None]] = []
        # History archived before compaction (--archive-blackboard-history;
        # attached by the capability): reads below the oldest hot revision
        # read it through, and while `compactor` is set compaction goes
        # through the archive (the automatic one is then the archiver's).
        self.archived: ArchivedHistory | None = None
        self.compactor: HistoryCompactor | None = None

    def attach_archived_history(
        self, archived: ArchivedHistory, compactor: HistoryCompactor | None
    ) -> None:
        self.archived = archived
        self.hub.archived = archived
        self.compactor = compactor

    @property
    def limits(self) -> BlackboardLimits:
        return self._limits

    # ----- lifecycle -----------------------------------------------------------

    async def start(self) -> None:
        """Starts the watch hub and the background expiry and compaction."""
        await self.hub.start()
        self._tasks = [
            asyncio.create_task(self._expire_forever(), name="blackboard-expiry"),
            asyncio.create_task(self._compact_forever(), name="blackboard-compaction"),
        ]

    async def stop(self) -> None:
        """Stops background work and ends every open watch (UNAVAILABLE)."""
        tasks, self._tasks = self._tasks, []
        await cancel_and_wait(tasks)
        await self.hub.stop()

    async def _expire_forever(self) -> None:
        async def sweep() -> None:
            await self.expire_due()
            observations.swept("blackboard_expiry")

        interval = self._limits.expiry_sweep_interval_seconds
        await repeat_every(interval, sweep, "blackboard expiry sweep", log)

    async def _compact_forever(self) -> None:
        async def compact() -> None:
            await self.compact_expired_history()
            observations.swept("blackboard_compaction")

        interval = self._limits.compaction_interval_seconds
        await repeat_every(interval, compact, "blackboard history compaction", log)

    async def expire_due(self) -> int:
        """Removes every expired key (EXPIRE events); returns how many."""
        total = 0
        batch_size = self._limits.expiry_batch
        for _ in range(1000):  # bounded: a huge backlog continues next tick
            batches = await self._store.expire_due(self._clock(), batch_size)
            removed = sum(len(batch.events) for batch in batches)
            total += removed
            if removed < batch_size:
                break
        return total

    async def compact_expired_history(self) -> list[tuple[str, int]]:
        if self.compactor is not None:
            return []  # the archiver archives, then compacts, by the same rule
        compacted = await self._store.compact_expired_history(
            self._clock(),
            self._limits.history_retention_seconds,
            self._limits.history_max_revisions,
        )
        for tenant, oldest in compacted:
            log.info("compacted blackboard history", extra={"tenant": tenant, "oldest": oldest})
        return compacted

    # ----- single keys -------------------------------------------------------

    async def put(
        self,
        tenant: str,
        board: str,
        op: PutOp,
        writer_agent_id: str = "",
        expected_mod_revision: int | None = None,
        actor: Actor | None = None,
    ) -> PutOutcome:
        check_board("board", board, self._limits)
        self._check_put(op, "")
        self._check_writer(writer_agent_id)
        if expected_mod_revision is not None:
            check_non_negative("expected_mod_revision", expected_mod_revision)
        max_keys = self._limits.max_keys_per_tenant

        def decide(view: MutationView) -> Decision[PutResult]:
            current = view.entries.get(op.key)
            _check_expected(op.key, current, expected_mod_revision)
            if current is None and view.key_count >= max_keys:
                raise LimitExceededError("key", max_keys, "the tenant has too many keys")
            entry = _put_entry(board, op, current, view, writer_agent_id)
            previous = current if op.return_previous else None
            return Decision((Event(EventType.PUT, entry, current),), PutResult(entry, previous))

        now = self._clock()
        audit = _audit_template(actor, board, now)
        outcome = await self._store.mutate(tenant, board, [op.key], now, decide, audit)
        return PutOutcome(outcome.header, outcome.result.entry, outcome.result.previous)

    async def delete(
        self,
        tenant: str,
        board: str,
        key: str,
        expected_mod_revision: int | None = None,
        return_previous: bool = False,
        actor: Actor | None = None,
    ) -> DeleteOutcome:
        check_board("board", board, self._limits)
        check_key("key", key, self._limits)
        if expected_mod_revision is not None and expected_mod_revision <= 0:
            raise InvalidArgumentError("expected_mod_revision", "must be positive when set")

        def decide(view: MutationView) -> Decision[DeleteResult]:
            current = view.entries.get(key)
            _check_expected(key, current, expected_mod_revision)
            if current is None:
                return Decision((), DeleteResult(False, None))
            gone = tombstone(board, key, view.revision, view.now)
            previous = current if return_previous else None
            return Decision((Event(EventType.DELETE, gone, current),), DeleteResult(True, previous))

        now = self._clock()
        audit = _audit_template(actor, board, now)
        outcome = await self._store.mutate(tenant, board, [key], now, decide, audit)
        result = outcome.result
        return DeleteOutcome(outcome.header, result.deleted, result.previous)

    async def get(self, tenant: str, board: str, key: str, revision: int = 0) -> GetOutcome:
        check_board("board", board, self._limits)
        check_key("key", key, self._limits)
        check_non_negative("revision", revision)
        # Expiry hides a key from current reads at once; a read at a past
        # revision shows that revision as it was recorded.
        visible_at = self._clock() if revision == 0 else None
        try:
            result = await self._store.read(tenant, board, [key], revision, visible_at)
        except RevisionCompactedError as error:
            if self.archived is None:
                raise
            oldest = error.oldest_revision
            entries = await self.archived.read(tenant, board, [key], revision, oldest)
            result = ReadResult(Header(revision, oldest), revision, entries)
        entry = result.entries[0] if result.entries else None
        return GetOutcome(Header(result.revision, result.header.oldest_revision), entry)

    # ----- listing -------------------------------------------------------------

    async def list_entries(
        self,
        tenant: str,
        board: str,
        prefix: str | None,
        pattern: str | None,
        revision: int,
        requested_page_size: int,
        page_token: str,
        keys_only: bool,
    ) -> ListOutcome:
        check_board("board", board, self._limits)
        matcher = selector(prefix, pattern, self._limits)
        check_non_negative("revision", revision)
        size = self._page_size(requested_page_size)
        filters = [board, prefix, pattern, keys_only]
        position = paging.decode(page_token, "blackboard", filters)
        if position is None:
            at_revision = revision
            visible_at = self._clock() if revision == 0 else None
            after_key = None
        else:
            at_revision, visible_at, after_key = _list_position(position)
        result = await self._list(tenant, board, matcher, at_revision, visible_at, after_key, size)
        entries = result.entries
        next_token = ""
        if len(entries) > size:
            entries = entries[:size]
            next_token = paging.encode(
                "blackboard", filters, [result.revision, visible_at, entries[-1].key]
            )
        if keys_only:
            entries = [entry.without_value() for entry in entries]
        header = Header(result.revision, result.header.oldest_revision)
        return ListOutcome(header, entries, next_token)

    async def _list(
        self,
        tenant: str,
        board: str,
        matcher: KeyMatcher,
        revision: int,
        visible_at: float | None,
        after_key: str | None,
        size: int,
    ) -> ReadResult:
        """One page (and one entry more), read through archived history
        when `revision` is below the oldest hot one."""
        try:
            result = await self._store.list_entries(
                tenant, board, matcher, revision, visible_at, after_key, size + 1
            )
            oldest = result.header.oldest_revision
        except RevisionCompactedError as error:
            if self.archived is None:
                raise
            oldest = error.oldest_revision
        # The store admits oldest - 1 for watch snapshots; a listing does not.
        if revision and revision < oldest:
            if self.archived is None:
                raise RevisionCompactedError(revision, oldest)
            page = (revision, visible_at, after_key, size + 1)
            entries = await self._archived_page(self.archived, tenant, board, matcher, page, oldest)
            return ReadResult(Header(revision, oldest), revision, entries)
        return result

    @staticmethod
    async def _archived_page(
        archived: ArchivedHistory,
        tenant: str,
        board: str,
        matcher: KeyMatcher,
        page: tuple[int, float | None, str | None, int],
        oldest: int,
    ) -> list[Entry]:
        """Up to `limit` archived entries at `revision` after `after_key`
        (`page`: revision, visible_at, after_key, limit), without those
        expired at `visible_at`, as the hot store's listings leave them out
        at any revision: reading goes on past the expired ones."""
        revision, visible_at, after_key, limit = page
        entries: list[Entry] = []
        while len(entries) < limit:
            found = await archived.list_entries(
                tenant, board, matcher, revision, after_key, limit, oldest
            )
            entries.extend(e for e in found if visible_at is None or not e.is_expired(visible_at))
            if len(found) < limit:
                break
            after_key = found[-1].key
        return entries[:limit]

    def _page_size(self, requested: int) -> int:
        check_non_negative("page_size", requested)
        if requested == 0:
            return self._limits.default_page_size
        return min(requested, self._limits.max_page_size)

    # ----- transactions ----------------------------------------------------------

    async def txn(
        self,
        tenant: str,
        board: str,
        compares: Sequence[Compare],
        success: Sequence[Op],
        failure: Sequence[Op],
        writer_agent_id: str = "",
        actor: Actor | None = None,
    ) -> TxnOutcome:
        check_board("board", board, self._limits)
        self._check_writer(writer_agent_id)
        self._check_compares(compares)
        self._check_branch("success", success)
        self._check_branch("failure", failure)
        keys = sorted({c.key for c in compares} | {op.key for op in (*success, *failure)})
        max_keys = self._limits.max_keys_per_tenant

        def decide(view: MutationView) -> Decision[tuple[bool, list[OpResult]]]:
            succeeded = all(_compare_holds(c, view.entries.get(c.key)) for c in compares)
            branch = success if succeeded else failure
            events, results = _run_branch(board, branch, view, writer_agent_id)
            created = sum(1 for e in events if e.type == EventType.PUT and e.previous is None)
            removed = sum(1 for e in events if e.type != EventType.PUT)
            if created > removed and view.key_count + created - removed > max_keys:
                branch_name = "success" if succeeded else "failure"
                raise LimitExceededError(branch_name, max_keys, "the tenant has too many keys")
            return Decision(tuple(events), (succeeded, results))

        now = self._clock()
        audit = _audit_template(actor, board, now)
        outcome = await self._store.mutate(tenant, board, keys, now, decide, audit)
        succeeded, results = outcome.result
        return TxnOutcome(outcome.header, succeeded, results)

    # ----- watch and compaction ----------------------------------------------------

    def watch(
        self, tenant: str, request: WatchRequest, sender: LiveSender | None = None
    ) -> AsyncGenerator[WatchMessage, None]:
        """The stream of a Watch. The request is validated at once; the watch
        registers when the stream is first iterated. Live event messages may
        go to `sender` directly instead (see LiveSender)."""
        return self.hub.watch(tenant, self._watch_spec(request), sender)

    def _watch_spec(self, request: WatchRequest) -> WatchSpec:
        check_board("board", request.board, self._limits)
        matcher = selector(request.prefix, request.pattern, self._limits)
        check_non_negative("start_revision", request.start_revision)
        interval = request.progress_interval_seconds
        if interval is not None:
            check_non_negative("progress_notify_interval", interval)
            interval = max(interval, self._limits.min_progress_interval_seconds)
        return WatchSpec(
            board=request.board,
            matcher=matcher,
            start_revision=request.start_revision,
            initial_snapshot=request.initial_snapshot,
            prev_value=request.prev_value,
            progress_interval=interval,
            event_types=request.event_types or frozenset(EventType),
        )

    async def compact(self, tenant: str, revision: int) -> Header:
        if revision <= 0:
            raise InvalidArgumentError("revision", "must be positive")
        if self.compactor is not None:
            return await self.compactor.archive_and_compact(tenant, revision)
        return await self._store.compact(tenant, revision)

    async def header(self, tenant: str) -> Header:
        return await self._store.header(tenant)

    # ----- validation --------------------------------------------------------------

    def _check_put(self, op: PutOp, field_prefix: str) -> None:
        check_key(f"{field_prefix}key", op.key, self._limits)
        if op.value is None:
            raise InvalidArgumentError(f"{field_prefix}value", "is required")
        size = op.value.size_bytes
        if size > self._limits.max_value_bytes:
            raise LimitExceededError(
                f"{field_prefix}value", self._limits.max_value_bytes, f"is {size} bytes"
            )
        if op.ttl_seconds is not None:
            if op.ttl_seconds <= 0:
                raise InvalidArgumentError(f"{field_prefix}ttl", "must be positive when set")
            if op.keep_ttl:
                raise InvalidArgumentError(f"{field_prefix}ttl", "cannot be set with keep_ttl")
            if op.ttl_seconds > self._limits.max_ttl_seconds:
                raise LimitExceededError(
                    f"{field_prefix}ttl",
                    int(self._limits.max_ttl_seconds),
                    f"is {op.ttl_seconds:.0f} seconds",
                )

    def _check_writer(self, writer_agent_id: str) -> None:
        if "\x00" in writer_agent_id:
            raise InvalidArgumentError("writer_agent_id", "must not contain NUL")
        size = len(writer_agent_id.encode())
        if size > self._limits.max_writer_id_bytes:
            raise LimitExceededError(
                "writer_agent_id", self._limits.max_writer_id_bytes, f"is {size} bytes"
            )

    def _check_compares(self, compares: Sequence[Compare]) -> None:
        if len(compares) > self._limits.max_txn_compares:
            raise LimitExceededError(
                "compares", self._limits.max_txn_compares, f"has {len(compares)} items"
            )
        for index, compare in enumerate(compares):
            field = f"compares[{index}]"
            check_key(f"{field}.key", compare.key, self._limits)
            _check_compare_shape(field, compare, self._limits)

    def _check_branch(self, name: str, ops: Sequence[Op]) -> None:
        if len(ops) > self._limits.max_txn_ops:
            raise LimitExceededError(name, self._limits.max_txn_ops, f"has {len(ops)} items")
        changed: set[str] = set()
        for index, op in enumerate(ops):
            field = f"{name}[{index}]"
            if isinstance(op, PutOp):
                self._check_put(op, f"{field}.put_entry.")
                kind = "put_entry"
            elif isinstance(op, DeleteOp):
                check_key(f"{field}.delete_entry.key", op.key, self._limits)
                kind = "delete_entry"
            else:
                check_key(f"{field}.get_entry.key", op.key, self._limits)
                continue
            if op.key in changed:
                raise InvalidArgumentError(
                    f"{field}.{kind}.key", f"changes key {op.key!r} a second time in one branch"
                )
            changed.add(op.key)


# ----- pure decision helpers -----------------------------------------------------


def _audit_template(actor: Actor | None, board: str, now: float) -> AuditRecord | None:
    """Who makes a mutation, for the record of the revision it commits
    (`core.audit.blackboard_record` fills in what it changed). Without an
    actor (internal and test callers) the mutation is not audited."""
    if actor is None:
        return None
    return record_for(actor, BLACKBOARD_ENTITY, board, 0, now, "")


def _check_expected(key: str, current: Entry | None, expected: int | None) -> None:
    if expected is None:
        return
    actual = current.mod_revision if current is not None else 0
    if actual != expected:
        state = f"at mod_revision {actual}" if actual else "absent"
        raise RevisionMismatchError(
            f"key {key!r} is {state}, not at the expected mod_revision {expected}", actual
        )


def _put_entry(
    board: str, op: PutOp, current: Entry | None, view: MutationView, writer: str
) -> Entry:
    if op.keep_ttl:
        expire_time = current.expire_time if current is not None else None
    elif op.ttl_seconds is not None:
        expire_time = view.now + op.ttl_seconds
    else:
        expire_time = None
    return Entry(
        board=board,
        key=op.key,
        value=op.value,
        create_revision=current.create_revision if current is not None else view.revision,
        mod_revision=view.revision,
        version=current.version + 1 if current is not None else 1,
        writer_agent_id=writer,
        expire_time=expire_time,
        update_time=view.now,
    )


def _run_branch(
    board: str, ops: Sequence[Op], view: MutationView, writer: str
) -> tuple[list[Event], list[OpResult]]:
    """Applies ops in order on an overlay of the view: a get sees the
    changes of earlier ops of the branch."""
    overlay = dict(view.entries)
    events: list[Event] = []
    results: list[OpResult] = []
    for op in ops:
        current = overlay.get(op.key)
        if isinstance(op, PutOp):
            entry = _put_entry(board, op, current, view, writer)
            overlay[op.key] = entry
            events.append(Event(EventType.PUT, entry, current))
            results.append(PutResult(entry, current if op.return_previous else None))
        elif isinstance(op, DeleteOp):
            if current is not None:
                del overlay[op.key]
                gone = tombstone(board, op.key, view.revision, view.now)
                events.append(Event(EventType.DELETE, gone, current))
            previous = current if op.return_previous else None
            results.append(DeleteResult(current is not None, previous))
        else:
            results.append(GetResult(current))
    return events, results


def _check_compare_shape(field: str, compare: Compare, limits: BlackboardLimits) -> None:
    ordering = compare.operator in (CompareOperator.GREATER, CompareOperator.LESS)
    if compare.target == CompareTarget.EXISTS and ordering:
        raise InvalidArgumentError(f"{field}.operator", "exists compares only EQUAL or NOT_EQUAL")
    if compare.target == CompareTarget.VALUE:
        value = compare.operand
        if not isinstance(value, Value):
            raise InvalidArgumentError(f"{field}.value", "is required")
        if ordering and value.kind == ValueKind.JSON:
            raise InvalidArgumentError(f"{field}.value", "GREATER and LESS only compare payloads")
        if value.size_bytes > limits.max_value_bytes:
            raise LimitExceededError(
                f"{field}.value", limits.max_value_bytes, f"is {value.size_bytes} bytes"
            )


def _compare_holds(compare: Compare, entry: Entry | None) -> bool:
    operator = compare.operator
    if compare.target == CompareTarget.VALUE:
        return _value_compare(operator, compare.operand, entry)
    actual: int | bool
    if compare.target == CompareTarget.EXISTS:
        actual = entry is not None
    elif compare.target == CompareTarget.MOD_REVISION:
        actual = entry.mod_revision if entry else 0
    elif compare.target == CompareTarget.CREATE_REVISION:
        actual = entry.create_revision if entry else 0
    else:
        actual = entry.version if entry else 0
    return _ordered(operator, actual, compare.operand)


def _value_compare(operator: CompareOperator, operand: object, entry: Entry | None) -> bool:
    # A missing key has no value: every value compare is false.
    if entry is None or entry.value is None or not isinstance(operand, Value):
        return False
    stored = entry.value
    if operator in (CompareOperator.EQUAL, CompareOperator.NOT_EQUAL):
        return (stored == operand) == (operator == CompareOperator.EQUAL)
    if stored.kind != ValueKind.PAYLOAD:
        return False
    return _ordered(operator, stored.data, operand.data)


def _ordered(operator: CompareOperator, actual: Any, target: Any) -> bool:
    if operator == CompareOperator.EQUAL:
        return bool(actual == target)
    if operator == CompareOperator.NOT_EQUAL:
        return bool(actual != target)
    if operator == CompareOperator.GREATER:
        return bool(actual > target)
    return bool(actual < target)


def _list_position(position: Any) -> tuple[int, float | None, str]:
    try:
        revision, visible_at, after_key = position
        return (
            int(revision),
            None if visible_at is None else float(visible_at),
            str(after_key),
        )
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError("page_token", "is malformed") from exc


__all__ = [
    "Blackboard",
    "Compare",
    "CompareOperator",
    "CompareTarget",
    "DeleteOp",
    "DeleteResult",
    "GetOp",
    "GetResult",
    "KeyMatcher",
    "Op",
    "OpResult",
    "PutOp",
    "PutResult",
    "WatchRequest",
]
