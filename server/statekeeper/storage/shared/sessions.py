"""Sessions: what the SQLite and PostgreSQL session stores share.

The statements both backends run the same way, built once per dialect from
its placeholders and its test of a visible message (SQLite keeps
`rolled_back` as 0 or 1, PostgreSQL as a boolean); the values they bind;
the receipt a row holds; and the errors a session write raises. What each
backend does its own way (the one-statement change and group commit on
PostgreSQL, the writer thread's statements and the window tails on SQLite)
stays in its module.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekeeper.core.errors import (
    AlreadyExistsError,
    ConcurrentModificationError,
    NotFoundError,
)
from statekeeper.core.sessions.models import (
    AppendReceipt,
    SessionChange,
    SessionRecord,
    SessionVersion,
)
from statekeeper.storage.codec import record_to_json
from statekeeper.storage.sql import MESSAGE_COLUMNS, Mark, Row

# A version bound above every real version: "before no version" lists from
# the newest.
NO_VERSION_BOUND = 2**62


@dataclass(frozen=True)
class SessionStatements:
    """One dialect's text of the session statements both backends run.
    Parameters, in order, are named in each field's comment."""

    # tenant, then the values of session_values.
    insert_session: str
    # The values of version_values.
    insert_version: str
    # tenant, session_id.
    current_version: str
    state: str
    # tenant, session_id, after_sequence, limit: visible messages only, or all.
    visible_messages: str
    all_messages: str
    # tenant, session_id, after_sequence, before_sequence, limit; newest first.
    recent_messages: str
    # tenant, request_id.
    receipt: str
    # tenant, session_id, before (version_bound), limit; newest first.
    versions: str
    # tenant, session_id, version.
    version: str


def session_statements(mark: Mark, visible: str) -> SessionStatements:
    """The statements in the dialect of `mark`; `visible` is its condition
    that a message is not rolled back."""

    def values(count: int) -> str:
        return ",".join(mark(index) for index in range(1, count + 1))

    key = f"tenant={mark(1)} AND session_id={mark(2)}"
    messages = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {key} AND sequence > {mark(3)}"
    page = f" ORDER BY sequence LIMIT {mark(4)}"
    return SessionStatements(
        insert_session=(
            "INSERT INTO sessions (tenant, session_id, user_id, agent_id, status,"
            f" create_time, expire_time, version, state) VALUES ({values(9)})"
        ),
        insert_version=(
            "INSERT INTO session_versions (tenant, session_id, version, parent_version,"
            f" change_kind, create_time, snapshot) VALUES ({values(7)})"
        ),
        current_version=f"SELECT version FROM sessions WHERE {key}",
        state=f"SELECT state FROM sessions WHERE {key}",
        visible_messages=f"{messages} AND {visible}{page}",
        all_messages=f"{messages}{page}",
        recent_messages=(
            f"{messages} AND sequence < {mark(4)} AND {visible}"
            f" ORDER BY sequence DESC LIMIT {mark(5)}"
        ),
        receipt=(
            "SELECT session_id, first_sequence, last_sequence, version FROM append_receipts"
            f" WHERE tenant={mark(1)} AND request_id={mark(2)}"
        ),
        versions=(
            f"SELECT * FROM session_versions WHERE {key} AND version < {mark(3)}"
            f" ORDER BY version DESC LIMIT {mark(4)}"
        ),
        version=f"SELECT * FROM session_versions WHERE {key} AND version={mark(3)}",
    )


def session_values(tenant: str, record: SessionRecord) -> tuple[object, ...]:
    """The parameters of insert_session for a new session `record`."""
    return (
        tenant,
        record.session_id,
        record.user_id,
        record.agent_id,
        int(record.status),
        record.create_time,
        record.expire_time,
        record.version,
        record_to_json(record),
    )


def version_values(
    tenant: str, session_id: str, version: SessionVersion, snapshot: str | None = None
) -> tuple[object, ...]:
    """The parameters of insert_version; `snapshot`: version.snapshot
    already encoded, if it is at hand."""
    return (
        tenant,
        session_id,
        version.version,
        version.parent_version,
        int(version.change_kind),
        version.create_time,
        snapshot or record_to_json(version.snapshot),
    )


def version_bound(before_version: int) -> int:
    """The `before` parameter of `versions` (0 or less: from the newest)."""
    return before_version if before_version > 0 else NO_VERSION_BOUND


def receipt_sequences(change: SessionChange) -> tuple[int, int]:
    """The first and last sequence an append receipt records (0, 0 for none)."""
    sequences = [m.sequence for m in change.new_messages]
    return min(sequences, default=0), max(sequences, default=0)


def receipt_from_row(row: Row) -> AppendReceipt:
    """An AppendReceipt from a row of the `receipt` statement."""
    return AppendReceipt(
        session_id=row["session_id"],
        first_sequence=row["first_sequence"],
        last_sequence=row["last_sequence"],
        version=row["version"],
    )


def session_exists(session_id: str) -> AlreadyExistsError:
    return AlreadyExistsError(f"session {session_id!r} already exists")


def request_reused(request_id: str) -> AlreadyExistsError:
    return AlreadyExistsError(f"request_id {request_id!r} was used before")


def cas_failure(
    session_id: str, current: int | None, expected_version: int
) -> NotFoundError | ConcurrentModificationError:
    """Why a compare-and-swap of a session missed, given the version it is
    at now (None: there is no such session)."""
    if current is None:
        return NotFoundError(f"session {session_id!r} not found")
    return ConcurrentModificationError(
        f"session {session_id!r} is at version {current}, not {expected_version}"
    )
