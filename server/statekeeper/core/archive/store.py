"""What the archive needs from the database, per backend
(storage/archive/embedded.py and postgres.py).

A unit is what is archived and restored as one: here a session with its
messages, versions and append receipts. Its rows travel as a chunk in the
export format of `statekeeper export` (admin/transfer.py), so a chunk can
be checked and imported by that tooling.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


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
class SessionCandidate:
    tenant: str
    session_id: str
    user_id: str
    create_time: float
    update_time: float


@dataclass(frozen=True)
class ExportedUnit:
    """A chunk written to a local file, and what it holds."""

    path: Path
    user_id: str
    # The session's version in the snapshot the chunk was read from: its
    # hot rows are deleted only if the session is still at this version.
    version: int
    counts: dict[str, int]
    rows_sha256: str


class ArchiveDatabase(Protocol):
    backend: str

    async def session_candidates(
        self, created_before: float, after: tuple[float, str, str] | None, limit: int
    ) -> list[SessionCandidate]:
        """Sessions without a TTL created before `created_before`, in
        (create_time, tenant, session_id) order after `after`."""

    async def export_session(self, tenant: str, session_id: str, path: Path) -> ExportedUnit | None:
        """Writes the session's rows as one chunk (None: no such session)."""

    async def restore_session(self, tenant: str, session_id: str, chunk: Path) -> bool:
        """Inserts the chunk's rows in one transaction; False (and nothing
        written) when the session is already hot."""

    async def session_version(self, tenant: str, session_id: str) -> int | None:
        """The hot session's version, None if it is not hot."""

    def exclusive(self) -> AbstractAsyncContextManager[bool]:
        """Held for an archiver pass: True when this process may run it (one
        archiver at a time over one database), False when another has it."""
