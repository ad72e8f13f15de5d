"""The decisions of a blackboard group commit, apart from the database: the tenant state a
group works on, each mutation decided in arrival order on what the ones before it left, and the
arguments of the one bb_commit call that stores them all."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.audit.service import blackboard_record
from statekeeper.core.blackboard.models import (
    Decide,
    Entry,
    Event,
    EventType,
    Header,
    MutationOutcome,
    MutationView,
    RevisionBatch,
    tombstone,
)
from statekeeper.storage.postgres.blackboard_reads import (
    checked_batch,
)
from statekeeper.storage.shared.blackboard import event_columns
from statekeeper.storage.sql import AUDIT_COLUMNS

if TYPE_CHECKING:
    pass


@dataclass
class Pending:
    """A mutation waiting for its group's transaction."""

    board: str
    keys: list[str]
    now: float
    decide: Decide[Any]
    future: asyncio.Future[MutationOutcome[Any]]
    audit: AuditRecord | None


@dataclass
class Known:
    """The state of a tenant exactly as of `state.revision`, for some keys
    (None: absent), as this replica last read or wrote it. While nobody
    else writes the tenant, a group on these keys can skip the read: its
    commit checks the revision, so a stale copy only costs a retry."""

    state: Tenant
    entries: dict[tuple[str, str], Entry | None]


@dataclass
class Tenant:
    """The tenant's counters, as locked inside the current transaction."""

    tenant: str
    revision: int = 0
    oldest_revision: int = 1
    key_count: int = 0
    # bb_tenants.erase_epoch: bumped by each EraseUser batch (no revision).
    epoch: int = 0

    @property
    def header(self) -> Header:
        return Header(self.revision, self.oldest_revision)


def by_key(entry: Entry) -> str:
    return entry.key


def copy(state: Tenant) -> Tenant:
    return Tenant(state.tenant, state.revision, state.oldest_revision, state.key_count, state.epoch)


def with_oldest(
    result: MutationOutcome[Any] | Exception, oldest: int
) -> MutationOutcome[Any] | Exception:
    if isinstance(result, Exception):
        return result
    return dataclasses.replace(result, header=Header(result.header.revision, oldest))


def named(group: list[Pending]) -> set[tuple[str, str]]:
    return {(pending.board, key) for pending in group for key in pending.keys}


def commit_arguments(
    tenant: str, expected: int, state: Tenant, writes: list[tuple[RevisionBatch, int]]
) -> list[Any]:
    """bb_commit's arguments: every event as a history row, the last event
    of each key as its entry (upserted if a PUT, deleted otherwise), one
    log row per revision."""
    history: list[list[Any]] = [[] for _ in range(15)]
    last_row: dict[tuple[str, str], tuple[int, EventType]] = {}
    for batch, _ in writes:
        for seq, event in enumerate(batch.events):
            entry = event.entry
            row = (
                batch.board,
                entry.key,
                batch.revision,
                seq,
                *event_columns(event),
                batch.commit_time,
            )
            for column, item in zip(history, row, strict=True):
                column.append(item)
            # PostgreSQL arrays are 1-based.
            last_row[batch.board, entry.key] = (len(history[0]), event.type)
    put_rows = [row for row, kind in last_row.values() if kind == EventType.PUT]
    deleted = [slot for slot, (_, kind) in last_row.items() if kind != EventType.PUT]
    return [
        tenant,
        expected,
        state.revision,
        state.key_count,
        *history,
        put_rows,
        [board for board, _ in deleted],
        [key for _, key in deleted],
        [batch.revision for batch, _ in writes],
        [batch.board for batch, _ in writes],
        [batch.commit_time for batch, _ in writes],
    ]


def audit_records(
    group: list[Pending],
    results: list[MutationOutcome[Any] | Exception],
    writes: list[tuple[RevisionBatch, int]],
) -> list[AuditRecord]:
    """One record per written revision, in revision order: a decision's
    with its mutation's template, an expiry's as the server's."""
    templates = {
        result.batch.revision: pending.audit
        for pending, result in zip(group, results, strict=True)
        if isinstance(result, MutationOutcome) and result.batch is not None
    }
    records = (blackboard_record(templates.get(batch.revision), batch) for batch, _ in writes)
    return [record for record in records if record is not None]


def audit_arguments(records: list[AuditRecord]) -> list[list[Any]]:
    """bb_commit's audit arrays (its tenant is the commit's)."""
    columns = AUDIT_COLUMNS.replace(" ", "").split(",")[1:]  # all but the tenant
    return [[getattr(record, name) for record in records] for name in columns]


def apply(
    state: Tenant,
    live: dict[tuple[str, str], Entry],
    pending: Pending,
    writes: list[tuple[RevisionBatch, int]],
) -> MutationOutcome[Any] | Exception:
    """Runs one mutation of a group in memory: its expiry revision, then its
    decision, each appended to `writes` with the key count after it, with
    `state` and `live` advanced past them. Returns the outcome, or the
    exception that refused the decision (its expiry still stands)."""
    board, now = pending.board, pending.now
    entries = {key: live[board, key] for key in pending.keys if (board, key) in live}
    expired = sorted((e for e in entries.values() if e.is_expired(now)), key=by_key)
    if expired:
        revision = state.revision + 1
        events = tuple(
            Event(EventType.EXPIRE, tombstone(board, e.key, revision, now), e) for e in expired
        )
        _advance(state, live, RevisionBatch(state.tenant, board, revision, now, events), writes)
        for entry in expired:
            del entries[entry.key]
    view = MutationView(state.header, now, entries, state.key_count)
    try:
        decision = pending.decide(view)
        batch = None
        if decision.events:
            batch = checked_batch(state.tenant, board, pending.keys, view, decision)
    except Exception as exc:
        return exc
    if batch is not None:
        _advance(state, live, batch, writes)
    return MutationOutcome(state.header, decision.result, batch)


def _advance(
    state: Tenant,
    live: dict[tuple[str, str], Entry],
    batch: RevisionBatch,
    writes: list[tuple[RevisionBatch, int]],
) -> None:
    """Applies a batch to the in-memory state of the group."""
    for event in batch.events:
        slot = (batch.board, event.key)
        if event.type == EventType.PUT:
            if slot not in live:
                state.key_count += 1
            live[slot] = event.entry
        elif live.pop(slot, None) is not None:
            state.key_count -= 1
    state.revision = batch.revision
    writes.append((batch, state.key_count))


def write_arguments(tenant: str, batch: RevisionBatch, key_count: int) -> list[Any]:
    columns: list[list[Any]] = [[] for _ in range(11)]
    for event in batch.events:
        row = (event.entry.key, *event_columns(event))
        for column, item in zip(columns, row, strict=True):
            column.append(item)
    return [tenant, batch.board, batch.revision, batch.commit_time, *columns, key_count]
