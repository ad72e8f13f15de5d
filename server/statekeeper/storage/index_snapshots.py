"""Vector index snapshots as files: one per (tenant, user) in a directory.

`FileSnapshotStore` implements `core.vector_index.SnapshotStore`. The
directory is local to the process (embedded: under the data directory;
production: each replica's own cache directory), never shared: a snapshot is
derived state that any replica can rebuild from the durable store.

File layout, little-endian:

    8 bytes   magic b"SKVIDX01"
    4 bytes   header length H
    4 bytes   CRC-32 of the header
    H bytes   header, UTF-8 JSON: tenant, user_id, description, dimension,
              vector_count, max_key, embedding_model, saved_at,
              search_breadth, payload_length, payload_crc32
    N bytes   payload: the FAISS index as `faiss.serialize_index` wrote it

The file name is a hash of (tenant, user_id), so any ids are safe as names;
the header names them again and a mismatch is refused. Writes are atomic: a
temporary file in the same directory, fsync, rename over the old one, fsync
of the directory; a crash leaves the old snapshot or the new one, and at
worst a stray temporary file, deleted when the next process opens the
directory. A
file that is truncated, fails a checksum, or belongs to someone else raises
`SnapshotError`, and the caller rebuilds from the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import struct
import uuid
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from statekeeper.core.memory.faiss_index import SnapshotError
from statekeeper.core.memory.vector_index import Snapshot

MAGIC = b"SKVIDX01"
_PREFIX = struct.Struct("<8sII")  # magic, header length, header CRC-32
_SUFFIX = ".faiss"
_MAX_HEADER = 1 << 20


class FileSnapshotStore:
    """Snapshots as files in `directory` (created if missing)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        # Temporary files of saves cut short by a crash: those of processes
        # no longer running (the workers of one server share the directory,
        # and a live one may be saving right now).
        if directory.is_dir():
            for stray in directory.glob("*.tmp"):
                if not _written_by_live_process(stray):
                    with contextlib.suppress(OSError):
                        stray.unlink()

    def path_for(self, tenant: str, user_id: str) -> Path:
        digest = hashlib.sha256(f"{tenant}\x1f{user_id}".encode()).hexdigest()[:32]
        return self.directory / f"{digest}{_SUFFIX}"

    def save(self, snapshot: Snapshot) -> int:
        self.directory.mkdir(parents=True, exist_ok=True)
        payload = np.ascontiguousarray(snapshot.payload, dtype=np.uint8)
        header = json.dumps(_header(snapshot, payload)).encode()
        prefix = _PREFIX.pack(MAGIC, len(header), zlib.crc32(header))
        target = self.path_for(snapshot.tenant, snapshot.user_id)
        # Unique per save: two saves of one user may overlap (a periodic one
        # cut short at shutdown and the final one), and workers share the dir.
        temporary = target.with_suffix(f".{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
        try:
            with temporary.open("wb") as out:
                out.write(prefix)
                out.write(header)
                out.write(payload.data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
        _fsync_directory(self.directory)
        return len(prefix) + len(header) + payload.nbytes

    def load(self, tenant: str, user_id: str) -> Snapshot | None:
        path = self.path_for(tenant, user_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SnapshotError(f"cannot read {path}: {exc}") from exc
        header, payload = _parse(data, path)
        if header.get("tenant") != tenant or header.get("user_id") != user_id:
            raise SnapshotError(f"{path} belongs to another user")
        try:
            return Snapshot(
                tenant=tenant,
                user_id=user_id,
                payload=payload,
                description=str(header["description"]),
                dimension=int(header["dimension"]),
                vector_count=int(header["vector_count"]),
                max_key=int(header["max_key"]),
                embedding_model=str(header["embedding_model"]),
                saved_at=float(header["saved_at"]),
                search_breadth=int(header["search_breadth"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SnapshotError(f"{path} has an incomplete header: {exc}") from exc

    def discard(self, tenant: str, user_id: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path_for(tenant, user_id).unlink()


def _header(snapshot: Snapshot, payload: npt.NDArray[np.uint8]) -> dict[str, Any]:
    return {
        "format": 1,
        "tenant": snapshot.tenant,
        "user_id": snapshot.user_id,
        "description": snapshot.description,
        "dimension": snapshot.dimension,
        "vector_count": snapshot.vector_count,
        "max_key": snapshot.max_key,
        "embedding_model": snapshot.embedding_model,
        "saved_at": snapshot.saved_at,
        "search_breadth": snapshot.search_breadth,
        "payload_length": payload.nbytes,
        "payload_crc32": zlib.crc32(payload.data),
    }


def _parse(data: bytes, path: Path) -> tuple[dict[str, Any], npt.NDArray[np.uint8]]:
    """(header, payload view) of a snapshot file's bytes, checked."""
    if len(data) < _PREFIX.size:
        raise SnapshotError(f"{path} is truncated")
    magic, header_length, header_crc = _PREFIX.unpack_from(data)
    if magic != MAGIC or header_length > _MAX_HEADER:
        raise SnapshotError(f"{path} is not a statekeeper index snapshot")
    header_bytes = data[_PREFIX.size : _PREFIX.size + header_length]
    if len(header_bytes) != header_length or zlib.crc32(header_bytes) != header_crc:
        raise SnapshotError(f"{path} has a damaged header")
    try:
        header = json.loads(header_bytes)
        length, crc = int(header["payload_length"]), int(header["payload_crc32"])
    except (ValueError, KeyError, TypeError) as exc:
        raise SnapshotError(f"{path} has an unreadable header: {exc}") from exc
    start = _PREFIX.size + header_length
    payload = np.frombuffer(data, dtype=np.uint8, count=len(data) - start, offset=start)
    if payload.nbytes != length or zlib.crc32(payload.data) != crc:
        raise SnapshotError(f"{path} fails its checksum (truncated or damaged)")
    return header, payload


def _fsync_directory(directory: Path) -> None:
    """Makes the rename durable (POSIX: the directory entry is data too)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _written_by_live_process(temporary: Path) -> bool:
    """Whether the process named in `temporary` (<digest>.<pid>.<id>.tmp) is
    another one still running."""
    parts = temporary.name.split(".")
    if len(parts) < 3 or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
