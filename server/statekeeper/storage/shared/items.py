"""Items: what the SQLite and PostgreSQL stores share (the columns, the row
mapper, the vector encoding, the live filter and the namespace range)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from statekeeper.core.items.models import ItemRecord, ItemVector, namespace_of, path_range

# Expired rows removed by one put at most.
SWEEP_BATCH = 100
ITEM_COLUMNS = "path, key, value_json, create_time, update_time, expire_time, ttl_seconds, vectors"
# True for an item still live at the instant bound to {now}.
LIVE = "(expire_time IS NULL OR expire_time > {now})"
# The order of core/items/service.py's newest-first ranking (paths and keys in byte order).
NEWEST_FIRST = "ORDER BY update_time DESC, path, key"


def under(
    tenant: str, prefix: tuple[str, ...], now: float, mark: Callable[[int], str]
) -> tuple[str, list[Any]]:
    """The condition selecting the tenant's live items whose namespace
    starts with `prefix`, with its parameters; `mark(n)` is the dialect's
    n-th placeholder."""
    where = f"tenant = {mark(1)} AND {LIVE.format(now=mark(2))}"
    params: list[Any] = [tenant, now]
    bounds = path_range(prefix)
    if bounds is not None:
        where += f" AND path >= {mark(3)} AND path < {mark(4)}"
        params.extend(bounds)
    return where, params


def item_values(record: ItemRecord) -> tuple[Any, ...]:
    """The values of ITEM_COLUMNS for `record`."""
    return (
        record.path,
        record.key,
        record.value_json,
        record.create_time,
        record.update_time,
        record.expire_time,
        record.ttl_seconds,
        encode_vectors(record.vectors),
    )


def record_from_row(row: Any) -> ItemRecord:
    """An item from its row (the columns of ITEM_COLUMNS, in order)."""
    return ItemRecord(
        namespace=namespace_of(row[0]),
        key=row[1],
        value_json=row[2],
        create_time=row[3],
        update_time=row[4],
        expire_time=row[5],
        ttl_seconds=row[6],
        vectors=decode_vectors(row[7]),
    )


def encode_vectors(vectors: Sequence[ItemVector]) -> str:
    return json.dumps([[vector.field, list(vector.values)] for vector in vectors])


def decode_vectors(text: str) -> tuple[ItemVector, ...]:
    return tuple(ItemVector(field, tuple(values)) for field, values in json.loads(text))
