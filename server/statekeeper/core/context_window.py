"""Planning a context window from stored token counts.

Pure functions over `MessageMeta`: no text is read or tokenized here, which
is what keeps GetContextWindow cheap on long sessions.
"""

from __future__ import annotations

from collections.abc import Sequence

from statekeeper.core.models import MessageMeta, Role

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
