"""Audit records inserted already linked into their tenant's hash chain
(core/audit/service.py), on the embedded store's single writer.

The `audit_chain` trigger (sessions_schema.py) would link each record
after its insert with three more statements and a call back into Python;
here a whole batch is linked in Python before one `executemany`: each
tenant's chain head is read once and written once per call, and the
trigger skips records that arrive with a hash. The chain is the same as
the trigger makes (same digest, same order), so `audit verify` cannot tell
the two apart. Callers run on the writer connection inside their write's
transaction, so nothing links records of the same tenant in between.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from statekeeper.storage.embedded.sessions_schema import audit_digest
from statekeeper.storage.sql import AUDIT_COLUMNS

_LINKED_INSERT = (
    f"INSERT INTO audit_log ({AUDIT_COLUMNS}, chain_seq, prev_hash, hash)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
)
_HEAD = "SELECT seq, hash FROM audit_chain_heads WHERE tenant = ?"
_SAVE_HEAD = (
    "INSERT INTO audit_chain_heads (tenant, seq, hash) VALUES (?,?,?)"
    " ON CONFLICT (tenant) DO UPDATE SET seq = excluded.seq, hash = excluded.hash"
)
# Positions in AUDIT_COLUMNS.
_TEXTS = (0, 1, 2, 3, 4, 5, 8)
_REVISION, _TIME = 6, 7


def insert_audit_rows(db: sqlite3.Connection, rows: Iterable[Sequence[object]]) -> None:
    """Inserts `rows` (values of AUDIT_COLUMNS, as sql.audit_values makes
    them), in order, each linked to the record before it of its tenant."""
    heads: dict[str, tuple[int, str]] = {}
    linked: list[tuple[object, ...]] = []
    for row in rows:
        content = _stored_form(row)
        tenant = str(content[0])
        head = heads.get(tenant)
        seq, previous = head if head is not None else _read_head(db, tenant)
        digest = audit_digest(previous, *content)
        linked.append((*content, seq + 1, previous, digest))
        heads[tenant] = (seq + 1, digest)
    if not linked:
        return
    db.executemany(_LINKED_INSERT, linked)
    db.executemany(_SAVE_HEAD, [(tenant, seq, digest) for tenant, (seq, digest) in heads.items()])


def _read_head(db: sqlite3.Connection, tenant: str) -> tuple[int, str]:
    """The tenant's last (seq, hash); (0, "") before its first record."""
    row = db.execute(_HEAD, (tenant,)).fetchone()
    return (0, "") if row is None else (int(row[0]), str(row[1]))


def _stored_form(row: Sequence[object]) -> tuple[object, ...]:
    """`row` as SQLite stores it (INTEGER revision, REAL time), so that the
    digest is of the very values `audit verify` reads back."""
    if len(row) != len(_TEXTS) + 2:
        raise ValueError(f"an audit row has {len(_TEXTS) + 2} values, not {len(row)}")
    for index in _TEXTS:
        if not isinstance(row[index], str):
            raise TypeError(f"audit column {index} must be text, not {type(row[index])}")
    revision, when = row[_REVISION], row[_TIME]
    if not isinstance(revision, int) or not isinstance(when, int | float):
        raise TypeError("an audit row's revision must be an int and its time a number")
    stored = list(row)
    stored[_REVISION], stored[_TIME] = int(revision), float(when)
    return tuple(stored)
