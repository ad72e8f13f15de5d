"""Sessions as archive units: a session without a TTL not updated for
`after_days` (a session with a TTL ends by the sweeper), with its messages,
versions and append receipts. Its hot rows are deleted by the session
store's compare-and-delete at the exported version, which drops its caches
and writes the audit record "archived"."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from statekeeper.core.archive.store import FENCE, ArchiveDatabase, Candidate, ExportedUnit
from statekeeper.core.audit.service import record_for, system_actor
from statekeeper.core.errors import ConcurrentModificationError, NotFoundError
from statekeeper.core.sessions.store import SessionStore


class SessionUnits:
    capability = "sessions"
    restorable = True

    def __init__(
        self,
        database: ArchiveDatabase,
        sessions: SessionStore,
        after_days: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = database
        self._sessions = sessions
        self.after_days = after_days
        self._clock = clock

    async def candidates(
        self, cutoff: float, after: tuple[Any, ...] | None, limit: int
    ) -> list[Candidate]:
        start = None if after is None else (float(after[0]), str(after[1]), str(after[2]))
        # Created before the cutoff is necessary for updated before it.
        found = await self._db.session_candidates(cutoff, start, limit)
        return [
            Candidate(
                session.tenant,
                session.session_id,
                session.user_id,
                (session.create_time, session.tenant, session.session_id),
                due=session.update_time < cutoff,
            )
            for session in found
        ]

    async def export(self, tenant: str, unit: str, path: Path) -> ExportedUnit | None:
        return await self._db.export_session(tenant, unit, path)

    async def delete_hot(self, tenant: str, unit: str, exported: ExportedUnit) -> bool | None:
        rows = sum(exported.counts.values())
        audit = record_for(
            system_actor("ArchiveSessions"),
            "session",
            unit,
            exported.version,
            self._clock(),
            f"archived ({rows} rows)",
        )
        try:
            await self._sessions.delete_session(tenant, unit, exported.version, audit)
        except ConcurrentModificationError:
            return None
        except NotFoundError:
            return False
        return True

    async def restore(self, tenant: str, unit: str, chunk: Path, extra: dict[str, Any]) -> bool:
        return await self._db.restore_session(tenant, unit, chunk, str(extra.get(FENCE, "")))

    async def is_hot(self, tenant: str, unit: str, extra: dict[str, Any]) -> bool:
        return await self._db.session_version(tenant, unit) is not None
