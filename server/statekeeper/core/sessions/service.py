"""Sessions: lifecycle, history, working window, compaction and versions.

Every mutation reads the current record, builds the next one and asks the
store to apply it only if nobody else changed the session in between. A
caller that sent an etag gets ABORTED when that check fails; an
unconditional mutation is retried on a fresh read instead.

Mutations take the `Actor` making them and hand the store an audit record
to write in the same transaction; reads take only the tenant.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from statekeeper.core import paging
from statekeeper.core.audit.service import Actor, record_for, system_actor
from statekeeper.core.bounded_cache import BoundedCache, message_bytes
from statekeeper.core.errors import (
    AlreadyExistsError,
    ConcurrentModificationError,
    EtagMismatchError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    SessionExpiredError,
)
from statekeeper.core.limits import Limits
from statekeeper.core.sessions.checks import check_draft, check_message, check_window_request
from statekeeper.core.sessions.context_window import (
    CachedTail,
    compaction_cut,
    flatten,
    group_units,
    newest_fitting,
    unit_tokens,
)
from statekeeper.core.sessions.models import (
    AppendResult,
    ChangeKind,
    ContextWindow,
    Message,
    MessageDraft,
    MessageMeta,
    Role,
    SeqRange,
    SessionChange,
    SessionCursor,
    SessionDraft,
    SessionFilter,
    SessionRecord,
    SessionStatus,
    SessionVersion,
    TokenAccounting,
    WindowRequest,
)
from statekeeper.core.sessions.store import SessionStore
from statekeeper.core.sessions.summarizer import Summarizer
from statekeeper.core.tokens import REPLY_PRIMING, TokenCounter
from statekeeper.core.validation import (
    check_count,
    check_id,
    check_non_negative,
    page_size,
)

log = logging.getLogger(__name__)

Clock = Callable[[], float]
# Told of each committed append: (tenant, the session after it).
AppendListener = Callable[[str, SessionRecord], None]

UPDATABLE_PATHS = frozenset(
    {
        "agent_id",
        "status",
        "context_variables",
        "active_tools",
        "pending_tool_calls",
        "metadata",
        "ttl",
    }
)
DEFAULT_SUMMARY_MAX_TOKENS = 256
DEFAULT_KEEP_RECENT_MESSAGES = 20
COMPACTION_SUMMARY_MAX_TOKENS = 512
# A summary below this many tokens says little; drop old messages to make room.
MIN_USEFUL_SUMMARY_TOKENS = 64
# The summarizer sees at most this many of the newest left-out messages.
SUMMARY_INPUT_MESSAGES = 200
MESSAGE_PAGE_DEFAULT = 100
UNCONDITIONAL_RETRIES = 64
# Window tails kept per process (see `_window_tail`): sessions, approximate
# bytes in all, and bytes of one tail (with its prefix) beyond which it is not
# kept, so large messages cannot fill the process's memory.
TAIL_CACHE_SESSIONS = 1024
TAIL_CACHE_MAX_BYTES = 128 * 2**20
TAIL_CACHE_MAX_TAIL_BYTES = 4 * 2**20
TAIL_READ_ATTEMPTS = 3
# Context windows kept per process, keyed by session version and request
# (count, approximate bytes in all, bytes of one window).
WINDOW_MEMO_SIZE = 256
WINDOW_MEMO_MAX_BYTES = 64 * 2**20
WINDOW_MEMO_MAX_WINDOW_BYTES = 2 * 2**20
WINDOW_MEMO_MAX_REQUEST_BYTES = 64 * 2**10
# "No limit" for a window tail read by count only or by tokens only.
_UNLIMITED = 2**62
ENTITY = "session"


@dataclass(frozen=True)
class _Mutation:
    """What a mutation builder wants stored: the next record and its extras."""

    record: SessionRecord
    kind: ChangeKind
    parent_version: int
    summary: str
    new_messages: tuple[Message, ...] = ()
    visibility_changed: bool = False
    request_id: str = ""
    # `record` already carries the next version and its update_time (saves
    # building the record twice on the append path).
    stamped: bool = False


class SessionManager:
    """The session capability, independent of transport and storage."""

    def __init__(
        self,
        store: SessionStore,
        counter: TokenCounter,
        summarizer: Summarizer,
        limits: Limits,
        clock: Clock = time.time,
    ) -> None:
        self._store = store
        self._counter = counter
        self._summarizer = summarizer
        self._limits = limits
        self._clock = clock
        self._summary_cache: OrderedDict[tuple[Any, ...], tuple[str, bool]] = OrderedDict()
        self._tails: BoundedCache[tuple[str, str], CachedTail] = BoundedCache(
            _tail_bytes, TAIL_CACHE_SESSIONS, TAIL_CACHE_MAX_BYTES, TAIL_CACHE_MAX_TAIL_BYTES
        )
        self._windows: BoundedCache[tuple[Any, ...], ContextWindow] = BoundedCache(
            window_bytes, WINDOW_MEMO_SIZE, WINDOW_MEMO_MAX_BYTES, WINDOW_MEMO_MAX_WINDOW_BYTES
        )
        # The archive tier (core/archive): brings an archived session back
        # hot; called when a session is not found (True: restored, read it
        # again). None: no archive.
        self.restorer: Callable[[str, str], Awaitable[bool]] | None = None
        # True if that session is archived (CreateSession: not restored).
        self.archived: Callable[[str, str], Awaitable[bool]] | None = None
        self._append_listeners: list[AppendListener] = []

    def add_append_listener(self, listener: AppendListener) -> None:
        """Calls `listener(tenant, record)` after each append commits (not
        for a replayed one), with the session as the append left it. It runs
        on the write path, so it must only note the session and return (long
        term memory queues it for promotion); an exception it raises is
        logged and never fails the append."""
        self._append_listeners.append(listener)

    def remove_append_listener(self, listener: AppendListener) -> None:
        """Stops calling `listener` (no error if it was not added)."""
        if listener in self._append_listeners:
            self._append_listeners.remove(listener)

    # ----- lifecycle -------------------------------------------------------

    async def create(self, actor: Actor, session_id: str, draft: SessionDraft) -> SessionRecord:
        check_id("session_id", session_id, self._limits, required=False)
        check_id("session.user_id", draft.user_id, self._limits)
        check_id("session.agent_id", draft.agent_id, self._limits, required=False)
        check_draft(self._limits, draft)
        now = self._clock()
        record = SessionRecord(
            session_id=session_id or str(uuid.uuid4()),
            user_id=draft.user_id,
            agent_id=draft.agent_id,
            status=draft.status or SessionStatus.ACTIVE,
            context_variables=draft.context_variables,
            active_tools=draft.active_tools,
            pending_tool_calls=draft.pending_tool_calls,
            metadata=draft.metadata,
            ttl_seconds=draft.ttl_seconds,
            expire_time=now + draft.ttl_seconds if draft.ttl_seconds > 0 else None,
            create_time=now,
            update_time=now,
            version=1,
        )
        archived = self.archived
        if session_id and archived is not None and await archived(actor.tenant, session_id):
            raise AlreadyExistsError(f"session {session_id!r} already exists")
        audit = record_for(actor, ENTITY, record.session_id, 1, now, "created")
        await self._store.create_session(
            actor.tenant, SessionVersion(1, 0, ChangeKind.CREATE, now, record), audit
        )
        return record

    async def get(self, tenant: str, session_id: str) -> SessionRecord:
        check_id("session_id", session_id, self._limits)
        record = await self._store.get_session(tenant, session_id)
        if record is None and self.restorer is not None and await self.restorer(tenant, session_id):
            record = await self._store.get_session(tenant, session_id)
        return self._live(session_id, record)

    def _live(self, session_id: str, record: SessionRecord | None) -> SessionRecord:
        if record is None:
            raise NotFoundError(f"session {session_id!r} not found")
        if record.is_expired(self._clock()):
            raise SessionExpiredError(f"session {session_id!r} has expired")
        return record

    async def list_sessions(
        self,
        tenant: str,
        session_filter: SessionFilter,
        requested_page_size: int,
        page_token: str,
    ) -> tuple[list[SessionRecord], str]:
        check_id("user_id", session_filter.user_id, self._limits, required=False)
        check_id("agent_id", session_filter.agent_id, self._limits, required=False)
        size = page_size("page_size", requested_page_size, self._limits)
        filters = [
            session_filter.user_id,
            session_filter.agent_id,
            int(session_filter.status or 0),
        ]
        position = paging.decode(page_token, "sessions", filters)
        after = _cursor_from(position)
        records = await self._store.list_sessions(
            tenant, session_filter, self._clock(), after, size + 1
        )
        next_token = ""
        if len(records) > size:
            records = records[:size]
            last = records[-1]
            next_token = paging.encode("sessions", filters, [last.create_time, last.session_id])
        return records, next_token

    async def update(
        self,
        actor: Actor,
        session_id: str,
        draft: SessionDraft,
        paths: set[str],
        expected_etag: str,
    ) -> SessionRecord:
        check_id("session.session_id", session_id, self._limits)
        unknown = paths - UPDATABLE_PATHS
        if unknown:
            raise InvalidArgumentError("update_mask", f"cannot update {', '.join(sorted(unknown))}")
        if not paths:
            raise InvalidArgumentError("update_mask", "names no field to update")
        if "agent_id" in paths:
            check_id("session.agent_id", draft.agent_id, self._limits, required=False)
        if "status" in paths and draft.status is None:
            raise InvalidArgumentError("session.status", "must be set when updated")
        check_draft(self._limits, draft)

        async def build(current: SessionRecord) -> _Mutation:
            now = self._clock()
            changes: dict[str, Any] = {}
            for path in paths:
                if path == "ttl":
                    changes["ttl_seconds"] = draft.ttl_seconds
                    changes["expire_time"] = (
                        now + draft.ttl_seconds if draft.ttl_seconds > 0 else None
                    )
                else:
                    changes[path] = getattr(draft, path)
            summary = "updated " + ", ".join(sorted(paths))
            return _Mutation(current.evolve(**changes), ChangeKind.UPDATE, current.version, summary)

        return await self._mutate(actor, session_id, expected_etag, build)

    async def delete(self, actor: Actor, session_id: str, expected_etag: str) -> None:
        check_id("session_id", session_id, self._limits)
        current = await self.get(actor.tenant, session_id)
        _check_etag(current, expected_etag)
        audit = record_for(actor, ENTITY, session_id, current.version, self._clock(), "deleted")
        try:
            await self._store.delete_session(
                actor.tenant, session_id, current.version if expected_etag else 0, audit
            )
        except ConcurrentModificationError as exc:
            raise EtagMismatchError(f"session {session_id!r} changed") from exc

    async def sweep_expired(self, retention_seconds: float = 0.0, batch: int = 500) -> int:
        """Deletes sessions of every tenant that expired more than
        `retention_seconds` ago; returns how many."""
        total = 0
        actor = system_actor("SweepExpiredSessions")
        while True:
            now = self._clock()
            audit = record_for(actor, ENTITY, "", 0, now, "deleted after its TTL expired")
            deleted = await self._store.delete_expired_sessions(
                now - retention_seconds, batch, audit
            )
            total += deleted
            if deleted < batch:
                return total

    # ----- messages --------------------------------------------------------

    async def append(
        self,
        actor: Actor,
        session_id: str,
        drafts: Sequence[MessageDraft],
        expected_etag: str,
        request_id: str,
    ) -> AppendResult:
        check_id("session_id", session_id, self._limits)
        check_id("request_id", request_id, self._limits, required=False)
        if not drafts:
            raise InvalidArgumentError("messages", "at least one message is required")
        check_count("messages", drafts, self._limits.max_messages_per_append)
        for index, draft in enumerate(drafts):
            check_message(self._limits, f"messages[{index}]", draft)
        tenant = actor.tenant
        found, ticket = await self._store.read_for_change(tenant, session_id)
        if found is None and self.restorer is not None and await self.restorer(tenant, session_id):
            found, ticket = await self._store.read_for_change(tenant, session_id)
        current = self._live(session_id, found)
        # Tokenize once, outside the retry loop: counts are stored for good.
        counts = [
            self._counter.message_tokens(d.role, d.content, d.name, d.tool_calls, d.tool_call_id)
            for d in drafts
        ]
        appended: list[Message] = []

        async def build(current: SessionRecord) -> _Mutation:
            now = self._clock()
            first = current.last_sequence + 1
            messages = [
                Message(
                    sequence=first + index,
                    message_id=_new_message_id(),
                    role=draft.role,
                    content=draft.content,
                    name=draft.name,
                    tool_calls=draft.tool_calls,
                    tool_call_id=draft.tool_call_id,
                    metadata=draft.metadata,
                    token_count=counts[index],
                    create_time=now,
                )
                for index, draft in enumerate(drafts)
            ]
            appended[:] = messages
            last = first + len(messages) - 1
            record = current.evolve(
                last_sequence=last,
                message_count=current.message_count + len(messages),
                window_message_count=current.window_message_count + len(messages),
                window_tokens=current.window_tokens + sum(counts),
                visible_ranges=_extend_ranges(current.visible_ranges, first, last),
                version=current.version + 1,
                update_time=now,
            )
            return _Mutation(
                record,
                ChangeKind.APPEND,
                current.version,
                f"appended {len(messages)} message(s), sequence {first}-{last}",
                new_messages=tuple(messages),
                request_id=request_id,
                stamped=True,
            )

        # A request id is not looked up before writing: the store refuses a
        # second receipt under it (AlreadyExistsError, nothing written), and
        # only then is the first append's result replayed. A retry whose
        # etag is stale because its first attempt committed replays too.
        try:
            record = await self._mutate(actor, session_id, expected_etag, build, current, ticket)
        except (AlreadyExistsError, EtagMismatchError):
            replay = await self._replay(tenant, session_id, request_id) if request_id else None
            if replay is None:
                raise
            return replay
        for listener in self._append_listeners:
            try:
                listener(tenant, record)
            except Exception:
                log.exception("append listener failed", extra={"session_id": session_id})
        return AppendResult(record, list(appended), replayed=False)

    async def _replay(self, tenant: str, session_id: str, request_id: str) -> AppendResult | None:
        receipt = await self._store.get_append_receipt(tenant, request_id)
        if receipt is None:
            return None
        if receipt.session_id != session_id:
            raise InvalidArgumentError(
                "request_id", "was already used for an append to another session"
            )
        messages = await self._store.get_messages(
            tenant, session_id, range(receipt.first_sequence, receipt.last_sequence + 1)
        )
        record = await self.get(tenant, session_id)
        return AppendResult(record, messages, replayed=True)

    async def messages_after(
        self, tenant: str, session_id: str, after: int, limit: int
    ) -> list[Message]:
        """Up to `limit` of the session's visible messages (not rolled back)
        with sequence > `after`, ascending; for server-side readers such as
        memory promotion (no paging token, no limit check)."""
        return await self._store.list_messages(tenant, session_id, after, limit, False)

    async def list_messages(
        self,
        tenant: str,
        session_id: str,
        requested_page_size: int,
        page_token: str,
        include_rolled_back: bool,
    ) -> tuple[list[Message], str]:
        size = page_size("page_size", requested_page_size, self._limits, MESSAGE_PAGE_DEFAULT)
        filters = [session_id, include_rolled_back]
        after = int(paging.decode(page_token, "messages", filters) or 0)
        await self.get(tenant, session_id)
        messages = await self._store.list_messages(
            tenant, session_id, after, size + 1, include_rolled_back
        )
        next_token = ""
        if len(messages) > size:
            messages = messages[:size]
            next_token = paging.encode("messages", filters, messages[-1].sequence)
        return messages, next_token

    # ----- context window --------------------------------------------------

    async def context_window(
        self, tenant: str, session_id: str, request: WindowRequest
    ) -> ContextWindow:
        check_window_request(self._limits, request)
        record = await self.get(tenant, session_id)
        # A window is a function of the record's version and the request:
        # a client polling an unchanged session gets the one computed before.
        memo_key = (tenant, session_id, record.create_time, record.version, request)
        memo = self._windows.get(memo_key)
        if memo is not None:
            return memo
        window = await self._plan_window(tenant, record, request)
        # The memo key holds the request: a huge prompt or tools schema is
        # not worth keeping next to the window.
        request_bytes = len(request.system_prompt) + len(request.tools_json)
        if window.version == record.version and request_bytes <= WINDOW_MEMO_MAX_REQUEST_BYTES:
            self._windows.put(memo_key, window)
        return window

    async def _plan_window(
        self, tenant: str, record: SessionRecord, request: WindowRequest
    ) -> ContextWindow:
        system_tokens = self._counter.system_message_tokens(request.system_prompt)
        tools_tokens = self._counter.count(request.tools_json)
        fixed = request.reserved_output_tokens + system_tokens + tools_tokens + REPLY_PRIMING
        if fixed > request.token_budget:
            raise FailedPreconditionError(
                f"the reserve, system prompt, tools and reply priming need {fixed} tokens,"
                f" more than the budget of {request.token_budget}"
            )
        available = request.token_budget - fixed
        record, kept_tail = await self._window_tail(tenant, record, available)
        tail = kept_tail.messages
        units = group_units([message.meta() for message in tail])
        first = newest_fitting(units, available)
        summary_cap = _summary_cap(request.summary_max_tokens)
        summary, fallback, summary_tokens = "", False, 0
        if (first > 0 or record.compaction_summary) and summary_cap > 0:
            first, cap = self._make_summary_room(units, first, available, summary_cap)
            if cap > 0:
                before = _first_sequence(units[first:], record)
                summary, fallback = await self._summarize_prefix(
                    tenant, record, kept_tail, before, first > 0, cap
                )
                summary_tokens = self._counter.system_message_tokens(summary)
        kept_count = len(flatten(units[first:]))
        messages = list(tail[len(tail) - kept_count :]) if kept_count else []
        # Every window message not returned was left out (the planner read
        # only the newest ones); compacted ones are in the compaction summary.
        left_out = record.window_message_count - kept_count
        compacted_count = record.message_count - record.window_message_count
        accounting = TokenAccounting(
            token_budget=request.token_budget,
            reserved_output_tokens=request.reserved_output_tokens,
            system_prompt_tokens=system_tokens,
            tools_tokens=tools_tokens,
            summary_tokens=summary_tokens,
            messages_tokens=sum(m.token_count for m in messages),
            framing_tokens=REPLY_PRIMING,
        )
        return ContextWindow(
            messages=messages,
            summary=summary,
            summarized_message_count=(left_out + compacted_count) if summary else 0,
            accounting=accounting,
            version=record.version,
            summary_is_fallback=fallback,
        )

    def _make_summary_room(
        self, units: Sequence[list[MessageMeta]], first: int, available: int, summary_cap: int
    ) -> tuple[int, int]:
        """(first unit kept, token cap of the summary): room for a useful
        summary is made by dropping the oldest kept units, but never the
        newest one (the latest turn matters most)."""
        frame = self._counter.system_message_tokens(" ") - self._counter.count(" ")
        wanted_room = min(summary_cap, MIN_USEFUL_SUMMARY_TOKENS) + frame
        room = available - _tokens(units[first:])
        while first < len(units) - 1 and room < wanted_room:
            room += unit_tokens(units[first])
            first += 1
        return first, min(summary_cap, room - frame)

    async def _window_tail(
        self, tenant: str, record: SessionRecord, max_tokens: int
    ) -> tuple[SessionRecord, CachedTail]:
        """The newest window messages that can matter for `max_tokens`, and
        the record they belong to.

        Only those are read, whole: the store stops once they cost more than
        the budget. When this session's tail was read before and only
        appends happened since, only the new messages are read."""
        session_id = record.session_id
        key = (tenant, session_id)
        for _ in range(TAIL_READ_ATTEMPTS):
            cached = self._tails.get(key)
            if cached is None or not cached.reusable_for(record, max_tokens):
                cached = None
            elif cached.last_sequence == record.last_sequence:
                # Nothing appended since: no read at all.
                return record, cached.shrunk(max_tokens, SUMMARY_INPUT_MESSAGES)
            after = cached.last_sequence if cached else record.compacted_through
            newer = await self._store.list_window_messages(tenant, session_id, after, max_tokens)
            if not newer or newer[-1].sequence <= record.last_sequence:
                break
            # Appended after `record` was read: plan on the newer record.
            record = await self.get(tenant, session_id)
        else:
            # Appends keep outrunning the reads: answer with what was read
            # (it may hold messages newer than `record`), and keep nothing.
            return record, CachedTail.extended(
                cached, record, newer, max_tokens, SUMMARY_INPUT_MESSAGES
            )
        tail = CachedTail.extended(cached, record, newer, max_tokens, SUMMARY_INPUT_MESSAGES)
        # Keep only what provably belongs to `record`: a rollback committed
        # between the two reads would have changed the messages' visibility.
        latest = await self._store.get_session(tenant, session_id)
        if latest is not None and latest.version == record.version:
            self._tails.put(key, tail)
        return record, tail

    async def _summarize_prefix(
        self,
        tenant: str,
        record: SessionRecord,
        tail: CachedTail,
        before_sequence: int,
        messages_left_out: bool,
        cap: int,
    ) -> tuple[str, bool]:
        """Summary of the compaction summary plus the window messages older
        than `before_sequence` (the newest SUMMARY_INPUT_MESSAGES of them:
        kept with the tail and slid along with it, read once)."""
        if not messages_left_out:
            # Only the compacted prefix is left out: its summary stands as is.
            return self._counter.truncate(record.compaction_summary, cap), False
        key = (tenant, record.session_id, record.version, before_sequence, cap)
        cached = self._summary_cache.get(key)
        if cached is not None:
            return cached
        inputs = await self._summary_inputs(tenant, record, tail, before_sequence)
        if record.compaction_summary:
            inputs.insert(0, _summary_message(record.compaction_summary))
        summary = await self._summarizer.summarize(inputs, cap)
        result = (summary.text, summary.is_fallback)
        self._summary_cache[key] = result
        while len(self._summary_cache) > 1024:
            self._summary_cache.popitem(last=False)
        return result

    async def _summary_inputs(
        self, tenant: str, record: SessionRecord, tail: CachedTail, before_sequence: int
    ) -> list[Message]:
        prefix = tail.prefix
        if prefix is None:
            first = tail.messages[0].sequence if tail.messages else record.last_sequence + 1
            prefix = tuple(
                await self._store.list_recent_messages(
                    tenant,
                    record.session_id,
                    record.compacted_through,
                    first,
                    SUMMARY_INPUT_MESSAGES,
                )
            )
            key = (tenant, record.session_id)
            if self._tails.get(key) is tail:
                self._tails.put(key, replace(tail, prefix=prefix))
        left_out = [*prefix, *(m for m in tail.messages if m.sequence < before_sequence)]
        return left_out[-SUMMARY_INPUT_MESSAGES:]

    async def compact(
        self, actor: Actor, session_id: str, keep_recent_messages: int, expected_etag: str
    ) -> tuple[SessionRecord, int]:
        check_id("session_id", session_id, self._limits)
        check_non_negative("keep_recent_messages", keep_recent_messages)
        keep = keep_recent_messages or DEFAULT_KEEP_RECENT_MESSAGES
        folded = 0
        tenant = actor.tenant

        async def build(current: SessionRecord) -> _Mutation | None:
            nonlocal folded
            units = group_units(
                await self._store.list_window_tail(
                    tenant, session_id, current.compacted_through, _UNLIMITED, keep
                )
            )
            cut = compaction_cut(units, keep)
            kept = units[cut:]
            folded = current.window_message_count - len(flatten(kept))
            if folded <= 0:
                return None
            # The newest of the folded messages, read newest first: the
            # cost does not grow with the history.
            inputs = await self._store.list_recent_messages(
                tenant,
                session_id,
                current.compacted_through,
                _first_sequence(kept, current),
                SUMMARY_INPUT_MESSAGES,
            )
            if not inputs:
                return None
            through = inputs[-1].sequence
            if current.compaction_summary:
                inputs.insert(0, _summary_message(current.compaction_summary))
            summary = await self._summarizer.summarize(inputs, COMPACTION_SUMMARY_MAX_TOKENS)
            summary_tokens = self._counter.system_message_tokens(summary.text)
            record = current.evolve(
                compaction_summary=summary.text,
                compaction_summary_tokens=summary_tokens,
                compacted_through=through,
                window_message_count=current.window_message_count - folded,
                window_tokens=_tokens(kept) + summary_tokens,
            )
            what = f"compacted {folded} message(s) through sequence {through}"
            return _Mutation(record, ChangeKind.COMPACT, current.version, what)

        record = await self._mutate(actor, session_id, expected_etag, build)
        return record, folded

    # ----- versions --------------------------------------------------------

    async def list_versions(
        self, tenant: str, session_id: str, requested_page_size: int, page_token: str
    ) -> tuple[list[SessionVersion], str]:
        size = page_size("page_size", requested_page_size, self._limits)
        before = int(paging.decode(page_token, "versions", [session_id]) or 0)
        await self.get(tenant, session_id)
        versions = await self._store.list_versions(tenant, session_id, before, size + 1)
        next_token = ""
        if len(versions) > size:
            versions = versions[:size]
            next_token = paging.encode("versions", [session_id], versions[-1].version)
        return versions, next_token

    async def get_version(self, tenant: str, session_id: str, version: int) -> SessionVersion:
        if version <= 0:
            raise InvalidArgumentError("version", "must be positive")
        await self.get(tenant, session_id)
        found = await self._store.get_version(tenant, session_id, version)
        if found is None:
            raise NotFoundError(f"session {session_id!r} has no version {version}")
        return found

    async def rollback(
        self, actor: Actor, session_id: str, target_version: int, expected_etag: str
    ) -> SessionRecord:
        check_id("session_id", session_id, self._limits)
        if target_version <= 0:
            raise InvalidArgumentError("target_version", "must be positive")

        async def build(current: SessionRecord) -> _Mutation:
            if target_version >= current.version:
                raise InvalidArgumentError(
                    "target_version", f"must be older than the current version {current.version}"
                )
            target = await self._store.get_version(actor.tenant, session_id, target_version)
            if target is None:
                raise NotFoundError(f"session {session_id!r} has no version {target_version}")
            # Sequence numbers are never reused, and the TTL is not rolled
            # back: a rollback must not make a live session expire at once.
            record = target.snapshot.evolve(
                last_sequence=current.last_sequence,
                create_time=current.create_time,
                ttl_seconds=current.ttl_seconds,
                expire_time=current.expire_time,
            )
            return _Mutation(
                record,
                ChangeKind.ROLLBACK,
                target_version,
                f"rolled back to version {target_version}",
                visibility_changed=True,
            )

        return await self._mutate(actor, session_id, expected_etag, build)

    # ----- shared machinery ------------------------------------------------

    async def _mutate(
        self,
        actor: Actor,
        session_id: str,
        expected_etag: str,
        build: Callable[[SessionRecord], Awaitable[_Mutation | None]],
        first_read: SessionRecord | None = None,
        ticket: object | None = None,
    ) -> SessionRecord:
        """Read, build, compare-and-swap; retried only when unconditional.
        `first_read` is the record the caller has just read (with the
        store's `ticket` for it), used for the first attempt instead of
        reading it again."""
        for attempt in range(UNCONDITIONAL_RETRIES):
            current = first_read or await self.get(actor.tenant, session_id)
            first_read, attempt_ticket, ticket = None, ticket, None
            _check_etag(current, expected_etag)
            mutation = await build(current)
            if mutation is None:
                return current
            if mutation.stamped:
                record = mutation.record
                now = record.update_time
            else:
                now = self._clock()
                record = mutation.record.evolve(version=current.version + 1, update_time=now)
            change = SessionChange(
                expected_version=current.version,
                record=record,
                version=SessionVersion(
                    record.version, mutation.parent_version, mutation.kind, now, record
                ),
                new_messages=mutation.new_messages,
                visibility_changed=mutation.visibility_changed,
                request_id=mutation.request_id,
                audit=record_for(actor, ENTITY, session_id, record.version, now, mutation.summary),
                ticket=attempt_ticket,
            )
            try:
                await self._store.apply_change(actor.tenant, change)
                return record
            except NotFoundError:
                # Archived between the read and the write: restore, try again.
                if self.restorer is None or not await self.restorer(actor.tenant, session_id):
                    raise
            except ConcurrentModificationError:
                if expected_etag:
                    raise EtagMismatchError(
                        f"session {session_id!r} changed after etag {expected_etag}"
                    ) from None
                # Back off a little so that contending writers spread out.
                await asyncio.sleep(random.uniform(0, 0.002 * (attempt + 1)))
        raise ConcurrentModificationError(
            f"session {session_id!r} is changing too fast; retry the call"
        )


def _new_message_id() -> str:
    """A random (version 4) UUID as 32 hex digits, like uuid4().hex
    without building a UUID object."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw.hex()


def _check_etag(record: SessionRecord, expected_etag: str) -> None:
    if expected_etag and expected_etag != record.etag:
        raise EtagMismatchError(
            f"session {record.session_id!r} is at etag {record.etag}, not {expected_etag}"
        )


def _cursor_from(position: Any) -> SessionCursor | None:
    if position is None:
        return None
    try:
        create_time, session_id = position
        return SessionCursor(float(create_time), str(session_id))
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError("page_token", "is malformed") from exc


def _extend_ranges(ranges: tuple[SeqRange, ...], first: int, last: int) -> tuple[SeqRange, ...]:
    if ranges and ranges[-1][1] == first - 1:
        return (*ranges[:-1], (ranges[-1][0], last))
    return (*ranges, (first, last))


def _summary_cap(requested: int) -> int:
    if requested < 0:
        return 0
    return requested or DEFAULT_SUMMARY_MAX_TOKENS


def _tokens(units: Sequence[list[MessageMeta]]) -> int:
    return sum(unit_tokens(unit) for unit in units)


def _first_sequence(units: Sequence[list[MessageMeta]], record: SessionRecord) -> int:
    """Sequence of the oldest message of `units`; past the last when empty."""
    return units[0][0].sequence if units else record.last_sequence + 1


def _summary_message(text: str) -> Message:
    return Message(sequence=0, message_id="", role=Role.SYSTEM, content=text)


def _tail_bytes(tail: CachedTail) -> int:
    return message_bytes(tail.messages) + message_bytes(tail.prefix or ())


def window_bytes(window: ContextWindow) -> int:
    """Approximate memory held by a window (its messages and summary)."""
    return message_bytes(window.messages) + len(window.summary)
