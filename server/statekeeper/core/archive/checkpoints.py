"""Checkpoint histories as archive units.

An execution (a LangGraph thread) whose newest checkpoint is older than
`after_days` has its history archived: every checkpoint but the newest of
each namespace, with their pending writes, channel rows and the values
only they reference. The newest checkpoints stay hot, so resuming a thread
never touches the archive. The unit's id is the execution id; it is the
tenant's (no user marker) unless the execution's checkpoints name users in
their metadata (`user_id`): the manifest's user_id is then the first of
them (by id) and extra["user_ids"] lists them all, each with a marker, so
that EraseUser of any of them removes the history, as it deletes the
execution's hot checkpoints.

Reads that need the history bring it back first (`ArchivedHistories`,
the checkpoint service's hook): a checkpoint id not found hot, any listing
of an execution with an archived history (and a tenant-wide listing of a
tenant that has any), values not found hot, writes against or saves
resolving a version of an archived checkpoint, and the operations on the
whole history (copy, delete runs, prune, delete execution).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from statekeeper.core.archive.damage import (
    DamagedObjectError,
    damaged,
    manifest_of,
    reading,
    scanned_manifest,
    skipped,
)
from statekeeper.core.archive.keys import (
    capability_prefix,
    manifest_key,
    parse_key,
    unit_prefix,
)
from statekeeper.core.archive.service import Archive
from statekeeper.core.archive.store import FENCE, Candidate, ExportedUnit
from statekeeper.core.audit.models import AuditRecord
from statekeeper.core.audit.service import record_for, system_actor
from statekeeper.core.checkpoints.models import EXECUTION_ENTITY

CAPABILITY = "checkpoints"
# Manifests read at once when looking for histories by run id or value.
MANIFEST_READS = 16
# Archived histories whose run ids and value prefixes are kept in memory
# (a few KB each at most), so a lookup by run id lists the tenant's
# histories and reads only the manifests it has not seen.
CACHED_LOOKUPS = 10_000


class HistoryDatabase(Protocol):
    """The checkpoint histories' side of the archive, per backend
    (storage/archive/checkpoints_embedded.py and checkpoints_postgres.py)."""

    async def history_candidates(
        self, cutoff_ns: int, after: tuple[str, str] | None, limit: int
    ) -> list[tuple[str, str]]:
        """(tenant, execution_id) of executions with a history whose newest
        checkpoint is older than `cutoff_ns`, in that order after `after`."""

    async def export_history(
        self, tenant: str, execution_id: str, path: Path
    ) -> ExportedUnit | None:
        """Writes the history as one chunk read in one snapshot (None: no
        history); `extra` as storage/archive/checkpoints.py `extra_of`."""

    async def delete_history(
        self, tenant: str, execution_id: str, extra: dict[str, Any], audit: AuditRecord
    ) -> bool | None:
        """Deletes the exported checkpoints with their writes, channel rows
        and the values nothing hot references any more, in one transaction,
        if their rows still have the exported fingerprint: True deleted,
        None changed, False gone."""

    async def restore_history(
        self, tenant: str, execution_id: str, chunk: Path, fence: str = ""
    ) -> bool:
        """Inserts the chunk's rows in one transaction (values if absent;
        checkpoints saved again under the same id meanwhile stay as they
        are); False when every checkpoint of it is hot. Marks the chunk
        `fence` used up even then (ChunkUsedUpError if it was already), so
        the archiver's delete of a history a restore asked for refuses."""

    async def hot_checkpoints(
        self, tenant: str, execution_id: str, keys: Sequence[tuple[str, str]]
    ) -> int:
        """How many of (namespace, checkpoint_id) `keys` are hot."""


class CheckpointHistories:
    capability = CAPABILITY
    restorable = True

    def __init__(
        self,
        database: HistoryDatabase,
        after_days: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = database
        self.after_days = after_days
        self._clock = clock

    async def candidates(
        self, cutoff: float, after: tuple[Any, ...] | None, limit: int
    ) -> list[Candidate]:
        start = None if after is None else (str(after[0]), str(after[1]))
        found = await self._db.history_candidates(int(cutoff * 1e9), start, limit)
        return [Candidate(tenant, unit, "", (tenant, unit)) for tenant, unit in found]

    async def export(self, tenant: str, unit: str, path: Path) -> ExportedUnit | None:
        return await self._db.export_history(tenant, unit, path)

    async def delete_hot(self, tenant: str, unit: str, exported: ExportedUnit) -> bool | None:
        audit = record_for(
            system_actor("ArchiveCheckpoints"),
            EXECUTION_ENTITY,
            unit,
            0,  # the store sets the execution's last sequence
            self._clock(),
            f"archived the history ({exported.counts.get('cp_checkpoints', 0)} checkpoints)",
        )
        return await self._db.delete_history(tenant, unit, exported.extra, audit)

    async def restore(self, tenant: str, unit: str, chunk: Path, extra: dict[str, Any]) -> bool:
        with reading(unit_prefix(tenant, CAPABILITY, unit)):
            return await self._db.restore_history(tenant, unit, chunk, str(extra.get(FENCE, "")))

    async def is_hot(self, tenant: str, unit: str, extra: dict[str, Any]) -> bool:
        keys = [(str(key[0]), str(key[1])) for key in extra.get("keys", [])]
        # Every archived checkpoint hot: the archiver stopped before its
        # delete. Some only: saved again under their ids after the archive
        # (the others live in the archive only).
        return bool(keys) and await self._db.hot_checkpoints(tenant, unit, keys) == len(keys)


class ArchivedHistories:
    """The checkpoint service's way back to archived histories
    (CheckpointManager.histories): each method restores what a read or an
    operation needs and says whether it restored anything (then the caller
    runs its query again)."""

    def __init__(self, archive: Archive) -> None:
        self._archive = archive
        # What the run id and value lookups match, per archived history as
        # listed (tenant, unit, its chunk keys): a history archived again
        # has a new chunk (rows differ), so an entry is never stale.
        self._matched: OrderedDict[tuple[str, str, tuple[str, ...]], _Lookup] = OrderedDict()
        self.manifest_reads = 0  # manifests read by the lookups (not cached)

    async def execution(self, tenant: str, execution_id: str) -> bool:
        """The execution's history (one object read when it has none)."""
        return await self._restore(tenant, execution_id)

    async def tenant(self, tenant: str) -> bool:
        """Every archived history of the tenant (one listing when it has none)."""
        return await self._restore_each(tenant, await self._archive.units(CAPABILITY, tenant))

    async def runs(self, tenant: str, run_ids: Sequence[str]) -> bool:
        """The histories holding checkpoints of these runs."""
        wanted = set(run_ids)
        return await self._restore_matching(tenant, lambda lookup: bool(wanted & lookup.run_ids))

    async def values(self, tenant: str, content_hashes: Sequence[str]) -> bool:
        """The histories that reference any of these values."""
        wanted = {content_hash[:16] for content_hash in content_hashes}
        return await self._restore_matching(
            tenant, lambda lookup: bool(wanted & lookup.value_prefixes)
        )

    async def discard(self, tenant: str, execution_id: str) -> None:
        """Removes what is left of the execution's archived history (after
        DeleteExecution: a restore that found it hot leaves the objects),
        manifest first, so nothing reads the rest."""
        manifest = await manifest_of(self._archive, CAPABILITY, tenant, execution_id)
        if manifest is not None:
            # Its chunk used up first: a restore that read it inserts nothing.
            await self._archive.remove_unit(CAPABILITY, tenant, execution_id, manifest)

    async def _restore(self, tenant: str, execution_id: str) -> bool:
        with reading(unit_prefix(tenant, CAPABILITY, execution_id)):
            return await self._archive.restore_unit(CAPABILITY, tenant, execution_id)

    async def _restore_matching(self, tenant: str, matches: Callable[[_Lookup], bool]) -> bool:
        listed = await self._listed(tenant)
        gate = asyncio.Semaphore(MANIFEST_READS)

        async def wanted(unit: str, chunks: tuple[str, ...]) -> bool:
            lookup = self._matched.get((tenant, unit, chunks))
            if lookup is not None:
                self._matched.move_to_end((tenant, unit, chunks))
            else:
                async with gate:
                    lookup = await self._lookup(tenant, unit, chunks)
            return lookup is not None and matches(lookup)

        chosen = await asyncio.gather(*(wanted(unit, chunks) for unit, chunks in listed.items()))
        return await self._restore_each(
            tenant, [unit for unit, take in zip(listed, chosen, strict=True) if take]
        )

    async def _listed(self, tenant: str) -> dict[str, tuple[str, ...]]:
        """The tenant's archived histories (those with a manifest), each with
        its chunk keys, from one listing."""
        chunks: dict[str, list[str]] = {}
        with_manifest: set[str] = set()
        for key in await self._archive.objects.list(capability_prefix(tenant, CAPABILITY)):
            parsed = parse_key(key)
            if parsed.kind == "manifest":
                with_manifest.add(parsed.unit)
            elif parsed.kind == "chunk":
                chunks.setdefault(parsed.unit, []).append(key)
        return {unit: tuple(sorted(chunks.get(unit, []))) for unit in sorted(with_manifest) if unit}

    async def _lookup(self, tenant: str, unit: str, chunks: tuple[str, ...]) -> _Lookup | None:
        """What the lookups match of the unit, cached; None (logged, not
        cached) when its manifest is gone or damaged."""
        self.manifest_reads += 1
        manifest = await scanned_manifest(self._archive, CAPABILITY, tenant, unit)
        if manifest is None:
            return None
        extra = manifest.get("extra", {})
        try:
            lookup = _Lookup(_strings(extra, "run_ids"), _strings(extra, "value_prefixes"))
        except DamagedObjectError as exc:
            skipped(manifest_key(tenant, CAPABILITY, unit), exc)
            return None
        self._matched[(tenant, unit, chunks)] = lookup
        while len(self._matched) > CACHED_LOOKUPS:
            self._matched.popitem(last=False)
        return lookup

    async def _restore_each(self, tenant: str, units: Sequence[str]) -> bool:
        restored = False
        for unit in units:
            if unit and await self._restore(tenant, unit):
                restored = True
        return restored


@dataclass(frozen=True)
class _Lookup:
    """What DeleteRuns, a run's listing and GetChannelValues match of an
    archived history (its manifest's extra)."""

    run_ids: frozenset[str]
    value_prefixes: frozenset[str]


def _strings(extra: dict[str, Any], name: str) -> frozenset[str]:
    values = extra.get(name, [])
    if not isinstance(values, list):
        raise damaged(name, ValueError(f"extra.{name} is not a list"))
    return frozenset(str(value) for value in values)
