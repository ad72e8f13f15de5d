"""Items: JSON documents under hierarchical namespaces (LangGraph's
BaseStore model), with filters, TTLs and client-computed vectors.

A namespace is stored as one path string: its labels each followed by the
record separator U+001E. Labels hold no control characters, so the items
under a prefix are exactly the paths in [prefix path, prefix path without
its last separator + U+001F), a range both backends answer from an index in
byte order.

This module validates, matches filters and ranks; the store
(core/items/store.py) reads and writes rows.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from statekeeper.core.errors import InvalidArgumentError, LimitExceededError, NotFoundError
from statekeeper.core.items.models import (
    ItemLimits,
    ItemRecord,
    ItemVector,
    NamespaceQuery,
    ScoredRecord,
    SearchQuery,
)
from statekeeper.core.validation import check_non_negative

if TYPE_CHECKING:
    from statekeeper.core.items.store import ItemStore

Clock = Callable[[], float]

_WILDCARD = "*"
_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})
# How deeply an item value or a filter may nest objects and arrays.
MAX_JSON_DEPTH = 64


class ItemManager:
    """The item capability, independent of transport and storage."""

    def __init__(self, store: ItemStore, limits: ItemLimits, clock: Clock = time.time) -> None:
        self._store = store
        self._limits = limits
        self._clock = clock

    async def put(
        self,
        tenant: str,
        namespace: Sequence[str],
        key: str,
        value_json: str,
        ttl_seconds: float | None,
        vectors: Sequence[ItemVector],
    ) -> ItemRecord:
        labels = self._namespace("namespace", namespace)
        self._check_key(key)
        _json_object("value_json", value_json, self._limits.max_value_bytes)
        if ttl_seconds is not None:
            check_non_negative("ttl", ttl_seconds)
        self._check_vectors(vectors)
        now = self._clock()
        record = ItemRecord(
            namespace=labels,
            key=key,
            value_json=value_json,
            create_time=now,
            update_time=now,
            expire_time=now + ttl_seconds if ttl_seconds else None,
            ttl_seconds=ttl_seconds or None,
            vectors=tuple(vectors),
        )
        return await self._store.put(tenant, record, now)

    async def get(
        self, tenant: str, namespace: Sequence[str], key: str, refresh_ttl: bool
    ) -> ItemRecord:
        labels = self._namespace("namespace", namespace)
        self._check_key(key)
        now = self._clock()
        found = await self._store.get(tenant, labels, key, now)
        if found is None:
            raise NotFoundError(f"no item {key!r} in namespace {list(labels)!r}")
        if refresh_ttl and found.ttl_seconds:
            found = _refreshed(found, now)
            await self._store.refresh(tenant, [(labels, key)], now)
        return found

    async def delete(self, tenant: str, namespace: Sequence[str], key: str) -> bool:
        labels = self._namespace("namespace", namespace)
        self._check_key(key)
        return await self._store.delete(tenant, labels, key, self._clock())

    async def search(self, tenant: str, query: SearchQuery) -> list[ScoredRecord]:
        prefix = self._namespace("namespace_prefix", query.namespace_prefix, required=False)
        conditions = (
            _json_object("filter_json", query.filter_json, self._limits.max_filter_bytes)
            if query.filter_json
            else {}
        )
        _check_filter(conditions)
        for value in query.query_vector:
            _check_finite("query_vector", value)
        limit, offset = self._page(query.limit, query.offset, self._limits.default_search_limit)
        now = self._clock()
        # Without a filter or a query the ranking is newest first, which the
        # store can cut itself; otherwise every candidate must be looked at.
        plain = not conditions and not query.query_vector
        candidates = await self._store.scan(
            tenant, prefix, now, newest=offset + limit if plain else None
        )
        matching = [
            record for record in candidates if _matches(json.loads(record.value_json), conditions)
        ]
        ranked = _ranked(matching, query.query_vector)[offset : offset + limit]
        if query.refresh_ttl:
            ranked = await self._refresh(tenant, ranked, now)
        return ranked

    async def list_namespaces(self, tenant: str, query: NamespaceQuery) -> list[tuple[str, ...]]:
        check_non_negative("max_depth", query.max_depth)
        for field, labels in (("prefix", query.prefix), ("suffix", query.suffix)):
            self._namespace(field, labels, required=False)
        limit, offset = self._page(query.limit, query.offset, self._limits.default_namespace_limit)
        fixed = _fixed_prefix(query.prefix)
        found = await self._store.namespaces(tenant, fixed, self._clock())
        kept = {
            namespace[: query.max_depth] if query.max_depth else namespace
            for namespace in found
            if _starts_with(namespace, query.prefix) and _ends_with(namespace, query.suffix)
        }
        return sorted(kept)[offset : offset + limit]

    # ----- checks ---------------------------------------------------------------------

    def _namespace(
        self, field: str, labels: Sequence[str], required: bool = True
    ) -> tuple[str, ...]:
        if required and not labels:
            raise InvalidArgumentError(field, "must have at least one label")
        if len(labels) > self._limits.max_labels:
            raise LimitExceededError(field, self._limits.max_labels, f"has {len(labels)} labels")
        for index, label in enumerate(labels):
            _check_name(f"{field}[{index}]", label, self._limits.max_label_bytes)
        return tuple(labels)

    def _check_key(self, key: str) -> None:
        _check_name("key", key, self._limits.max_key_bytes)

    def _check_vectors(self, vectors: Sequence[ItemVector]) -> None:
        if len(vectors) > self._limits.max_vectors:
            raise LimitExceededError("vectors", self._limits.max_vectors, f"has {len(vectors)}")
        for index, vector in enumerate(vectors):
            field = f"vectors[{index}].values"
            if not vector.values:
                raise InvalidArgumentError(field, "must not be empty")
            if len(vector.values) > self._limits.max_dimensions:
                raise LimitExceededError(
                    field, self._limits.max_dimensions, f"has {len(vector.values)} dimensions"
                )
            for value in vector.values:
                _check_finite(field, value)

    def _page(self, limit: int, offset: int, default: int) -> tuple[int, int]:
        check_non_negative("limit", limit)
        check_non_negative("offset", offset)
        return min(limit or default, self._limits.max_page), offset

    async def _refresh(
        self, tenant: str, ranked: list[ScoredRecord], now: float
    ) -> list[ScoredRecord]:
        keys = [(s.record.namespace, s.record.key) for s in ranked if s.record.ttl_seconds]
        if keys:
            await self._store.refresh(tenant, keys, now)
        return [replace(s, record=_refreshed(s.record, now)) for s in ranked]


# ----- helpers ------------------------------------------------------------------------


def _check_name(field: str, value: str, max_bytes: int) -> None:
    if not value:
        raise InvalidArgumentError(field, "must not be empty")
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        raise InvalidArgumentError(field, "must not contain control characters")
    size = len(value.encode())
    if size > max_bytes:
        raise LimitExceededError(field, max_bytes, f"is {size} bytes")


def _check_finite(field: str, value: float) -> None:
    if not math.isfinite(value):
        raise InvalidArgumentError(field, "must hold finite numbers")


def _json_object(field: str, text: str, max_bytes: int) -> dict[str, Any]:
    size = len(text.encode())
    if size > max_bytes:
        raise LimitExceededError(field, max_bytes, f"is {size} bytes")
    try:
        value = json.loads(text)
    except ValueError:
        raise InvalidArgumentError(field, "is not valid JSON") from None
    except RecursionError:
        raise InvalidArgumentError(field, f"nests deeper than {MAX_JSON_DEPTH}") from None
    if not isinstance(value, dict):
        raise InvalidArgumentError(field, "must be a JSON object")
    if _depth(value) > MAX_JSON_DEPTH:
        # Filters are matched recursively: a bound keeps that off the stack limit.
        raise InvalidArgumentError(field, f"nests deeper than {MAX_JSON_DEPTH}")
    return value


def _depth(value: Any) -> int:
    """How deeply `value` nests objects and arrays, without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        node, depth = pending.pop()
        deepest = max(deepest, depth)
        if depth > MAX_JSON_DEPTH:
            break
        if isinstance(node, dict):
            pending.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            pending.extend((child, depth + 1) for child in node)
    return deepest


def _check_filter(conditions: Mapping[str, Any]) -> None:
    for key, condition in conditions.items():
        if isinstance(condition, dict) and _is_comparison(condition):
            unknown = set(condition) - _OPERATORS
            if unknown:
                raise InvalidArgumentError(
                    f"filter_json.{key}", f"unknown operator {sorted(unknown)[0]!r}"
                )


def _is_comparison(condition: Mapping[str, Any]) -> bool:
    return any(str(name).startswith("$") for name in condition)


def _matches(value: Mapping[str, Any], conditions: Mapping[str, Any]) -> bool:
    return all(_equal_or_compare(value.get(key), wanted) for key, wanted in conditions.items())


def _equal_or_compare(actual: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics (JSONB-like): nested objects match field
    by field, arrays element by element, operators compare numbers."""
    if isinstance(wanted, dict):
        if _is_comparison(wanted):
            return all(_compare(actual, name, operand) for name, operand in wanted.items())
        return isinstance(actual, dict) and all(
            _equal_or_compare(actual.get(key), inner) for key, inner in wanted.items()
        )
    if isinstance(wanted, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(wanted)
            and all(_equal_or_compare(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def _compare(actual: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return bool(actual == operand)
    if operator == "$ne":
        return bool(actual != operand)
    left, right = _number(actual), _number(operand)
    if left is None or right is None:
        return False
    if operator == "$gt":
        return left > right
    if operator == "$gte":
        return left >= right
    if operator == "$lt":
        return left < right
    return left <= right  # $lte (operators were checked)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _ranked(records: list[ItemRecord], query_vector: tuple[float, ...]) -> list[ScoredRecord]:
    """Best first: by cosine similarity of the closest vector when there is a
    query vector (unscored items last, newest first), else newest first."""
    newest = sorted(records, key=lambda r: (-r.update_time, r.path, r.key))
    if not query_vector:
        return [ScoredRecord(record, None) for record in newest]
    scored = [ScoredRecord(record, _best_cosine(record, query_vector)) for record in newest]
    with_score = [s for s in scored if s.score is not None]
    with_score.sort(key=lambda s: -(s.score or 0.0))  # stable: ties stay newest first
    return with_score + [s for s in scored if s.score is None]


def _best_cosine(record: ItemRecord, query: tuple[float, ...]) -> float | None:
    scores = [
        _cosine(vector.values, query)
        for vector in record.vectors
        if len(vector.values) == len(query)
    ]
    return max(scores) if scores else None


def _cosine(left: Sequence[float], right: Sequence[float]) -> float:
    dot = sum(a * b for a, b in zip(left, right, strict=True))
    norms = math.sqrt(sum(a * a for a in left)) * math.sqrt(sum(b * b for b in right))
    return dot / norms if norms else 0.0


def _refreshed(record: ItemRecord, now: float) -> ItemRecord:
    if not record.ttl_seconds:
        return record
    return replace(record, expire_time=now + record.ttl_seconds)


def _fixed_prefix(prefix: Sequence[str]) -> tuple[str, ...]:
    """The labels of `prefix` before its first wildcard (what a store can
    narrow its read by)."""
    fixed: list[str] = []
    for label in prefix:
        if label == _WILDCARD:
            break
        fixed.append(label)
    return tuple(fixed)


def _starts_with(namespace: tuple[str, ...], prefix: Sequence[str]) -> bool:
    return len(namespace) >= len(prefix) and all(
        want in (_WILDCARD, label) for label, want in zip(namespace, prefix, strict=False)
    )


def _ends_with(namespace: tuple[str, ...], suffix: Sequence[str]) -> bool:
    return len(namespace) >= len(suffix) and all(
        want in (_WILDCARD, label)
        for label, want in zip(reversed(namespace), reversed(suffix), strict=False)
    )
