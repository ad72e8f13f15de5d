"""A PostgresStorage on a database of its own, for the stores whose
contract tests need an empty server (sweeps such as forget_tombstones and
find_expired_leases look across tenants, so a shared database would let one
run's leftovers change another's results)."""

from __future__ import annotations

from dataclasses import dataclass, field

from statekeeper.core.audit.models import AuditFilter, AuditRecord
from statekeeper.storage.postgres.sessions import PostgresStorage
from tests.services import Services, configured, create_database, drop_database, reachable


@dataclass
class FreshPostgres:
    """A started storage on a new database, more "replicas" of it (storages
    with pools of their own, as other server processes would have), and how
    to drop it all."""

    services: Services
    dsn: str
    storage: PostgresStorage
    replicas: list[PostgresStorage] = field(default_factory=list)

    async def replica(self) -> PostgresStorage:
        """Another started storage on the same database."""
        storage = PostgresStorage(self.dsn, pool_size=4)
        await storage.start()
        self.replicas.append(storage)
        return storage

    async def audit_trail(self, tenant: str) -> list[AuditRecord]:
        """The tenant's audit records, oldest first."""
        records = await self.storage.audit.list_audit(tenant, AuditFilter(), 0, 1000)
        return list(reversed(records))

    async def close(self) -> None:
        try:
            for storage in [self.storage, *self.replicas]:
                await storage.close()
        finally:
            await drop_database(self.services, self.dsn)


async def fresh_postgres() -> FreshPostgres:
    """Skips (or fails, under STATEKEEPER_REQUIRE_SERVICES=1) when the test
    services are not configured or do not answer."""
    services = configured()
    await reachable(services)
    dsn = await create_database(services)
    database = FreshPostgres(
        services, dsn, PostgresStorage(dsn, pool_size=4, migrate_on_start=True)
    )
    try:
        await database.storage.start()
    except BaseException:
        await database.close()
        raise
    return database
