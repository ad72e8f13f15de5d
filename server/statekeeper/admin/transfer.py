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
(JSON numbers printed by repr). The sha256 is over the header line and the
row lines, bytes as written. The export reads one consistent snapshot of
the store. Files are created readable by their owner only (0600).

Import: the target's schemas are migrated first and must be at the
versions of the export (the rows are replayed column for column); the
backend must be the export's (rows of SQLite and PostgreSQL differ in
types). It refuses a tenant (or user) that already has data, unless a
checkpoint of this very file says an earlier run of the same import into
this same target got that far: the sidecar FILE.import-checkpoint names the
target (data dir, or database and Redis prefix), the tenant and user, the
tables done and the one in progress; how far the in-progress table got is
the number of its rows in the target (each batch commits in one
transaction with its derived rows), so a re-run continues exactly where the
last one stopped. A re-run checks the target still holds what the
checkpoint says (every done table whole, no other table past the file's
rows) and refuses otherwise.

The whole file is checked against its trailer before anything is written,
through the one open file the import then reads again (a file replaced
meanwhile is not read): every row must belong to the header's tenant (and
user, in a per-user export: its own user_id, or a session of the file).
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
from typing import Any, BinaryIO, Protocol

from statekeeper import __version__
from statekeeper.admin.tables import Table, selected

FORMAT = "statekeeper-export"
# 2: the checksum covers the header line too (1: the row lines only).
FORMAT_VERSION = 2
READ_VERSIONS = (1, 2)
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

    async def identity(self) -> str:
        """Names this target (where its data lives), for the checkpoint."""


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
            first = _line(header)
            digest.update(first)
            out.write(first)
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
    with _private(path) as raw:
        if compression == "gzip":
            with gzip.GzipFile(fileobj=raw, mode="wb") as zipped:
                yield zipped
        else:
            import zstandard

            with zstandard.ZstdCompressor(level=6).stream_writer(raw, closefd=False) as zst:
                yield zst
        raw.flush()
        os.fsync(raw.fileno())


def _private(path: Path) -> BinaryIO:
    """`path` opened for writing, created (or truncated) readable by its
    owner only: exports hold a tenant's data."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return open(fd, "wb")


@contextlib.contextmanager
def open_lines(path: Path, raw: BinaryIO | None = None) -> Iterator[Iterable[bytes]]:
    """The lines of the export file at `path`, or of the file already open
    as `raw` from its start (left open: the import reads it twice)."""
    if raw is None:
        with open(path, "rb") as opened, open_lines(path, opened) as lines:
            yield lines
        return
    raw.seek(0)
    magic = raw.read(4)
    raw.seek(0)
    if magic.startswith(_GZIP_MAGIC):
        with gzip.GzipFile(fileobj=raw, mode="rb") as zipped:
            yield zipped
    elif magic == _ZSTD_MAGIC:
        import zstandard

        with zstandard.ZstdDecompressor().stream_reader(raw, closefd=False) as zst:
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


class _Rows:
    """Checks each row line of a file against its header: a known table,
    the header's tenant, and in a per-user export the header's user
    (user_id, or a session of the file's own sessions table)."""

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self._path = path
        self._tenant = header.get("tenant")
        self._user = header.get("user")
        by_name = {table.name: table for table in selected(self._user)}
        self._at: dict[str, tuple[Table, int, int | None, int | None]] = {}
        self._session_id_at: int | None = None
        for entry in header.get("tables", []):
            name, columns = entry.get("name"), list(entry.get("columns", []))
            table = by_name.get(name)
            if table is None:
                raise TransferError(f"{path}: unknown table {name!r}")
            if "tenant" not in columns:
                raise TransferError(f"{path}: table {name} has no tenant column")
            user_at = session_at = None
            if self._user is not None:
                key = "user_id" if table.user == "column" else "session_id"
                if key not in columns:
                    raise TransferError(f"{path}: table {name} has no {key} column")
                if table.user == "column":
                    user_at = columns.index("user_id")
                else:
                    session_at = columns.index("session_id")
            self._at[name] = (table, columns.index("tenant"), user_at, session_at)
            if name == "sessions" and "session_id" in columns:
                self._session_id_at = columns.index("session_id")
        # The session ids of the file's sessions rows so far (the sessions
        # table comes before the tables tied to it).
        self._sessions: set[Any] = set()

    def check(self, name: Any, row: Any) -> None:
        entry = self._at.get(name)
        if entry is None or not isinstance(row, list):
            raise TransferError(f"{self._path}: a row of table {name!r} the header does not list")
        _, tenant_at, user_at, session_at = entry
        if len(row) <= max(tenant_at, user_at or 0, session_at or 0):
            raise TransferError(f"{self._path} is corrupt: a row of table {name} is short")
        if row[tenant_at] != self._tenant:
            raise TransferError(
                f"{self._path}: a row of table {name} belongs to tenant {row[tenant_at]!r},"
                f" not to the header's tenant {self._tenant!r}"
            )
        if user_at is not None and row[user_at] != self._user:
            raise TransferError(
                f"{self._path}: a row of table {name} belongs to user {row[user_at]!r},"
                f" not to the header's user {self._user!r}"
            )
        if name == "sessions" and self._session_id_at is not None:
            self._sessions.add(row[self._session_id_at])
        elif session_at is not None and row[session_at] not in self._sessions:
            raise TransferError(
                f"{self._path}: a row of table {name} belongs to session {row[session_at]!r},"
                f" which is not a session of user {self._user!r} in this file"
            )


def read_header(path: Path, raw: BinaryIO | None = None) -> Header:
    """The header of the file (at `path`, or open as `raw`), after checking
    the header and every row line against the trailer's checksum and every
    row against the header (tenant, user). Format 1 files (whose checksum
    covers the rows only) are still read: their rows are checked against
    the header all the same."""
    digest = hashlib.sha256()
    header: dict[str, Any] | None = None
    trailer: dict[str, Any] | None = None
    counts: dict[str, int] = {}
    rows: _Rows | None = None
    foreign: TransferError | None = None
    with open_lines(path, raw) as stream:
        for number, line in enumerate(stream):
            if number == 0:
                header = _parse(path, line)
                if header.get("format") != FORMAT or header.get("kind") != "header":
                    raise TransferError(f"{path} is not a statekeeper export")
                if header.get("version") not in READ_VERSIONS:
                    raise TransferError(
                        f"{path} is export format {header.get('version')}; this server reads"
                        f" formats {', '.join(map(str, READ_VERSIONS))}"
                    )
                if header["version"] >= 2:
                    digest.update(line)
                rows = _Rows(path, header)
                continue
            if trailer is not None:
                raise TransferError(f"{path}: data after the trailer")
            if line.startswith(b'{"t":'):
                digest.update(line)
                record = _parse(path, line)
                name = str(record.get("t"))
                assert rows is not None
                if foreign is None:
                    # Said after the checksum (a corrupt file is corrupt).
                    try:
                        rows.check(name, record.get("r"))
                    except TransferError as exc:
                        foreign = exc
                counts[name] = counts.get(name, 0) + 1
            else:
                trailer = _parse(path, line)
    if header is None or trailer is None:
        raise TransferError(f"{path} is truncated (no trailer): export it again")
    if (
        trailer.get("sha256") != digest.hexdigest()
        or {k: v for k, v in trailer.get("counts", {}).items() if v} != counts
    ):
        raise TransferError(f"{path} is corrupt: its content does not match its trailer's checksum")
    if foreign is not None:
        raise foreign
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
        record = json.loads(line)
    except ValueError as exc:
        raise TransferError(f"{path} is corrupt: {exc}") from exc
    if not isinstance(record, dict):
        raise TransferError(f"{path} is corrupt: a line is not a JSON object")
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
    with open(path, "rb") as raw:
        return await _import(target, raw, path, progress)


async def _import(
    target: Target, raw: BinaryIO, path: Path, progress: ProgressFactory
) -> ImportSummary:
    header = read_header(path, raw)
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
    tables: list[tuple[Table, list[str]]] = []
    # Per table, the positions of the file's columns that are inserted
    # (columns the target computes are dropped).
    kept: dict[str, list[int]] = {}
    for name, columns, _ in header.tables:
        table = by_name.get(name)
        if table is None:
            raise TransferError(f"{path}: unknown table {name!r}")
        keep = [i for i, column in enumerate(columns) if column not in table.generated]
        inserted = [columns[i] for i in keep]
        if set(await target.columns(table)) != set(inserted):
            raise TransferError(f"table {name}: the columns differ from the export's")
        tables.append((table, inserted))
        kept[name] = keep
    rows_of = {name: header.counts.get(name, 0) for name, _, _ in header.tables}
    sidecar = checkpoint_path(path)
    where = await target.identity()
    scope = {"target": where, "tenant": header.tenant, "user": header.user}
    state = _load_checkpoint(sidecar, header.sha256, scope)
    resumed = state is not None
    done: list[str] = list(state["done"]) if state is not None else []
    present = {
        table.name: await target.count(table, header.tenant, header.user) for table, _ in tables
    }
    if state is None:
        for table, _ in tables:
            if present[table.name]:
                who = f"user {header.user} of tenant" if header.user else "tenant"
                raise TransferError(
                    f"{who} {header.tenant} already has data (table {table.name});"
                    " import only into an empty tenant"
                )
    else:
        _check_resume(sidecar, done, present, rows_of)
    _save_checkpoint(sidecar, header.sha256, scope, done)
    skip = {name: 0 for name, _, _ in header.tables}
    for table, _ in tables:
        if table.name not in done:
            skip[table.name] = present[table.name]
    bar = progress(f"import {header.tenant}", sum(header.counts.values()))
    counts = {name: 0 for name, _, _ in header.tables}
    rows = _Rows(path, _header_record(header))
    committed = False
    try:
        with open_lines(path, raw) as stream:
            current: tuple[Table, list[str]] | None = None
            batch: list[list[Any]] = []

            async def flush() -> None:
                nonlocal committed
                if current is not None and batch:
                    await target.insert(current[0], current[1], batch)
                    committed = True
                    batch.clear()

            columns_of = {table.name: columns for table, columns in tables}
            for line in stream:
                if not line.startswith(b'{"t":'):
                    continue
                record = json.loads(line)
                name = record["t"]
                # The same checks as the verification (a file changed in
                # place since is stopped at its first foreign row).
                rows.check(name, record["r"])
                counts[name] += 1
                bar.update(1)
                if name in done or counts[name] <= skip[name]:
                    continue
                if current is None or current[0].name != name:
                    await flush()
                    if current is not None:
                        done.append(current[0].name)
                        _save_checkpoint(sidecar, header.sha256, scope, done)
                    current = (by_name[name], columns_of[name])
                values = record["r"]
                batch.append([decode_value(values[i]) for i in kept[name]])
                if len(batch) >= BATCH_ROWS:
                    await flush()
            await flush()
    except BaseException:
        if not resumed and not committed:
            # Nothing of this import reached the target (refused at its
            # first batch): no checkpoint to hold against another target.
            sidecar.unlink(missing_ok=True)
        raise
    finally:
        bar.close()
    await target.finish([table for table, _ in tables], header.tenant)
    sidecar.unlink(missing_ok=True)
    return ImportSummary(header.tenant, header.user, counts, resumed)


def _header_record(header: Header) -> dict[str, Any]:
    return {
        "tenant": header.tenant,
        "user": header.user,
        "tables": [{"name": n, "columns": c, "rows": r} for n, c, r in header.tables],
    }


def _check_resume(
    sidecar: Path, done: list[str], present: dict[str, int], rows_of: dict[str, int]
) -> None:
    """Refuses to continue when the target no longer holds what the
    checkpoint says was written (wiped, restored, or written to since):
    every done table whole, the others at most as far as the file goes, and
    only one of them (the one in progress) started."""
    started = []
    for name, count in present.items():
        expected = rows_of.get(name, 0)
        if name in done and count != expected:
            raise TransferError(
                f"{sidecar} says table {name} was imported ({expected} rows) but the target"
                f" holds {count}; the target changed since: remove the checkpoint and import"
                " into an empty tenant"
            )
        if name not in done:
            if count > expected:
                raise TransferError(
                    f"table {name} holds {count} rows in the target, more than the export's"
                    f" {expected}; the target changed since the interrupted import: remove"
                    f" {sidecar} and import into an empty tenant"
                )
            if count:
                started.append(name)
    if len(started) > 1:
        raise TransferError(
            f"tables {', '.join(started)} are all partly imported, where {sidecar} allows one;"
            " the target changed since the interrupted import: remove the checkpoint and"
            " import into an empty tenant"
        )


def _load_checkpoint(sidecar: Path, sha256: str, scope: dict[str, Any]) -> dict[str, Any] | None:
    if not sidecar.exists():
        return None
    try:
        state: dict[str, Any] = json.loads(sidecar.read_text())
    except ValueError as exc:
        raise TransferError(f"{sidecar} is corrupt ({exc}); remove it to start afresh") from exc
    if state.get("sha256") != sha256:
        raise TransferError(
            f"{sidecar} belongs to another export file; remove it to start this import afresh"
        )
    for name, value in scope.items():
        if state.get(name) != value:
            raise TransferError(
                f"{sidecar} records an import into {state.get(name)!r} ({name}), not into"
                f" {value!r}; remove it to start this import afresh into this target"
            )
    return state


def _save_checkpoint(sidecar: Path, sha256: str, scope: dict[str, Any], done: list[str]) -> None:
    partial = sidecar.with_name(sidecar.name + ".partial")
    with _private(partial) as out:
        out.write(json.dumps({"sha256": sha256, **scope, "done": done}).encode())
    os.replace(partial, sidecar)


def conflict(table: Table, error: Exception, clash: str = "") -> TransferError:
    """A row the target already holds (another user's session of the same
    id, an id of another tenant in a sequence the tenants share); `clash`
    names what clashed (the constraint and key, when the store says)."""
    what = clash or str(error)
    return TransferError(
        f"table {table.name}: a row conflicts with a row of the target: {what};"
        " nothing of this batch was written; import into an empty deployment (or tenant)"
    )


@dataclass(frozen=True)
class Selection:
    """The rows of a table a source reads: a filter in the source's dialect
    with its parameters, and an ORDER BY list ("": the source's own order).
    A source of one unit (an archive's session, day, history or revision
    range) narrows its tables by overriding `selection`; counting and
    reading them are written once per dialect."""

    where: str
    params: tuple[Any, ...]
    order: str = ""


def tenant_selection(
    table: Table, tenant: str, user: str | None, style: Callable[[int], str]
) -> Selection:
    """The rows of `table` that belong to `tenant` (and `user`), with
    `style`'s placeholders: what an export reads of the table."""
    where = placeholders(table.where(user is not None), style)
    return Selection(where, (tenant,) if user is None else (tenant, user))


def placeholders(where: str, style: Callable[[int], str]) -> str:
    """A table filter ({1} tenant, {2} user) in a dialect's parameter style."""
    return where.replace("{1}", style(1)).replace("{2}", style(2))
