"""Session promotion across a session's life, through real server processes
on both backends (core/memory/promotion.py):

* a promoted session deleted and created again under the same id is promoted
  from its first message (its old watermark belongs to the deleted session);
* the sweep removes the watermark row of a deleted session;
* a session turned away by a full promotion queue is still promoted (the
  overflow set is marked in the store, and the sweep promotes it).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import uuid
from pathlib import Path

import asyncpg
import pytest

from statekeeper_client.v1 import session_pb2
from tests.e2e.test_memory_promotion import (
    AUTH,
    BASE_ARGS,
    FIRST,
    PROMOTE,
    append,
    count_at_least,
    create,
    episodes,
    message,
    stubs_for,
    turn,
)
from tests.harness.backends import BACKENDS, Production, backend
from tests.harness.deadlines import wait_until
from tests.harness.deploy import statekeeper_replicas


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_a_session_created_again_is_promoted_from_its_start(
    backend_name: str, tmp_path: Path
) -> None:
    with (
        backend(backend_name, "promo") as where,
        statekeeper_replicas(tmp_path, where, extra_args=BASE_ARGS) as servers,
        stubs_for(servers[0]) as stub,
    ):
        log = servers[0].log_tail
        user = "again-user"
        create(stub, "again", user, PROMOTE)
        for index in range(3):
            turn(stub, "again", index)  # sequences 1..6
        wait_until(lambda: count_at_least(stub, user, "again", 3), 60, "first life promoted", log)

        stub.sessions.DeleteSession(
            session_pb2.DeleteSessionRequest(session_id="again"), metadata=AUTH
        )
        create(stub, "again", user, PROMOTE)
        append(
            stub,
            "again",
            message(session_pb2.ROLE_USER, "Second life: where is the red kite?"),
            message(session_pb2.ROLE_ASSISTANT, "On the shed roof."),
        )
        wait_until(lambda: count_at_least(stub, user, "again", 4), 60, "second life promoted", log)
        (second,) = [
            e for e in episodes(stub, user, "again") if e.user_message.startswith("Second life")
        ]
        assert second.assistant_response == "On the shed roof."
        assert (second.metadata[FIRST], second.metadata["statekeeper.session.last_sequence"]) == (
            "1",
            "2",
        )


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_a_session_turned_away_by_a_full_queue_is_promoted(
    backend_name: str, tmp_path: Path
) -> None:
    # One session fits the queue; the worker waits 5 s before taking it, so
    # the second append of that window finds the queue full.
    args = [
        *BASE_ARGS,
        "--limit",
        "memory.promotion.max_queued_sessions=1",
        "--limit",
        "memory.promotion.delay_seconds=5",
    ]
    with (
        backend(backend_name, "promo") as where,
        statekeeper_replicas(tmp_path, where, extra_args=args) as servers,
        stubs_for(servers[0]) as stub,
    ):
        log = servers[0].log_tail
        user = "overflow-user"
        create(stub, "first", user, PROMOTE)
        create(stub, "second", user, PROMOTE)
        turn(stub, "first", 0)
        turn(stub, "second", 0)
        wait_until(lambda: count_at_least(stub, user, "first", 1), 60, "queued promoted", log)
        wait_until(lambda: count_at_least(stub, user, "second", 1), 60, "overflow promoted", log)


def watermark_rows(where: Production | None, data_dir: Path, session_id: str) -> int:
    sql = "SELECT count(*) FROM memory_promotions WHERE session_id = {}"
    if where is not None:

        async def run() -> int:
            conn = await asyncpg.connect(where.postgres_dsn)
            try:
                return int(await conn.fetchval(sql.format("$1"), session_id))
            finally:
                await conn.close()

        return asyncio.run(run())
    with contextlib.closing(sqlite3.connect(data_dir / "statekeeper.sqlite3")) as db:
        return int(db.execute(sql.format("?"), (session_id,)).fetchone()[0])


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_the_sweep_removes_the_watermark_of_a_deleted_session(
    backend_name: str, tmp_path: Path
) -> None:
    with (
        backend(backend_name, "promo") as where,
        statekeeper_replicas(tmp_path, where, extra_args=BASE_ARGS) as servers,
        stubs_for(servers[0]) as stub,
    ):
        log = servers[0].log_tail
        user = "gone-user"
        gone, kept = f"gone-{uuid.uuid4().hex[:8]}", f"kept-{uuid.uuid4().hex[:8]}"
        for session_id in (gone, kept):
            create(stub, session_id, user, PROMOTE)
            turn(stub, session_id, 0)
            wait_until(
                lambda s=session_id: count_at_least(stub, user, s, 1),  # type: ignore[misc]
                60,
                f"{session_id} promoted",
                log,
            )
        data_dir = servers[0].data_dir
        assert watermark_rows(where, data_dir, gone) == 1
        stub.sessions.DeleteSession(
            session_pb2.DeleteSessionRequest(session_id=gone), metadata=AUTH
        )
        wait_until(lambda: watermark_rows(where, data_dir, gone) == 0, 60, "the row removed", log)
        assert watermark_rows(where, data_dir, kept) == 1
        # The promoted episodes outlive the deleted session (memory is kept).
        assert len(episodes(stub, user, gone)) == 1
