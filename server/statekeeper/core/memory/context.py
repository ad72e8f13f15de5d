"""BuildContext: one prompt block from all three memory layers, within a budget.

The budget for memory is token_budget - reserved_output_tokens - the
scaffolding (section headings). It is filled in this order, each entry whole
or not at all:

1. the working window of the session, newest first, up to
   max_working_tokens (default: half of the memory budget), tool-call pairs
   kept together (SessionManager.context_window picks them);
2. facts valid now about the entities named in the message and their
   neighbours, by confidence then recency, up to max_facts;
3. episodes recalled for the message, by combined score, up to max_episodes.

The markdown block has up to three sections, in this order, each omitted when
empty, separated by a blank line:

    ## Known facts
    - <subject> <predicate> <object>
    ## Relevant memories
    - [YYYY-MM-DD] <episode summary>
    ## Recent conversation
    <role>: <text>            (oldest first; tool calls as "-> name(args)")

Token counts use the server's tokenizer (tiktoken cl100k_base). `total` is
the count of the whole block; `overhead` is total minus the entries' own
counts (headings and joins), so the parts always add up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from statekeeper.core.errors import InvalidArgumentError, LimitExceededError
from statekeeper.core.limits import Limits
from statekeeper.core.memory.config import MemoryConfig
from statekeeper.core.memory.episodes import RecallQuery, Score, WeightOverrides
from statekeeper.core.memory.episodic import EpisodicMemory
from statekeeper.core.memory.models import Episode, Fact, Ranking
from statekeeper.core.memory.semantic import SemanticMemory
from statekeeper.core.sessions.context_window import group_units
from statekeeper.core.sessions.models import Message, Role, WindowRequest
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.tokens import REPLY_PRIMING, TokenCounter
from statekeeper.core.validation import check_id, check_text

Clock = Callable[[], float]
FACTS_HEADING = "## Known facts"
EPISODES_HEADING = "## Relevant memories"
WORKING_HEADING = "## Recent conversation"
# Recall this many episodes per one wanted, so that a long episode that does
# not fit can give way to a shorter one further down.
_EPISODE_SURPLUS = 2


@dataclass(frozen=True)
class ContextRequest:
    user_id: str
    session_id: str = ""
    message: str = ""
    token_budget: int = 0
    reserved_output_tokens: int = 0
    max_episodes: int = 0
    max_facts: int = 0
    max_working_tokens: int | None = None
    weights: WeightOverrides = field(default_factory=WeightOverrides)
    min_score: float = 0.0
    # Recall the user's archived episodes too (restoring them first).
    include_archived: bool = False


@dataclass(frozen=True)
class ContextMessage:
    message_id: str
    role: Role
    text: str
    token_count: int


@dataclass(frozen=True)
class ContextEpisode:
    episode: Episode
    score: Score
    text: str
    token_count: int


@dataclass(frozen=True)
class ContextFact:
    fact: Fact
    text: str
    token_count: int


@dataclass(frozen=True)
class ContextTokens:
    budget: int
    reserved_output: int
    overhead: int
    working: int
    episodes: int
    facts: int
    total: int
    remaining: int


@dataclass(frozen=True)
class BuiltContext:
    working: list[ContextMessage]
    episodes: list[ContextEpisode]
    facts: list[ContextFact]
    markdown: str
    tokens: ContextTokens
    omitted_messages: int
    omitted_episodes: int
    omitted_facts: int
    ranking: Ranking


@dataclass
class _Selection:
    working: list[ContextMessage] = field(default_factory=list)
    facts: list[ContextFact] = field(default_factory=list)
    episodes: list[ContextEpisode] = field(default_factory=list)
    window_size: int = 0
    fact_candidates: int = 0
    episode_candidates: int = 0
    ranking: Ranking = Ranking.UNSPECIFIED


class MemoryContextBuilder:
    def __init__(
        self,
        sessions: SessionManager,
        episodes: EpisodicMemory,
        semantic: SemanticMemory,
        counter: TokenCounter,
        config: MemoryConfig,
        limits: Limits,
        clock: Clock = time.time,
    ) -> None:
        self._sessions = sessions
        self._episodes = episodes
        self._semantic = semantic
        self._counter = counter
        self._config = config
        self._limits = limits
        self._clock = clock
        self._scaffold = counter.count(
            "\n\n".join((FACTS_HEADING, EPISODES_HEADING, WORKING_HEADING))
        )

    async def build(self, tenant: str, request: ContextRequest) -> BuiltContext:
        budget = self._check(request)
        memory_budget = max(0, budget - request.reserved_output_tokens - self._scaffold)
        working_cap = memory_budget // 2
        if request.max_working_tokens is not None:
            working_cap = min(request.max_working_tokens, memory_budget)
        chosen = _Selection()
        left = memory_budget
        if request.session_id:
            left -= await self._select_working(tenant, request.session_id, working_cap, chosen)
        if request.message.strip():
            left -= await self._select_facts(tenant, request, left, chosen)
            await self._select_episodes(tenant, request, left, chosen)
        markdown = self._fit(chosen, budget - request.reserved_output_tokens)
        return self._result(chosen, markdown, budget, request.reserved_output_tokens)

    def _check(self, request: ContextRequest) -> int:
        check_id("user_id", request.user_id, self._limits)
        check_id("session_id", request.session_id, self._limits, required=False)
        check_text("message", request.message, self._config.limits.max_text_bytes)
        for name in ("token_budget", "reserved_output_tokens", "max_episodes", "max_facts"):
            if getattr(request, name) < 0:
                raise InvalidArgumentError(name, "must not be negative")
        if request.max_working_tokens is not None and request.max_working_tokens < 0:
            raise InvalidArgumentError("max_working_tokens", "must not be negative")
        if request.min_score < 0:
            raise InvalidArgumentError("min_score", "must not be negative")
        budget = request.token_budget or self._config.context_token_budget
        if budget > self._config.limits.max_token_budget:
            raise LimitExceededError(
                "token_budget", self._config.limits.max_token_budget, f"is {budget}"
            )
        if request.reserved_output_tokens >= budget:
            raise InvalidArgumentError("reserved_output_tokens", "must be below token_budget")
        return budget

    async def _select_working(
        self, tenant: str, session_id: str, cap: int, chosen: _Selection
    ) -> int:
        """Newest messages first, whole tool-call units, within `cap`."""
        record = await self._sessions.get(tenant, session_id)  # NOT_FOUND / SESSION_EXPIRED
        chosen.window_size = record.window_message_count
        if cap <= 0 or record.window_message_count == 0:
            return 0
        window = await self._sessions.context_window(
            tenant,
            session_id,
            WindowRequest(
                token_budget=min(cap + REPLY_PRIMING, self._limits.max_token_budget),
                summary_max_tokens=-1,
            ),
        )
        # The window was picked on chat-framing counts; re-check on the
        # rendered text, which is what goes into the block.
        by_sequence = {m.sequence: m for m in window.messages}
        units = group_units([m.meta() for m in window.messages])
        kept: list[ContextMessage] = []
        used = 0
        for unit in reversed(units):
            rendered = [self._render_message(by_sequence[meta.sequence]) for meta in unit]
            cost = sum(m.token_count for m in rendered)
            if used + cost > cap:
                break  # contiguous: a window never skips a message
            kept[:0] = rendered
            used += cost
        chosen.working = kept
        return used

    def _render_message(self, message: Message) -> ContextMessage:
        text = render_message(message)
        return ContextMessage(message.message_id, message.role, text, self._counter.count(text))

    async def _select_facts(
        self, tenant: str, request: ContextRequest, room: int, chosen: _Selection
    ) -> int:
        wanted = request.max_facts or self._config.context_max_facts
        candidates = await self._semantic.relevant_facts(
            tenant, request.user_id, request.message, self._config.limits.max_entity_facts
        )
        chosen.fact_candidates = len(candidates)
        used = 0
        for fact in candidates:
            if len(chosen.facts) >= wanted:
                break
            text = render_fact(fact)
            cost = self._counter.count(text)
            if used + cost <= room:
                chosen.facts.append(ContextFact(fact, text, cost))
                used += cost
        return used

    async def _select_episodes(
        self, tenant: str, request: ContextRequest, room: int, chosen: _Selection
    ) -> int:
        wanted = request.max_episodes or self._config.context_max_episodes
        outcome = await self._episodes.recall(
            tenant,
            RecallQuery(
                user_id=request.user_id,
                query_text=request.message,
                top_k=wanted * _EPISODE_SURPLUS,
                min_score=request.min_score,
                weights=request.weights,
                include_archived=request.include_archived,
            ),
        )
        chosen.ranking = outcome.ranking
        chosen.episode_candidates = outcome.qualified_count
        used = 0
        for recalled in outcome.results:
            if len(chosen.episodes) >= wanted:
                break
            text = render_episode(recalled.episode)
            cost = self._counter.count(text)
            if used + cost <= room:
                chosen.episodes.append(ContextEpisode(recalled.episode, recalled.score, text, cost))
                used += cost
        return used

    def _fit(self, chosen: _Selection, limit: int) -> str:
        """The markdown, after dropping the least relevant entries should
        joining them cost more than the sum of their counts (BPE merges
        across line breaks). Ends: every pass removes one entry."""
        markdown = render_markdown(chosen)
        while markdown and self._counter.count(markdown) > limit:
            if chosen.episodes:
                chosen.episodes.pop()
            elif chosen.facts:
                chosen.facts.pop()
            else:
                chosen.working.pop(0)
                # Never leave a tool result without the call it answers.
                while chosen.working and chosen.working[0].role == Role.TOOL:
                    chosen.working.pop(0)
            markdown = render_markdown(chosen)
        return markdown

    def _result(
        self, chosen: _Selection, markdown: str, budget: int, reserved: int
    ) -> BuiltContext:
        working = sum(m.token_count for m in chosen.working)
        episodes = sum(e.token_count for e in chosen.episodes)
        facts = sum(f.token_count for f in chosen.facts)
        total = self._counter.count(markdown)
        tokens = ContextTokens(
            budget=budget,
            reserved_output=reserved,
            overhead=total - working - episodes - facts,
            working=working,
            episodes=episodes,
            facts=facts,
            total=total,
            remaining=max(0, budget - reserved - total),
        )
        return BuiltContext(
            working=chosen.working,
            episodes=chosen.episodes,
            facts=chosen.facts,
            markdown=markdown,
            tokens=tokens,
            omitted_messages=max(0, chosen.window_size - len(chosen.working)),
            omitted_episodes=max(0, chosen.episode_candidates - len(chosen.episodes)),
            omitted_facts=max(0, chosen.fact_candidates - len(chosen.facts)),
            ranking=chosen.ranking,
        )


def render_message(message: Message) -> str:
    if message.role == Role.TOOL:
        return f"tool ({message.tool_call_id}): {message.content}"
    lines = [f"{message.role.wire_name}: {message.content}".rstrip()]
    lines.extend(f"-> {call.name}({call.arguments})" for call in message.tool_calls)
    return "\n".join(lines)


def render_fact(fact: Fact) -> str:
    return f"- {fact.subject} {fact.predicate} {fact.object}"


def render_episode(episode: Episode) -> str:
    day = time.strftime("%Y-%m-%d", time.gmtime(episode.occur_time))
    return f"- [{day}] {episode.summary}"


def render_markdown(chosen: _Selection) -> str:
    sections = []
    if chosen.facts:
        sections.append("\n".join([FACTS_HEADING, *(f.text for f in chosen.facts)]))
    if chosen.episodes:
        sections.append("\n".join([EPISODES_HEADING, *(e.text for e in chosen.episodes)]))
    if chosen.working:
        sections.append("\n".join([WORKING_HEADING, *(m.text for m in chosen.working)]))
    return "\n\n".join(sections)
