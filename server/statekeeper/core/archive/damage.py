"""Archive objects that are not what they should be: a manifest that is not
JSON or lacks a field, a chunk of another tenant or another kind. Reading
one is the archive being unavailable for that unit (UNAVAILABLE to the
caller, naming the key), never an internal error; a scan over many units
skips it with a warning, so one bad object fails only the reads that need
it."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from statekeeper.core.archive.keys import manifest_key
from statekeeper.core.archive.service import Archive
from statekeeper.core.errors import StatekeeperError, StorageUnavailableError

log = logging.getLogger(__name__)

# What parsing a foreign or broken object raises (json errors are
# ValueErrors; a manifest that is a list has no .get: AttributeError).
_DAMAGE: tuple[type[Exception], ...] = (
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    AttributeError,
)


def count_as_damage(*errors: type[Exception]) -> None:
    """Adds the errors a storage layer's chunk reader raises for a broken or
    foreign file (storage/archive/chunks.py adds the export format's)."""
    global _DAMAGE
    _DAMAGE = tuple(dict.fromkeys((*_DAMAGE, *errors)))


class DamagedObjectError(StorageUnavailableError):
    """An archive object that cannot be parsed as what it should be (a scan
    skips its unit; an outage of the object store is not one of these)."""


def damaged(key: str, error: BaseException) -> DamagedObjectError:
    return DamagedObjectError(f"archive object {key} is damaged or foreign: {error}")


@contextmanager
def reading(key: str) -> Iterator[None]:
    """Turns a parse error while reading the object (or the objects under
    the prefix) `key` into DamagedObjectError (a StorageUnavailableError)
    naming it."""
    try:
        yield
    except StatekeeperError:
        raise
    except _DAMAGE as exc:
        raise damaged(key, exc) from exc


def skipped(key: str, error: DamagedObjectError) -> None:
    """Logs a unit a scan leaves out because its objects are unreadable."""
    log.warning("archive scan skipped an unreadable unit: %s", error.message, extra={"key": key})


async def manifest_of(
    archive: Archive, capability: str, tenant: str, unit: str
) -> dict[str, Any] | None:
    """`Archive.manifest`, checked for the fields the kinds read; one that
    cannot be this unit's raises DamagedObjectError."""
    key = manifest_key(tenant, capability, unit)
    try:
        with reading(key):
            manifest = await archive.manifest(capability, tenant, unit)
            if manifest is not None:
                _check_shape(manifest)
            return manifest
    except DamagedObjectError:
        raise
    except StorageUnavailableError as exc:
        # Refused as another unit's, or the store is down: only the latter
        # fails this read too.
        await archive.objects.get(key)
        raise damaged(key, exc) from exc


async def scanned_manifest(
    archive: Archive, capability: str, tenant: str, unit: str
) -> dict[str, Any] | None:
    """`manifest_of` for a scan over many units: None (logged) when the
    manifest is damaged, so that one bad object fails no other read."""
    try:
        return await manifest_of(archive, capability, tenant, unit)
    except DamagedObjectError as exc:
        skipped(manifest_key(tenant, capability, unit), exc)
        return None


def _check_shape(manifest: dict[str, Any]) -> None:
    chunks = manifest["chunks"]
    if not isinstance(chunks, list) or not isinstance(manifest.get("extra", {}), dict):
        raise ValueError("chunks is not a list or extra not an object")
    for chunk in chunks:
        if not isinstance(chunk["key"], str) or not isinstance(chunk["sha256"], str):
            raise ValueError("a chunk without its key or sha256")
