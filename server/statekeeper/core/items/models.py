"""Item records, queries and namespace paths (see core/items/service.py for the rules)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SEPARATOR = "\x1e"


_PATH_END = "\x1f"


@dataclass(frozen=True)
class ItemLimits:
    """Limits of the item capability."""

    max_label_bytes: int = 256
    max_labels: int = 32
    max_key_bytes: int = 1024
    max_value_bytes: int = 1024 * 1024
    max_filter_bytes: int = 64 * 1024
    max_vectors: int = 64
    max_dimensions: int = 8192
    default_search_limit: int = 10
    default_namespace_limit: int = 100
    max_page: int = 1000


@dataclass(frozen=True)
class ItemVector:
    field: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class ItemRecord:
    """A stored item. Times are seconds since the epoch."""

    namespace: tuple[str, ...]
    key: str
    value_json: str
    create_time: float
    update_time: float
    expire_time: float | None = None
    ttl_seconds: float | None = None
    vectors: tuple[ItemVector, ...] = ()

    @property
    def path(self) -> str:
        return namespace_path(self.namespace)


@dataclass(frozen=True)
class ScoredRecord:
    record: ItemRecord
    score: float | None


@dataclass(frozen=True)
class SearchQuery:
    namespace_prefix: tuple[str, ...] = ()
    filter_json: str = ""
    query_vector: tuple[float, ...] = ()
    limit: int = 0
    offset: int = 0
    refresh_ttl: bool = False


@dataclass(frozen=True)
class NamespaceQuery:
    prefix: tuple[str, ...] = ()
    suffix: tuple[str, ...] = ()
    max_depth: int = 0
    limit: int = 0
    offset: int = 0


def namespace_path(namespace: Sequence[str]) -> str:
    return "".join(label + SEPARATOR for label in namespace)


def path_range(prefix: Sequence[str]) -> tuple[str, str] | None:
    """The [low, high) range of the paths under `prefix`; None for all."""
    if not prefix:
        return None
    low = namespace_path(prefix)
    return low, low[:-1] + _PATH_END


def namespace_of(path: str) -> tuple[str, ...]:
    return tuple(path.split(SEPARATOR)[:-1])
