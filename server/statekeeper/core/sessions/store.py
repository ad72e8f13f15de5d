"""The session store contract: what every backend's session store must do.

The general rules for every store method (tenancy, durability, audit in the
same transaction, caches that never serve stale state) are in
statekeeper/storage/interfaces.py; this module holds the session-specific ones.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.sessions.models import (
    AppendReceipt,
    Message,
    MessageMeta,
    SessionChange,
    SessionCursor,
    SessionFilter,
    SessionRecord,
    SessionVersion,
)


class SessionStore(abc.ABC):
    """Durable store of sessions, their messages and their versions."""

    @abc.abstractmethod
    async def create_session(
        self, tenant: str, version: SessionVersion, audit: AuditRecord | None = None
    ) -> None:
        """Stores a new session whose first version is `version`, and `audit`.

        `version.snapshot` is the session record. MUST raise
        `AlreadyExistsError` if the tenant has a session with that id,
        expired or not.
        """

    @abc.abstractmethod
    async def get_session(self, tenant: str, session_id: str) -> SessionRecord | None:
        """Returns the latest record of a session, or None if there is none.

        Expired sessions that are not swept yet are returned too: visibility
        is the domain's decision.
        """

    async def read_for_change(
        self, tenant: str, session_id: str
    ) -> tuple[SessionRecord | None, object | None]:
        """`get_session`, by a caller about to change the session: returns
        the record and a ticket to pass as `SessionChange.ticket` of a
        change built from it.

        A backend may use the call to prepare that change (the production
        cache takes its write lease in the same step as the read); if the
        change is never applied, what was prepared MUST NOT make any later
        read stale. The default prepares nothing.
        """
        return await self.get_session(tenant, session_id), None

    @abc.abstractmethod
    async def list_sessions(
        self,
        tenant: str,
        session_filter: SessionFilter,
        now: float,
        after: SessionCursor | None,
        limit: int,
    ) -> list[SessionRecord]:
        """Returns up to `limit` sessions matching the filter, newest first.

        Order is `create_time` descending, then `session_id` descending.
        Sessions with `expire_time <= now` MUST be left out. With `after`,
        only sessions strictly after that cursor in this order are returned.
        """

    @abc.abstractmethod
    async def apply_change(self, tenant: str, change: SessionChange) -> None:
        """Applies one mutation atomically: all of it or nothing.

        MUST raise `NotFoundError` if the session does not exist and
        `ConcurrentModificationError` if its stored version is not
        `change.expected_version`. Otherwise, in one transaction: the session
        record becomes `change.record`; `change.version` is added to the
        history; `change.new_messages` are added; if
        `change.visibility_changed`, every message's `rolled_back` flag is
        set to whether its sequence is outside `change.record.visible_ranges`;
        if `change.request_id` is set, an `AppendReceipt` is recorded under
        it for the new messages; `change.audit` is stored. MUST raise
        `AlreadyExistsError` if that request id already has a receipt in this
        tenant.
        """

    @abc.abstractmethod
    async def delete_session(
        self,
        tenant: str,
        session_id: str,
        expected_version: int,
        audit: AuditRecord | None = None,
    ) -> None:
        """Deletes a session with its messages, versions and receipts, and
        stores `audit` (its audit records stay).

        MUST raise `NotFoundError` if it does not exist and
        `ConcurrentModificationError` if `expected_version` is positive and
        differs from the stored version.
        """

    @abc.abstractmethod
    async def list_messages(
        self,
        tenant: str,
        session_id: str,
        after_sequence: int,
        limit: int,
        include_rolled_back: bool,
    ) -> list[Message]:
        """Returns up to `limit` messages with sequence > `after_sequence`.

        Ascending by sequence. Messages flagged rolled back are left out
        unless `include_rolled_back`.
        """

    @abc.abstractmethod
    async def get_messages(
        self, tenant: str, session_id: str, sequences: Sequence[int]
    ) -> list[Message]:
        """Returns the messages with these sequence numbers, ascending.

        Unknown sequence numbers are skipped.
        """

    @abc.abstractmethod
    async def list_window_tail(
        self,
        tenant: str,
        session_id: str,
        after_sequence: int,
        max_tokens: int,
        max_messages: int,
    ) -> list[MessageMeta]:
        """Returns the meta of the newest messages not rolled back with
        sequence > `after_sequence`, ascending: the shortest such suffix
        that costs more than `max_tokens` (sum of `token_count`) or holds at
        least `max_messages` messages, and whose oldest message is not a
        TOOL message; all of them if there is no such suffix.

        This is what planning a context window or a compaction reads: it
        MUST read newest first and stop there (the cost is that of the
        suffix, not of the history), from stored token counts and call ids,
        without loading or tokenizing message text.
        """

    @abc.abstractmethod
    async def list_window_messages(
        self, tenant: str, session_id: str, after_sequence: int, max_tokens: int
    ) -> list[Message]:
        """The messages of `list_window_tail(tenant, session_id,
        after_sequence, max_tokens, no message limit)`, whole: what a
        context window returns is read in the same pass that plans it.

        The same MUST rules apply: newest first, stopping at the end of
        that suffix; nothing is tokenized.
        """

    @abc.abstractmethod
    async def list_recent_messages(
        self, tenant: str, session_id: str, after_sequence: int, before_sequence: int, limit: int
    ) -> list[Message]:
        """Returns the newest `limit` messages not rolled back with
        `after_sequence` < sequence < `before_sequence`, ascending.

        MUST read newest first and stop after `limit` messages.
        """

    @abc.abstractmethod
    async def get_append_receipt(self, tenant: str, request_id: str) -> AppendReceipt | None:
        """Returns the receipt recorded for an idempotent append, or None."""

    @abc.abstractmethod
    async def list_versions(
        self, tenant: str, session_id: str, before_version: int, limit: int
    ) -> list[SessionVersion]:
        """Returns up to `limit` versions with version < `before_version`,
        newest first. `before_version <= 0` means from the newest."""

    @abc.abstractmethod
    async def get_version(
        self, tenant: str, session_id: str, version: int
    ) -> SessionVersion | None:
        """Returns one version of a session, or None."""

    @abc.abstractmethod
    async def delete_expired_sessions(
        self, now: float, limit: int, audit: AuditRecord | None = None
    ) -> int:
        """Deletes up to `limit` sessions (of any tenant) with
        `expire_time <= now`, with everything they own. Returns how many.

        With `audit`, stores one copy per deleted session, with the tenant,
        `entity_id` (the session id) and `revision` (its last version) of
        that session, in the transaction that deletes it.

        Safe to run concurrently from several processes: each expired
        session is deleted (and audited) once, and a session that is no
        longer expired (its TTL was extended) MUST NOT be deleted.
        """

    @abc.abstractmethod
    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        """Deletes every session of the tenant whose `user_id` is
        `subject.user_id`, with its messages, versions and append receipts
        (and any cached copy), in bounded batches of their own transactions;
        returns the rows deleted per kind. `dry_run`: counts the same rows,
        deletes nothing. Idempotent: a second call deletes nothing."""
