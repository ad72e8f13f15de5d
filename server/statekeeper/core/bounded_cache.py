"""A least-recently-used cache bounded by entry count and by total weight.

The per-process caches of the read paths (window tails, windows, their
protos) hold message contents that callers choose: bounding them by entry
count alone would let one tenant with large messages fill the process's
memory, so each entry also has a weight (approximate bytes) and the cache
keeps the total under a budget."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from statekeeper.core.sessions.models import Message

K = TypeVar("K")
V = TypeVar("V")

# What a cached message costs beyond its text (object headers, ids, fields).
_MESSAGE_OVERHEAD_BYTES = 256


def message_bytes(messages: Iterable[Message]) -> int:
    """Approximate memory held by `messages` (their texts plus overhead)."""
    total = 0
    for message in messages:
        total += len(message.content) + _MESSAGE_OVERHEAD_BYTES
        for call in message.tool_calls:
            total += len(call.name) + len(call.arguments) + len(call.id)
    return total


class BoundedCache(Generic[K, V]):
    """LRU over at most `max_entries` entries and `max_weight` total weight;
    an entry heavier than `max_entry_weight` is not kept at all."""

    def __init__(
        self,
        weigh: Callable[[V], int],
        max_entries: int,
        max_weight: int,
        max_entry_weight: int,
    ) -> None:
        self._weigh = weigh
        self._max_entries = max_entries
        self._max_weight = max_weight
        self._max_entry_weight = max_entry_weight
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def weight(self) -> int:
        return self._weight

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: K, value: V) -> None:
        self.pop(key)
        weight = self._weigh(value)
        if weight > self._max_entry_weight:
            return
        self._entries[key] = (value, weight)
        self._weight += weight
        while len(self._entries) > self._max_entries or self._weight > self._max_weight:
            _, (_, evicted) = self._entries.popitem(last=False)
            self._weight -= evicted

    def pop(self, key: K) -> V | None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return None
        self._weight -= entry[1]
        return entry[0]
