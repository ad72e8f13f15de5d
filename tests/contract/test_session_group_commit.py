"""Concurrent appends of one tenant, on every backend: the stores commit
them in groups (one transaction for many sessions), which must keep every
append's own guarantees: gap-free per-session sequences, compare-and-swap
(a conflicting append retries, an etag append fails alone), request ids
that are replayed and never applied twice, and an audit record per change
in a verifiable chain. Two PostgreSQL stores writing the same sessions at
once stand for two replicas."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from statekeeper.core.audit.models import AuditFilter
from statekeeper.core.audit.service import Actor, verify_chain
from statekeeper.core.errors import EtagMismatchError
from statekeeper.core.limits import Limits
from statekeeper.core.sessions.models import MessageDraft, Role, SessionDraft
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tenancy import Principal
from statekeeper.core.tokens import TokenCounter
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from statekeeper.storage.interfaces import Storage
from statekeeper.storage.postgres.sessions import PostgresStorage
from tests.services import configured, reachable

SESSIONS = 12
APPENDS_PER_SESSION = 6


def actor(tenant: str) -> Actor:
    return Actor(Principal(tenant, f"key-{tenant}"), "statekeeper.v1.SessionService", "Test")


def manager_of(storage: Storage) -> SessionManager:
    counter = TokenCounter()
    return SessionManager(storage.sessions, counter, ExtractiveSummarizer(counter), Limits())


def user(text: str) -> MessageDraft:
    return MessageDraft(Role.USER, text)


async def create_sessions(manager: SessionManager, who: Actor, count: int) -> list[str]:
    ids = [f"s{index}" for index in range(count)]
    for session_id in ids:
        await manager.create(who, session_id, SessionDraft(user_id="u"))
    return ids


async def check_history(
    manager: SessionManager, tenant: str, session_id: str, expected: set[str]
) -> None:
    """The session holds exactly `expected` (each once), sequences 1..n."""
    messages, _ = await manager.list_messages(tenant, session_id, 1000, "", True)
    assert [m.sequence for m in messages] == list(range(1, len(expected) + 1))
    assert sorted(m.content for m in messages) == sorted(expected)
    record = await manager.get(tenant, session_id)
    assert record.last_sequence == record.message_count == len(expected)
    assert record.version == 1 + len(expected)  # one version per append


async def check_audit(storage: Storage, tenant: str, changes: int) -> None:
    records = await storage.audit.list_audit(tenant, AuditFilter(), 0, 10_000)
    assert len(records) == changes
    links, heads = await storage.audit.audit_chain(tenant)
    report = verify_chain(links, heads)
    assert report.broken is None, report.broken
    assert report.records == changes


async def test_concurrent_appends_to_many_sessions(storage: Storage) -> None:
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    who, manager = actor(tenant), manager_of(storage)
    ids = await create_sessions(manager, who, SESSIONS)

    async def agent(session_id: str) -> None:
        for turn in range(APPENDS_PER_SESSION):
            await manager.append(who, session_id, [user(f"{session_id}/{turn}")], "", "")

    # Every session has one writer, and a second one on half of them: their
    # compare-and-swap conflicts land inside groups.
    writers = [agent(s) for s in ids] + [agent(s) for s in ids[::2]]
    await asyncio.gather(*writers)
    for index, session_id in enumerate(ids):
        turns = {f"{session_id}/{turn}" for turn in range(APPENDS_PER_SESSION)}
        writers_of_session = 2 if index % 2 == 0 else 1
        messages, _ = await manager.list_messages(tenant, session_id, 1000, "", True)
        assert sorted(m.content for m in messages) == sorted([*turns] * writers_of_session), (
            session_id
        )
        assert [m.sequence for m in messages] == list(range(1, len(messages) + 1))
    appends = APPENDS_PER_SESSION * len(writers)
    await check_audit(storage, tenant, SESSIONS + appends)


async def test_request_ids_are_applied_once_among_concurrent_appends(storage: Storage) -> None:
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    who, manager = actor(tenant), manager_of(storage)
    ids = await create_sessions(manager, who, SESSIONS)

    async def send(session_id: str, request_id: str) -> tuple[int, bool]:
        result = await manager.append(who, session_id, [user(request_id)], "", request_id)
        return result.messages[0].sequence, result.replayed

    # Each request id sent three times at once (a client's retries racing
    # each other), next to other sessions' appends.
    calls = [send(s, f"{s}-r{turn}") for s in ids for turn in range(3) for _ in range(3)]
    results = await asyncio.gather(*calls)
    for start in range(0, len(results), 3):
        tries = results[start : start + 3]
        assert len({sequence for sequence, _ in tries}) == 1, tries
        assert sorted(replayed for _, replayed in tries) == [False, True, True], tries
    for session_id in ids:
        await check_history(manager, tenant, session_id, {f"{session_id}-r{t}" for t in range(3)})
    await check_audit(storage, tenant, SESSIONS + 3 * SESSIONS)


async def test_stale_etag_fails_alone_among_concurrent_appends(storage: Storage) -> None:
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    who, manager = actor(tenant), manager_of(storage)
    ids = await create_sessions(manager, who, SESSIONS)
    first = await manager.get(tenant, ids[0])
    await manager.append(who, ids[0], [user("moves the etag")], "", "")

    stale = manager.append(who, ids[0], [user("stale")], first.etag, "")
    others = [manager.append(who, s, [user(f"{s}-ok")], "", "") for s in ids[1:]]
    outcomes = await asyncio.gather(stale, *others, return_exceptions=True)
    assert isinstance(outcomes[0], EtagMismatchError), outcomes[0]
    assert not [o for o in outcomes[1:] if isinstance(o, BaseException)], outcomes
    await check_history(manager, tenant, ids[0], {"moves the etag"})
    for session_id in ids[1:]:
        await check_history(manager, tenant, session_id, {f"{session_id}-ok"})


@pytest.fixture
async def replicas() -> AsyncIterator[tuple[PostgresStorage, PostgresStorage]]:
    services = configured()
    await reachable(services)
    stores = (
        PostgresStorage(services.postgres_dsn, pool_size=4, migrate_on_start=True),
        PostgresStorage(services.postgres_dsn, pool_size=4),
    )
    for store in stores:
        await store.start()
    yield stores
    for store in stores:
        await store.close()


async def test_two_replicas_appending_to_the_same_sessions(
    replicas: tuple[PostgresStorage, PostgresStorage], tmp_path: Path
) -> None:
    """Groups of both replicas lock the same session rows; none of them
    deadlocks or loses an append."""
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    who = actor(tenant)
    managers = [manager_of(store) for store in replicas]
    ids = await create_sessions(managers[0], who, 6)

    async def agent(replica: int, writer: int) -> None:
        # Each writer walks the sessions in its own order.
        order = ids[writer % len(ids) :] + ids[: writer % len(ids)]
        if writer % 2:
            order.reverse()
        for session_id in order:
            await managers[replica].append(
                who, session_id, [user(f"{replica}/{writer}/{session_id}")], "", ""
            )

    await asyncio.gather(*(agent(replica, writer) for replica in (0, 1) for writer in range(8)))
    for session_id in ids:
        expected = {f"{r}/{w}/{session_id}" for r in (0, 1) for w in range(8)}
        await check_history(managers[1], tenant, session_id, expected)
    await check_audit(replicas[0], tenant, len(ids) + 2 * 8 * len(ids))


async def test_cancelled_callers_leave_the_embedded_group_commit_working(tmp_path: Path) -> None:
    """A caller cancelled while its write waits for (or is in) a group gets
    CancelledError; its write commits with the group all the same, and the
    other writes of the group and later ones are unaffected."""
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    try:
        tenant = f"t-{uuid.uuid4().hex[:8]}"
        who, manager = actor(tenant), manager_of(storage)
        tasks = [
            asyncio.create_task(manager.create(who, f"s{index}", SessionDraft(user_id="u")))
            for index in range(40)
        ]
        await asyncio.sleep(0)  # every write queued; the first group is on its way
        for task in tasks[::2]:
            task.cancel()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        cancelled = [o for o in outcomes if isinstance(o, asyncio.CancelledError)]
        assert cancelled, "no caller was cancelled before its write returned"
        assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
        for index in range(40):  # cancelled or not, every write committed
            assert (await manager.get(tenant, f"s{index}")).version == 1
        await manager.append(who, "s0", [user("after")], "", "")
        await check_history(manager, tenant, "s0", {"after"})
    finally:
        await storage.close()


async def test_cancelled_appends_leave_the_others_and_later_ones_working(storage: Storage) -> None:
    """Appends cancelled while queued for (or in) a group: the others
    succeed, histories stay gap-free, and the store keeps taking appends."""
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    who, manager = actor(tenant), manager_of(storage)
    ids = await create_sessions(manager, who, 30)
    tasks = [asyncio.create_task(manager.append(who, s, [user(f"{s}-first")], "", "")) for s in ids]
    await asyncio.sleep(0.001)  # the first statement is out; the rest queue behind it
    for task in tasks[1::2]:
        task.cancel()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    for session_id, outcome in zip(ids, outcomes, strict=True):
        await manager.append(who, session_id, [user(f"{session_id}-after")], "", "")
        messages, _ = await manager.list_messages(tenant, session_id, 100, "", True)
        contents = [m.content for m in messages]
        assert [m.sequence for m in messages] == list(range(1, len(messages) + 1))
        assert contents[-1] == f"{session_id}-after"
        if not isinstance(outcome, BaseException):
            assert contents == [f"{session_id}-first", f"{session_id}-after"]
