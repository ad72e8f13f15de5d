"""What the archive needs from the object store and from each capability.

A unit is what is archived and restored as one (a session with its rows;
a checkpoint history; a user's episodes; ...). Its rows travel as a chunk
in the export format of `statekeeper export` (admin/transfer.py), so a
chunk can be checked and imported by that tooling. Each capability that
archives is a `UnitKind` (sessions: core/archive/sessions.py); the archive
(core/archive/service.py) does the rest the same way for every kind:
object keys, verified writes, manifests, markers, ordering for crash
safety, restore locks, erasure and repair.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

# The key of a restore's chunk sha256 in the `extra` given to UnitKind.restore.
FENCE = "chunk_sha256"


class ObjectStore(Protocol):
    """Whole objects by key (storage/objects.py): a missing object is None
    on get and nothing to do on delete."""

    description: str

    async def put(self, key: str, data: bytes) -> None: ...

    async def get(self, key: str) -> bytes | None: ...

    async def delete(self, key: str) -> None: ...

    async def list(self, prefix: str) -> list[str]: ...

    async def remove_partial_writes(self) -> int:
        """Removes leftovers of interrupted puts (only while no put runs)."""


@dataclass(frozen=True)
class Candidate:
    """A unit a kind offers the archiver."""

    tenant: str
    unit: str  # the unit's id within its capability
    # The user the unit belongs to ("": the tenant's; it gets no user
    # marker, so EraseUser and a per-user restore do not see it).
    user_id: str
    # Where the next page of candidates starts (the kind's own order).
    cursor: tuple[Any, ...]
    # False: listed for paging only (not cold yet).
    due: bool = True


@dataclass(frozen=True)
class ExportedUnit:
    """A chunk written to a local file, and what it holds."""

    path: Path
    user_id: str
    # What the hot rows must still be for the archiver to delete them (a
    # session's version, a history's last checkpoint, ...): the kind's
    # compare-and-delete checks it.
    version: int
    counts: dict[str, int]
    rows_sha256: str
    # Kept in the manifest for the kind (e.g. the ids of the archived rows,
    # or the time range they cover).
    extra: dict[str, Any] = field(default_factory=dict)


class UnitKind(Protocol):
    """One capability's units: how to find, export, delete, restore them."""

    # The key segment and the manifest's "capability" (never "users").
    capability: str
    # Units idle this many days are archived (0: this kind is not).
    after_days: float
    # False: archived units are read through (by the capability, through
    # Archive.unit_rows), never restored hot.
    restorable: bool

    async def candidates(
        self, cutoff: float, after: tuple[Any, ...] | None, limit: int
    ) -> list[Candidate]:
        """Up to `limit` units after cursor `after`, in the kind's order;
        `due` for those idle since before `cutoff` (epoch seconds)."""

    async def export(self, tenant: str, unit: str, path: Path) -> ExportedUnit | None:
        """Writes the unit's rows as one chunk, read in one snapshot (None:
        nothing to archive)."""

    async def delete_hot(self, tenant: str, unit: str, exported: ExportedUnit) -> bool | None:
        """Deletes the exported rows in one transaction if the unit is still
        as exported (and drops caches of them, and writes an audit record
        when the capability audits): True deleted, None changed since the
        export (nothing deleted), False gone meanwhile (nothing to delete)."""

    async def restore(self, tenant: str, unit: str, chunk: Path, extra: dict[str, Any]) -> bool:
        """Inserts the chunk's rows in one transaction; False (and nothing
        written) when the unit's rows are hot already. `extra[FENCE]` is the
        chunk's sha256: the transaction marks it used up (fences.py) and
        raises ChunkUsedUpError, inserting nothing, if it already was."""

    async def is_hot(self, tenant: str, unit: str, extra: dict[str, Any]) -> bool:
        """True when the rows a manifest stands for are in the database
        (hot rows win: `repair` then removes the objects)."""


class ChunkUsedUpError(Exception):
    """A restore found its chunk used up (restored already, or its unit
    removed by an erasure or a delete) and inserted nothing."""

    def __init__(self, chunk_sha256: str) -> None:
        super().__init__(f"archive chunk {chunk_sha256} was used up already")
        self.chunk_sha256 = chunk_sha256


class ArchiveLock(Protocol):
    def exclusive(self) -> AbstractAsyncContextManager[bool]:
        """Held for an archiver pass: True when this process may run it (one
        archiver at a time over one database), False when another has it."""


class ArchiveFences(ArchiveLock, Protocol):
    """The database's record of used-up chunks (storage/archive/fences.py).
    A restorable kind's `restore` marks its chunk used up in its insert
    transaction and refuses (ChunkUsedUpError) one that already is."""

    async def used_up(self, tenant: str, chunks: Sequence[str]) -> set[str]:
        """Which of these chunks (sha256) are used up."""

    async def mark_used_up(self, tenant: str, chunks: Sequence[str]) -> None:
        """Marks chunks used up before their unit's objects are removed by
        an erasure or a delete: a restore that read one refuses it."""


@dataclass(frozen=True)
class SessionCandidate:
    tenant: str
    session_id: str
    user_id: str
    create_time: float
    update_time: float


class ArchiveDatabase(ArchiveFences, Protocol):
    """The sessions' side of the archive, per backend
    (storage/archive/embedded.py and postgres.py)."""

    backend: str

    async def session_candidates(
        self, created_before: float, after: tuple[float, str, str] | None, limit: int
    ) -> list[SessionCandidate]:
        """Sessions without a TTL created before `created_before`, in
        (create_time, tenant, session_id) order after `after`."""

    async def export_session(self, tenant: str, session_id: str, path: Path) -> ExportedUnit | None:
        """Writes the session's rows as one chunk (None: no such session)."""

    async def restore_session(
        self, tenant: str, session_id: str, chunk: Path, fence: str = ""
    ) -> bool:
        """Inserts the chunk's rows in one transaction; False (and nothing
        written) when the session is already hot; ChunkUsedUpError when the
        chunk `fence` names is used up."""

    async def session_version(self, tenant: str, session_id: str) -> int | None:
        """The hot session's version, None if it is not hot."""
