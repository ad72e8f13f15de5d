"""The erasure's session batches lock rows in the order the sessions' group
commit locks them (session_id), so the two cannot deadlock on PostgreSQL."""

from __future__ import annotations

from statekeeper.core.privacy.models import ErasureSubject
from statekeeper.storage.shared.erasure import POSTGRES, SQLITE, session_steps


def test_session_rows_are_locked_in_session_order_on_postgres() -> None:
    sessions = session_steps("t", ErasureSubject("u"))[-1]
    assert sessions.table == "sessions"
    sql, params = sessions.sql(POSTGRES, 100)
    assert "ORDER BY session_id LIMIT $3 FOR UPDATE)" in sql, sql
    assert params[-1] == 100
    # SQLite has one writer and no row locks: the same batch, no lock clause.
    sql, _ = sessions.sql(SQLITE, 100)
    assert "ORDER BY session_id LIMIT ?)" in sql and "FOR UPDATE" not in sql, sql


def test_other_steps_take_their_rows_unordered() -> None:
    messages = session_steps("t", ErasureSubject("u"))[0]
    sql, _ = messages.sql(POSTGRES, 100)
    assert "ORDER BY" not in sql and "FOR UPDATE" not in sql, sql
