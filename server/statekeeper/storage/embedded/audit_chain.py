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

The head a call leaves is remembered per connection and tenant, and the
next call advances the head with a compare-and-set on it instead of reading
it first: one statement less for the single writer, whose every statement
waits anew for the GIL. The remembered head is only a hint: if anything
moved the head since (a hash-less record linked by the trigger, a rolled
back transaction, another connection), the compare-and-set changes nothing
and the head is read as before.
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
_ADVANCE_HEAD = (
    "UPDATE audit_chain_heads SET seq = ?, hash = ? WHERE tenant = ? AND seq = ? AND hash = ?"
)
# Remembered heads, by (id of the connection, tenant); forgotten all at once
# past this many (a hint only: see above).
_HINT_LIMIT = 4096
_hints: dict[tuple[int, str], tuple[int, str]] = {}
# Positions in AUDIT_COLUMNS.
_TEXTS = (0, 1, 2, 3, 4, 5, 8)
_REVISION, _TIME = 6, 7


def insert_audit_rows(db: sqlite3.Connection, rows: Iterable[Sequence[object]]) -> None:
    """Inserts `rows` (values of AUDIT_COLUMNS, as sql.audit_values makes
    them), in order, each linked to the record before it of its tenant."""
    contents = [_stored_form(row) for row in rows]
    if not contents:
        return
    connection = id(db)
    tenants = {str(content[0]) for content in contents}
    hinted = {t: _hints[connection, t] for t in tenants if (connection, t) in _hints}
    starts = dict(hinted)
    linked, ends = _link(contents, starts, db)
    stale = [t for t, hint in hinted.items() if not _advance(db, t, hint, ends[t])]
    if stale:
        # Something else moved those heads: link to the heads as stored.
        for tenant in stale:
            starts[tenant] = _read_head(db, tenant)
        linked, ends = _link(contents, starts, db)
    saved = [(t, *ends[t]) for t in ends if t not in hinted or t in stale]
    if saved:
        db.executemany(_SAVE_HEAD, saved)
    db.executemany(_LINKED_INSERT, linked)
    if len(_hints) + len(ends) > _HINT_LIMIT:
        _hints.clear()
    for tenant, head in ends.items():
        _hints[connection, tenant] = head


def link_from_hint(db: sqlite3.Connection, row: Sequence[object]) -> tuple[object, ...] | None:
    """`row` linked after its tenant's remembered head (the values of
    _LINKED_INSERT), for a caller that inserts it and moves the head itself,
    checking that the head is still the one it was linked to (then
    `confirm_link`); None when no head is remembered."""
    content = _stored_form(row)
    hint = _hints.get((id(db), str(content[0])))
    if hint is None:
        return None
    seq, previous = hint
    return (*content, seq + 1, previous, audit_digest(previous, *content))


def confirm_link(db: sqlite3.Connection, linked: Sequence[object], stored: bool) -> None:
    """After a `link_from_hint` record was `stored` (True), its head is the
    tenant's; else (the head had moved) the hint is dropped."""
    key = (id(db), str(linked[0]))
    if stored:
        _hints[key] = (int(str(linked[-3])), str(linked[-1]))
    else:
        _hints.pop(key, None)


def _link(
    contents: Sequence[tuple[object, ...]],
    starts: dict[str, tuple[int, str]],
    db: sqlite3.Connection,
) -> tuple[list[tuple[object, ...]], dict[str, tuple[int, str]]]:
    """Each record linked after the one before it of its tenant, the first
    after the tenant's head in `starts` (read, and added there, when it has
    none); and the heads the records leave."""
    heads: dict[str, tuple[int, str]] = {}
    linked: list[tuple[object, ...]] = []
    for content in contents:
        tenant = str(content[0])
        head = heads.get(tenant)
        if head is None:
            head = starts.get(tenant)
            if head is None:
                head = starts[tenant] = _read_head(db, tenant)
        seq, previous = head
        digest = audit_digest(previous, *content)
        linked.append((*content, seq + 1, previous, digest))
        heads[tenant] = (seq + 1, digest)
    return linked, heads


def _advance(
    db: sqlite3.Connection, tenant: str, expected: tuple[int, str], head: tuple[int, str]
) -> bool:
    """Moves the tenant's stored head to `head` if it is still `expected`."""
    moved = db.execute(_ADVANCE_HEAD, (*head, tenant, *expected)).rowcount
    return bool(moved == 1)


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
