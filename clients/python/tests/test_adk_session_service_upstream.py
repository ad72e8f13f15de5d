"""Google ADK's own session-service tests, run against StatekeeperSessionService
on a live `statekeeper serve` (embedded; production too with
STATEKEEPER_CLIENT_TEST_PRODUCTION=1, see live_server.py).

Source: google/adk-python tests/unittests/sessions/test_session_service.py
at commit 03301454c3cd2d85d3691b3026a60ce6cb703193 (the 2.x line this extra
pins, google-adk 2.13: with get_user_state and the stale-session tests).
The upstream module is not shipped in the google-adk wheel,
so its tests are restated here, one for one under the upstream names, with
the same steps and the same assertions. At the end, two tests of behaviours
upstream's backend registry (tests/unittests/sessions/_conformance.py) holds
every backend to, written here from its description of them (padded session
ids are normalized; list_sessions is oldest update first). Changed, and only
this:

* The `session_service` fixture yields a StatekeeperSessionService on a
  tenant of its own (upstream: a fresh InMemory/Database/Sqlite service per
  test, so the fixed app, user and session names never collide).
* test_append_event_to_stale_session and
  test_append_event_concurrent_stale_sessions_reject_stale_writer construct
  DatabaseSessionService upstream; they take this service instead (it has
  the same stale-session check, through the session's etag).
* Left out, since they test one backend's machinery, not the service
  contract: the DatabaseSessionService engine/pool/dialect, read-only factory,
  rollback spy, prepare_tables, app/user state row and row-locking tests, the
  SqliteSessionService URL tests, the InMemory same-object test, the
  light-copy fixture variant and the VertexAiSessionService
  NotImplementedError test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timezone

import pytest

pytest.importorskip("google.adk", reason="google-adk is not installed (the adk extra)")

from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types
from live_server import LiveServer, backends, serving

from statekeeper_client.adk import StatekeeperSessionService


@pytest.fixture(scope="module", params=backends())
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    with serving(request.param, tmp_path_factory.mktemp("adk-upstream")) as live:
        yield live


@pytest.fixture
async def session_service(server: LiveServer) -> AsyncIterator[StatekeeperSessionService]:
    service = StatekeeperSessionService(server.address, api_key=server.fresh_key())
    yield service
    await service.aclose()


def _now() -> float:
    return datetime.now().astimezone(timezone.utc).timestamp()


async def test_get_empty_session(session_service: StatekeeperSessionService) -> None:
    assert not await session_service.get_session(
        app_name="my_app", user_id="test_user", session_id="123"
    )


async def test_create_get_session(session_service: StatekeeperSessionService) -> None:
    state = {"key": "value"}
    session = await session_service.create_session(
        app_name="my_app", user_id="test_user", state=state
    )
    assert session.app_name == "my_app"
    assert session.user_id == "test_user"
    assert session.id
    assert session.state == state
    assert session.last_update_time <= _now()

    got = await session_service.get_session(
        app_name="my_app", user_id="test_user", session_id=session.id
    )
    assert got == session
    assert got is not None and got.last_update_time <= _now()

    await session_service.delete_session(
        app_name="my_app", user_id="test_user", session_id=session.id
    )
    assert (
        await session_service.get_session(
            app_name="my_app", user_id="test_user", session_id=session.id
        )
        is None
    )


async def test_create_and_list_sessions(session_service: StatekeeperSessionService) -> None:
    ids = [f"session{i}" for i in range(5)]
    for session_id in ids:
        await session_service.create_session(
            app_name="my_app",
            user_id="test_user",
            session_id=session_id,
            state={"key": "value" + session_id},
        )
    sessions = (
        await session_service.list_sessions(app_name="my_app", user_id="test_user")
    ).sessions
    assert len(sessions) == len(ids)
    assert {s.id for s in sessions} == set(ids)
    for session in sessions:
        assert session.state == {"key": "value" + session.id}


async def test_list_sessions_all_users(session_service: StatekeeperSessionService) -> None:
    for user, session_id in (
        ("user1", "session1a"),
        ("user1", "session1b"),
        ("user2", "session2a"),
    ):
        await session_service.create_session(
            app_name="my_app",
            user_id=user,
            session_id=session_id,
            state={"key": "value" + session_id.removeprefix("session")},
        )

    first = (await session_service.list_sessions(app_name="my_app", user_id="user1")).sessions
    assert len(first) == 2
    by_id = {s.id: s for s in first}
    assert by_id["session1a"].state == {"key": "value1a"}
    assert by_id["session1b"].state == {"key": "value1b"}

    second = (await session_service.list_sessions(app_name="my_app", user_id="user2")).sessions
    assert len(second) == 1
    assert second[0].id == "session2a"
    assert second[0].state == {"key": "value2a"}

    everyone = (await session_service.list_sessions(app_name="my_app", user_id=None)).sessions
    assert len(everyone) == 3
    by_id = {s.id: s for s in everyone}
    assert by_id["session1a"].state == {"key": "value1a"}
    assert by_id["session1b"].state == {"key": "value1b"}
    assert by_id["session2a"].state == {"key": "value2a"}


async def test_app_state_is_shared_by_all_users_of_app(
    session_service: StatekeeperSessionService,
) -> None:
    session1 = await session_service.create_session(
        app_name="my_app", user_id="u1", session_id="s1", state={"app:k1": "v1"}
    )
    event = Event(
        invocation_id="inv1", author="user", actions=EventActions(state_delta={"app:k2": "v2"})
    )
    await session_service.append_event(session=session1, event=event)

    session2 = await session_service.create_session(
        app_name="my_app", user_id="u2", session_id="s2"
    )
    assert session2.state == {"app:k1": "v1", "app:k2": "v2"}

    again = await session_service.get_session(app_name="my_app", user_id="u1", session_id="s1")
    assert again is not None
    assert again.state.get("app:k1") == "v1"
    assert again.state.get("app:k2") == "v2"


async def test_user_state_is_shared_only_by_user_sessions(
    session_service: StatekeeperSessionService,
) -> None:
    session1 = await session_service.create_session(
        app_name="my_app", user_id="u1", session_id="s1", state={"user:k1": "v1"}
    )
    event = Event(
        invocation_id="inv1", author="user", actions=EventActions(state_delta={"user:k2": "v2"})
    )
    await session_service.append_event(session=session1, event=event)

    session1b = await session_service.create_session(
        app_name="my_app", user_id="u1", session_id="s1b"
    )
    assert session1b.state == {"user:k1": "v1", "user:k2": "v2"}

    session2 = await session_service.create_session(
        app_name="my_app", user_id="u2", session_id="s2"
    )
    assert session2.state == {}


async def test_session_state_is_not_shared(session_service: StatekeeperSessionService) -> None:
    session1 = await session_service.create_session(
        app_name="my_app", user_id="u1", session_id="s1", state={"sk1": "v1"}
    )
    event = Event(
        invocation_id="inv1", author="user", actions=EventActions(state_delta={"sk2": "v2"})
    )
    await session_service.append_event(session=session1, event=event)

    again = await session_service.get_session(app_name="my_app", user_id="u1", session_id="s1")
    assert again is not None
    assert again.state.get("sk1") == "v1"
    assert again.state.get("sk2") == "v2"

    session1b = await session_service.create_session(
        app_name="my_app", user_id="u1", session_id="s1b"
    )
    assert session1b.state == {}


async def test_temp_state_is_not_persisted_in_state_or_events(
    session_service: StatekeeperSessionService,
) -> None:
    session = await session_service.create_session(app_name="my_app", user_id="u1", session_id="s1")
    event = Event(
        invocation_id="inv1",
        author="user",
        actions=EventActions(state_delta={"temp:k1": "v1", "sk": "v2"}),
    )
    await session_service.append_event(session=session, event=event)

    # Visible to the same invocation through the session object...
    assert session.state.get("temp:k1") == "v1"
    assert session.state.get("sk") == "v2"
    # ...but not in the event's delta, which is what is stored.
    assert "temp:k1" not in event.actions.state_delta
    assert event.actions.state_delta.get("sk") == "v2"


async def test_temp_state_visible_across_sequential_events(
    session_service: StatekeeperSessionService,
) -> None:
    session = await session_service.create_session(
        app_name="my_app", user_id="u1", session_id="s_seq"
    )
    first = Event(
        invocation_id="inv1",
        author="agent1",
        actions=EventActions(state_delta={"temp:output": "result_from_a1"}),
    )
    await session_service.append_event(session=session, event=first)
    assert session.state.get("temp:output") == "result_from_a1"
    assert "temp:output" not in first.actions.state_delta


async def test_get_session_respects_user_id(session_service: StatekeeperSessionService) -> None:
    session1 = await session_service.create_session(
        app_name="my_app", user_id="u1", session_id="s1"
    )
    await session_service.append_event(session1, Event(invocation_id="inv1", author="user"))
    await session_service.create_session(app_name="my_app", user_id="u2", session_id="s1")

    got = await session_service.get_session(app_name="my_app", user_id="u2", session_id="s1")
    assert got is not None
    assert got.user_id == "u2"
    assert len(got.events) == 0


async def test_create_session_with_existing_id_raises_error(
    session_service: StatekeeperSessionService,
) -> None:
    await session_service.create_session(
        app_name="my_app", user_id="test_user", session_id="existing_session"
    )
    with pytest.raises(AlreadyExistsError):
        await session_service.create_session(
            app_name="my_app", user_id="test_user", session_id="existing_session"
        )


async def test_append_event_bytes(session_service: StatekeeperSessionService) -> None:
    session = await session_service.create_session(app_name="my_app", user_id="user")
    content = types.Content(
        role="user",
        parts=[types.Part.from_bytes(data=b"test_image_data", mime_type="image/png")],
    )
    grounding = types.GroundingMetadata(
        search_entry_point=types.SearchEntryPoint(sdk_blob=b"test_sdk_blob")
    )
    event = Event(
        invocation_id="invocation", author="user", content=content, grounding_metadata=grounding
    )
    await session_service.append_event(session=session, event=event)
    assert session.events[0].content == content

    got = await session_service.get_session(
        app_name="my_app", user_id="user", session_id=session.id
    )
    assert got is not None
    assert len(got.events) == 1
    assert got.events[0].content == content
    assert got.events[0].grounding_metadata == grounding


async def test_append_event_complete(session_service: StatekeeperSessionService) -> None:
    session = await session_service.create_session(app_name="my_app", user_id="user")
    event = Event(
        invocation_id="invocation",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="test_text")]),
        turn_complete=True,
        partial=False,
        actions=EventActions(artifact_delta={"file": 0}, transfer_to_agent="agent", escalate=True),
        long_running_tool_ids={"tool1"},
        error_code="error_code",
        error_message="error_message",
        interrupted=True,
        grounding_metadata=types.GroundingMetadata(web_search_queries=["query1"]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=1, candidates_token_count=1, total_token_count=2
        ),
        citation_metadata=types.CitationMetadata(),
        custom_metadata={"custom_key": "custom_value"},
        timestamp=1700000000.123,
        input_transcription=types.Transcription(text="input transcription", finished=True),
        output_transcription=types.Transcription(text="output transcription", finished=True),
    )
    await session_service.append_event(session=session, event=event)
    assert (
        await session_service.get_session(app_name="my_app", user_id="user", session_id=session.id)
        == session
    )


async def test_session_last_update_time_updates_on_event(
    session_service: StatekeeperSessionService,
) -> None:
    session = await session_service.create_session(app_name="my_app", user_id="user")
    original = session.last_update_time
    stamp = original + 10
    await session_service.append_event(
        session=session, event=Event(invocation_id="invocation", author="user", timestamp=stamp)
    )
    assert session.last_update_time == pytest.approx(stamp, abs=1e-6)

    refreshed = await session_service.get_session(
        app_name="my_app", user_id="user", session_id=session.id
    )
    assert refreshed is not None
    assert refreshed.last_update_time == pytest.approx(stamp, abs=1e-6)
    assert refreshed.last_update_time > original


async def test_append_event_to_stale_session(
    session_service: StatekeeperSessionService,
) -> None:
    now = _now()
    original = await session_service.create_session(app_name="my_app", user_id="user")
    await session_service.append_event(
        original,
        Event(
            invocation_id="inv1",
            author="user",
            timestamp=now + 1,
            actions=EventActions(state_delta={"sk1": "v1"}),
        ),
    )
    updated = await session_service.get_session(
        app_name="my_app", user_id="user", session_id=original.id
    )
    assert updated is not None
    await session_service.append_event(
        updated,
        Event(
            invocation_id="inv2",
            author="user",
            timestamp=now + 2,
            actions=EventActions(state_delta={"sk2": "v2"}),
        ),
    )

    assert original.last_update_time < updated.last_update_time
    assert len(original.events) == 1
    assert "sk2" not in original.state

    with pytest.raises(ValueError, match="modified in storage"):
        await session_service.append_event(
            original,
            Event(
                invocation_id="inv3",
                author="user",
                timestamp=now + 3,
                actions=EventActions(state_delta={"sk3": "v3"}),
            ),
        )

    final = await session_service.get_session(
        app_name="my_app", user_id="user", session_id=original.id
    )
    assert final is not None
    assert len(final.events) == 2
    assert final.state.get("sk1") == "v1"
    assert final.state.get("sk2") == "v2"
    assert final.state.get("sk3") is None
    assert [e.invocation_id for e in final.events] == ["inv1", "inv2"]


async def test_append_event_concurrent_stale_sessions_reject_stale_writer(
    session_service: StatekeeperSessionService,
) -> None:
    session = await session_service.create_session(app_name="my_app", user_id="user")
    rounds = 8
    for i in range(rounds):
        latest = await session_service.get_session(
            app_name="my_app", user_id="user", session_id=session.id
        )
        assert latest is not None
        copy_1 = latest.model_copy(deep=True)
        copy_2 = latest.model_copy(deep=True)
        base = latest.last_update_time + 10.0
        event_1 = Event(
            invocation_id=f"inv{i}-1",
            author="user",
            timestamp=base + 1.0,
            actions=EventActions(state_delta={f"sk{i}-1": f"v{i}-1"}),
        )
        event_2 = Event(
            invocation_id=f"inv{i}-2",
            author="user",
            timestamp=base + 2.0,
            actions=EventActions(state_delta={f"sk{i}-2": f"v{i}-2"}),
        )
        results = await asyncio.gather(
            session_service.append_event(copy_1, event_1),
            session_service.append_event(copy_2, event_2),
            return_exceptions=True,
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        assert len(errors) == 1, results
        assert isinstance(errors[0], ValueError)
        assert "modified in storage" in str(errors[0])

    final = await session_service.get_session(
        app_name="my_app", user_id="user", session_id=session.id
    )
    assert final is not None
    for i in range(rounds):
        values = {final.state.get(f"sk{i}-1"), final.state.get(f"sk{i}-2")}
        assert values & {f"v{i}-1", f"v{i}-2"}
        assert None in values
    assert len(final.events) == rounds


async def test_get_session_with_config(session_service: StatekeeperSessionService) -> None:
    count = 5
    session = await session_service.create_session(app_name="my_app", user_id="user")
    for i in range(1, count + 1):
        await session_service.append_event(session, Event(author="user", timestamp=i))

    async def read(config: GetSessionConfig | None) -> list[Event]:
        got = await session_service.get_session(
            app_name="my_app", user_id="user", session_id=session.id, config=config
        )
        assert got is not None
        return got.events

    assert len(await read(None)) == count
    assert not await read(GetSessionConfig(num_recent_events=0))

    recent = await read(GetSessionConfig(num_recent_events=3))
    assert len(recent) == 3
    assert recent[0].timestamp == count - 3 + 1

    after = 4.0
    later = await read(GetSessionConfig(after_timestamp=after))
    assert len(later) == count - after + 1
    assert later[0].timestamp == after

    assert not await read(GetSessionConfig(after_timestamp=count * 10))

    both = await read(GetSessionConfig(after_timestamp=after, num_recent_events=3))
    assert len(both) == count - after + 1


async def test_partial_events_are_not_persisted(
    session_service: StatekeeperSessionService,
) -> None:
    session = await session_service.create_session(app_name="my_app", user_id="user")
    await session_service.append_event(session, Event(author="user", partial=True))
    assert len(session.events) == 0
    got = await session_service.get_session(
        app_name="my_app", user_id="user", session_id=session.id
    )
    assert got is not None
    assert len(got.events) == 0


async def test_get_user_state_returns_empty_dict_when_no_state_exists(
    session_service: StatekeeperSessionService,
) -> None:
    assert not await session_service.get_user_state(app_name="my_app", user_id="u1")


async def test_get_user_state_returns_state_written_via_append_event(
    session_service: StatekeeperSessionService,
) -> None:
    session = await session_service.create_session(app_name="my_app", user_id="u1")
    await session_service.append_event(
        session,
        Event(
            author="system",
            actions=EventActions(state_delta={"user:profile": {"name": "Alice"}, "session_key": 1}),
        ),
    )
    state = await session_service.get_user_state(app_name="my_app", user_id="u1")
    assert state == {"profile": {"name": "Alice"}}
    assert "session_key" not in state


async def test_get_user_state_is_not_visible_across_users(
    session_service: StatekeeperSessionService,
) -> None:
    session = await session_service.create_session(app_name="my_app", user_id="u1")
    await session_service.append_event(
        session,
        Event(author="system", actions=EventActions(state_delta={"user:secret": "only-for-u1"})),
    )
    assert not await session_service.get_user_state(app_name="my_app", user_id="u2")


async def test_get_user_state_is_not_visible_across_apps(
    session_service: StatekeeperSessionService,
) -> None:
    session = await session_service.create_session(app_name="my_app", user_id="u1")
    await session_service.append_event(
        session,
        Event(author="system", actions=EventActions(state_delta={"user:data": "only-app-a"})),
    )
    assert not await session_service.get_user_state(app_name="other_app", user_id="u1")


async def test_get_user_state_available_before_session_is_created(
    session_service: StatekeeperSessionService,
) -> None:
    first = await session_service.create_session(app_name="my_app", user_id="u1")
    await session_service.append_event(
        first, Event(author="system", actions=EventActions(state_delta={"user:ctx": {"v": 1}}))
    )
    assert await session_service.get_user_state(app_name="my_app", user_id="u1") == {
        "ctx": {"v": 1}
    }


async def test_get_user_state_reflects_latest_write(
    session_service: StatekeeperSessionService,
) -> None:
    session = await session_service.create_session(app_name="my_app", user_id="u1")
    for value in (1, 2):
        await session_service.append_event(
            session,
            Event(author="system", actions=EventActions(state_delta={"user:counter": value})),
        )
    state = await session_service.get_user_state(app_name="my_app", user_id="u1")
    assert state["counter"] == 2


# ----- the two contract tests named in upstream's _conformance.py --------------------


async def test_padded_session_id_reads_and_deletes(
    session_service: StatekeeperSessionService,
) -> None:
    created = await session_service.create_session(
        app_name="my_app", user_id="u1", session_id="  padded  "
    )
    assert created.id == "padded"
    got = await session_service.get_session(app_name="my_app", user_id="u1", session_id=" padded ")
    assert got is not None and got.id == "padded"
    await session_service.delete_session(app_name="my_app", user_id="u1", session_id="padded ")
    assert (
        await session_service.get_session(app_name="my_app", user_id="u1", session_id="padded")
        is None
    )


async def test_list_sessions_ordered_by_last_update_time(
    session_service: StatekeeperSessionService,
) -> None:
    base = _now()
    ids = ["first", "second", "third"]
    sessions = {
        session_id: await session_service.create_session(
            app_name="my_app", user_id="u1", session_id=session_id
        )
        for session_id in ids
    }
    # Touch them in an order unlike their creation: third, first, second.
    for offset, session_id in enumerate(["third", "first", "second"], start=1):
        await session_service.append_event(
            sessions[session_id], Event(author="user", timestamp=base + 100 + offset)
        )
    listed = (await session_service.list_sessions(app_name="my_app", user_id="u1")).sessions
    assert [s.id for s in listed] == ["third", "first", "second"]
