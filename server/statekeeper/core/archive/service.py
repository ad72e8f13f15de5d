"""The archive tier: moves cold state from the database to an object store
and brings it back when it is read.

What is archived today: sessions without a TTL not updated for
`sessions_after_days` (a session with a TTL ends by the sweeper). A
session is one unit: its session row, messages, versions and append
receipts, written as one chunk in the export format (admin/transfer.py:
zstd NDJSON with a header and a checksummed trailer) plus a manifest.

Objects (ids that are not plain are hex-encoded, storage/objects.py):

  v1/<tenant>/sessions/<session>/chunk-<sha256 prefix>.ndjson.zst
  v1/<tenant>/sessions/<session>/manifest.json   the index entry: chunk key,
      its sha256 and row counts, the session's user and version
  v1/<tenant>/users/<user>/sessions/<session>    marker: the user's units
      (EraseUser and a per-user restore list them)

Archiving one session, in this order, so that a crash anywhere loses and
duplicates nothing:
  1. read its rows in one snapshot into a chunk (with its version V);
  2. write the chunk, read it back and compare sha256 (verified);
  3. write the user marker, then the manifest (from here a read finds it);
  4. delete the hot rows only if the session is still at version V (the
     store's compare-and-delete, which also drops its caches); if it moved
     on, the objects are removed and the session is tried again next pass.
A crash before 3 leaves an orphan chunk (removed by `repair`); between 3
and 4, a manifest of a session that is still hot (hot rows win: `repair`
removes the objects); after 4, the session lives in the archive only.

Restoring (on a read that finds no hot session, or in bulk): the manifest
and chunk are read, the chunk's sha256 checked, its rows inserted in one
transaction unless the session is hot again, and only then are the
manifest, chunk and marker deleted, in that order. If the session was hot
already, nothing is deleted: the archiver may be between steps 3 and 4
(its delete would then leave the objects the only copy); `repair`, which
holds the archiver's lock, removes the objects of a session still hot. The archiver skips a
session while its manifest or marker exists, so it never archives a
session again while a restore (here or on another replica) is still
removing the previous objects.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statekeeper.core.archive.store import ArchiveDatabase, ObjectStore, SessionCandidate
from statekeeper.core.audit.service import record_for, system_actor
from statekeeper.core.errors import (
    ConcurrentModificationError,
    NotFoundError,
    StorageUnavailableError,
)
from statekeeper.core.limits import Limits
from statekeeper.core.privacy.models import ErasureCounts, ErasureSubject
from statekeeper.core.sessions.store import SessionStore
from statekeeper.core.validation import check_id

log = logging.getLogger(__name__)

MANIFEST_FORMAT = "statekeeper-archive"
MANIFEST_VERSION = 1
ROOT = "v1"
DAY = 86_400.0
# Sessions restored recently are not archived again for one policy period
# (reading a session makes it active); at most this many are remembered.
RECENT_RESTORES = 100_000
# Seconds between two repairs while the archiver runs (and one at start).
REPAIR_SECONDS = 3600.0
_SIMPLE_SEGMENT = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")


@dataclass(frozen=True)
class ArchivePolicy:
    sessions_after_days: float = 0.0  # 0: sessions are never archived
    interval_seconds: float = 300.0
    batch_size: int = 100


@dataclass
class PassResult:
    units: int = 0
    rows: int = 0
    changed: int = 0  # sessions that moved on while being archived
    seconds: float = 0.0


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


def segment(text: str) -> str:
    """One key segment naming an id: the id itself when it is plain, else
    `~` and its UTF-8 bytes in hex (no id can climb out of its tenant's
    prefix, and two ids never share a segment)."""
    if _SIMPLE_SEGMENT.fullmatch(text):
        return text
    return "~" + text.encode().hex()


def tenant_prefix(tenant: str) -> str:
    return f"{ROOT}/{segment(tenant)}/"


def session_prefix(tenant: str, session_id: str) -> str:
    return f"{tenant_prefix(tenant)}sessions/{segment(session_id)}/"


def manifest_key(tenant: str, session_id: str) -> str:
    return session_prefix(tenant, session_id) + "manifest.json"


def user_prefix(tenant: str, user_id: str) -> str:
    return f"{tenant_prefix(tenant)}users/{segment(user_id)}/sessions/"


def marker_key(tenant: str, user_id: str, session_id: str) -> str:
    return user_prefix(tenant, user_id) + segment(session_id)


class Archive:
    def __init__(
        self,
        objects: ObjectStore,
        database: ArchiveDatabase,
        sessions: SessionStore,
        policy: ArchivePolicy,
        clock: Callable[[], float] = time.time,
        limits: Limits | None = None,
    ) -> None:
        self._limits = limits or Limits()
        self.objects = objects
        self._db = database
        self._sessions = sessions
        self.policy = policy
        self._clock = clock
        self.counters = ArchiveCounters()
        # Told after each archiver pass (the server reports it as a sweeper
        # run to metrics: statekeeper_sweeper_last_run_age_seconds).
        self.after_pass: Callable[[PassResult], None] | None = None
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._restored: OrderedDict[tuple[str, str], float] = OrderedDict()

    # ----- archiving -------------------------------------------------------

    async def archive_sessions(self) -> PassResult:
        """One pass over the sessions due for the archive, in batches of
        `batch_size`; returns what it moved."""
        result = PassResult()
        if self.policy.sessions_after_days <= 0:
            return result
        started = time.monotonic()
        async with self._db.exclusive() as held:
            if not held:
                log.info("archive pass skipped: another process is archiving")
                return result
            cutoff = self._clock() - self.policy.sessions_after_days * DAY
            after: tuple[float, str, str] | None = None
            while True:
                batch = await self._db.session_candidates(cutoff, after, self.policy.batch_size)
                if not batch:
                    break
                after = (batch[-1].create_time, batch[-1].tenant, batch[-1].session_id)
                units = rows = 0
                for candidate in batch:
                    if candidate.update_time >= cutoff or self._recently_restored(candidate):
                        continue
                    moved = await self._archive_session(candidate)
                    if moved is None:
                        result.changed += 1
                    elif moved:
                        units += 1
                        rows += moved
                result.units += units
                result.rows += rows
                self.counters.archived_units += units
                self.counters.archived_rows += rows
                if units:
                    log.info(
                        "archived a batch of sessions",
                        extra={
                            "units": units,
                            "rows": rows,
                            "pass_units": result.units,
                            "total_units": self.counters.archived_units,
                        },
                    )
        result.seconds = time.monotonic() - started
        self.counters.passes += 1
        if self.after_pass is not None:
            self.after_pass(result)
        return result

    def _recently_restored(self, candidate: SessionCandidate) -> bool:
        at = self._restored.get((candidate.tenant, candidate.session_id))
        return at is not None and self._clock() - at < self.policy.sessions_after_days * DAY

    async def _archive_session(self, candidate: SessionCandidate) -> int | None:
        """Rows archived (0: nothing to do), None if the session changed."""
        tenant, session_id = candidate.tenant, candidate.session_id
        # A restore of this session may still be removing its objects (here
        # or on another replica), or one was interrupted: not before they are
        # gone (`repair` removes what an interrupted one left).
        if await self.objects.get(manifest_key(tenant, session_id)) is not None:
            return 0
        if await self.objects.get(marker_key(tenant, candidate.user_id, session_id)) is not None:
            return 0
        with tempfile.TemporaryDirectory(prefix="statekeeper-archive-") as work:
            exported = await self._db.export_session(
                tenant, session_id, Path(work) / "chunk.ndjson.zst"
            )
            if exported is None:
                return 0
            data = exported.path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        chunk = session_prefix(tenant, session_id) + f"chunk-{digest[:16]}.ndjson.zst"
        await self.objects.put(chunk, data)
        stored = await self.objects.get(chunk)
        if stored is None or hashlib.sha256(stored).hexdigest() != digest:
            raise StorageUnavailableError(f"archive object {chunk} did not read back intact")
        rows = sum(exported.counts.values())
        manifest = {
            "format": MANIFEST_FORMAT,
            "version": MANIFEST_VERSION,
            "tenant": tenant,
            "capability": "sessions",
            "unit": session_id,
            "user_id": exported.user_id,
            "session_version": exported.version,
            "archived": self._clock(),
            "chunks": [
                {
                    "key": chunk,
                    "sha256": digest,
                    "rows": rows,
                    "counts": exported.counts,
                    "rows_sha256": exported.rows_sha256,
                }
            ],
        }
        marker = marker_key(tenant, exported.user_id, session_id)
        await self.objects.put(marker, session_id.encode())
        await self.objects.put(manifest_key(tenant, session_id), _json(manifest))
        audit = record_for(
            system_actor("ArchiveSessions"),
            "session",
            session_id,
            exported.version,
            self._clock(),
            f"archived ({rows} rows) to {chunk}",
        )
        try:
            await self._sessions.delete_session(tenant, session_id, exported.version, audit)
        except ConcurrentModificationError:
            # Written to after the snapshot: the hot rows stay, the objects go.
            await self._abandon(tenant, session_id, manifest)
            return None
        except NotFoundError:
            # Deleted (or erased) meanwhile: its archive copy must go too.
            await self._abandon(tenant, session_id, manifest)
            return 0
        return rows

    async def _abandon(self, tenant: str, session_id: str, manifest: dict[str, Any]) -> None:
        """Removes the objects of an archive attempt that did not delete the
        hot rows; only its own chunk if the manifest is no longer its own
        (never the case with one archiver at a time, which the database's
        lock ensures; this keeps another's archive whole if it ever is)."""
        current = await self._manifest(tenant, session_id)
        if current is None or current.get("chunks") == manifest["chunks"]:
            await self._remove_unit(tenant, session_id, manifest)
            return
        for chunk in manifest["chunks"]:
            await self.objects.delete(chunk["key"])

    async def _remove_unit(self, tenant: str, session_id: str, manifest: dict[str, Any]) -> int:
        """Deletes a unit's objects, manifest first (without it nothing
        reads the rest); returns how many objects."""
        await self.objects.delete(manifest_key(tenant, session_id))
        removed = 1
        for chunk in manifest.get("chunks", []):
            await self.objects.delete(chunk["key"])
            removed += 1
        user_id = manifest.get("user_id")
        if isinstance(user_id, str):
            await self.objects.delete(marker_key(tenant, user_id, session_id))
            removed += 1
        return removed

    async def _manifest(self, tenant: str, session_id: str) -> dict[str, Any] | None:
        raw = await self.objects.get(manifest_key(tenant, session_id))
        if raw is None:
            return None
        manifest: dict[str, Any] = json.loads(raw)
        if manifest.get("format") != MANIFEST_FORMAT or manifest.get("tenant") != tenant:
            raise StorageUnavailableError(
                f"archive object {manifest_key(tenant, session_id)} is not this tenant's manifest"
            )
        return manifest

    # ----- restoring -------------------------------------------------------

    async def restore_session(self, tenant: str, session_id: str) -> bool:
        """Brings an archived session back hot; False if it is not archived
        (or was hot already). Used on a read that found no session."""
        key = (tenant, session_id)
        lock = self._locks.setdefault(key, asyncio.Lock())
        try:
            async with lock:
                return await self._restore_session(tenant, session_id)
        finally:
            if not lock.locked() and self._locks.get(key) is lock:
                del self._locks[key]

    async def _restore_session(self, tenant: str, session_id: str) -> bool:
        manifest = await self._manifest(tenant, session_id)
        if manifest is None:
            return False
        restored = False
        rows = 0
        with tempfile.TemporaryDirectory(prefix="statekeeper-restore-") as work:
            for entry in manifest["chunks"]:
                data = await self.objects.get(entry["key"])
                if data is None or hashlib.sha256(data).hexdigest() != entry["sha256"]:
                    raise StorageUnavailableError(
                        f"archive object {entry['key']} is missing or corrupt"
                    )
                path = Path(work) / "chunk.ndjson.zst"
                path.write_bytes(data)
                restored = await self._db.restore_session(tenant, session_id, path)
                rows += int(entry["rows"])
        if not restored:
            # Hot already: the archiver may be between writing this manifest
            # and deleting the hot rows (its compare-and-delete still holds),
            # so the objects may be about to become the only copy. They stay;
            # `repair` (under the archiver's lock) removes them if the session
            # is still hot then.
            return False
        # Hot again by us: the archive copy goes.
        await self._remove_unit(tenant, session_id, manifest)
        if restored:
            self.counters.restored_units += 1
            self.counters.restored_rows += rows
            self._restored[(tenant, session_id)] = self._clock()
            while len(self._restored) > RECENT_RESTORES:
                self._restored.popitem(last=False)
            log.info(
                "restored an archived session",
                extra={"tenant": tenant, "session_id": session_id, "rows": rows},
            )
        return restored

    async def is_archived(self, tenant: str, session_id: str) -> bool:
        """True while a manifest of that session exists (it may be hot too,
        between the archiver's manifest write and its delete)."""
        return await self.objects.get(manifest_key(tenant, session_id)) is not None

    async def restore(self, tenant: str, user_id: str = "") -> int:
        """Brings back every archived session of a tenant (or of one user of
        it); returns how many."""
        check_id("user_id", user_id, self._limits, required=False)
        if user_id:
            keys = await self.objects.list(user_prefix(tenant, user_id))
            session_ids = [(await self.objects.get(key) or b"").decode() for key in sorted(keys)]
        else:
            keys = await self.objects.list(tenant_prefix(tenant) + "sessions/")
            session_ids = []
            for key in sorted(keys):
                if key.endswith("/manifest.json"):
                    manifest = json.loads(await self.objects.get(key) or b"{}")
                    session_ids.append(str(manifest.get("unit", "")))
        count = 0
        for session_id in session_ids:
            if session_id and await self.restore_session(tenant, session_id):
                count += 1
        return count

    # ----- erasure and repair ----------------------------------------------

    async def erase_user(
        self, tenant: str, subject: ErasureSubject, dry_run: bool
    ) -> ErasureCounts:
        """EraseUser's participant: removes the user's archived sessions
        (counted as ("archive", "sessions"))."""
        counts = ErasureCounts()
        markers = await self.objects.list(user_prefix(tenant, subject.user_id))
        for key in markers:
            session_id = (await self.objects.get(key) or b"").decode()
            manifest = await self._manifest(tenant, session_id) if session_id else None
            if manifest is not None and manifest.get("user_id") != subject.user_id:
                manifest = None
            if not dry_run:
                if manifest is not None:
                    await self._remove_unit(tenant, session_id, manifest)
                await self.objects.delete(key)
            counts.add("archive", "sessions", 1 if manifest is not None else 0)
        return counts

    async def repair(self) -> int:
        """Removes what an interrupted archive or restore left: chunks with
        no manifest, markers with no manifest, and the objects of a session
        that is hot (hot rows win). Returns the objects removed."""
        removed = 0
        async with self._db.exclusive() as held:
            if not held:
                return 0
            # Under the lock no put runs (puts are the archiver's, and this is
            # the archiver's task, or another process's that waits for the lock).
            removed += await self.objects.remove_partial_writes()
            keys = await self.objects.list(f"{ROOT}/")
            manifests = {key for key in keys if key.endswith("/manifest.json")}
            live_chunks: set[str] = set()
            live_markers: set[str] = set()
            for key in sorted(manifests):
                manifest = json.loads(await self.objects.get(key) or b"{}")
                tenant, session_id = manifest.get("tenant"), manifest.get("unit")
                if not isinstance(tenant, str) or not isinstance(session_id, str):
                    continue
                if await self._db.session_version(tenant, session_id) is not None:
                    removed += await self._remove_unit(tenant, session_id, manifest)
                    continue
                live_chunks.update(chunk["key"] for chunk in manifest.get("chunks", []))
                live_markers.add(marker_key(tenant, str(manifest.get("user_id")), session_id))
            for key in keys:
                if key in manifests:
                    continue
                is_chunk = "/sessions/" in key and "/chunk-" in key
                if (is_chunk and key not in live_chunks) or (
                    "/users/" in key and key not in live_markers
                ):
                    await self.objects.delete(key)
                    removed += 1
        if removed:
            log.info("archive repair removed leftover objects", extra={"objects": removed})
        return removed

    # ----- the background loop ---------------------------------------------

    async def _repair_logged(self) -> None:
        """`repair`, whose failure never stops the archiver (it runs again
        later; what it would have removed waits until then)."""
        try:
            await self.repair()
        except StorageUnavailableError as exc:
            log.warning("archive repair skipped: %s", exc.message)
        except Exception:
            log.exception("archive repair failed; will retry")

    async def run_forever(self) -> None:
        """Repairs once, then (when a policy is set) archives every interval."""
        await self._repair_logged()
        if self.policy.sessions_after_days <= 0:
            return
        repair_every = max(1, round(REPAIR_SECONDS / self.policy.interval_seconds))
        while True:
            await asyncio.sleep(self.policy.interval_seconds)
            try:
                if self.counters.passes % repair_every == repair_every - 1:
                    await self._repair_logged()
                result = await self.archive_sessions()
                if result.units or result.changed:
                    log.info(
                        "archive pass done",
                        extra={
                            "units": result.units,
                            "rows": result.rows,
                            "changed": result.changed,
                            "rows_per_second": round(result.rows / max(result.seconds, 1e-9)),
                        },
                    )
            except StorageUnavailableError as exc:
                self.counters.failures += 1
                log.warning("archive pass stopped; resumes next interval: %s", exc.message)
            except Exception:
                self.counters.failures += 1
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


def _json(value: dict[str, Any]) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
