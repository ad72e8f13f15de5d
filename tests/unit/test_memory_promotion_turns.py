"""How session messages pair into the turns promoted to episodic memory, and who
opts in (core/memory/promotion.py). The end-to-end behaviour is in
tests/e2e/test_memory_promotion.py."""

from __future__ import annotations

from statekeeper.core.memory.promotion import agent_set, opted_in, pair_turns
from statekeeper.core.sessions.models import Message, Role, SessionRecord, ToolCall


def msg(sequence: int, role: Role, content: str, calls: bool = False) -> Message:
    tool_calls = (ToolCall("c", "lookup", "{}"),) if calls else ()
    return Message(sequence, f"m{sequence}", role, content, tool_calls=tool_calls)


def summary(messages: list[Message]) -> list[tuple[int, int, str, str, bool]]:
    return [
        (t.first, t.last, " | ".join(t.user), " | ".join(t.assistant), t.complete)
        for t in pair_turns(messages)
    ]


def test_user_then_assistant_is_a_complete_turn_and_system_is_skipped() -> None:
    messages = [
        msg(1, Role.SYSTEM, "be brief"),
        msg(2, Role.USER, "hi"),
        msg(3, Role.ASSISTANT, "hello"),
    ]
    assert summary(messages) == [(2, 3, "hi", "hello", True)]


def test_tool_calls_fold_into_the_final_answer() -> None:
    messages = [
        msg(1, Role.USER, "weather?"),
        msg(2, Role.ASSISTANT, "", calls=True),
        msg(3, Role.TOOL, "sunny"),
    ]
    assert summary(messages) == [(1, 3, "weather?", "", False)]
    messages.append(msg(4, Role.ASSISTANT, "Sunny today."))
    assert summary(messages) == [(1, 4, "weather?", "Sunny today.", True)]


def test_a_question_without_answer_waits_until_the_next_user_message() -> None:
    assert summary([msg(1, Role.USER, "anyone?")]) == [(1, 1, "anyone?", "", False)]
    both = summary([msg(1, Role.USER, "anyone?"), msg(2, Role.USER, "hello?")])
    assert both == [(1, 1, "anyone?", "", True), (2, 2, "hello?", "", False)]


def test_assistant_speaking_first_is_a_turn_of_its_own() -> None:
    messages = [msg(1, Role.ASSISTANT, "Welcome!"), msg(2, Role.USER, "thanks")]
    assert summary(messages)[0] == (1, 1, "", "Welcome!", True)


def test_opt_in_by_metadata_or_agent_and_opt_out() -> None:
    agents = agent_set(" helper , other ")
    assert agents == {"helper", "other"}
    plain = SessionRecord("s", "u")
    assert not opted_in(plain, agents)
    assert opted_in(
        SessionRecord("s", "u", metadata={"statekeeper.memory.promote": "true"}), agents
    )
    assert opted_in(SessionRecord("s", "u", agent_id="helper"), agents)
    out = SessionRecord(
        "s", "u", agent_id="helper", metadata={"statekeeper.memory.promote": "false"}
    )
    assert not opted_in(out, agents)
    assert opted_in(SessionRecord("s", "u", agent_id="x"), agent_set("*"))
