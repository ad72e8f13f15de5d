"""SessionManager rules in process: versions, rollback, expiry, idempotency."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from statekeeper.core.audit.service import Actor
from statekeeper.core.errors import (
    AlreadyExistsError,
    EtagMismatchError,
    InvalidArgumentError,
    LimitExceededError,
    NotFoundError,
    SessionExpiredError,
)
from statekeeper.core.limits import Limits
from statekeeper.core.sessions.models import (
    ChangeKind,
    MessageDraft,
    Role,
    SessionDraft,
    SessionFilter,
    SessionStatus,
    ToolCall,
)
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tenancy import Principal
from statekeeper.core.tokens import TokenCounter
from statekeeper.storage.embedded.sessions import EmbeddedStorage
from tests.fakes.clock import FakeClock

T = "tenant-a"


def actor(tenant: str) -> Actor:
    return Actor(Principal(tenant, f"key-{tenant}"), "statekeeper.v1.SessionService", "Test")


A = actor(T)


@pytest.fixture
async def manager(tmp_path: Path, clock: FakeClock) -> AsyncIterator[SessionManager]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    counter = TokenCounter()
    yield SessionManager(
        storage.sessions, counter, ExtractiveSummarizer(counter), Limits(), clock=clock
    )
    await storage.close()


def user(text: str) -> MessageDraft:
    return MessageDraft(Role.USER, text)


async def test_every_change_is_a_version_and_rollback_restores(manager: SessionManager) -> None:
    created = await manager.create(A, "s1", SessionDraft(user_id="u", metadata={"k": "v1"}))
    assert created.version == 1
    await manager.append(A, "s1", [user("one"), user("two")], "", "")  # v2
    await manager.update(A, "s1", SessionDraft(metadata={"k": "v2"}), {"metadata"}, "")  # v3
    await manager.append(A, "s1", [user("three")], "", "")  # v4
    rolled = await manager.rollback(A, "s1", 2, "")
    assert rolled.version == 5
    assert rolled.metadata == {"k": "v1"}
    assert rolled.message_count == 2
    versions, _ = await manager.list_versions(T, "s1", 10, "")
    assert [v.version for v in versions] == [5, 4, 3, 2, 1]
    assert versions[0].change_kind == ChangeKind.ROLLBACK
    assert versions[0].parent_version == 2
    history, _ = await manager.list_messages(T, "s1", 100, "", False)
    assert [m.content for m in history] == ["one", "two"]
    everything, _ = await manager.list_messages(T, "s1", 100, "", True)
    assert [(m.content, m.rolled_back) for m in everything] == [
        ("one", False),
        ("two", False),
        ("three", True),
    ]
    # New messages get fresh sequence numbers; rolled back ones are never reused.
    appended = await manager.append(A, "s1", [user("four")], "", "")
    assert appended.messages[0].sequence == 4
    # Rolling forward to v4 brings "three" back.
    forward = await manager.rollback(A, "s1", 4, "")
    history, _ = await manager.list_messages(T, "s1", 100, "", False)
    assert [m.content for m in history] == ["one", "two", "three"]
    assert forward.metadata == {"k": "v2"}
    past = await manager.get_version(T, "s1", 3)
    assert past.snapshot.metadata == {"k": "v2"} and past.snapshot.message_count == 2


async def test_stale_etag_is_rejected(manager: SessionManager) -> None:
    record = await manager.create(A, "s1", SessionDraft(user_id="u"))
    stale = record.etag
    await manager.append(A, "s1", [user("hi")], stale, "")
    with pytest.raises(EtagMismatchError):
        await manager.update(A, "s1", SessionDraft(status=SessionStatus.PAUSED), {"status"}, stale)
    with pytest.raises(EtagMismatchError):
        await manager.delete(A, "s1", stale)
    current = await manager.get(T, "s1")
    updated = await manager.update(
        A, "s1", SessionDraft(status=SessionStatus.PAUSED), {"status"}, current.etag
    )
    assert updated.status == SessionStatus.PAUSED


async def test_expired_session_is_invisible_then_swept(
    manager: SessionManager, clock: FakeClock
) -> None:
    await manager.create(A, "short", SessionDraft(user_id="u", ttl_seconds=60))
    await manager.create(A, "long", SessionDraft(user_id="u"))
    clock.now += 61
    with pytest.raises(SessionExpiredError):
        await manager.get(T, "short")
    with pytest.raises(SessionExpiredError):
        await manager.append(A, "short", [user("late")], "", "")
    listed, _ = await manager.list_sessions(T, SessionFilter(), 10, "")
    assert [r.session_id for r in listed] == ["long"]
    # The id stays taken until the sweeper removes the expired session.
    with pytest.raises(AlreadyExistsError):
        await manager.create(A, "short", SessionDraft(user_id="u"))
    assert await manager.sweep_expired() == 1
    with pytest.raises(NotFoundError) as info:
        await manager.get(T, "short")
    assert not isinstance(info.value, SessionExpiredError)
    await manager.create(A, "short", SessionDraft(user_id="u"))


async def test_ttl_update_extends_life(manager: SessionManager, clock: FakeClock) -> None:
    await manager.create(A, "s", SessionDraft(user_id="u", ttl_seconds=10))
    clock.now += 5
    await manager.update(A, "s", SessionDraft(ttl_seconds=100), {"ttl"}, "")
    clock.now += 50
    assert (await manager.get(T, "s")).session_id == "s"
    assert await manager.sweep_expired() == 0


async def test_idempotent_append_replays(manager: SessionManager) -> None:
    await manager.create(A, "s", SessionDraft(user_id="u"))
    first = await manager.append(A, "s", [user("a"), user("b")], "", "req-1")
    again = await manager.append(A, "s", [user("a"), user("b")], "", "req-1")
    assert again.replayed and not first.replayed
    assert [m.message_id for m in again.messages] == [m.message_id for m in first.messages]
    assert (await manager.get(T, "s")).message_count == 2
    await manager.create(A, "other", SessionDraft(user_id="u"))
    with pytest.raises(InvalidArgumentError) as info:
        await manager.append(A, "other", [user("a")], "", "req-1")
    assert info.value.field == "request_id"


async def test_concurrent_unconditional_appends_all_land(manager: SessionManager) -> None:
    await manager.create(A, "s", SessionDraft(user_id="u"))
    await asyncio.gather(*(manager.append(A, "s", [user(f"m{i}")], "", f"r{i}") for i in range(40)))
    history, _ = await manager.list_messages(T, "s", 100, "", False)
    assert sorted(m.content for m in history) == sorted(f"m{i}" for i in range(40))
    assert [m.sequence for m in history] == list(range(1, 41))
    assert (await manager.get(T, "s")).version == 41


async def test_tenants_are_isolated(manager: SessionManager) -> None:
    await manager.create(actor("a"), "shared-id", SessionDraft(user_id="u"))
    with pytest.raises(NotFoundError):
        await manager.get("b", "shared-id")
    await manager.create(actor("b"), "shared-id", SessionDraft(user_id="other"))
    assert (await manager.get("a", "shared-id")).user_id == "u"
    listed, _ = await manager.list_sessions("b", SessionFilter(), 10, "")
    assert [r.user_id for r in listed] == ["other"]


async def test_list_pages_and_filters(manager: SessionManager, clock: FakeClock) -> None:
    for index in range(7):
        clock.now += 1
        await manager.create(
            A, f"s{index}", SessionDraft(user_id="u" if index % 2 else "v", agent_id="a")
        )
    seen: list[str] = []
    token = ""
    while True:
        page, token = await manager.list_sessions(T, SessionFilter(agent_id="a"), 3, token)
        seen.extend(r.session_id for r in page)
        if not token:
            break
    assert seen == [f"s{i}" for i in reversed(range(7))]
    only_u, _ = await manager.list_sessions(T, SessionFilter(user_id="u"), 10, "")
    assert [r.session_id for r in only_u] == ["s5", "s3", "s1"]
    _, token = await manager.list_sessions(T, SessionFilter(), 2, "")
    with pytest.raises(InvalidArgumentError) as info:
        await manager.list_sessions(T, SessionFilter(user_id="u"), 2, token)
    assert info.value.field == "page_token"


async def test_message_validation_names_the_field(manager: SessionManager) -> None:
    await manager.create(A, "s", SessionDraft(user_id="u"))
    cases = [
        ([MessageDraft(Role.TOOL, "result")], "messages[0].tool_call_id"),
        ([user("ok"), MessageDraft(Role.USER, "")], "messages[1].content"),
        (
            [MessageDraft(Role.USER, "x", tool_calls=(ToolCall("c", "f"),))],
            "messages[0].tool_calls",
        ),
        (
            [MessageDraft(Role.ASSISTANT, "", tool_calls=(ToolCall("", "f"),))],
            "messages[0].tool_calls[0].id",
        ),
    ]
    for drafts, field in cases:
        with pytest.raises(InvalidArgumentError) as info:
            await manager.append(A, "s", drafts, "", "")
        assert info.value.field == field
    with pytest.raises(LimitExceededError):
        await manager.append(A, "s", [user("x" * (256 * 1024 + 1))], "", "")
    assert (await manager.get(T, "s")).message_count == 0
