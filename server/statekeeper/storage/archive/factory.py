"""The archive of a deployment, from its settings and storage."""

from __future__ import annotations

from pathlib import Path

from statekeeper.config import ARCHIVE_POLICIES, Settings
from statekeeper.core.archive.service import Archive, ArchivePolicy
from statekeeper.core.archive.sessions import SessionUnits
from statekeeper.core.archive.store import ArchiveDatabase, UnitKind
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.objects import open_store
from statekeeper.storage.production import ProductionStorage


def build_archive(settings: Settings, storage: Storage) -> Archive | None:
    """The archive when the backend has one (the embedded and production
    stores do); objects under --archive-url (default DATA_DIR/archive)."""
    database: ArchiveDatabase
    if isinstance(storage, ProductionStorage):
        if not settings.archive_url:
            policies = [name for name in ARCHIVE_POLICIES if getattr(settings, name)]
            if policies:
                raise ValueError(
                    f"{policies[0]}: the production tier needs --archive-url"
                    " (a store every replica reaches, e.g. s3://bucket/prefix)"
                )
            return None
        from statekeeper.storage.archive.postgres import PostgresArchiveDatabase

        database = PostgresArchiveDatabase(storage.durable)
    elif isinstance(storage, EmbeddedStorage):
        from statekeeper.storage.archive.embedded import EmbeddedArchiveDatabase

        database = EmbeddedArchiveDatabase(storage, Path(settings.data_dir))
    else:
        return None
    kinds: list[UnitKind] = [
        SessionUnits(database, storage.sessions, settings.archive_sessions_after_days)
    ]
    policy = ArchivePolicy(
        interval_seconds=settings.archive_interval_seconds,
        batch_size=settings.archive_batch_size,
    )
    objects = open_store(settings.archive_url, Path(settings.data_dir))
    return Archive(objects, database, kinds, policy, limits=settings.limits)
