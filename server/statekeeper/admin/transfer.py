"""`statekeeper export` and `statekeeper import`: one tenant (or one user of
it) as a stream of versioned NDJSON records, compressed, written once over
both backends (the dialects are admin/embedded.py and admin/postgres.py).

The file, one JSON object per line (zstd-compressed, or gzip when written
with --gzip; import reads either):

  {"kind": "header", "format": "statekeeper-export", "version": 1,
   "server_version", "backend", "schemas": {name: version}, "tenant",
   "user" (or null), "created", "tables": [{"name", "columns", "rows"}]}
  {"t": TABLE, "r": [values in the order of that table's columns]}   (rows)
  {"kind": "trailer", "counts": {table: rows}, "sha256": hex}

Values are JSON as they are, bytes as {"b64": ...}; floats keep every bit
(JSON numbers printed by repr). The sha256 is over the row lines, bytes as
written. The export reads one consistent snapshot of the store.

Import: the target's schemas are migrated first and must be at the
versions of the export (the rows are replayed column for column); the
backend must be the export's (rows of SQLite and PostgreSQL differ in
types). It refuses a tenant (or user) that already has data, unless a
checkpoint of this very file says an earlier run of the same import got
that far: the sidecar FILE.import-checkpoint names the tables done and the
one in progress, and how far the in-progress table got is the number of
its rows in the target (each batch commits in one transaction with its
derived rows), so a re-run continues exactly where the last one stopped.
The whole file is checked against its trailer before anything is written.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import gzip
import hashlib
import io
import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from statekeeper import __version__
from statekeeper.admin.tables import Table, selected

FORMAT = "statekeeper-export"
FORMAT_VERSION = 1
BATCH_ROWS = 500
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_GZIP_MAGIC = b"\x1f\x8b"


class TransferError(Exception):
    """A refusal or a broken file, said in one line."""


class _Writable(Protocol):
    def write(self, data: bytes, /) -> int: ...


class Progress(Protocol):
    def update(self, n: int) -> object: ...

    def close(self) -> None: ...


ProgressFactory = Callable[[str, int], Progress]


class _Silent:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def silent(description: str, total: int) -> Progress:
    return _Silent()


def progress_bars(description: str, total: int) -> Progress:
    """A tqdm bar on stderr (shown only on a terminal; nothing else
    otherwise)."""
    from tqdm import tqdm

    bar: Progress = tqdm(total=total, desc=description, unit="rows", leave=True, disable=None)
    return bar


class Source(Protocol):
    """A store read for an export, inside one snapshot."""

    backend: str

    async def schema_versions(self) -> dict[str, int]: ...

    async def columns(self, table: Table) -> list[str]: ...

    async def count(self, table: Table, tenant: str, user: str | None) -> int: ...

    def rows(
        self, table: Table, columns: Sequence[str], tenant: str, user: str | None
    ) -> AsyncIterator[Sequence[Any]]: ...


class Target(Protocol):
    """A store written by an import."""

    backend: str

    async def schema_versions(self) -> dict[str, int]: ...

    async def columns(self, table: Table) -> list[str]: ...

    async def count(self, table: Table, tenant: str, user: str | None) -> int: ...

    async def insert(
        self, table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        """Inserts the rows (and what derives from them) in one transaction."""

    async def finish(self, tables: Sequence[Table], tenant: str) -> None:
        """Moves sequences past the imported ids, drops caches of the tenant."""


def encode_value(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"b64": base64.b64encode(bytes(value)).decode()}
    return value


def decode_value(value: Any) -> Any:
    if isinstance(value, dict):
        return base64.b64decode(value["b64"])
    return value


@dataclass
class ExportSummary:
    path: Path
    counts: dict[str, int]
    sha256: str


async def export(
    source: Source,
    path: Path,
    tenant: str,
    user: str | None,
    compression: str = "zstd",
    progress: ProgressFactory = silent,
) -> ExportSummary:
    """Writes the tenant (or user) to `path` (through a temporary file
    renamed at the end, so a file at `path` is always whole)."""
    tables = selected(user)
    plan = []
    for table in tables:
        plan.append((table, await source.columns(table), await source.count(table, tenant, user)))
    header = {
        "kind": "header",
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "server_version": __version__,
        "backend": source.backend,
        "schemas": await source.schema_versions(),
        "tenant": tenant,
        "user": user,
        "created": datetime.datetime.now(datetime.UTC).isoformat(),
        "tables": [{"name": t.name, "columns": c, "rows": n} for t, c, n in plan],
    }
    partial = path.with_name(path.name + ".partial")
    digest = hashlib.sha256()
    counts: dict[str, int] = {}
    bar = progress(f"export {tenant}", sum(n for _, _, n in plan))
    try:
        with _writer(partial, compression) as out:
            out.write(_line(header))
            for table, columns, _ in plan:
                counts[table.name] = 0
                async for row in source.rows(table, columns, tenant, user):
                    line = _line({"t": table.name, "r": [encode_value(v) for v in row]})
                    digest.update(line)
                    out.write(line)
                    counts[table.name] += 1
                    bar.update(1)
            trailer = {"kind": "trailer", "counts": counts, "sha256": digest.hexdigest()}
            out.write(_line(trailer))
    finally:
        bar.close()
    os.replace(partial, path)
    return ExportSummary(path, counts, digest.hexdigest())


def _line(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


@contextlib.contextmanager
def _writer(path: Path, compression: str) -> Iterator[_Writable]:
    with open(path, "wb") as raw:
        if compression == "gzip":
            with gzip.GzipFile(fileobj=raw, mode="wb") as zipped:
                yield zipped
        else:
            import zstandard

            with zstandard.ZstdCompressor(level=6).stream_writer(raw, closefd=False) as zst:
                yield zst
        raw.flush()
        os.fsync(raw.fileno())


@contextlib.contextmanager
def _reader(path: Path) -> Iterator[Iterable[bytes]]:
    with open(path, "rb") as raw:
        magic = raw.read(4)
        raw.seek(0)
        if magic.startswith(_GZIP_MAGIC):
            with gzip.GzipFile(fileobj=raw, mode="rb") as zipped:
                yield zipped
        elif magic == _ZSTD_MAGIC:
            import zstandard

            with zstandard.ZstdDecompressor().stream_reader(raw) as zst:
                yield io.BufferedReader(zst)
        else:
            raise TransferError(f"{path} is not a statekeeper export (neither zstd nor gzip)")


@dataclass
class Header:
    backend: str
    schemas: dict[str, int]
    tenant: str
    user: str | None
    tables: list[tuple[str, list[str], int]]
    server_version: str
    created: str
    sha256: str = ""
    counts: dict[str, int] = field(default_factory=dict)


def read_header(path: Path) -> Header:
    """The header, after checking every row line against the trailer."""
    digest = hashlib.sha256()
    header: dict[str, Any] | None = None
    trailer: dict[str, Any] | None = None
    counts: dict[str, int] = {}
    with _reader(path) as stream:
        for number, line in enumerate(stream):
            if number == 0:
                header = _parse(path, line)
                if header.get("format") != FORMAT or header.get("kind") != "header":
                    raise TransferError(f"{path} is not a statekeeper export")
                if header.get("version") != FORMAT_VERSION:
                    raise TransferError(
                        f"{path} is export format {header.get('version')}; this server reads"
                        f" format {FORMAT_VERSION}"
                    )
                continue
            if trailer is not None:
                raise TransferError(f"{path}: data after the trailer")
            if line.startswith(b'{"t":'):
                digest.update(line)
                name = json.loads(line)["t"]
                counts[name] = counts.get(name, 0) + 1
            else:
                trailer = _parse(path, line)
    if header is None or trailer is None:
        raise TransferError(f"{path} is truncated (no trailer): export it again")
    if (
        trailer.get("sha256") != digest.hexdigest()
        or {k: v for k, v in trailer.get("counts", {}).items() if v} != counts
    ):
        raise TransferError(f"{path} is corrupt: its rows do not match its trailer's checksum")
    return Header(
        backend=header["backend"],
        schemas=header["schemas"],
        tenant=header["tenant"],
        user=header["user"],
        tables=[(t["name"], t["columns"], t["rows"]) for t in header["tables"]],
        server_version=header["server_version"],
        created=header["created"],
        sha256=trailer["sha256"],
        counts=trailer["counts"],
    )


def _parse(path: Path, line: bytes) -> dict[str, Any]:
    try:
        record: dict[str, Any] = json.loads(line)
    except ValueError as exc:
        raise TransferError(f"{path} is corrupt: {exc}") from exc
    return record


@dataclass
class ImportSummary:
    tenant: str
    user: str | None
    counts: dict[str, int]
    resumed: bool


def checkpoint_path(path: Path) -> Path:
    return path.with_name(path.name + ".import-checkpoint")


async def import_(target: Target, path: Path, progress: ProgressFactory = silent) -> ImportSummary:
    header = read_header(path)
    by_name = {table.name: table for table in selected(header.user)}
    if target.backend != header.backend:
        raise TransferError(
            f"{path} was exported from the {header.backend} store; this deployment is"
            f" {target.backend} (import into the same kind of store)"
        )
    ours = await target.schema_versions()
    if ours != header.schemas:
        behind = ", ".join(
            f"{name} {version} (here {ours.get(name)})"
            for name, version in header.schemas.items()
            if ours.get(name) != version
        )
        raise TransferError(
            f"schema versions differ: the export has {behind}; migrate the source and export"
            " again with this server version"
        )
    tables = []
    for name, columns, _ in header.tables:
        table = by_name.get(name)
        if table is None:
            raise TransferError(f"{path}: unknown table {name!r}")
        if set(await target.columns(table)) != set(columns):
            raise TransferError(f"table {name}: the columns differ from the export's")
        tables.append((table, columns))
    sidecar = checkpoint_path(path)
    state = _load_checkpoint(sidecar, header.sha256)
    resumed = state is not None
    done: list[str] = state["done"] if state is not None else []
    if state is None:
        for table, _ in tables:
            if await target.count(table, header.tenant, header.user):
                who = f"user {header.user} of tenant" if header.user else "tenant"
                raise TransferError(
                    f"{who} {header.tenant} already has data (table {table.name});"
                    " import only into an empty tenant"
                )
    _save_checkpoint(sidecar, header.sha256, done)
    skip = {name: 0 for name, _, _ in header.tables}
    for table, _ in tables:
        if table.name not in done:
            skip[table.name] = await target.count(table, header.tenant, header.user)
    bar = progress(f"import {header.tenant}", sum(header.counts.values()))
    counts = {name: 0 for name, _, _ in header.tables}
    try:
        with _reader(path) as stream:
            current: tuple[Table, list[str]] | None = None
            batch: list[list[Any]] = []

            async def flush() -> None:
                if current is not None and batch:
                    await target.insert(current[0], current[1], batch)
                    batch.clear()

            columns_of = {name: columns for name, columns, _ in header.tables}
            for line in stream:
                if not line.startswith(b'{"t":'):
                    continue
                record = json.loads(line)
                name = record["t"]
                counts[name] += 1
                bar.update(1)
                if name in done or counts[name] <= skip[name]:
                    continue
                if current is None or current[0].name != name:
                    await flush()
                    if current is not None:
                        done.append(current[0].name)
                        _save_checkpoint(sidecar, header.sha256, done)
                    current = (by_name[name], columns_of[name])
                batch.append([decode_value(v) for v in record["r"]])
                if len(batch) >= BATCH_ROWS:
                    await flush()
            await flush()
    finally:
        bar.close()
    await target.finish([table for table, _ in tables], header.tenant)
    sidecar.unlink(missing_ok=True)
    return ImportSummary(header.tenant, header.user, counts, resumed)


def _load_checkpoint(sidecar: Path, sha256: str) -> dict[str, Any] | None:
    if not sidecar.exists():
        return None
    state: dict[str, Any] = json.loads(sidecar.read_text())
    if state.get("sha256") != sha256:
        raise TransferError(
            f"{sidecar} belongs to another export file; remove it to start this import afresh"
        )
    return state


def _save_checkpoint(sidecar: Path, sha256: str, done: list[str]) -> None:
    partial = sidecar.with_name(sidecar.name + ".partial")
    partial.write_text(json.dumps({"sha256": sha256, "done": done}))
    os.replace(partial, sidecar)


def conflict(table: Table, error: Exception) -> TransferError:
    """A row the target already holds (another user's session of the same
    id, an id of another tenant in a sequence the tenants share)."""
    return TransferError(
        f"table {table.name}: a row conflicts with data already in the target ({error});"
        " nothing of this batch was written; import into an empty deployment (or tenant)"
    )


def placeholders(where: str, style: Callable[[int], str]) -> str:
    """A table filter ({1} tenant, {2} user) in a dialect's parameter style."""
    return where.replace("{1}", style(1)).replace("{2}", style(2))
