"""The archive tier: moves cold state from the database to an object store
and brings it back when it is read.

Each capability that archives is a unit kind (core/archive/store.py:
`UnitKind`; sessions in core/archive/sessions.py, the others next to
their stores). A unit is written as one chunk in the export format
(admin/transfer.py: zstd NDJSON with a header and a checksummed trailer)
plus a manifest; keys are in core/archive/keys.py.

Archiving one unit, in this order, so that a crash anywhere loses and
duplicates nothing:
  1. the kind reads its rows in one snapshot into a chunk (with the
     version V its hot rows must still have);
  2. write the chunk, read it back and compare sha256 (verified);
  3. write the user marker (units of a user), then the manifest (from here
     a read finds it);
  4. the kind deletes the hot rows only if the unit is still at V (its
     compare-and-delete, which also drops caches); if it moved on, the
     objects are removed and the unit is tried again next pass.
A crash before 3 leaves an orphan chunk (removed by `repair`); between 3
and 4, a manifest of a unit that is still hot (hot rows win: `repair`
removes the objects); after 4, the unit lives in the archive only.

Restoring (on a read that finds nothing hot, or in bulk): the manifest
and chunk are read, the chunk's sha256 checked, its rows inserted in one
transaction unless the unit is hot again, and only then are the
manifest, chunk and marker deleted, in that order. If the unit was hot
already, nothing is deleted: the archiver may be between steps 3 and 4
(its delete would then leave the objects the only copy); `repair`, which
holds the archiver's lock, removes the objects of a unit still hot. The
archiver skips a unit while its manifest or marker exists, so it never
archives a unit again while a restore (here or on another replica) is
still removing the previous objects. Kinds that are not `restorable`
(their archived rows are read through, never brought back) keep their
objects until EraseUser or a retention removes them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from statekeeper.core import observations
from statekeeper.core.archive.keys import (
    ROOT,
    capability_prefix,
    chunk_key,
    manifest_key,
    marker_key,
    parse_key,
    user_prefix,
)
from statekeeper.core.archive.store import (
    FENCE,
    ArchiveFences,
    Candidate,
    ChunkUsedUpError,
    ExportedUnit,
    ObjectStore,
    UnitKind,
)
from statekeeper.core.errors import StorageUnavailableError
from statekeeper.core.limits import Limits
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.validation import check_id

log = logging.getLogger(__name__)

MANIFEST_FORMAT = "statekeeper-archive"
MANIFEST_VERSION = 1
DAY = 86_400.0
# Units restored recently are not archived again for one policy period
# (reading a unit makes it active); at most this many are remembered.
RECENT_RESTORES = 100_000
# In a manifest's extra: the users of a unit of several, besides user_id.
USER_IDS = "user_ids"
# Seconds between two repairs while the archiver runs (and one at start).
REPAIR_SECONDS = 3600.0


@dataclass(frozen=True)
class ArchivePolicy:
    interval_seconds: float = 300.0
    batch_size: int = 100


@dataclass
class PassResult:
    units: int = 0
    rows: int = 0
    changed: int = 0  # units that moved on while being archived
    seconds: float = 0.0
    by_capability: dict[str, int] = field(default_factory=dict)


@dataclass
class ArchiveCounters:
    """Totals since start (for logs and metrics)."""

    archived_units: int = 0
    archived_rows: int = 0
    restored_units: int = 0
    restored_rows: int = 0
    passes: int = 0
    failures: int = 0
    by_capability: dict[str, int] = field(default_factory=dict)


class Archive:
    def __init__(
        self,
        objects: ObjectStore,
        database: ArchiveFences,
        kinds: Sequence[UnitKind],
        policy: ArchivePolicy,
        clock: Callable[[], float] = time.time,
        limits: Limits | None = None,
    ) -> None:
        self._limits = limits or Limits()
        self.objects = objects
        self._db = database
        self.kinds = {kind.capability: kind for kind in kinds}
        self.policy = policy
        self._clock = clock
        self.counters = ArchiveCounters()
        # Told after each archiver pass (the server reports it as a sweeper
        # run to metrics: statekeeper_sweeper_last_run_age_seconds).
        self.after_pass: Callable[[PassResult], None] | None = None
        # Per-unit restore locks, with how many tasks hold or await each.
        self._locks: dict[tuple[str, str, str], tuple[asyncio.Lock, int]] = {}
        self._restored: OrderedDict[tuple[str, str, str], float] = OrderedDict()

    def add_kind(self, kind: UnitKind) -> None:
        """Registers a capability's units (before the archiver starts)."""
        self.kinds[kind.capability] = kind

    @property
    def archiving(self) -> bool:
        """True when some kind has a policy (the archiver then runs)."""
        return any(kind.after_days > 0 for kind in self.kinds.values())

    # ----- archiving -------------------------------------------------------

    async def archive_pass(self) -> PassResult:
        """One pass over every kind's units due for the archive, in batches
        of `batch_size`; returns what it moved."""
        result = PassResult()
        if not self.archiving:
            return result
        started = time.monotonic()
        async with self._db.exclusive() as held:
            if not held:
                log.info("archive pass skipped: another process is archiving")
                return result
            for kind in self.kinds.values():
                if kind.after_days > 0:
                    await self._archive_kind(kind, result)
        result.seconds = time.monotonic() - started
        self.counters.passes += 1
        if self.after_pass is not None:
            self.after_pass(result)
        return result

    async def _archive_kind(self, kind: UnitKind, result: PassResult) -> None:
        cutoff = self._clock() - kind.after_days * DAY
        after: tuple[Any, ...] | None = None
        while True:
            batch = await kind.candidates(cutoff, after, self.policy.batch_size)
            if not batch:
                return
            after = batch[-1].cursor
            units = rows = 0
            for candidate in batch:
                if not candidate.due or self._recently_restored(kind, candidate):
                    continue
                moved = await self._archive_unit(kind, candidate)
                if moved is None:
                    result.changed += 1
                elif moved:
                    units += 1
                    rows += moved
            self._count(kind.capability, units, rows, result)
            if units:
                log.info(
                    "archived a batch of %s",
                    kind.capability,
                    extra={
                        "capability": kind.capability,
                        "units": units,
                        "rows": rows,
                        "pass_units": result.units,
                        "total_units": self.counters.archived_units,
                    },
                )

    def _count(self, capability: str, units: int, rows: int, result: PassResult) -> None:
        result.units += units
        result.rows += rows
        result.by_capability[capability] = result.by_capability.get(capability, 0) + units
        self.counters.archived_units += units
        self.counters.archived_rows += rows
        by_capability = self.counters.by_capability
        by_capability[capability] = by_capability.get(capability, 0) + units
        if units:
            observations.archive_moved(capability, "archived", units, rows)

    def exclusive(self) -> AbstractAsyncContextManager[bool]:
        """The archiver's lock (one archiver at a time over one database):
        held, a kind may archive a unit outside a pass (`archive_unit`)."""
        return self._db.exclusive()

    async def archive_unit(self, kind: UnitKind, candidate: Candidate) -> int | None:
        """Archives one unit now (the caller holds `exclusive()`): rows
        archived, 0 nothing to do, None if the unit changed meanwhile."""
        moved = await self._archive_unit(kind, candidate)
        if moved:
            self._count(kind.capability, 1, moved, PassResult())
        return moved

    def _recently_restored(self, kind: UnitKind, candidate: Candidate) -> bool:
        at = self._restored.get((kind.capability, candidate.tenant, candidate.unit))
        return at is not None and self._clock() - at < kind.after_days * DAY

    async def _archive_unit(self, kind: UnitKind, candidate: Candidate) -> int | None:
        """Rows archived (0: nothing to do), None if the unit changed."""
        tenant, unit, capability = candidate.tenant, candidate.unit, kind.capability
        # A restore of this unit may still be removing its objects (here or
        # on another replica), or one was interrupted: not before they are
        # gone (`repair` removes what an interrupted one left).
        if await self.objects.get(manifest_key(tenant, capability, unit)) is not None:
            return 0
        if (
            candidate.user_id
            and await self.objects.get(marker_key(tenant, candidate.user_id, capability, unit))
            is not None
        ):
            return 0
        with tempfile.TemporaryDirectory(prefix="statekeeper-archive-") as work:
            exported = await kind.export(tenant, unit, Path(work) / "chunk.ndjson.zst")
            if exported is None:
                return 0
            data = exported.path.read_bytes()
        manifest = await self._write_unit(kind, tenant, unit, exported, data)
        # The chunk, for kinds whose delete refuses one a restore used up.
        fenced = {**exported.extra, FENCE: manifest["chunks"][0]["sha256"]}
        deleted = await kind.delete_hot(tenant, unit, replace(exported, extra=fenced))
        if deleted is None:
            # Written to after the snapshot: the hot rows stay, the objects go.
            await self._abandon(capability, tenant, unit, manifest)
            return None
        if not deleted:
            # Deleted (or erased) meanwhile: its archive copy must go too.
            await self._abandon(capability, tenant, unit, manifest)
            return 0
        return sum(exported.counts.values())

    async def _write_unit(
        self, kind: UnitKind, tenant: str, unit: str, exported: ExportedUnit, data: bytes
    ) -> dict[str, Any]:
        """Steps 2 and 3: the chunk (verified), the marker, the manifest."""
        digest = hashlib.sha256(data).hexdigest()
        chunk = chunk_key(tenant, kind.capability, unit, digest)
        await self.objects.put(chunk, data)
        stored = await self.objects.get(chunk)
        if stored is None or hashlib.sha256(stored).hexdigest() != digest:
            raise StorageUnavailableError(f"archive object {chunk} did not read back intact")
        manifest = {
            "format": MANIFEST_FORMAT,
            "version": MANIFEST_VERSION,
            "tenant": tenant,
            "capability": kind.capability,
            "unit": unit,
            "user_id": exported.user_id,
            # The hot rows' version when archived (the name is the first
            # kind's: a session's version).
            "session_version": exported.version,
            "archived": self._clock(),
            "extra": exported.extra,
            "chunks": [
                {
                    "key": chunk,
                    "sha256": digest,
                    "rows": sum(exported.counts.values()),
                    "counts": exported.counts,
                    "rows_sha256": exported.rows_sha256,
                }
            ],
        }
        for user_id in unit_users(manifest):
            marker = marker_key(tenant, user_id, kind.capability, unit)
            await self.objects.put(marker, unit.encode())
        await self.objects.put(manifest_key(tenant, kind.capability, unit), _json(manifest))
        return manifest

    async def _abandon(
        self, capability: str, tenant: str, unit: str, manifest: dict[str, Any]
    ) -> None:
        """Removes the objects of an archive attempt that did not delete the
        hot rows; only its own chunk if the manifest is no longer its own
        (never the case with one archiver at a time, which the database's
        lock ensures; this keeps another's archive whole if it ever is)."""
        current = await self.manifest(capability, tenant, unit)
        if current is None or current.get("chunks") == manifest["chunks"]:
            await self._remove_unit(capability, tenant, unit, manifest)
            return
        for chunk in manifest["chunks"]:
            await self.objects.delete(chunk["key"])

    async def remove_unit(
        self, capability: str, tenant: str, unit: str, manifest: dict[str, Any]
    ) -> int:
        """Removes an archived unit for good (an erasure, a delete): its
        chunks are marked used up first, so a restore that already read one
        inserts nothing; returns how many objects were removed."""
        chunks = [str(chunk["sha256"]) for chunk in manifest.get("chunks", [])]
        if chunks:
            await self._db.mark_used_up(tenant, chunks)
        return await self._remove_unit(capability, tenant, unit, manifest)

    async def _remove_unit(
        self, capability: str, tenant: str, unit: str, manifest: dict[str, Any]
    ) -> int:
        """Deletes a unit's objects, manifest first (without it nothing
        reads the rest); returns how many objects."""
        await self.objects.delete(manifest_key(tenant, capability, unit))
        removed = 1
        for chunk in manifest.get("chunks", []):
            await self.objects.delete(chunk["key"])
            removed += 1
        for user_id in unit_users(manifest):
            await self.objects.delete(marker_key(tenant, user_id, capability, unit))
            removed += 1
        return removed

    async def manifest(self, capability: str, tenant: str, unit: str) -> dict[str, Any] | None:
        """The unit's manifest, None when it is not archived."""
        key = manifest_key(tenant, capability, unit)
        raw = await self.objects.get(key)
        if raw is None:
            return None
        manifest = parse_manifest(key, raw)
        if manifest.get("tenant") != tenant or manifest.get("capability") != capability:
            raise StorageUnavailableError(f"archive object {key} is not this unit's manifest")
        return manifest

    async def chunks(self, manifest: dict[str, Any], work: Path) -> list[Path]:
        """The manifest's chunks, each checked against its sha256, as files
        under `work` (for kinds that read archived rows through)."""
        paths: list[Path] = []
        for number, entry in enumerate(manifest["chunks"]):
            data = await self.objects.get(entry["key"])
            if data is None or hashlib.sha256(data).hexdigest() != entry["sha256"]:
                raise StorageUnavailableError(
                    f"archive object {entry['key']} is missing or corrupt"
                )
            path = work / f"chunk-{number}.ndjson.zst"
            path.write_bytes(data)
            paths.append(path)
        return paths

    async def units(self, capability: str, tenant: str, user_id: str = "") -> list[str]:
        """The archived units of a capability in a tenant (or of one user)."""
        if user_id:
            keys = await self.objects.list(user_prefix(tenant, user_id, capability))
            return sorted(parse_key(key).unit for key in keys if parse_key(key).kind == "marker")
        keys = await self.objects.list(capability_prefix(tenant, capability))
        return sorted(parse_key(key).unit for key in keys if parse_key(key).kind == "manifest")

    # ----- restoring -------------------------------------------------------

    async def restore_unit(self, capability: str, tenant: str, unit: str) -> bool:
        """Brings an archived unit back hot; False if it is not archived (or
        was hot already). Used on a read that found nothing hot."""
        kind = self.kinds.get(capability)
        if kind is None or not kind.restorable:
            return False
        key = (capability, tenant, unit)
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                return await self._restore_unit(kind, tenant, unit)
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    async def restore_session(self, tenant: str, session_id: str) -> bool:
        return await self.restore_unit("sessions", tenant, session_id)

    async def _restore_unit(self, kind: UnitKind, tenant: str, unit: str) -> bool:
        manifest = await self.manifest(kind.capability, tenant, unit)
        if manifest is None:
            return False
        extra: dict[str, Any] = manifest.get("extra", {})
        restored = False
        try:
            with tempfile.TemporaryDirectory(prefix="statekeeper-restore-") as work:
                paths = await self.chunks(manifest, Path(work))
                for path, entry in zip(paths, manifest["chunks"], strict=True):
                    fenced = {**extra, FENCE: entry["sha256"]}
                    restored = await kind.restore(tenant, unit, path, fenced)
        except ChunkUsedUpError:
            # Restored already (another replica, or this one before a crash
            # that kept the objects), or its unit was erased or deleted: the
            # objects are left over, and nothing was inserted.
            await self._remove_unit(kind.capability, tenant, unit, manifest)
            return False
        except StorageUnavailableError:
            # A chunk gone meanwhile: another restore (or an erasure) used it
            # up and removed the objects; anything else is a real failure.
            if await self.manifest(kind.capability, tenant, unit) != manifest:
                return False
            raise
        if not restored:
            # Hot already: the archiver may be between writing this manifest
            # and deleting the hot rows (its compare-and-delete still holds),
            # so the objects may be about to become the only copy. They stay;
            # `repair` (under the archiver's lock) removes them if the unit
            # is still hot then.
            return False
        # Hot again by us: the archive copy goes.
        await self._remove_unit(kind.capability, tenant, unit, manifest)
        rows = sum(int(entry["rows"]) for entry in manifest["chunks"])
        self.counters.restored_units += 1
        self.counters.restored_rows += rows
        observations.archive_moved(kind.capability, "restored", 1, rows)
        self._restored[(kind.capability, tenant, unit)] = self._clock()
        while len(self._restored) > RECENT_RESTORES:
            self._restored.popitem(last=False)
        log.info(
            "restored an archived unit",
            extra={"capability": kind.capability, "tenant": tenant, "unit": unit, "rows": rows},
        )
        return True

    async def is_archived(self, tenant: str, session_id: str) -> bool:
        """True while a manifest of that session exists (it may be hot too,
        between the archiver's manifest write and its delete)."""
        key = manifest_key(tenant, "sessions", session_id)
        return await self.objects.get(key) is not None

    async def restore_all(self, tenant: str, user_id: str = "") -> dict[str, int]:
        """Brings back every archived unit of a tenant (or of one user of
        it) of every restorable kind; returns how many per capability."""
        check_id("user_id", user_id, self._limits, required=False)
        restored: dict[str, int] = {}
        for capability, kind in self.kinds.items():
            if not kind.restorable:
                continue
            count = 0
            for unit in await self.units(capability, tenant, user_id):
                if unit and await self.restore_unit(capability, tenant, unit):
                    count += 1
            restored[capability] = count
        return restored

    # ----- erasure and repair ----------------------------------------------

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        """EraseUser's participant: removes the user's archived units of
        every kind (counted as ("archive", <capability>))."""
        counts = ErasureCounts()
        for key in await self.objects.list(user_prefix(tenant, subject.user_id)):
            parsed = parse_key(key)
            if parsed.kind != "marker":
                continue
            manifest = await self.manifest(parsed.capability, tenant, parsed.unit)
            if manifest is not None and subject.user_id not in unit_users(manifest):
                manifest = None
            if not dry_run:
                if manifest is not None:
                    await self.remove_unit(parsed.capability, tenant, parsed.unit, manifest)
                await self.objects.delete(key)
            counts.add("archive", parsed.capability, 1 if manifest is not None else 0)
        return counts

    async def repair(self) -> int | None:
        """Removes what an interrupted archive or restore left: chunks with
        no manifest, markers with no manifest, and the objects of a unit
        that is hot (hot rows win). Returns the objects removed, or None if
        another process (a replica, a sibling worker) holds the archiver lock
        and so does the repair."""
        removed = 0
        async with self._db.exclusive() as held:
            if not held:
                return None
            # Under the lock no put runs (puts are the archiver's, and this is
            # the archiver's task, or another process's that waits for the lock).
            removed += await self.objects.remove_partial_writes()
            keys = await self.objects.list(f"{ROOT}/")
            live: set[str] = set()
            for key in sorted(keys):
                if parse_key(key).kind != "manifest":
                    continue
                raw = await self.objects.get(key)
                if raw is None:  # removed meanwhile (a restore)
                    continue
                try:
                    manifest = parse_manifest(key, raw)
                except StorageUnavailableError as exc:
                    # Left for an operator, with every object of its unit.
                    log.warning("archive repair skipped a manifest: %s", exc.message)
                    live.update(_same_unit(key, keys))
                    continue
                kept = await self._repair_unit(manifest)
                if kept is None:
                    removed += await self._remove_unit(
                        str(manifest["capability"]),
                        str(manifest["tenant"]),
                        str(manifest["unit"]),
                        manifest,
                    )
                else:
                    live.update(kept)
                    live.add(key)
            for key in keys:
                if parse_key(key).kind in ("chunk", "marker") and key not in live:
                    await self.objects.delete(key)
                    removed += 1
        if removed:
            log.info("archive repair removed leftover objects", extra={"objects": removed})
        return removed

    async def _repair_unit(self, manifest: dict[str, Any]) -> set[str] | None:
        """The keys a manifest keeps alive; None when its unit is hot (its
        objects go). A manifest of a kind this process does not know keeps
        its objects."""
        tenant, unit = manifest.get("tenant"), manifest.get("unit")
        capability = str(manifest.setdefault("capability", "sessions"))
        if not isinstance(tenant, str) or not isinstance(unit, str):
            return set()
        keep = {chunk["key"] for chunk in manifest.get("chunks", [])}
        keep |= {marker_key(tenant, user, capability, unit) for user in unit_users(manifest)}
        chunks = [str(chunk["sha256"]) for chunk in manifest["chunks"]]
        if await self._db.used_up(tenant, chunks):
            return None  # restored, erased or deleted: the objects are left over
        kind = self.kinds.get(capability)
        if kind is not None and await kind.is_hot(tenant, unit, manifest.get("extra", {})):
            return None
        return keep

    # ----- the background loop ---------------------------------------------

    async def _repair_logged(self) -> str:
        """`repair`, whose failure never stops the archiver (it runs again
        later; what it would have removed waits until then). Says how it
        ended: "done", "left to another process" or "failed"."""
        try:
            removed = await self.repair()
        except StorageUnavailableError as exc:
            log.warning("archive repair skipped: %s", exc.message)
        except Exception:
            log.exception("archive repair failed; will retry")
        else:
            return "left to another process" if removed is None else "done"
        return "failed"

    async def run_forever(self) -> None:
        """Repairs once, then (when a policy is set) archives every interval."""
        # Said once per process start: until then, what an earlier process
        # left may still be removed while requests are already served.
        log.info("archive repair at start: %s", await self._repair_logged())
        if not self.archiving:
            return
        repair_every = max(1, round(REPAIR_SECONDS / self.policy.interval_seconds))
        while True:
            await asyncio.sleep(self.policy.interval_seconds)
            try:
                if self.counters.passes % repair_every == repair_every - 1:
                    await self._repair_logged()
                result = await self.archive_pass()
                if result.units or result.changed:
                    log.info(
                        "archive pass done",
                        extra={
                            "units": result.units,
                            "rows": result.rows,
                            "changed": result.changed,
                            "by_capability": result.by_capability,
                            "rows_per_second": round(result.rows / max(result.seconds, 1e-9)),
                        },
                    )
            except StorageUnavailableError as exc:
                self.counters.failures += 1
                observations.archive_failed()
                log.warning("archive pass stopped; resumes next interval: %s", exc.message)
            except Exception:
                self.counters.failures += 1
                observations.archive_failed()
                log.exception("archive pass failed; resumes next interval")


class ArchiveErasureAgain:
    """The archive's second EraseUser participant, run after the sessions
    (the first runs before them): removes what the archiver moved out of
    the user's hot sessions meanwhile. A dry run counts nothing here (the
    first run counted it all)."""

    def __init__(self, archive: Archive) -> None:
        self._archive = archive

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        if dry_run:
            return ErasureCounts()
        return await self._archive.erase_user(tenant, subject, dry_run)


def unit_users(manifest: dict[str, Any]) -> list[str]:
    """Every user a unit belongs to, each with a marker: its `user_id` and,
    for a unit of several users (a checkpoint history whose checkpoints
    name several), `extra["user_ids"]`."""
    extra = manifest.get("extra")
    others = extra.get(USER_IDS, []) if isinstance(extra, dict) else []
    named = [manifest.get("user_id"), *(others if isinstance(others, list) else [])]
    return list(dict.fromkeys(user for user in named if isinstance(user, str) and user))


def parse_manifest(key: str, raw: bytes) -> dict[str, Any]:
    """A manifest's content, checked for the fields every reader uses;
    StorageUnavailableError naming the key when it is damaged or foreign."""
    try:
        manifest = json.loads(raw)
        chunks = manifest["chunks"] if isinstance(manifest, dict) else None
        well_formed = (
            manifest.get("format") == MANIFEST_FORMAT
            and isinstance(manifest.get("tenant"), str)
            and isinstance(manifest.get("unit"), str)
            and isinstance(chunks, list)
            and all(isinstance(c, dict) and {"key", "sha256", "rows"} <= c.keys() for c in chunks)
        )
    except (ValueError, KeyError, AttributeError):
        well_formed = False
    if not well_formed:
        raise StorageUnavailableError(f"archive object {key} is not a readable manifest")
    manifest.setdefault("capability", "sessions")
    result: dict[str, Any] = manifest
    return result


def _same_unit(manifest_key_: str, keys: list[str]) -> set[str]:
    """The keys (chunks, markers) of the unit a manifest key names."""
    tenant = "/".join(manifest_key_.split("/")[:2]) + "/"
    unit = parse_key(manifest_key_)
    return {
        key
        for key in keys
        if key.startswith(tenant)
        and (parse_key(key).capability, parse_key(key).unit) == (unit.capability, unit.unit)
    }


def _json(value: dict[str, Any]) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
