"""SessionRecord.evolve (the copy every session change makes) gives what
dataclasses.replace gives, and append's message ids stay version 4 UUIDs."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from statekeeper.core.sessions.models import SessionRecord, SessionStatus, ToolCall
from statekeeper.core.sessions.service import _new_message_id


def sample() -> SessionRecord:
    return SessionRecord(
        session_id="s",
        user_id="u",
        status=SessionStatus.ACTIVE,
        context_variables={"k": [1, 2]},
        pending_tool_calls=(ToolCall("c1", "f", "{}"),),
        metadata={"m": "v"},
        version=3,
        visible_ranges=((1, 4),),
    )


def test_evolve_is_replace() -> None:
    record = sample()
    changes = {"version": 4, "last_sequence": 9, "visible_ranges": ((1, 9),), "agent_id": "a"}
    evolved = record.evolve(**changes)
    assert evolved == replace(record, **changes)
    assert evolved.version == 4 and evolved.agent_id == "a"
    assert record.version == 3 and record.agent_id == ""  # the original is untouched
    assert record.evolve() == record


def test_evolved_record_stays_frozen() -> None:
    evolved = sample().evolve(version=5)
    with pytest.raises(AttributeError):
        evolved.version = 6  # type: ignore[misc]


def test_evolve_refuses_unknown_fields() -> None:
    with pytest.raises(TypeError, match="no field vesion"):
        sample().evolve(vesion=4)


def test_message_ids_are_random_version_4_uuids() -> None:
    ids = {_new_message_id() for _ in range(500)}
    assert len(ids) == 500
    for text in ids:
        parsed = uuid.UUID(text)
        assert parsed.hex == text
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
