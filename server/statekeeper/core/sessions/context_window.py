"""Planning a context window from stored token counts.

Pure functions over `MessageMeta`: no text is read or tokenized here, which
is what keeps GetContextWindow cheap on long sessions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Generic, Protocol, TypeVar

from statekeeper.core.sessions.models import Message, MessageMeta, Role, SeqRange, SessionRecord

Unit = list[MessageMeta]


def group_units(window: Sequence[MessageMeta]) -> list[Unit]:
    """Splits a window (oldest first) into units that are kept or dropped as a
    whole: an assistant message with tool calls together with the TOOL
    messages that directly follow it and answer those calls; any other
    message alone."""
    units: list[Unit] = []
    index = 0
    while index < len(window):
        head = window[index]
        unit = [head]
        index += 1
        if head.role == Role.ASSISTANT and head.tool_call_ids:
            calls = set(head.tool_call_ids)
            while (
                index < len(window)
                and window[index].role == Role.TOOL
                and window[index].tool_call_id in calls
            ):
                unit.append(window[index])
                index += 1
        units.append(unit)
    return units


def unit_tokens(unit: Unit) -> int:
    return sum(message.token_count for message in unit)


def newest_fitting(units: Sequence[Unit], available: int) -> int:
    """Index of the oldest unit of the longest suffix of `units` whose total
    cost is within `available`. Returns len(units) if not even the newest
    unit fits. The suffix is contiguous: a window never skips a message."""
    used = 0
    first = len(units)
    for index in range(len(units) - 1, -1, -1):
        cost = unit_tokens(units[index])
        if used + cost > available:
            break
        used += cost
        first = index
    return first


def compaction_cut(units: Sequence[Unit], keep_recent_messages: int) -> int:
    """Index of the first unit to keep verbatim when compacting: the newest
    units holding at least `keep_recent_messages` messages (more when a unit
    would otherwise be split)."""
    kept = 0
    first = len(units)
    while first > 0 and kept < keep_recent_messages:
        first -= 1
        kept += len(units[first])
    return first


def flatten(units: Sequence[Unit]) -> list[MessageMeta]:
    return [message for unit in units for message in unit]


class _Costed(Protocol):
    """What deciding where a tail ends needs of a message."""

    @property
    def role(self) -> Role: ...

    @property
    def token_count(self) -> int: ...


C = TypeVar("C", bound=_Costed)


class WindowTail(Generic[C]):
    """Collects the newest part of a working window, fed newest first, and
    says when it has enough (see SessionStore.list_window_tail): once the
    messages taken cost more than `max_tokens` or number `max_messages`, and
    the oldest one taken is not a TOOL message, so that it starts a unit
    (an ASSISTANT message with tool calls and the TOOL results after it are
    never split)."""

    def __init__(self, max_tokens: int, max_messages: int) -> None:
        self._max_tokens = max_tokens
        self._max_messages = max_messages
        self._tokens = 0
        self._newest_first: list[C] = []

    def add(self, message: C) -> bool:
        """Takes one more (older) message; True when the tail is complete."""
        self._newest_first.append(message)
        self._tokens += message.token_count
        enough = self._tokens > self._max_tokens or len(self._newest_first) >= self._max_messages
        return enough and message.role != Role.TOOL

    def messages(self) -> list[C]:
        """What was taken, oldest first."""
        return self._newest_first[::-1]


@dataclass(frozen=True)
class CachedTail:
    """The window tail read for one session at one record, with the newest
    messages before it (what a summary of the left-out part reads).

    Kept per session and reused for a later record when only appends
    happened in between (messages never change once written, and their
    visibility is a function of `visible_ranges`), so a window costs a read
    of the new messages only."""

    incarnation: float
    compacted_through: int
    visible_ranges: tuple[SeqRange, ...]
    last_sequence: int
    max_tokens: int
    # True when `messages` costs more than max_tokens (a proper tail); False
    # when it is the whole window.
    complete: bool
    messages: tuple[Message, ...]
    # The newest (up to a cap) window messages older than `messages`,
    # ascending; None until read.
    prefix: tuple[Message, ...] | None = None

    def reusable_for(self, record: SessionRecord, max_tokens: int) -> bool:
        return (
            record.create_time == self.incarnation
            and record.compacted_through == self.compacted_through
            and record.last_sequence >= self.last_sequence
            and (max_tokens <= self.max_tokens or not self.complete)
            and clip_ranges(record.visible_ranges, self.last_sequence)
            == clip_ranges(self.visible_ranges, self.last_sequence)
        )

    @staticmethod
    def extended(
        base: CachedTail | None,
        record: SessionRecord,
        newer: Sequence[Message],
        max_tokens: int,
        prefix_cap: int,
    ) -> CachedTail:
        """The tail for `record` from `base` (None: nothing kept) and the
        messages appended after it (ascending)."""
        if base is not None and _tail_of(newer, max_tokens)[1]:
            # The store stops reading once the budget is spent, so `newer`
            # alone filling it may not reach back to `base`: the messages in
            # between were never read. Start afresh (the prefix is re-read
            # from the store when a summary needs it).
            base = None
        older = base.messages if base else ()
        combined = [*older, *newer]
        messages, complete = _tail_of(combined, max_tokens)
        prefix = None
        if base is not None and base.prefix is not None:
            dropped = combined[: len(combined) - len(messages)]
            prefix = (*base.prefix, *dropped)[-prefix_cap:]
        return CachedTail(
            incarnation=record.create_time,
            compacted_through=record.compacted_through,
            visible_ranges=record.visible_ranges,
            last_sequence=record.last_sequence,
            max_tokens=max_tokens,
            complete=complete,
            messages=tuple(messages),
            prefix=prefix,
        )

    def shrunk(self, max_tokens: int, prefix_cap: int) -> CachedTail:
        """This tail for a budget no larger than `max_tokens`."""
        if max_tokens == self.max_tokens:
            return self
        messages, complete = _tail_of(self.messages, max_tokens)
        dropped = self.messages[: len(self.messages) - len(messages)]
        prefix = None if self.prefix is None else (*self.prefix, *dropped)[-prefix_cap:]
        return replace(
            self, max_tokens=max_tokens, complete=complete, messages=tuple(messages), prefix=prefix
        )


def clip_ranges(ranges: Sequence[SeqRange], last: int) -> list[SeqRange]:
    """The parts of inclusive `ranges` at or below `last`."""
    return [(low, min(high, last)) for low, high in ranges if low <= last]


def _tail_of(messages: Sequence[Message], max_tokens: int) -> tuple[list[Message], bool]:
    """The tail of `messages` (ascending, contiguous) for `max_tokens`, and
    whether it is complete (see WindowTail)."""
    tail: WindowTail[Message] = WindowTail(max_tokens, 2**62)
    for message in reversed(messages):
        if tail.add(message):
            return tail.messages(), True
    return tail.messages(), False
