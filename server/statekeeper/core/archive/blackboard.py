"""Blackboard history as archive units: the revisions compaction would
remove are written to the archive first, then compacted.

A unit is one tenant's revision range `r<low>-<high>` (inclusive, zero
padded to 16 digits so a tenant's units sort by revision; tenant-owned, no
user marker). Its chunk holds the bb_versions rows of the range and the
base below it (each key's latest PUT below `low`, the rows compaction
keeps so that reads at `low - 1` stay exact), and the bb_log rows of the
range: a unit answers any read at a revision in [low - 1, high] alone.

Archiving a unit (the archive's order, core/archive/service.py): the
chunk is read in one snapshot with the count of the tenant's history rows
below `high + 1` as its version; the hot history is then compacted to
`high + 1` in one transaction only if the oldest hot revision is still
`low` and the count unchanged (an erasure meanwhile makes it abandon the
objects and try again). While `--archive-blackboard-history` is on, the
automatic compaction leaves every tenant to this kind (it compacts to the
same retention target), and CompactBlackboard archives before compacting,
so no revision leaves the hot history unarchived. A kill -9 between the
manifest and the compaction leaves a unit whose revisions are also hot:
the kind offers nothing more of that tenant until `repair` (at start and
hourly) removes it (hot rows win), so two units never cover one revision.

Archived history is never restored (`restorable = False`): reads,
listings and watches at revisions below the oldest hot one read it through
(`ArchivedHistoryReader`). EraseUser rewrites the tenant's chunks without
the rows of the erased key prefixes (`ArchivedHistoryEraser`).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import hashlib
import itertools
import json
import re
import tempfile
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from statekeeper.core.archive.damage import manifest_of, reading
from statekeeper.core.archive.keys import chunk_key, manifest_key, parse_key, unit_prefix
from statekeeper.core.archive.service import DAY
from statekeeper.core.archive.store import Candidate, ExportedUnit
from statekeeper.core.blackboard.keys import KeyMatcher
from statekeeper.core.blackboard.models import (
    Entry,
    Event,
    EventType,
    Header,
    RevisionBatch,
    RevisionCompactedError,
    entry_from_columns,
    event_from_columns,
)
from statekeeper.core.errors import InvalidArgumentError, StorageUnavailableError
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject

if TYPE_CHECKING:
    from statekeeper.core.archive.service import Archive

CAPABILITY = "blackboard"
# Revisions per unit at most (a long backlog becomes several units).
MAX_UNIT_REVISIONS = 100_000
# Rows of [low, high] and bytes of their values per unit at most, whichever
# comes first (a unit always holds at least one revision): bounds what one
# export and one cold read hold in memory. The base below `low` (each key's
# latest version) is not counted: it is bounded by the board's live keys.
MAX_UNIT_ROWS = 20_000
MAX_UNIT_BYTES = 64 * 1024 * 1024
# Parsed units kept in memory for read-through, at most this many bytes of
# values (each row also counts ROW_OVERHEAD for its dict).
CACHED_BYTES = 256 * 1024 * 1024
ROW_OVERHEAD = 512
# How long a tenant's unit list is reused by reads (new units only follow
# the hot history's oldest revision, which reads ask for first), and for
# how many tenants.
UNITS_TTL_SECONDS = 5.0
LISTED_TENANTS = 1024
# How long CompactBlackboard and EraseUser wait for a running archiver pass.
LOCK_WAIT_SECONDS = 30.0
_UNIT_ID = re.compile(r"r(\d{16})-(\d{16})")


def unit_id(low: int, high: int) -> str:
    """The unit of revisions low..high (inclusive)."""
    return f"r{low:016d}-{high:016d}"


def unit_range(unit: str) -> tuple[int, int] | None:
    """(low, high) of a unit id, None if it is not one."""
    match = _UNIT_ID.fullmatch(unit)
    if match is None:
        return None
    return int(match[1]), int(match[2])


@dataclass(frozen=True)
class DueHistory:
    """A tenant whose hot history retention would compact: revisions
    [oldest, target) are due."""

    tenant: str
    oldest: int
    target: int


class HistoryDatabase(Protocol):
    """The blackboard history's side of the archive, per backend
    (storage/archive/blackboard.py)."""

    async def due(
        self, cutoff: float, max_revisions: int, after: str, limit: int, only: str = ""
    ) -> list[DueHistory]:
        """Tenants after `after` (by name; or just tenant `only`) whose retention target (the
        first revision committed after `cutoff`, and within the newest
        `max_revisions`) is above their oldest hot revision."""

    async def header(self, tenant: str) -> Header:
        """The tenant's current and oldest hot revision."""

    async def export_range(
        self, tenant: str, low: int, high: int, path: Path
    ) -> ExportedUnit | None:
        """Writes the history rows below `high + 1` and the log rows of
        [low, high] as one chunk, in one snapshot; None when the oldest hot
        revision is no longer `low`. The version is the count of history
        rows below `high + 1`."""

    async def revision_sizes(
        self, tenant: str, low: int, high: int, limit: int
    ) -> list[tuple[int, int, int]]:
        """(revision, history rows, bytes of their values) of the first
        `limit` revisions of [low, high] that have history rows, ascending."""

    async def compact_range(self, tenant: str, low: int, high: int, version: int) -> bool | None:
        """Compacts the tenant to `high + 1` in one transaction if its
        oldest hot revision is still `low` and its history rows below
        `high + 1` still number `version`: True; None when they changed;
        False when the range is compacted already."""


# ----- the unit kind ----------------------------------------------------------------


class BlackboardHistoryUnits:
    capability = CAPABILITY
    restorable = False

    def __init__(
        self,
        database: HistoryDatabase,
        retention_seconds: float,
        max_revisions: int,
        enabled: bool,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = database
        self._retention_seconds = retention_seconds
        self._max_revisions = max_revisions
        # The archiver runs this kind when positive; the value is the
        # retention period (candidates use the retention rule itself).
        self.after_days = max(retention_seconds / DAY, 1e-9) if enabled else 0.0
        self._clock = clock
        self.archive: Archive | None = None

    async def candidates(
        self, cutoff: float, after: tuple[Any, ...] | None, limit: int
    ) -> list[Candidate]:
        # `cutoff` is the archive's (now - after_days): the retention cutoff.
        tenant_after = "" if after is None else str(after[0])
        retention_cutoff = self._clock() - self._retention_seconds
        found: list[Candidate] = []
        # A tenant whose unit was just archived is offered again (cursor
        # (tenant, low)) for the rest of its backlog.
        if after is not None and len(after) > 1:
            again = await self._next_unit(str(after[0]), int(after[1]), retention_cutoff)
            if again is not None:
                return [again]
        for due in await self._db.due(retention_cutoff, self._max_revisions, tenant_after, limit):
            found.append(await self._candidate(due))
        return found

    async def _next_unit(self, tenant: str, previous_low: int, cutoff: float) -> Candidate | None:
        for due in await self._db.due(cutoff, self._max_revisions, "", 1, only=tenant):
            if due.oldest > previous_low:
                return await self._candidate(due)
        return None

    async def _candidate(self, due: DueHistory) -> Candidate:
        high = await self._unit_high(due.tenant, due.oldest, due.target)
        unit = unit_id(due.oldest, high)
        pending = await self._pending_unit(due.tenant, due.oldest)
        return Candidate(due.tenant, unit, "", (due.tenant, due.oldest), due=not pending)

    async def _unit_high(self, tenant: str, low: int, target: int) -> int:
        """The last revision of the unit starting at `low` below `target`:
        at most MAX_UNIT_REVISIONS, MAX_UNIT_ROWS rows and MAX_UNIT_BYTES
        of values (at least one revision)."""
        high = min(target, low + MAX_UNIT_REVISIONS) - 1
        sizes = await self._db.revision_sizes(tenant, low, high, MAX_UNIT_ROWS + 1)
        return capped_high(sizes, low, high)

    async def _pending_unit(self, tenant: str, oldest: int) -> bool:
        """True while a unit of the tenant still covers hot revisions (a
        crash between its manifest and its compaction; `repair` removes
        it): nothing new is archived until then."""
        if self.archive is None:
            return False
        for unit in await self.archive.units(CAPABILITY, tenant):
            bounds = unit_range(unit)
            if bounds is not None and bounds[1] >= oldest:
                return True
        return False

    async def export(self, tenant: str, unit: str, path: Path) -> ExportedUnit | None:
        bounds = unit_range(unit)
        if bounds is None:
            return None
        return await self._db.export_range(tenant, bounds[0], bounds[1], path)

    async def delete_hot(self, tenant: str, unit: str, exported: ExportedUnit) -> bool | None:
        bounds = unit_range(unit)
        if bounds is None:
            return False
        return await self._db.compact_range(tenant, bounds[0], bounds[1], exported.version)

    async def restore(self, tenant: str, unit: str, chunk: Path, extra: dict[str, Any]) -> bool:
        return False  # read through, never restored

    async def is_hot(self, tenant: str, unit: str, extra: dict[str, Any]) -> bool:
        bounds = unit_range(unit)
        if bounds is None:
            return False
        header = await self._db.header(tenant)
        # Its highest revision still hot: the compaction did not happen (a
        # tenant with no blackboard row has nothing hot).
        return header.revision > 0 and header.oldest_revision <= bounds[1]

    # ----- CompactBlackboard ------------------------------------------------------

    async def archive_and_compact(self, tenant: str, revision: int) -> Header:
        """CompactBlackboard while history is archived: the revisions below
        `revision` are archived (as units) before they leave the hot
        history. Same errors as the store's compact."""
        header = await self._db.header(tenant)
        if revision > header.revision:
            error = InvalidArgumentError(
                "revision", f"{revision} is above the current revision {header.revision}"
            )
            error.metadata["current_revision"] = str(header.revision)
            raise error
        if revision <= header.oldest_revision:
            raise RevisionCompactedError(revision, header.oldest_revision)
        archive = self.archive
        if archive is None:
            raise StorageUnavailableError("the archive is not attached")
        # Each unit archives one revision at least: bounded.
        for _ in range(revision - header.oldest_revision + 3):
            header = await self._db.header(tenant)
            if header.oldest_revision >= revision:
                return header
            low = header.oldest_revision
            if await self._pending_unit(tenant, low):
                break
            high = await self._unit_high(tenant, low, revision)
            candidate = Candidate(tenant, unit_id(low, high), "", (tenant, low))
            # The archive's own steps for one unit, under its lock (one
            # archiver at a time over the database).
            async with archiver_lock(archive) as held:
                if not held:
                    break
                await archive.archive_unit(self, candidate)
        header = await self._db.header(tenant)
        if header.oldest_revision >= revision:
            return header
        raise StorageUnavailableError(
            "the blackboard history could not be archived now (the archiver is busy or a"
            " previous archive of it is being repaired); retry later"
        )


def capped_high(sizes: Iterable[tuple[int, int, int]], low: int, high: int) -> int:
    """`high`, lowered so that the rows and value bytes of [low, high]
    (`sizes`: per revision, ascending) stay within MAX_UNIT_ROWS and
    MAX_UNIT_BYTES; never below `low`."""
    rows = size = 0
    for revision, count, data in sizes:
        rows += count
        size += data
        if revision > low and (rows > MAX_UNIT_ROWS or size > MAX_UNIT_BYTES):
            return min(high, revision - 1)
    return high


@contextlib.asynccontextmanager
async def archiver_lock(archive: Archive) -> AsyncIterator[bool]:
    """The archiver's lock (one archive writer at a time over a database),
    waited for up to LOCK_WAIT_SECONDS while a pass holds it."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        async with archive.exclusive() as held:
            if held or time.monotonic() >= deadline:
                yield held
                return
        await asyncio.sleep(0.2)


# ----- reading archived history -------------------------------------------------------


@dataclass(frozen=True)
class _Unit:
    low: int
    high: int
    # bb_versions rows (by column name), by (board, key) in revision order.
    versions: dict[tuple[str, str], list[dict[str, Any]]]
    # The revisions of `versions`, per key (bisected: a key's version at a
    # revision is found in log time, whatever its number of versions).
    revisions: dict[tuple[str, str], list[int]]
    # bb_versions rows of [low, high], by revision, in commit order (seq).
    by_revision: dict[int, list[dict[str, Any]]]
    # The bytes of its values (what the parsed-unit cache counts).
    size: int


class ArchivedHistoryReader:
    """Reads, listings and watch replays at revisions below the oldest hot
    one, from the tenant's units (`core.blackboard.store.ArchivedHistory`).
    Parsing, indexing and building replies run in a worker thread, so a
    large unit never blocks the event loop."""

    def __init__(
        self,
        archive: Archive,
        load: Callable[[Path, str], list[dict[str, Any]]],
        open_entry: Callable[[str, Entry], Entry],
        cache_bytes: int = CACHED_BYTES,
    ) -> None:
        self._archive = archive
        # Parses a chunk into its bb_versions rows (storage/archive/blackboard.py).
        self._load = load
        # Values are archived as stored (sealed for sensitive tenants).
        self._open = open_entry
        self._cache: OrderedDict[tuple[str, str, str], _Unit] = OrderedDict()
        self._cache_bytes = cache_bytes
        # Single flight: concurrent first reads of one unit share one
        # download and parse.
        self._loading: dict[tuple[str, str, str], asyncio.Future[_Unit]] = {}
        # Chunks downloaded and parsed (what single flight saves).
        self.downloads = 0
        # The tenant's unit list, kept briefly (a burst of cold reads lists
        # the archive once); any unit missing from it is listed again.
        self._listed: dict[str, tuple[float, list[tuple[int, int, str]]]] = {}

    async def units(self, tenant: str, fresh: bool = False) -> list[tuple[int, int, str]]:
        listed = self._listed.get(tenant)
        if not fresh and listed is not None and time.monotonic() - listed[0] < UNITS_TTL_SECONDS:
            return listed[1]
        found = []
        for unit in await self._archive.units(CAPABILITY, tenant):
            bounds = unit_range(unit)
            if bounds is not None:
                found.append((bounds[0], bounds[1], unit))
        found.sort()
        self._listed[tenant] = (time.monotonic(), found)
        while len(self._listed) > LISTED_TENANTS:
            self._listed.pop(next(iter(self._listed)))
        return found

    async def floor(self, tenant: str) -> int | None:
        units = await self.units(tenant)
        return units[0][0] if units else None

    async def _unit_at(self, tenant: str, revision: int, oldest_hot: int, slack: int = 0) -> _Unit:
        """The unit answering reads at `revision`. Its base also answers
        low - 1; below the first unit, only a snapshot (`slack` 1) reads
        that, as the hot store admits oldest - 1 for snapshots only."""
        for fresh in (False, True):
            units = await self.units(tenant, fresh)
            for index, (low, high, unit) in enumerate(units):
                if low - (slack if index == 0 else 1) <= revision <= high:
                    parsed = await self._parsed(tenant, unit, low, high)
                    if parsed is not None:
                        return parsed
                    break  # removed meanwhile (repair): list again
        floor = units[0][0] if units else oldest_hot
        raise RevisionCompactedError(revision, min(floor, oldest_hot))

    async def _parsed(self, tenant: str, unit: str, low: int, high: int) -> _Unit | None:
        """The unit parsed (cached by its chunks' digests); None when it is
        no longer archived. A chunk missing under a manifest read just
        before an erasure switched it: the manifest is read again once."""
        for attempt in range(2):
            manifest = await manifest_of(self._archive, CAPABILITY, tenant, unit)
            if manifest is None:
                return None
            digest = ",".join(str(chunk["sha256"]) for chunk in manifest["chunks"])
            key = (tenant, unit, digest)
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
            try:
                return await self._single_flight(key, manifest, low, high)
            except StorageUnavailableError:
                if attempt or not await self._manifest_changed(tenant, unit, digest):
                    raise
        raise AssertionError("unreachable")

    async def _manifest_changed(self, tenant: str, unit: str, digest: str) -> bool:
        manifest = await manifest_of(self._archive, CAPABILITY, tenant, unit)
        if manifest is None:
            return True
        return digest != ",".join(str(chunk["sha256"]) for chunk in manifest["chunks"])

    async def _single_flight(
        self, key: tuple[str, str, str], manifest: dict[str, Any], low: int, high: int
    ) -> _Unit:
        task = self._loading.get(key)
        if task is None:
            task = asyncio.ensure_future(self._load_and_remember(key, manifest, low, high))
            self._loading[key] = task
            task.add_done_callback(lambda done: self._loaded(key, done))
        # Shielded: a reader that gives up does not cancel the others' load.
        return await asyncio.shield(task)

    async def _load_and_remember(
        self, key: tuple[str, str, str], manifest: dict[str, Any], low: int, high: int
    ) -> _Unit:
        parsed = await self._download(key[0], key[1], manifest, low, high)
        self._remember(key, parsed)
        return parsed

    def _loaded(self, key: tuple[str, str, str], done: asyncio.Future[_Unit]) -> None:
        if self._loading.get(key) is done:
            del self._loading[key]
        if not done.cancelled():
            done.exception()  # (retrieved: every reader may have given up)

    async def _download(
        self, tenant: str, unit: str, manifest: dict[str, Any], low: int, high: int
    ) -> _Unit:
        self.downloads += 1
        with (
            reading(unit_prefix(tenant, CAPABILITY, unit)),
            tempfile.TemporaryDirectory(prefix="statekeeper-bb-archive-") as work,
        ):
            paths = await self._archive.chunks(manifest, Path(work))
            return await asyncio.to_thread(self._parse, paths, tenant, low, high)

    def _parse(self, paths: list[Path], tenant: str, low: int, high: int) -> _Unit:
        rows: list[dict[str, Any]] = []
        for path in paths:
            rows.extend(self._load(path, tenant))
        return _index(rows, low, high)

    def _remember(self, key: tuple[str, str, str], parsed: _Unit) -> None:
        """Caches the unit, oldest out first while the cache is over its
        bytes (a unit larger than the whole cache is not kept)."""
        if parsed.size > self._cache_bytes:
            return
        self._cache[key] = parsed
        total = sum(unit.size for unit in self._cache.values())
        while total > self._cache_bytes:
            _, dropped = self._cache.popitem(last=False)
            total -= dropped.size

    async def read(
        self, tenant: str, board: str, keys: Iterable[str], revision: int, oldest_hot: int
    ) -> list[Entry]:
        """The entries of `keys` at `revision` (absent keys left out)."""
        unit = await self._unit_at(tenant, revision, oldest_hot)
        wanted = sorted(set(keys))
        return await asyncio.to_thread(
            lambda: list(self._versions_at(unit, tenant, board, wanted, revision))
        )

    def _versions_at(
        self, unit: _Unit, tenant: str, board: str, keys: Iterable[str], revision: int
    ) -> Iterator[Entry]:
        """The entries of `keys` (in their order) at `revision`, opened; a
        key without one there is left out."""
        for key in keys:
            entry = _version_at(unit, (board, key), revision)
            if entry is not None:
                yield self._open(tenant, entry)

    async def list_entries(
        self,
        tenant: str,
        board: str,
        matcher: KeyMatcher,
        revision: int,
        after_key: str | None,
        limit: int,
        oldest_hot: int,
        snapshot: bool = False,
    ) -> list[Entry]:
        """Up to `limit` entries of `board` at `revision` that `matcher`
        selects, with key > `after_key`, by key."""
        unit = await self._unit_at(tenant, revision, oldest_hot, 1 if snapshot else 0)

        def page() -> list[Entry]:
            keys = sorted(
                key
                for (row_board, key) in unit.versions
                if row_board == board
                and (after_key is None or key > after_key)
                and matcher.matches(key)
            )
            return list(
                itertools.islice(self._versions_at(unit, tenant, board, keys, revision), limit)
            )

        return await asyncio.to_thread(page)

    async def history(
        self,
        tenant: str,
        board: str | None,
        from_revision: int,
        to_revision: int,
        with_previous: bool,
        oldest_hot: int,
    ) -> list[RevisionBatch]:
        """Every archived batch of [from_revision, to_revision] (of `board`,
        None: all), ascending; RevisionCompactedError when a revision of
        the range is in no unit (history compacted before it was archived)."""
        batches: list[RevisionBatch] = []
        revision = from_revision
        while revision <= to_revision:
            unit = await self._unit_at(tenant, revision, oldest_hot)
            if revision < unit.low:  # only its base answers low - 1: not a revision
                raise RevisionCompactedError(revision, unit.low)
            last = min(unit.high, to_revision)
            batches.extend(
                await asyncio.to_thread(
                    batches_of, unit, tenant, board, revision, last, with_previous, self._open
                )
            )
            revision = last + 1
        return batches


def batches_of(
    unit: _Unit,
    tenant: str,
    board: str | None,
    first: int,
    last: int,
    with_previous: bool,
    open_entry: Callable[[str, Entry], Entry],
) -> list[RevisionBatch]:
    """The unit's batches of [first, last] (of `board`, None: all)."""
    batches = []
    for at in range(first, last + 1):
        rows = unit.by_revision.get(at, [])
        if rows and (board is None or rows[0]["board"] == board):
            batches.append(_batch(tenant, unit, rows, with_previous, open_entry))
    return batches


def _index(rows: list[dict[str, Any]], low: int, high: int) -> _Unit:
    versions: dict[tuple[str, str], list[dict[str, Any]]] = {}
    revisions: dict[tuple[str, str], list[int]] = {}
    by_revision: dict[int, list[dict[str, Any]]] = {}
    size = 0
    rows.sort(key=lambda r: (r["revision"], r["seq"]))
    for row in rows:
        key = (row["board"], row["key"])
        versions.setdefault(key, []).append(row)
        revisions.setdefault(key, []).append(row["revision"])
        if row["revision"] >= low:
            by_revision.setdefault(row["revision"], []).append(row)
        size += ROW_OVERHEAD + len(row["data"] or b"")
    return _Unit(low, high, versions, revisions, by_revision, size)


def _version_at(unit: _Unit, key: tuple[str, str], revision: int) -> Entry | None:
    """The key's newest version at or below `revision`, if it is a PUT
    (found by bisection of the key's revisions)."""
    at = bisect.bisect_right(unit.revisions.get(key, []), revision)
    if at == 0:
        return None
    found = unit.versions[key][at - 1]
    if found["event_type"] != EventType.PUT:
        return None
    return entry_from_columns(found)


def _batch(
    tenant: str,
    unit: _Unit,
    rows: list[dict[str, Any]],
    with_previous: bool,
    open_entry: Callable[[str, Entry], Entry],
) -> RevisionBatch:
    events = []
    for row in rows:
        event_type, entry = event_from_columns(row)
        if event_type == EventType.PUT:
            entry = open_entry(tenant, entry)
        previous = None
        if with_previous:
            previous = _version_at(unit, (row["board"], row["key"]), row["revision"] - 1)
            previous = None if previous is None else open_entry(tenant, previous)
        events.append(Event(event_type, entry, previous))
    first = rows[0]
    return RevisionBatch(
        tenant, first["board"], first["revision"], first["update_time"], tuple(events)
    )


# ----- erasure ----------------------------------------------------------------------------


class ChunkRewriter(Protocol):
    def __call__(
        self, chunk: Path, tenant: str, target: Path, prefixes: tuple[str, ...]
    ) -> tuple[ExportedUnit, int]:
        """Writes `chunk` to `target` without the bb_versions rows whose key
        begins with one of `prefixes`; returns the new chunk and how many
        rows it dropped."""


class ArchivedHistoryEraser:
    """EraseUser's participant for archived blackboard history (after the
    blackboard store's): every unit of the tenant whose chunk holds rows
    under the subject's key prefixes gets a new chunk without them (the
    manifest is switched to it, then the old chunk deleted), counted as
    ("blackboard", "archived_versions")."""

    def __init__(self, archive: Archive, rewrite: ChunkRewriter) -> None:
        self._archive = archive
        self._rewrite = rewrite
        # Two erasures in this process never rewrite one chunk at once (the
        # embedded store's archiver lock does not exclude this process).
        self._local = asyncio.Lock()

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        counts = ErasureCounts()
        prefixes = tuple(subject.all_blackboard_prefixes)
        if not prefixes or not await self._archive.units(CAPABILITY, tenant):
            return counts  # (nothing archived: the archiver's lock is not needed)
        # Under the archiver's lock: `repair` (which removes chunks no
        # manifest names) must not run between a new chunk and its
        # manifest, and another replica's erasure must not rewrite the same
        # manifest from the same old chunk (its erasure would be undone).
        async with self._local, archiver_lock(self._archive) as held:
            if not held:
                raise StorageUnavailableError(
                    "the archiver is running; erase the user again in a moment"
                )
            for unit in await self._archive.units(CAPABILITY, tenant):
                dropped = await self._erase_unit(tenant, unit, prefixes, dry_run)
                counts.add("blackboard", "archived_versions", dropped)
        return counts

    async def _erase_unit(
        self, tenant: str, unit: str, prefixes: tuple[str, ...], dry_run: bool
    ) -> int:
        archive = self._archive
        manifest = await manifest_of(archive, CAPABILITY, tenant, unit)
        if manifest is None:
            return 0
        if not dry_run:
            await self._drop_unnamed_chunks(tenant, unit, manifest)
        with (
            reading(unit_prefix(tenant, CAPABILITY, unit)),
            tempfile.TemporaryDirectory(prefix="statekeeper-bb-erase-") as work,
        ):
            paths = await archive.chunks(manifest, Path(work))
            if len(paths) != 1:
                raise StorageUnavailableError(
                    f"archived blackboard history {unit} is not one chunk"
                )
            target = Path(work) / "rewritten.ndjson.zst"
            rewritten, dropped = await asyncio.to_thread(
                self._rewrite, paths[0], tenant, target, prefixes
            )
            if dropped == 0 or dry_run:
                return dropped
            data = rewritten.path.read_bytes()
        await self._replace_chunk(tenant, unit, manifest, rewritten, data)
        return dropped

    async def _replace_chunk(
        self,
        tenant: str,
        unit: str,
        manifest: dict[str, Any],
        rewritten: ExportedUnit,
        data: bytes,
    ) -> None:
        """New chunk (verified), manifest switched to it, old chunk deleted:
        a crash leaves either manifest whole (an orphan chunk at most,
        which `repair` removes)."""
        objects = self._archive.objects
        digest = hashlib.sha256(data).hexdigest()
        key = chunk_key(tenant, CAPABILITY, unit, digest)
        # The caller holds the archiver's lock.
        await objects.put(key, data)
        stored = await objects.get(key)
        if stored is None or hashlib.sha256(stored).hexdigest() != digest:
            raise StorageUnavailableError(f"archive object {key} did not read back intact")
        old = list(manifest["chunks"])
        manifest["chunks"] = [
            {
                "key": key,
                "sha256": digest,
                "rows": sum(rewritten.counts.values()),
                "counts": rewritten.counts,
                "rows_sha256": rewritten.rows_sha256,
            }
        ]
        body = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
        await objects.put(manifest_key(tenant, CAPABILITY, unit), body)
        for chunk in old:
            if chunk["key"] != key:
                await objects.delete(chunk["key"])

    async def _drop_unnamed_chunks(self, tenant: str, unit: str, manifest: dict[str, Any]) -> None:
        """Deletes the unit's chunks its manifest does not name: an earlier
        erasure that stopped between the manifest switch and the old
        chunk's delete left rows it erased there (the caller holds the
        archiver's lock, so no chunk is between its write and its manifest)."""
        named = {str(chunk["key"]) for chunk in manifest["chunks"]}
        for key in await self._archive.objects.list(unit_prefix(tenant, CAPABILITY, unit)):
            if parse_key(key).kind == "chunk" and key not in named:
                await self._archive.objects.delete(key)
