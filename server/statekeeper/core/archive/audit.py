"""Audit records as archive units: one tenant's records of one UTC day
(unit id "2026-11-30"), archived once the whole day is older than
`after_days`, then deleted hot. They belong to the tenant (no user
marker) and are never restored: `ArchivedAudit` reads them through for
ListAuditRecords, `statekeeper audit list` and `statekeeper audit verify`.

A chunk keeps each record's audit_id and its hash chain columns
(chain_seq, prev_hash, hash) as they were, so listings keep their order
and page tokens (audit_id) and the chain verifies across archive + hot.
New records still link to the chain head (audit_chain_heads), which the
archiver never touches.
"""

from __future__ import annotations

import asyncio
import datetime
import heapq
import json
import math
import tempfile
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from statekeeper.core.archive.damage import manifest_of, reading
from statekeeper.core.archive.keys import ROOT, manifest_key, parse_key, unsegment
from statekeeper.core.archive.service import DAY, Archive
from statekeeper.core.archive.store import Candidate, ExportedUnit
from statekeeper.core.audit.models import AuditFilter, AuditRecord, ChainLink
from statekeeper.core.errors import StorageUnavailableError

CAPABILITY = "audit"
# Parsed archived days kept in memory for paging, in records (about 1 KB each).
CACHED_RECORDS = 50_000
# A day of more records than that is kept as its verified chunk instead (a
# few dozen bytes a record), up to this many bytes of chunks: paging through
# it parses it again but does not fetch it again.
CACHED_CHUNK_BYTES = 64 * 1024 * 1024
# Day summaries (from manifests) kept in memory.
CACHED_DAYS = 100_000
# Manifests read at once when a listing first meets many archived days.
MANIFEST_READS = 16


def day_unit(start: float) -> str:
    """The unit id of the UTC day starting at `start`."""
    return datetime.datetime.fromtimestamp(start, datetime.UTC).date().isoformat()


def day_bounds(unit: str) -> tuple[float, float] | None:
    """[start, end) of a day's unit id; None when `unit` names no day."""
    try:
        day = datetime.date.fromisoformat(unit)
    except ValueError:
        return None
    if day.isoformat() != unit:
        return None
    start = datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC).timestamp()
    return start, start + DAY


@dataclass(frozen=True)
class ArchivedAuditRecord:
    """A record read from a chunk, with its link of the hash chain."""

    record: AuditRecord
    link: ChainLink


class AuditArchiveDatabase(Protocol):
    """The audit log's side of the archive, per backend
    (storage/archive/audit_embedded.py and audit_postgres.py)."""

    async def next_tenant(self, after: str | None) -> str | None:
        """The first tenant with audit records after `after` (None: the first)."""

    async def oldest_time(self, tenant: str, since: float) -> float | None:
        """The time of the tenant's oldest hot record at or after `since`."""

    async def export_day(
        self, tenant: str, start: float, end: float, path: Path
    ) -> ExportedUnit | None:
        """Writes the tenant's records with start <= time < end as one chunk,
        read in one snapshot, chain columns included (None: no records).
        `extra` holds first_id, last_id, records and id_sum."""

    async def delete_day(
        self, tenant: str, start: float, end: float, records: int, id_sum: int
    ) -> bool | None:
        """Deletes those records in one transaction if they are still the
        exported ones (`records` of them, audit_ids summing to `id_sum`):
        True deleted, None changed (nothing deleted), False none left."""

    async def has_record(self, tenant: str, audit_id: int) -> bool:
        """True when that record is hot."""

    def read_chunk(self, path: Path, tenant: str) -> list[ArchivedAuditRecord]:
        """The records of a chunk (checked against its checksum), each with
        its digest recomputed; blocking (run in a thread)."""


class AuditUnits:
    """The archiver's view of the audit log: whole UTC days per tenant."""

    capability = CAPABILITY
    restorable = False

    def __init__(self, database: AuditArchiveDatabase, after_days: float) -> None:
        self._db = database
        self.after_days = after_days

    async def candidates(
        self, cutoff: float, after: tuple[Any, ...] | None, limit: int
    ) -> list[Candidate]:
        """Days whose end is at or before `cutoff`, by tenant then day; the
        cursor is (tenant, the next day's start)."""
        # Records before the start of the cutoff's day lie in days that ended by it.
        horizon = math.floor(cutoff / DAY) * DAY
        if after is None:
            tenant, since = await self._db.next_tenant(None), -math.inf
        else:
            tenant, since = str(after[0]), float(after[1])
        found: list[Candidate] = []
        # Each turn adds a day or moves on to the next tenant.
        while tenant is not None and len(found) < limit:
            when = await self._db.oldest_time(tenant, since)
            if when is None or when >= horizon:
                tenant, since = await self._db.next_tenant(tenant), -math.inf
                continue
            start = math.floor(when / DAY) * DAY
            since = start + DAY
            found.append(Candidate(tenant, day_unit(start), "", (tenant, since)))
        return found

    async def export(self, tenant: str, unit: str, path: Path) -> ExportedUnit | None:
        bounds = day_bounds(unit)
        if bounds is None:
            return None
        return await self._db.export_day(tenant, *bounds, path)

    async def delete_hot(self, tenant: str, unit: str, exported: ExportedUnit) -> bool | None:
        # No audit record of this: it would be archived in turn, and so on.
        bounds = day_bounds(unit)
        if bounds is None:
            return False
        extra = exported.extra
        return await self._db.delete_day(
            tenant, *bounds, int(extra["records"]), int(extra["id_sum"])
        )

    async def restore(self, tenant: str, unit: str, chunk: Path, extra: dict[str, Any]) -> bool:
        return False  # read through, never restored (restorable is False)

    async def is_hot(self, tenant: str, unit: str, extra: dict[str, Any]) -> bool:
        # A day's records are deleted together, and only by the archiver.
        return await self._db.has_record(tenant, int(extra.get("first_id", 0)))


# ----- reading archived days through -------------------------------------------


@dataclass(frozen=True)
class _Day:
    """An archived day, from its manifest."""

    tenant: str
    unit: str
    start: float
    end: float
    first_id: int
    last_id: int
    manifest: dict[str, Any]


def _matches(
    record: AuditRecord, tenant: str | None, audit_filter: AuditFilter, before_id: int
) -> bool:
    """The store's filter (sql.audit_query), on an archived record."""
    if tenant is not None and record.tenant != tenant:
        return False
    if before_id > 0 and record.audit_id >= before_id:
        return False
    for name in ("entity_type", "entity_id", "principal", "service", "method"):
        wanted = getattr(audit_filter, name)
        if wanted and getattr(record, name) != wanted:
            return False
    if audit_filter.start_time and record.time < audit_filter.start_time:
        return False
    return not (audit_filter.end_time and record.time >= audit_filter.end_time)


class ArchivedAudit:
    """Archived audit records, read through from the archive (manifests and
    chunks verified by `Archive.chunks`), merged with hot ones by the audit
    log. Day summaries and parsed chunks are cached: chunks are named by
    their sha256 and never rewritten, so a cached one is never stale."""

    def __init__(
        self,
        archive: Archive,
        read_chunk: Callable[[Path, str], list[ArchivedAuditRecord]],
        cached_records: int = CACHED_RECORDS,
    ) -> None:
        self._archive = archive
        self._read_chunk = read_chunk
        self._cached_records = cached_records
        self._days: OrderedDict[tuple[str, str], _Day] = OrderedDict()
        self._chunks: OrderedDict[str, list[ArchivedAuditRecord]] = OrderedDict()
        self._chunk_records = 0
        # Verified chunks of days too large for `_chunks`, by key.
        self._raw: OrderedDict[str, bytes] = OrderedDict()
        self._raw_bytes = 0
        self.chunk_reads = 0  # chunks fetched from the object store

    async def merge_page(
        self,
        tenant: str | None,
        audit_filter: AuditFilter,
        before_id: int,
        limit: int,
        hot: list[AuditRecord],
    ) -> list[AuditRecord]:
        """The first `limit` records, newest (highest audit_id) first, of
        `hot` (read BEFORE this call, so that a day the archiver moves
        meanwhile is found here) and of the archived days matching the
        filter. A record both hot and archived (the archiver between its
        manifest and its delete) is listed once."""
        chosen = {record.audit_id: record for record in hot}
        days = [
            day
            for day in await self._archived_days(tenant, audit_filter)
            if before_id <= 0 or day.first_id < before_id
        ]
        # Days holding the highest ids first; stop at a day whose records
        # would all come after the page.
        for day in sorted(days, key=lambda day: day.last_id, reverse=True):
            if len(chosen) >= limit:
                kept = heapq.nlargest(limit, chosen)
                chosen = {audit_id: chosen[audit_id] for audit_id in kept}
                if day.last_id < kept[-1]:
                    break
            for archived in await self._records(day):
                record = archived.record
                if record.audit_id not in chosen and _matches(
                    record, tenant, audit_filter, before_id
                ):
                    chosen[record.audit_id] = record
        return [chosen[audit_id] for audit_id in heapq.nlargest(limit, chosen)]

    async def chain_links(self, tenant: str | None) -> list[ChainLink]:
        """Every archived record of `tenant` (None: every tenant) as a link
        of its tenant's chain, with its digest recomputed."""
        links: list[ChainLink] = []
        for day in await self._archived_days(tenant, AuditFilter()):
            links.extend(archived.link for archived in await self._records(day, cache=False))
        return links

    async def _archived_days(self, tenant: str | None, audit_filter: AuditFilter) -> list[_Day]:
        """The archived days of `tenant` (None: every tenant) that can hold
        records of the filter's time range."""
        wanted: list[tuple[str, str]] = []
        for day_tenant, unit in await self._units(tenant):
            bounds = day_bounds(unit)
            if bounds is None:
                continue
            start, end = bounds
            if audit_filter.start_time and end <= audit_filter.start_time:
                continue
            if audit_filter.end_time and start >= audit_filter.end_time:
                continue
            wanted.append((day_tenant, unit))
        missing = [key for key in wanted if key not in self._days]
        for first in range(0, len(missing), MANIFEST_READS):
            batch = missing[first : first + MANIFEST_READS]
            await asyncio.gather(*(self._load_day(*key) for key in batch))
        days = [self._days[key] for key in wanted if key in self._days]
        for key in wanted:
            if key in self._days:
                self._days.move_to_end(key)
        while len(self._days) > CACHED_DAYS:
            self._days.popitem(last=False)
        return days

    async def _units(self, tenant: str | None) -> list[tuple[str, str]]:
        if tenant is not None:
            return [(tenant, unit) for unit in await self._archive.units(CAPABILITY, tenant)]
        # Every tenant: operator tools only (`statekeeper audit list/verify`).
        found = []
        for key in await self._archive.objects.list(f"{ROOT}/"):
            parsed = parse_key(key)
            if parsed.kind == "manifest" and parsed.capability == CAPABILITY:
                found.append((unsegment(key.split("/")[1]), parsed.unit))
        return sorted(found)

    async def _load_day(self, tenant: str, unit: str) -> None:
        """Caches the day's summary. A damaged manifest fails the listings
        that reach its day (UNAVAILABLE naming it): skipping it would leave
        its records out of an audit listing unnoticed."""
        key = manifest_key(tenant, CAPABILITY, unit)
        manifest = await manifest_of(self._archive, CAPABILITY, tenant, unit)
        bounds = day_bounds(unit)
        if manifest is None or bounds is None:
            return
        extra = manifest.get("extra", {})
        with reading(key):
            first_id, last_id = int(extra.get("first_id", 0)), int(extra.get("last_id", 2**63))
        self._days[(tenant, unit)] = _Day(tenant, unit, *bounds, first_id, last_id, manifest)

    async def _records(self, day: _Day, cache: bool = True) -> list[ArchivedAuditRecord]:
        key = json.dumps([entry["key"] for entry in day.manifest["chunks"]])
        cached = self._chunks.get(key)
        if cached is not None:
            self._chunks.move_to_end(key)
            return cached
        try:
            records = await self._fetch(day)
        except StorageUnavailableError:
            # The manifest may have changed since it was cached (repair
            # removes the objects of a day found hot again, whose rows are
            # hot then; the day may have been archived again since).
            self._days.pop((day.tenant, day.unit), None)
            await self._load_day(day.tenant, day.unit)
            current = self._days.get((day.tenant, day.unit))
            if current is None:
                return []
            if current.manifest["chunks"] == day.manifest["chunks"]:
                raise
            return await self._records(current, cache)
        if cache and key not in self._chunks and len(records) <= self._cached_records:
            self._chunks[key] = records
            self._chunk_records += len(records)
            while self._chunk_records > self._cached_records:
                _, dropped = self._chunks.popitem(last=False)
                self._chunk_records -= len(dropped)
        return records

    async def _fetch(self, day: _Day) -> list[ArchivedAuditRecord]:
        records: list[ArchivedAuditRecord] = []
        fetched: list[tuple[str, Path]] = []
        with tempfile.TemporaryDirectory(prefix="statekeeper-audit-") as work:
            for number, entry in enumerate(day.manifest["chunks"]):
                folder = Path(work) / str(number)
                folder.mkdir()
                path = await self._cached_chunk(entry, folder)
                if path is None:
                    [path] = await self._archive.chunks({"chunks": [entry]}, folder)
                    fetched.append((entry["key"], path))
                with reading(entry["key"]):
                    records += await asyncio.to_thread(self._read_chunk, path, day.tenant)
            if len(records) > self._cached_records:
                for key, path in fetched:
                    self._keep_raw(key, path.read_bytes())
        self.chunk_reads += len(fetched)
        return records

    async def _cached_chunk(self, entry: dict[str, Any], folder: Path) -> Path | None:
        """The chunk from the raw cache as a file in `folder` (None: not cached)."""
        data = self._raw.get(entry["key"])
        if data is None:
            return None
        self._raw.move_to_end(entry["key"])
        path = folder / "chunk.ndjson.zst"
        await asyncio.to_thread(path.write_bytes, data)
        return path

    def _keep_raw(self, key: str, data: bytes) -> None:
        if key in self._raw or len(data) > CACHED_CHUNK_BYTES:
            return
        self._raw[key] = data
        self._raw_bytes += len(data)
        while self._raw_bytes > CACHED_CHUNK_BYTES:
            _, dropped = self._raw.popitem(last=False)
            self._raw_bytes -= len(dropped)


def merge_links(hot: list[ChainLink], archived: list[ChainLink]) -> list[ChainLink]:
    """Hot and archived links in the order `verify_chain` reads them (by
    tenant, then chain_seq, unchained first); a record both hot and
    archived (mid-archive) once."""
    by_id = {link.audit_id: link for link in archived}
    by_id.update({link.audit_id: link for link in hot})
    return sorted(
        by_id.values(),
        key=lambda link: (
            link.tenant,
            link.chain_seq is not None,
            link.chain_seq or 0,
            link.audit_id,
        ),
    )
