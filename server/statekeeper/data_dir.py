"""Checks of the embedded store's directory before anything opens it.

SQLite's own errors name no path ("unable to open database file"), and a
data dir that is a file fails in mkdir with a bare "[Errno 17] File exists":
these checks say which path is wrong and why, in one line, before the server
or a command starts (`docker run -v hostdir:/data` with a root-owned hostdir
is the common case).
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from statekeeper.storage.embedded.sessions_schema import DATABASE_FILE


class DataDirError(ValueError):
    """The data dir cannot hold (or does not hold) an embedded store."""


def prepare(path: Path, option: str = "data_dir") -> None:
    """For commands that may create the store (serve, migrate): the
    directory (the value of `option`) exists or is created, and the server
    can write in it."""
    if path.exists() and not path.is_dir():
        raise DataDirError(f"{option} {path} is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataDirError(f"{option} {path} cannot be created: {exc.strerror}") from exc
    try:
        # A real write, not os.access: that answers yes to root on a
        # read-only mount and knows nothing of ACLs or quotas.
        with tempfile.TemporaryFile(dir=path, prefix=".write-check-"):
            pass
    except OSError as exc:
        raise DataDirError(f"{option} {path} is not writable: {exc.strerror}") from exc
    database = path / DATABASE_FILE
    if database.exists():
        try:
            with database.open("r+b"):
                pass
        except OSError as exc:
            raise DataDirError(
                f"{option} {path}: {database} is not writable: {exc.strerror}"
            ) from exc


def check_schemas(path: Path) -> None:
    """For `serve` without --migrate-on-start: an existing store whose
    schemas are older than this server needs is refused, as on PostgreSQL
    (a new, empty data dir is created at the current version)."""
    from statekeeper.core.errors import StatekeeperError
    from statekeeper.storage.schemas import embedded_states, refuse_out_of_date

    database = path / DATABASE_FILE
    if not database.exists():
        return
    try:
        states = embedded_states(database)
    except sqlite3.Error as exc:
        raise DataDirError(f"data_dir {path}: cannot read {database}: {exc}") from exc
    try:
        refuse_out_of_date(states, f"embedded store's ({database})")
    except StatekeeperError as exc:
        raise DataDirError(exc.message) from exc


def existing(path: Path) -> None:
    """For commands that only read a store (audit list): it must be there;
    a typo must not create an empty one."""
    if not path.is_dir():
        raise DataDirError(f"data_dir {path} does not exist (or is not a directory)")
    if not (path / DATABASE_FILE).is_file():
        raise DataDirError(f"data_dir {path} holds no embedded store ({DATABASE_FILE} not found)")
