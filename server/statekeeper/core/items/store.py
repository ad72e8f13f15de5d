"""The storage contract of items (core/items/service.py).

Every read leaves out items expired at `now`; writes remove expired rows of
the item they touch, and `put` also sweeps a bounded batch of the tenant's
expired rows, so expired items do not pile up.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from statekeeper.core.items.models import ItemRecord
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject

ItemName = tuple[tuple[str, ...], str]


class ItemStore(abc.ABC):
    @abc.abstractmethod
    async def start(self) -> None:
        """Creates or upgrades the schema."""

    async def close(self) -> None:
        """Nothing to release by default: the database is the storage's."""
        return None

    @abc.abstractmethod
    async def put(self, tenant: str, record: ItemRecord, now: float) -> ItemRecord:
        """Creates or replaces the item; a replaced live item keeps its
        create_time. Returns the item as stored."""

    @abc.abstractmethod
    async def get(
        self, tenant: str, namespace: tuple[str, ...], key: str, now: float
    ) -> ItemRecord | None: ...

    @abc.abstractmethod
    async def delete(self, tenant: str, namespace: tuple[str, ...], key: str, now: float) -> bool:
        """Whether a live item was deleted."""

    @abc.abstractmethod
    async def scan(
        self, tenant: str, prefix: tuple[str, ...], now: float, newest: int | None = None
    ) -> list[ItemRecord]:
        """Every live item whose namespace starts with `prefix`, vectors
        included, in no particular order; with `newest`, only that many, the
        newest first (update_time descending, then path and key ascending)."""

    @abc.abstractmethod
    async def refresh(self, tenant: str, names: Sequence[ItemName], now: float) -> None:
        """Sets the expiry of the named live items with a TTL to now + TTL."""

    @abc.abstractmethod
    async def namespaces(
        self, tenant: str, prefix: tuple[str, ...], now: float
    ) -> list[tuple[str, ...]]:
        """The distinct namespaces under `prefix` holding a live item."""

    @abc.abstractmethod
    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        """Deletes every item in a namespace under one of
        `subject.item_path_prefixes`, live or expired, in bounded batches.
        Returns the rows deleted per kind; `dry_run` deletes nothing.
        Idempotent."""
