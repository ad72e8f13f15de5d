"""Semantic memory: a knowledge graph of triples with provenance and validity.

Facts are never deleted by contradiction: a newer fact on a single-valued
predicate invalidates the older one (its `valid_to` is lowered and it stays
readable), which is what makes as-of queries answerable. The rules of adding
a fact live in `resolve_fact`, a pure function every store backend calls
inside its transaction, so that the rules exist once.
"""

from __future__ import annotations

import logging
import math
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from statekeeper.core import paging
from statekeeper.core.audit.service import Actor
from statekeeper.core.errors import InvalidArgumentError, LimitExceededError, NotFoundError
from statekeeper.core.limits import Limits
from statekeeper.core.memory.config import MemoryLimits
from statekeeper.core.memory.models import (
    Fact,
    FactBatch,
    FactCursor,
    FactDraft,
    FactOrigin,
    FactOutcome,
    FactQuery,
    FactResult,
    Neighbourhood,
    NeighbourhoodQuery,
    Predicate,
    ValueSource,
    audit_template,
    entity_key,
)
from statekeeper.core.memory.store import EpisodeStore, FactStore
from statekeeper.core.validation import check_id, check_text, page_size

log = logging.getLogger(__name__)

Clock = Callable[[], float]
CONTRADICTED = "contradicted"


# ----- the rule of adding one fact (shared by every backend) ---------------


@dataclass(frozen=True)
class FactResolution:
    """What adding one draft does: the resulting fact, and the rows to write."""

    result: FactResult
    created: Fact | None = None
    updated: tuple[Fact, ...] = ()


def resolve_fact(
    draft: FactDraft,
    new_id: str,
    batch: FactBatch,
    current: Sequence[Fact],
    single_valued: bool,
) -> FactResolution:
    """Applies the AddFacts rules to one draft.

    `current` are the facts of the batch's scope with the draft's subject and
    predicate keys that are valid at `batch.now`. Same object: deduplicated,
    the existing fact keeps the larger confidence. Otherwise a new fact, and
    on a single-valued predicate every other current fact is invalidated with
    `valid_to` lowered to the new fact's `valid_from`.
    """
    object_key = entity_key(draft.object)
    for existing in current:
        if entity_key(existing.object) == object_key:
            merged = existing.evolve(confidence=max(existing.confidence, draft.confidence))
            changed = (merged,) if merged.confidence != existing.confidence else ()
            return FactResolution(FactResult(merged, FactOutcome.DEDUPLICATED), updated=changed)
    valid_from = batch.now if draft.valid_from is None else draft.valid_from
    created = Fact(
        fact_id=new_id,
        user_id=batch.user_id,
        subject=draft.subject.strip(),
        predicate=draft.predicate.strip(),
        object=draft.object.strip(),
        source=draft.source,
        confidence=draft.confidence,
        valid_from=valid_from,
        valid_to=draft.valid_to,
        origin=batch.origin,
        source_episode_ids=batch.source_episode_ids,
        create_time=batch.now,
    )
    invalidated = (
        tuple(_contradicted(old, created, batch.now) for old in current) if single_valued else ()
    )
    return FactResolution(
        FactResult(created, FactOutcome.CREATED, tuple(f.fact_id for f in invalidated)),
        created=created,
        updated=invalidated,
    )


def _contradicted(old: Fact, newer: Fact, now: float) -> Fact:
    valid_to = old.valid_to
    if valid_to is None or valid_to > newer.valid_from:
        valid_to = newer.valid_from
    return old.evolve(
        valid_to=valid_to,
        invalidate_time=now,
        invalidated_by=newer.fact_id,
        invalidation_reason=CONTRADICTED,
    )


# ----- extraction ------------------------------------------------------------


@dataclass(frozen=True)
class Extraction:
    facts: list[FactDraft]
    source: ValueSource


class FactExtractor(Protocol):
    """Turns text into triples. Never raises for a model outage: it falls
    back to the offline extractor and says so in `source`."""

    async def extract(self, text: str) -> Extraction: ...


_CLAUSE_SPLIT = re.compile(r"(?<=[.!?;\n])\s+")
_WORD = r"[\w][\w .'-]*?"
# Deterministic patterns, most specific first: (regex, predicate or None to
# take the verb from the match).
_PATTERNS: list[tuple[re.Pattern[str], str | None]] = [
    (re.compile(rf"^(?:my name is|i am called|call me) (?P<o>{_WORD})$", re.I), "name"),
    (re.compile(rf"^i (?P<p>live|work|study) (?:in|at|for) (?P<o>{_WORD})$", re.I), None),
    (re.compile(rf"^i (?P<p>like|love|prefer|hate|dislike|use|own) (?P<o>{_WORD})$", re.I), None),
    (
        re.compile(
            rf"^(?P<s>{_WORD}) (?P<p>lives|works|studies) (?:in|at|for) (?P<o>{_WORD})$", re.I
        ),
        None,
    ),
    (re.compile(rf"^(?P<s>{_WORD}) (?:is|was) (?:a |an |the )?(?P<o>{_WORD})$", re.I), "is_a"),
]
_VERB_PREDICATES = {
    "live": "lives_in",
    "lives": "lives_in",
    "work": "works_at",
    "works": "works_at",
    "study": "studies_at",
    "studies": "studies_at",
}


class PatternFactExtractor:
    """The deterministic offline extractor: a handful of English sentence
    patterns ("I live in X", "X works at Y", "X is a Y", "I like X"). First
    person becomes the subject "user". Same text, same facts."""

    def __init__(self, max_facts: int = 50) -> None:
        self._max_facts = max_facts

    async def extract(self, text: str) -> Extraction:
        return Extraction(self.extract_now(text), ValueSource.FALLBACK)

    def extract_now(self, text: str) -> list[FactDraft]:
        facts: list[FactDraft] = []
        seen: set[tuple[str, str, str]] = set()
        for clause in _CLAUSE_SPLIT.split(text):
            draft = _match_clause(clause.strip().rstrip(".!?;").strip())
            if draft is None:
                continue
            key = (entity_key(draft.subject), draft.predicate, entity_key(draft.object))
            if key not in seen:
                seen.add(key)
                facts.append(draft)
            if len(facts) >= self._max_facts:
                break
        return facts


def _match_clause(clause: str) -> FactDraft | None:
    for pattern, predicate in _PATTERNS:
        match = pattern.match(clause)
        if match is None:
            continue
        groups = match.groupdict()
        verb = (groups.get("p") or "").lower()
        name = predicate or _VERB_PREDICATES.get(verb, verb)
        subject = groups.get("s") or "user"
        return FactDraft(
            subject=subject.strip(), predicate=name, object=groups["o"].strip(), confidence=0.6
        )
    return None


# ----- the capability ----------------------------------------------------------


@dataclass(frozen=True)
class ExtractOutcome:
    extracted: list[FactDraft]
    results: list[FactResult]
    source: ValueSource


@dataclass(frozen=True)
class EntityRequest:
    user_id: str
    entity: str
    depth: int = 0
    as_of: float | None = None
    include_invalidated: bool = False
    predicates: tuple[str, ...] = field(default_factory=tuple)
    max_facts: int = 0


class SemanticMemory:
    """Facts, predicates and graph queries, independent of transport and storage."""

    def __init__(
        self,
        facts: FactStore,
        episodes: EpisodeStore,
        extractor: FactExtractor,
        limits: Limits,
        memory_limits: MemoryLimits,
        clock: Clock = time.time,
    ) -> None:
        self._facts = facts
        self._episodes = episodes
        self._extractor = extractor
        self._limits = limits
        self._memory_limits = memory_limits
        self._clock = clock

    @property
    def extractor(self) -> FactExtractor:
        return self._extractor

    async def add_facts(
        self,
        tenant: str,
        user_id: str,
        drafts: Sequence[FactDraft],
        origin: FactOrigin = FactOrigin.CLIENT,
        source_episode_ids: tuple[str, ...] = (),
        field_name: str = "facts",
        actor: Actor | None = None,
    ) -> list[FactResult]:
        check_id("user_id", user_id, self._limits, required=False)
        if not drafts:
            raise InvalidArgumentError(field_name, "at least one fact is required")
        if len(drafts) > self._memory_limits.max_facts_per_request:
            raise LimitExceededError(
                field_name, self._memory_limits.max_facts_per_request, f"has {len(drafts)} facts"
            )
        for index, draft in enumerate(drafts):
            self.check_draft(f"{field_name}[{index}]", draft)
        batch = FactBatch(
            user_id=user_id,
            drafts=tuple(drafts),
            new_ids=tuple(new_fact_id() for _ in drafts),
            origin=origin,
            now=self._clock(),
            source_episode_ids=source_episode_ids,
        )
        return await self._facts.apply_facts(tenant, batch, audit_template(actor, batch.now))

    def check_draft(self, field_name: str, draft: FactDraft) -> None:
        limits = self._memory_limits
        for name in ("subject", "predicate", "object"):
            if not getattr(draft, name).strip():
                raise InvalidArgumentError(f"{field_name}.{name}", "is required")
        check_text(f"{field_name}.subject", draft.subject, limits.max_fact_field_bytes)
        check_text(f"{field_name}.object", draft.object, limits.max_fact_field_bytes)
        check_text(f"{field_name}.source", draft.source, limits.max_fact_field_bytes)
        check_text(f"{field_name}.predicate", draft.predicate, limits.max_predicate_bytes)
        if not (0.0 <= draft.confidence <= 1.0) or math.isnan(draft.confidence):
            raise InvalidArgumentError(f"{field_name}.confidence", "must be in [0, 1]")
        if (
            draft.valid_from is not None
            and draft.valid_to is not None
            and draft.valid_to <= draft.valid_from
        ):
            raise InvalidArgumentError(f"{field_name}.valid_to", "must be after valid_from")

    async def extract_facts(
        self,
        tenant: str,
        user_id: str,
        text: str,
        episode_id: str,
        source: str,
        dry_run: bool,
        actor: Actor | None = None,
    ) -> ExtractOutcome:
        check_id("user_id", user_id, self._limits, required=False)
        provenance: tuple[str, ...] = ()
        if episode_id:
            check_id("episode_id", episode_id, self._limits)
            episode = await self._episodes.get_episode(tenant, episode_id, False)
            if episode is None:
                raise NotFoundError(f"episode {episode_id!r} not found")
            text = "\n".join(
                part
                for part in (episode.user_message, episode.assistant_response, episode.summary)
                if part
            )
            user_id = user_id or episode.user_id
            source = source or f"episode:{episode_id}"
            provenance = (episode_id,)
        elif not text.strip():
            raise InvalidArgumentError("text", "is required (or set episode_id)")
        else:
            check_text("text", text, self._memory_limits.max_text_bytes)
        extraction = await self._extractor.extract(text)
        drafts = [_with_source(d, source) for d in extraction.facts]
        drafts = drafts[: self._memory_limits.max_extracted_facts]
        if dry_run or not drafts:
            return ExtractOutcome(drafts, [], extraction.source)
        results = await self.add_facts(
            tenant,
            user_id,
            drafts,
            FactOrigin.EXTRACTION,
            provenance,
            field_name="extracted",
            actor=actor,
        )
        return ExtractOutcome(drafts, results, extraction.source)

    async def get_fact(self, tenant: str, fact_id: str) -> Fact:
        check_id("fact_id", fact_id, self._limits)
        fact = await self._facts.get_fact(tenant, fact_id)
        if fact is None:
            raise NotFoundError(f"fact {fact_id!r} not found")
        return fact

    async def list_facts(
        self, tenant: str, query: FactQuery, requested_page_size: int, page_token: str
    ) -> tuple[list[Fact], str]:
        check_id("user_id", query.user_id, self._limits, required=False)
        size = page_size("page_size", requested_page_size, self._limits)
        position = paging.decode(page_token, "facts", query.as_key())
        after = _fact_cursor(position)
        keyed = FactQuery(
            user_id=query.user_id,
            subject=entity_key(query.subject),
            predicate=entity_key(query.predicate),
            object=entity_key(query.object),
            include_invalidated=query.include_invalidated,
        )
        facts = await self._facts.list_facts(tenant, keyed, self._clock(), after, size + 1)
        next_token = ""
        if len(facts) > size:
            facts = facts[:size]
            last = facts[-1]
            next_token = paging.encode("facts", query.as_key(), [last.create_time, last.fact_id])
        return facts, next_token

    async def query_entity(self, tenant: str, request: EntityRequest) -> Neighbourhood:
        check_id("user_id", request.user_id, self._limits, required=False)
        limits = self._memory_limits
        if not request.entity.strip():
            raise InvalidArgumentError("entity", "is required")
        check_text("entity", request.entity, limits.max_fact_field_bytes)
        if not 0 <= request.depth <= limits.max_entity_depth:
            raise InvalidArgumentError("depth", f"must be in [0, {limits.max_entity_depth}]")
        if request.max_facts < 0:
            raise InvalidArgumentError("max_facts", "must not be negative")
        max_facts = min(request.max_facts or limits.default_entity_facts, limits.max_entity_facts)
        query = NeighbourhoodQuery(
            user_id=request.user_id,
            entity=entity_key(request.entity),
            depth=request.depth or 1,
            as_of=self._clock() if request.as_of is None else request.as_of,
            include_invalidated=request.include_invalidated,
            predicates=tuple(entity_key(p) for p in request.predicates if p.strip()),
            max_facts=max_facts,
        )
        found = await self._facts.neighbourhood(tenant, query)
        if found.nodes:
            # The queried entity is spelled as the caller spelled it.
            first = found.nodes[0]
            found.nodes[0] = type(first)(request.entity.strip(), first.depth)
        return found

    async def invalidate_fact(
        self,
        tenant: str,
        fact_id: str,
        reason: str,
        valid_to: float | None,
        actor: Actor | None = None,
    ) -> tuple[Fact, bool]:
        check_id("fact_id", fact_id, self._limits)
        check_text("reason", reason, self._memory_limits.max_description_bytes)
        existing = await self.get_fact(tenant, fact_id)
        if valid_to is not None and valid_to < existing.valid_from:
            raise InvalidArgumentError("valid_to", "is before the fact's valid_from")
        now = self._clock()
        outcome = await self._facts.invalidate_fact(
            tenant, fact_id, reason or "invalidated", valid_to, now, audit_template(actor, now)
        )
        if outcome is None:
            raise NotFoundError(f"fact {fact_id!r} not found")
        return outcome

    async def declare_predicate(
        self,
        tenant: str,
        name: str,
        single_valued: bool,
        description: str,
        actor: Actor | None = None,
    ) -> Predicate:
        if not name.strip():
            raise InvalidArgumentError("name", "is required")
        check_text("name", name, self._memory_limits.max_predicate_bytes)
        check_text("description", description, self._memory_limits.max_description_bytes)
        now = self._clock()
        return await self._facts.declare_predicate(
            tenant,
            Predicate(entity_key(name), single_valued, description, now, now),
            audit_template(actor, now),
        )

    async def list_predicates(
        self, tenant: str, requested_page_size: int, page_token: str
    ) -> tuple[list[Predicate], str]:
        size = page_size("page_size", requested_page_size, self._limits)
        after = str(paging.decode(page_token, "predicates", []) or "")
        found = await self._facts.list_predicates(tenant, after, size + 1)
        next_token = ""
        if len(found) > size:
            found = found[:size]
            next_token = paging.encode("predicates", [], found[-1].name)
        return found, next_token

    async def relevant_facts(
        self, tenant: str, user_id: str, message: str, limit: int
    ) -> list[Fact]:
        """Facts valid now about the entities named in `message` and their
        depth-1 neighbours, by confidence, then newest first. `limit` bounds
        how many are read from the store, not how many the caller keeps."""
        keys = await self._facts.entities_among(
            tenant, user_id, candidate_entity_keys(message, self._memory_limits)
        )
        now = self._clock()
        found: dict[str, Fact] = {}
        for key in keys:
            query = NeighbourhoodQuery(user_id, key, 2, now, False, (), limit)
            for fact in (await self._facts.neighbourhood(tenant, query)).edges:
                found.setdefault(fact.fact_id, fact)
        return sorted(found.values(), key=lambda f: (-f.confidence, -f.create_time, f.fact_id))


def candidate_entity_keys(message: str, limits: MemoryLimits) -> list[str]:
    """Every run of 1..entity_ngram_words words of the message, as entity
    keys: the names an entity in the message could have."""
    words = re.findall(r"[\w'-]+", message.casefold())[: limits.entity_scan_words]
    keys: set[str] = set()
    for start in range(len(words)):
        for length in range(1, limits.entity_ngram_words + 1):
            if start + length > len(words):
                break
            keys.add(" ".join(words[start : start + length]))
    return sorted(keys)


def new_fact_id() -> str:
    return "f-" + uuid.uuid4().hex


def _with_source(draft: FactDraft, source: str) -> FactDraft:
    if draft.source or not source:
        return draft
    return FactDraft(
        draft.subject,
        draft.predicate,
        draft.object,
        source,
        draft.confidence,
        draft.valid_from,
        draft.valid_to,
    )


def _fact_cursor(position: Any) -> FactCursor | None:
    if position is None:
        return None
    try:
        create_time, fact_id = position
        return FactCursor(float(create_time), str(fact_id))
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError("page_token", "is malformed") from exc
