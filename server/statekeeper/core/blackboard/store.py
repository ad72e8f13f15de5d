"""Blackboard storage contract.

Two parts: `BlackboardStore` keeps entries and their history (embedded:
SQLite; production: PostgreSQL with one transactional revision counter per
tenant), and `BlackboardEventFeed` carries every committed revision to the
watch hub of every server replica (embedded: in process; production: Redis
Streams). tests/contract/test_blackboard_store.py checks these rules on every
backend. They are MUST rules: the domain relies on them and nothing else.

General rules:

* Every method touches only the tenant it is given, and inside it only the
  board it is given. Tenant, board and key bounds are bound as query
  parameters; a `KeyMatcher` only narrows keys further (by the key range of
  its literal `prefix`, then by `matches`), so no selector can reach
  another tenant's or board's keys.
* Revisions: a tenant's revision starts at 0 and each mutation that changes
  something increments it by exactly one, under a lock (or a serial
  transaction) that orders all mutations of the tenant. Revisions are never
  reused. `oldest_revision` starts at 1 and only grows (compaction).
* A method that returns normally has made its change durable.
* Keys are compared in code point order (= UTF-8 byte order).
* Methods raise `StorageUnavailableError` when the backing store cannot be
  reached, and never leave a partial change behind.

Notes for the production backend (PostgreSQL + Redis Streams):

* `mutate` reads the tenant's counter and the named keys, calls `decide`,
  and commits the history rows, the entries and the new counter only if the
  counter has not moved since the read (one `bb_commit` call: the row lock
  lasts one statement); if it has, it decides again, and after repeated
  losses it locks the counter row first (`SELECT ... FOR UPDATE`). Either
  way the tenant's mutations are serialized across replicas. Concurrent
  mutations of a tenant on one replica share a commit (group commit), each
  deciding on the state the ones before it left. Only after COMMIT is the
  batch published: XADD to the
  tenant's stream (hash-tagged by tenant for Redis Cluster, trimmed with
  MAXLEN), payload = the batch with previous entries.
* A crash between COMMIT and XADD loses the publish, not the data: the
  watch hub sees the next revision's gap (or the store revision running
  ahead of the feed) and reads the missing batches with `history`.
* `history` serves both watch replay and hub repair, so it must be indexed
  by (tenant, revision) and by (tenant, board, revision).
* Globs: narrow by the matcher's literal prefix range in SQL, then apply
  `KeyMatcher.matches` in Python (never translate a glob to LIKE).
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.blackboard.keys import KeyMatcher
from statekeeper.core.blackboard.models import (
    Decide,
    Entry,
    Header,
    MutationOutcome,
    ReadResult,
    RevisionBatch,
    T,
)
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject

log = logging.getLogger(__name__)

FeedListener = Callable[[RevisionBatch], None]


class FeedListeners:
    """A feed's listeners: each batch goes to every one, in the order they
    were added; one that fails is logged and does not keep the batch from
    the others."""

    def __init__(self) -> None:
        self._listeners: list[FeedListener] = []

    def add(self, listener: FeedListener) -> Callable[[], None]:
        """Adds `listener`; returns its removal (a no-op once removed)."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def call(self, batch: RevisionBatch) -> None:
        for listener in list(self._listeners):  # a listener may remove itself
            try:
                listener(batch)
            except Exception:
                log.exception("blackboard feed listener failed")


class BlackboardEventFeed(abc.ABC):
    """Carries committed revisions, of every tenant, to listeners (the watch
    hubs of the server replicas).

    Rules:

    * Every batch a store commits MUST be handed to the feed after its
      commit and never before (a listener must never see a revision that
      could still roll back).
    * A feed SHOULD deliver each tenant's batches in revision order and
      exactly once, but MAY lose or reorder some (a replica that crashes
      between commit and publish): listeners repair gaps from the store.
    * Listeners are called on the event loop and MUST NOT block.
    """

    @abc.abstractmethod
    def listen(self, listener: FeedListener) -> Callable[[], None]:
        """Registers a listener for every batch; returns its removal."""

    def track(self, tenant: str) -> None:  # noqa: B027 - optional hook
        """A hub on this replica now watches `tenant`. Feeds that read per
        tenant (one Redis stream each) start reading it; the in-process
        feed delivers everything anyway."""

    def untrack(self, tenant: str) -> None:  # noqa: B027 - optional hook
        """No hub on this replica watches `tenant` any more."""


class BlackboardStore(abc.ABC):
    """Entries, their history and the per-tenant revision counter."""

    @property
    @abc.abstractmethod
    def feed(self) -> BlackboardEventFeed:
        """The feed this store publishes its commits to."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Prepares the schema (versioned migrations) and the feed."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Releases what `start` acquired."""

    @abc.abstractmethod
    async def header(self, tenant: str) -> Header:
        """The tenant's current revision and oldest readable revision. A
        tenant that never wrote has revision 0 and oldest revision 1."""

    @abc.abstractmethod
    async def mutate(
        self,
        tenant: str,
        board: str,
        keys: Sequence[str],
        now: float,
        decide: Decide[T],
        audit: AuditRecord | None = None,
    ) -> MutationOutcome[T]:
        """Runs one mutation of `board`, serialized with every other mutation
        of the tenant.

        Every committed revision leaves one audit record in the same
        transaction (`core.audit.blackboard_record`): the decision's with
        `audit` as its template (none without one), an expiry revision
        always, as the server's.

        1. Entries among `keys` with `expire_time <= now` MUST first be
           removed as one revision of their own, with one EXPIRE event per
           key (in key order), committed and published even if step 2
           raises. A write to an expired key thus always sees it absent.
        2. `decide` is called with the live entries of `keys`, the current
           header and the tenant's number of live keys (`key_count`). It is
           pure: the store MAY call it again (on a serialization retry). If
           it raises, nothing of step 3 happens and the error propagates.
        3. If the decision has events, they are stored as revision
           `header.revision + 1` (every event's `entry.mod_revision` is that
           revision, the domain set it so): PUT events replace the key's
           entry, DELETE events remove it; the history keeps every event,
           in order, with the commit time; the tenant's revision and
           key_count follow. The batch is published to the feed after the
           commit. No events: nothing is written.

        Returns the header after the mutation, the decision's result and the
        committed batch (None when nothing changed).
        """

    @abc.abstractmethod
    async def read(
        self,
        tenant: str,
        board: str,
        keys: Sequence[str],
        revision: int,
        visible_at: float | None,
    ) -> ReadResult:
        """The entries of `keys` as of `revision` (0 = current), by key.

        Absent keys are left out. With `visible_at`, entries whose
        `expire_time <= visible_at` are left out too. MUST raise
        `RevisionCompactedError` if `revision` is below `oldest_revision`
        and `InvalidArgumentError("revision")` if it is above the current
        revision. `ReadResult.revision` is the revision read at.
        """

    @abc.abstractmethod
    async def list_entries(
        self,
        tenant: str,
        board: str,
        matcher: KeyMatcher,
        revision: int,
        visible_at: float | None,
        after_key: str | None,
        limit: int,
    ) -> ReadResult:
        """Up to `limit` entries of `board` live at `revision` (0 = current)
        that `matcher` selects, with key > `after_key`, ascending by key.

        Visibility and revision errors as in `read`, except that a snapshot
        read MAY ask for `oldest_revision - 1` (whose state compaction
        keeps: the latest version of each key below the compaction point).
        """

    @abc.abstractmethod
    async def history(
        self,
        tenant: str,
        board: str | None,
        from_revision: int,
        to_revision: int,
        limit: int,
        with_previous: bool,
    ) -> list[RevisionBatch]:
        """The committed batches with `from_revision <= revision <=
        to_revision`, of `board` (None: every board), ascending, at most
        `limit` of them. With `with_previous`, every event carries the
        key's entry before it (if the key existed). MUST raise
        `RevisionCompactedError` if `from_revision` is below the oldest
        revision, atomically with the read.
        """

    @abc.abstractmethod
    async def compact(self, tenant: str, revision: int) -> Header:
        """Discards the history below `revision`, keeping for every key its
        latest version below `revision` if that is a PUT (so that reads at
        `revision - 1` and later stay exact). `oldest_revision` becomes
        `revision`. MUST raise `RevisionCompactedError` if `revision <=
        oldest_revision`, and `InvalidArgumentError("revision")` if it is
        above the current revision.
        """

    @abc.abstractmethod
    async def compact_expired_history(
        self, now: float, retention_seconds: float, max_revisions: int
    ) -> list[tuple[str, int]]:
        """Compacts every tenant so that it keeps the revisions committed in
        the last `retention_seconds` and at most `max_revisions` of them
        (the current revision always stays readable). Returns (tenant, new
        oldest revision) for each tenant it compacted."""

    @abc.abstractmethod
    async def expire_due(self, now: float, limit: int) -> list[RevisionBatch]:
        """Removes up to `limit` entries (of any tenant) with `expire_time
        <= now`: one revision per (tenant, board), one EXPIRE event per key,
        each audited as the server's. An entry changed since it was found is
        left alone. Batches are published like any commit; returns them."""

    @abc.abstractmethod
    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        """Deletes, on every board of the tenant, the entries whose key
        begins with one of `subject.all_blackboard_prefixes`, and every
        version of them in the history (the tenant's key count follows), in
        bounded batches, without a revision: nothing is published, and a
        shared event feed holding copies of them is dropped. Returns the
        rows deleted per kind; `dry_run` deletes nothing. Idempotent."""


class ArchivedHistory(Protocol):
    """History below the oldest hot revision, archived before compaction
    removed it (core/archive/blackboard.py; --archive-blackboard-history).
    Each method raises `RevisionCompactedError` (with the oldest revision
    it could answer) for a revision no archived range holds."""

    async def read(
        self, tenant: str, board: str, keys: Iterable[str], revision: int, oldest_hot: int
    ) -> list[Entry]:
        """The entries of `keys` at `revision` (absent keys left out)."""

    async def list_entries(
        self,
        tenant: str,
        board: str,
        matcher: KeyMatcher,
        revision: int,
        after_key: str | None,
        limit: int,
        oldest_hot: int,
        snapshot: bool = False,
    ) -> list[Entry]:
        """Up to `limit` entries live at `revision`, key > `after_key`
        (a watch's `snapshot` may read one revision below the oldest
        archived one, as the store's snapshots may below its oldest)."""

    async def history(
        self,
        tenant: str,
        board: str | None,
        from_revision: int,
        to_revision: int,
        with_previous: bool,
        oldest_hot: int,
    ) -> list[RevisionBatch]:
        """Every batch of [from_revision, to_revision], ascending."""


class HistoryCompactor(Protocol):
    """CompactBlackboard while history is archived: archives, then compacts."""

    async def archive_and_compact(self, tenant: str, revision: int) -> Header: ...
