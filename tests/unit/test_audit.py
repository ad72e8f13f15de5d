"""The audit trail in the domain: one record per mutation, carrying the
actor the transport handed in; AuditLog paging and validation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from statekeeper.api.interceptor import actor_for
from statekeeper.core.audit.models import AuditFilter
from statekeeper.core.audit.service import Actor, AuditLog
from statekeeper.core.errors import EtagMismatchError, InvalidArgumentError
from statekeeper.core.limits import Limits
from statekeeper.core.sessions.models import MessageDraft, Role, SessionDraft
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tenancy import Principal
from statekeeper.core.tokens import TokenCounter
from statekeeper.storage.embedded.sessions import EmbeddedStorage


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def parts(tmp_path: Path) -> AsyncIterator[tuple[SessionManager, AuditLog, Clock]]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    counter, clock = TokenCounter(), Clock()
    manager = SessionManager(
        storage.sessions, counter, ExtractiveSummarizer(counter), Limits(), clock=clock
    )
    yield manager, AuditLog(storage.audit, Limits(default_page_size=3)), clock
    await storage.close()


def by(method: str, tenant: str = "t1") -> Actor:
    return actor_for(Principal(tenant, "key-id-1"), f"/statekeeper.v1.SessionService/{method}")


def test_actor_comes_from_principal_and_rpc_path() -> None:
    actor = by("AppendMessages")
    assert (actor.tenant, actor.principal.key_id) == ("t1", "key-id-1")
    assert (actor.service, actor.method) == ("statekeeper.v1.SessionService", "AppendMessages")


async def test_every_mutation_leaves_one_record(
    parts: tuple[SessionManager, AuditLog, Clock],
) -> None:
    manager, audit, clock = parts
    await manager.create(by("CreateSession"), "s", SessionDraft(user_id="u"))
    for text in ("one", "two", "three"):
        clock.now += 1
        await manager.append(by("AppendMessages"), "s", [MessageDraft(Role.USER, text)], "", "")
    await manager.append(by("AppendMessages"), "s", [MessageDraft(Role.USER, "r")], "", "req")
    await manager.append(by("AppendMessages"), "s", [MessageDraft(Role.USER, "r")], "", "req")
    await manager.update(by("UpdateSession"), "s", SessionDraft(agent_id="a"), {"agent_id"}, "")
    with pytest.raises(EtagMismatchError):
        await manager.update(by("UpdateSession"), "s", SessionDraft(), {"metadata"}, 'W/"1"')
    await manager.compact(by("CompactSession"), "s", 1, "")
    await manager.rollback(by("RollbackSession"), "s", 2, "")
    await manager.delete(by("DeleteSession"), "s", "")
    records, token = await audit.list_records("t1", AuditFilter(), 100, "")
    assert token == ""
    assert [(r.method, r.revision) for r in records] == [
        ("DeleteSession", 8),
        ("RollbackSession", 8),
        ("CompactSession", 7),
        ("UpdateSession", 6),
        ("AppendMessages", 5),  # the replay of "req" left no record
        ("AppendMessages", 4),
        ("AppendMessages", 3),
        ("AppendMessages", 2),
        ("CreateSession", 1),
    ]
    assert {(r.tenant, r.principal, r.entity_type, r.entity_id) for r in records} == {
        ("t1", "key-id-1", "session", "s")
    }
    summaries = {r.method: r.summary for r in records}
    assert summaries["RollbackSession"] == "rolled back to version 2"
    assert summaries["UpdateSession"] == "updated agent_id"
    assert records[-2].summary == "appended 1 message(s), sequence 1-1"
    assert records[-1].time == 1_700_000_000.0


async def test_sweeper_is_audited_as_the_system(
    parts: tuple[SessionManager, AuditLog, Clock],
) -> None:
    manager, audit, clock = parts
    await manager.create(
        by("CreateSession", "t2"), "gone", SessionDraft(user_id="u", ttl_seconds=5)
    )
    clock.now += 10
    assert await manager.sweep_expired() == 1
    [swept, _] = (await audit.list_records("t2", AuditFilter(), 10, ""))[0]
    assert (swept.principal, swept.service, swept.method) == (
        "system",
        "statekeeper.internal",
        "SweepExpiredSessions",
    )
    assert (swept.tenant, swept.entity_id, swept.revision) == ("t2", "gone", 1)


async def test_pages_and_validation(parts: tuple[SessionManager, AuditLog, Clock]) -> None:
    manager, audit, _ = parts
    for n in range(7):
        await manager.create(by("CreateSession"), f"s{n}", SessionDraft(user_id="u"))
    seen: list[str] = []
    token = ""
    while True:
        page, token = await audit.list_records("t1", AuditFilter(), 0, token)
        assert len(page) <= 3
        seen.extend(r.entity_id for r in page)
        if not token:
            break
    assert seen == [f"s{n}" for n in reversed(range(7))]
    _, token = await audit.list_records("t1", AuditFilter(), 2, "")
    with pytest.raises(InvalidArgumentError, match="page_token"):
        await audit.list_records("t1", AuditFilter(method="CreateSession"), 2, token)
    with pytest.raises(InvalidArgumentError, match="page_token"):
        await audit.list_records("other", AuditFilter(), 2, token)
    with pytest.raises(InvalidArgumentError, match="end_time"):
        await audit.list_records("t1", AuditFilter(start_time=5, end_time=5), 0, "")
    with pytest.raises(InvalidArgumentError, match="entity_id"):
        await audit.list_records("t1", AuditFilter(entity_id="no spaces"), 0, "")
    with pytest.raises(InvalidArgumentError, match="page_size"):
        await audit.list_records("t1", AuditFilter(), -1, "")
