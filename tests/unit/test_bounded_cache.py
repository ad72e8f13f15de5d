"""The read-path caches are bounded by bytes, not only by entry count."""

from __future__ import annotations

from statekeeper.core.bounded_cache import BoundedCache, message_bytes
from statekeeper.core.sessions.models import Message, Role, ToolCall


def test_the_total_weight_stays_under_the_budget_oldest_evicted_first() -> None:
    cache: BoundedCache[str, str] = BoundedCache(len, 100, max_weight=10, max_entry_weight=10)
    cache.put("a", "xxxx")
    cache.put("b", "xxxx")
    assert cache.get("a") == "xxxx"  # now the most recently used
    cache.put("c", "xxxx")  # 12 > 10: the least recently used ("b") goes
    assert cache.get("b") is None
    assert cache.get("a") == "xxxx" and cache.get("c") == "xxxx"
    assert cache.weight == 8 and len(cache) == 2


def test_an_entry_over_the_per_entry_limit_is_not_kept_and_replaces_nothing_stale() -> None:
    cache: BoundedCache[str, str] = BoundedCache(len, 100, max_weight=100, max_entry_weight=5)
    cache.put("k", "small")
    cache.put("k", "far too large")
    assert cache.get("k") is None  # the old value is not served either
    assert cache.weight == 0


def test_the_entry_count_is_bounded_too() -> None:
    cache: BoundedCache[int, str] = BoundedCache(len, 2, max_weight=1000, max_entry_weight=100)
    for key in range(3):
        cache.put(key, "v")
    assert cache.get(0) is None and len(cache) == 2


def test_message_bytes_counts_texts_and_tool_arguments() -> None:
    plain = Message(1, "m1", Role.USER, "x" * 1000)
    call = Message(2, "m2", Role.ASSISTANT, "", tool_calls=(ToolCall("c1", "search", "y" * 5000),))
    assert message_bytes([plain]) >= 1000
    assert message_bytes([call]) >= 5000
    assert message_bytes([plain, call]) == message_bytes([plain]) + message_bytes([call])
