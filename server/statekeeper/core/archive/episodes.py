"""The episodes of an idle user as one archive unit (unit id = user id).

A user (tenant, user_id) who recorded no episode for `after_days` has every
episode archived together (facts stay hot: they are the distilled
knowledge, small, and read by every context build). The unit's rows leave
the database in one compare-and-delete: only if the user's episodes are
still as exported (same keys, same ranking data), which also takes their
vectors out of every replica's index (the store's delete path: in process
here, through the change feed on PostgreSQL). A restore inserts them back
with their ids and vector keys and puts their vectors back in the indexes
the same way, so recall afterwards ranks them exactly as before.

Reads: ListEpisodes of the user, GetEpisode and DeleteEpisode of one of
the episodes and RecordEpisode(s) by the user restore the unit first (recording must see
the whole history to deduplicate); Recall and BuildContext only when asked
(`include_archived`). The hooks are `restore_user` and `owner_of`
(core/memory/episodes.py: ArchivedEpisodes).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from statekeeper.core.archive.damage import reading, scanned_manifest
from statekeeper.core.archive.keys import unit_prefix
from statekeeper.core.archive.service import DAY, Archive
from statekeeper.core.archive.store import FENCE, Candidate, ExportedUnit
from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.audit.service import record_for, system_actor
from statekeeper.core.memory.store import EpisodeStore
from statekeeper.core.memory.vector_index import IndexEntry, VectorChange, VectorIndexes

log = logging.getLogger(__name__)

CAPABILITY = "episodes"
# The manifest's extra: the archived episode ids (GetEpisode finds its
# user by them; `is_hot` checks them) and the guard of the compare-and-delete.
EPISODE_IDS = "episode_ids"
GUARD = "guard"
# Vectors read back per store call when a restore refills the indexes.
_REFILL_CHUNK = 2_000
# Archived units whose episode ids this process has read (GetEpisode of an
# episode not found hot looks for its user in them).
_KNOWN_UNITS = 10_000
_KNOWN_SECONDS = 300.0
# Users this process saw record a new episode, and when (at most this many).
_RECORDED_USERS = 100_000


@dataclass(frozen=True)
class IdleUser:
    tenant: str
    user_id: str
    last_recorded: float  # the newest create_time of the user's episodes


@dataclass(frozen=True)
class HotDelete:
    """What a compare-and-delete did: `deleted` as UnitKind.delete_hot says
    (True, None: changed since the export, False: nothing left to delete),
    and the vector keys that left the database (for the indexes)."""

    deleted: bool | None
    vector_keys: tuple[int, ...] = ()


class EpisodeArchiveDatabase(Protocol):
    """The episodes' side of the archive, per backend
    (storage/archive/episodes_embedded.py, episodes_postgres.py)."""

    async def users(self, after: tuple[str, str] | None, limit: int) -> list[IdleUser]:
        """Users with episodes, in (tenant, user_id) order after `after`."""

    async def export_user(self, tenant: str, user_id: str, path: Path) -> ExportedUnit | None:
        """The user's episodes as one chunk, read in one snapshot, with
        extra[EPISODE_IDS] and extra[GUARD] (None: the user has none)."""

    async def delete_user(
        self, tenant: str, user_id: str, guard: str, audit: AuditRecord
    ) -> HotDelete:
        """In one transaction: deletes the user's episodes if their guard is
        still `guard` (logging the vector removals where the store keeps a
        change log) and writes `audit` for each of them (its entity id set
        to the episode's)."""

    async def restore_user(
        self, tenant: str, user_id: str, chunk: Path, episode_ids: list[str], fence: str = ""
    ) -> list[int] | None:
        """In one transaction: inserts the chunk's episodes (and their
        lexical index rows, and the vector change log rows) unless one of
        `episode_ids` is hot (None); returns the restored vector keys.
        ChunkUsedUpError (nothing inserted) if the chunk `fence` is used up."""

    async def any_hot(self, tenant: str, episode_ids: list[str]) -> bool:
        """True if one of these episodes is in the database."""


class EpisodeUnits:
    """The `episodes` unit kind, and episodic memory's archive hook."""

    capability = CAPABILITY
    restorable = True

    def __init__(
        self,
        database: EpisodeArchiveDatabase,
        store: EpisodeStore,
        indexes: VectorIndexes,
        after_days: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = database
        self._store = store
        self._indexes = indexes
        self.after_days = after_days
        self._clock = clock
        self._archive: Archive | None = None
        # (tenant, user) -> when read, and the episode ids of that user's
        # archived unit as its manifest listed them.
        self._known: OrderedDict[tuple[str, str], tuple[float, frozenset[str]]] = OrderedDict()
        self._recorded: OrderedDict[tuple[str, str], float] = OrderedDict()

    def attach(self, archive: Archive) -> None:
        """Registers the kind; restores go through `archive` (its locks)."""
        self._archive = archive
        archive.add_kind(self)

    # ----- UnitKind ----------------------------------------------------------

    async def candidates(
        self, cutoff: float, after: tuple[Any, ...] | None, limit: int
    ) -> list[Candidate]:
        start = None if after is None else (str(after[0]), str(after[1]))
        users = await self._db.users(start, limit)
        return [
            Candidate(
                user.tenant,
                user.user_id,
                user.user_id,
                (user.tenant, user.user_id),
                due=user.last_recorded < cutoff,
            )
            for user in users
        ]

    async def export(self, tenant: str, unit: str, path: Path) -> ExportedUnit | None:
        return await self._db.export_user(tenant, unit, path)

    async def delete_hot(self, tenant: str, unit: str, exported: ExportedUnit) -> bool | None:
        # One record per episode, as the store's delete writes (never one
        # naming the user: erasure names users only by a salted hash).
        audit = record_for(
            system_actor("ArchiveEpisodes"), "episode", "", 0, self._clock(), "archived"
        )
        outcome = await self._db.delete_user(tenant, unit, str(exported.extra[GUARD]), audit)
        if outcome.vector_keys:
            # The store's delete path: this replica's indexes now (others
            # through the change log the delete wrote, on PostgreSQL).
            await self._indexes.publish(VectorChange(tenant, unit, removed=outcome.vector_keys))
        return outcome.deleted

    async def restore(self, tenant: str, unit: str, chunk: Path, extra: dict[str, Any]) -> bool:
        ids = [str(i) for i in extra.get(EPISODE_IDS, [])]
        with reading(unit_prefix(tenant, CAPABILITY, unit)):
            fence = str(extra.get(FENCE, ""))
            keys = await self._db.restore_user(tenant, unit, chunk, ids, fence)
        if keys is None:
            return False
        self._known.pop((tenant, unit), None)
        await self._refill(tenant, unit, keys)
        return True

    async def is_hot(self, tenant: str, unit: str, extra: dict[str, Any]) -> bool:
        ids = [str(i) for i in extra.get(EPISODE_IDS, [])]
        return await self._db.any_hot(tenant, ids)

    async def _refill(self, tenant: str, user_id: str, keys: list[int]) -> None:
        """Puts the restored vectors back in this replica's index (the
        other replicas read them through the change log)."""
        for start in range(0, len(keys), _REFILL_CHUNK):
            chunk = keys[start : start + _REFILL_CHUNK]
            episodes = await self._store.get_episodes_by_keys(tenant, user_id, chunk, True)
            entries = tuple(
                IndexEntry(e.vector_key, e.importance, e.occur_time, e.embedding)
                for e in sorted(episodes, key=lambda e: e.vector_key)
                if e.embedding is not None
            )
            models = [e.embedding_model for e in episodes if e.embedding_model]
            if entries:
                await self._indexes.publish(
                    VectorChange(
                        tenant,
                        user_id,
                        upserts=entries,
                        embedding_model=models[-1] if models else "",
                    )
                )

    # ----- ArchivedEpisodes (episodic memory's hook) ---------------------------

    async def restore_user(self, tenant: str, user_id: str, writing: bool = False) -> bool:
        if self._archive is None or not user_id:
            return False
        if writing and self._recently_recorded(tenant, user_id):
            # Not archived: no archiver (same policy on every replica) takes
            # a user whose newest episode is younger than the policy. Spares
            # a write the object store round trip.
            return False
        with reading(unit_prefix(tenant, CAPABILITY, user_id)):
            return await self._archive.restore_unit(CAPABILITY, tenant, user_id)

    def recorded(self, tenant: str, user_id: str) -> None:
        self._recorded[(tenant, user_id)] = self._clock()
        self._recorded.move_to_end((tenant, user_id))
        while len(self._recorded) > _RECORDED_USERS:
            self._recorded.popitem(last=False)

    def _recently_recorded(self, tenant: str, user_id: str) -> bool:
        at = self._recorded.get((tenant, user_id))
        if at is None or self.after_days <= 0:
            return False
        # Half the policy: room for clocks that disagree.
        return self._clock() - at < self.after_days * DAY / 2

    async def owner_of(self, tenant: str, episode_id: str) -> str | None:
        """Looks in the tenant's archived units (their manifests, cached as
        `_unit_ids` says) for the one holding `episode_id`; a unit whose
        manifest is damaged is skipped (logged)."""
        if self._archive is None:
            return None
        for user_id in await self._archive.units(CAPABILITY, tenant):
            ids = await self._unit_ids(tenant, user_id)
            if episode_id in ids:
                return user_id
        return None

    async def _unit_ids(self, tenant: str, user_id: str) -> frozenset[str]:
        """The unit's episode ids, from its manifest or as read recently (a
        unit is archived again only after a restore, which forgets them
        here; one restored and archived again by another replica is read
        again once the entry is _KNOWN_SECONDS old)."""
        assert self._archive is not None
        known = self._known.get((tenant, user_id))
        now = self._clock()
        if known is not None and now - known[0] < _KNOWN_SECONDS:
            self._known.move_to_end((tenant, user_id))
            return known[1]
        manifest = await scanned_manifest(self._archive, CAPABILITY, tenant, user_id)
        ids = _episode_ids(manifest)
        if ids is None:
            self._known.pop((tenant, user_id), None)
            return frozenset()
        self._known[(tenant, user_id)] = (now, ids)
        while len(self._known) > _KNOWN_UNITS:
            self._known.popitem(last=False)
        return ids


def _episode_ids(manifest: dict[str, Any] | None) -> frozenset[str] | None:
    """The manifest's episode ids; None (logged) when they are not a list."""
    if manifest is None:
        return None
    ids = manifest.get("extra", {}).get(EPISODE_IDS, [])
    if not isinstance(ids, list):
        log.warning(
            "archive scan skipped an episodes unit whose manifest lists no episode ids",
            extra={"tenant": manifest.get("tenant"), "unit": manifest.get("unit")},
        )
        return None
    return frozenset(str(i) for i in ids)


def guard_of(rows: list[tuple[Any, ...]]) -> str:
    """The compare-and-delete guard of a user's episodes: a digest of what
    can change about them (which keys exist; importance, consolidation time
    and derived facts, which consolidation updates), in key order."""
    digest = hashlib.sha256()
    for key, importance, consolidated, derived in sorted(rows, key=lambda row: int(row[0])):
        derived_text = derived if isinstance(derived, str) else repr(list(derived or []))
        digest.update(
            f"{int(key)}|{float(importance)!r}|{consolidated!r}|{derived_text}\n".encode()
        )
    return digest.hexdigest()
