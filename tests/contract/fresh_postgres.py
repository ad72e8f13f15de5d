"""A PostgresStorage on a database of its own, for the stores whose
contract tests need an empty server (sweeps such as forget_tombstones and
find_expired_leases look across tenants, so a shared database would let one
run's leftovers change another's results)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from statekeeper.core.models import AuditFilter, AuditRecord
from statekeeper.storage.postgres import PostgresStorage
from tests.services import configured, create_database, drop_database, reachable


@dataclass
class FreshPostgres:
    """A started storage, its audit trail reader, and how to drop it all."""

    storage: PostgresStorage
    close: Callable[[], Awaitable[None]]

    async def audit_trail(self, tenant: str) -> list[AuditRecord]:
        """The tenant's audit records, oldest first."""
        records = await self.storage.audit.list_audit(tenant, AuditFilter(), 0, 1000)
        return list(reversed(records))


async def fresh_postgres() -> FreshPostgres:
    """Skips (or fails, under STATEKEEPER_REQUIRE_SERVICES=1) when the test
    services are not configured or do not answer."""
    services = configured()
    await reachable(services)
    dsn = await create_database(services)
    storage = PostgresStorage(dsn, pool_size=4, migrate_on_start=True)

    async def close() -> None:
        try:
            await storage.close()
        finally:
            await drop_database(services, dsn)

    try:
        await storage.start()
    except BaseException:
        await close()
        raise
    return FreshPostgres(storage, close)
