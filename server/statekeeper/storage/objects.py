"""The object store of the archive tier, over one library (obstore): a
local directory (the embedded default, DATA_DIR/archive) or any
S3-compatible endpoint (`s3://bucket/prefix`).

For S3 the endpoint, region and credentials come from the usual
environment variables (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); an `http://` endpoint (a store
on loopback) is allowed only when AWS_ALLOW_HTTP=true or the endpoint is
plain http on a loopback address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import obstore
from obstore.store import LocalStore, S3Store

from statekeeper.core.errors import StorageUnavailableError

# A temporary file of obstore's local put: the key, '#' and a counter.
_PARTIAL = re.compile(r".+#[0-9]+")


class ObjectStore:
    """Whole objects: put, get, delete, list by prefix. Errors of the
    backend (unreachable, refused) are StorageUnavailableError; a missing
    object is None (get) or nothing to do (delete). A local directory is
    created by the first write only (a server that never archives leaves
    no trace in its data directory)."""

    def __init__(self, store: Any, description: str, directory: Path | None = None) -> None:
        self._store = store
        self._directory = directory
        self.description = description

    def _opened(self, create: bool) -> Any:
        if self._store is None:
            assert self._directory is not None
            if not self._directory.is_dir():
                if not create:
                    return None
                self._directory.mkdir(parents=True, exist_ok=True)
            self._store = LocalStore(self._directory.resolve())
        return self._store

    async def put(self, key: str, data: bytes) -> None:
        try:
            await obstore.put_async(self._opened(True), key, data)
        except Exception as exc:
            raise StorageUnavailableError(f"archive write of {key} failed: {exc}") from exc

    async def get(self, key: str) -> bytes | None:
        store = self._opened(False)
        if store is None:
            return None
        try:
            result = await obstore.get_async(store, key)
            return bytes(await result.bytes_async())
        except FileNotFoundError:
            return None
        except Exception as exc:
            raise StorageUnavailableError(f"archive read of {key} failed: {exc}") from exc

    async def delete(self, key: str) -> None:
        store = self._opened(False)
        if store is None:
            return
        try:
            await obstore.delete_async(store, key)
        except FileNotFoundError:
            pass
        except Exception as exc:
            raise StorageUnavailableError(f"archive delete of {key} failed: {exc}") from exc

    async def list(self, prefix: str) -> list[str]:
        """Every key under `prefix` (which should end with '/')."""
        store = self._opened(False)
        if store is None:
            return []
        try:
            keys: list[str] = []
            stream = obstore.list(store, prefix, chunk_size=1000)
            async for batch in stream:
                keys.extend(str(meta["path"]) for meta in batch)
            return keys
        except FileNotFoundError:
            return []
        except Exception as exc:
            raise StorageUnavailableError(f"archive listing of {prefix} failed: {exc}") from exc

    async def remove_partial_writes(self) -> int:
        """Deletes what interrupted writes left in a local directory (a put
        writes `KEY#N` and renames it to KEY; a kill -9 in between leaves the
        temporary file, which listings do not show). Call it only while no
        put runs. S3 puts are atomic: nothing to do."""
        if self._directory is None or not self._directory.is_dir():
            return 0

        def sweep(root: Path) -> int:
            # os.walk skips directories removed meanwhile (restores delete).
            removed = 0
            for folder, _, names in os.walk(root):
                for name in names:
                    if _PARTIAL.fullmatch(name):
                        (Path(folder) / name).unlink(missing_ok=True)
                        removed += 1
            return removed

        return await asyncio.to_thread(sweep, self._directory)


def open_store(url: str, data_dir: Path) -> ObjectStore:
    """The store named by --archive-url ('' is DATA_DIR/archive)."""
    if not url:
        return _local(data_dir / "archive")
    parts = urlsplit(url)
    if parts.scheme in ("", "file"):
        return _local(Path(parts.path if parts.scheme else url))
    if parts.scheme == "s3":
        store = S3Store.from_url(url, client_options={"allow_http": _allow_http()})
        return ObjectStore(store, f"S3 store {parts.netloc}{parts.path}")
    raise ValueError(f"archive_url: unsupported scheme {parts.scheme!r} (use a path or s3://)")


def _local(path: Path) -> ObjectStore:
    return ObjectStore(None, f"directory {path}", directory=path)


def _allow_http() -> bool:
    if os.environ.get("AWS_ALLOW_HTTP", "").lower() == "true":
        return True
    endpoint = urlsplit(os.environ.get("AWS_ENDPOINT_URL", ""))
    if endpoint.scheme != "http" or not endpoint.hostname:
        return False
    if endpoint.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(endpoint.hostname).is_loopback
    except ValueError:
        return False
