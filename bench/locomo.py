"""Memory retrieval quality on LoCoMo and on a Chinese conversation.

Every turn of a conversation is recorded as an episode of one user (speaker
name and text, plus the caption of a shared photo, occur_time from the
session date), then every question is asked through Recall(top_k=10);
questions of category 5 (adversarial, no evidence) are skipped, as the
data's README says. Printed per retrieval mode, side by side:

* evidence recall@10 (share of the evidence turns among the 10 recalled,
  averaged over questions), hit@10 (questions with at least one evidence
  turn recalled) and hit@3;
* Recall p50/p95 in process (domain and SQLite store, no gRPC);
* BuildContext tokens (the episodes part, then the total) for the question,
  a 4,000-token budget and at most 10 episodes;
* RecordEpisode throughput: every turn recorded through the domain, 64 at
  a time concurrently, so the default embedder encodes them in batches.

Modes: `lexical` (no embedder: BM25 over the store's full-text index),
`vector` (query_vector from the default embedder: the FAISS index alone),
`hybrid` (query_text with the default embedder, what `statekeeper serve`
does with no flags), and two in-process BM25 baselines over the raw turns:
`bm25-\\w+` (the tokenizer recall used before the lexical index) and
`bm25-terms` (core.lexical's terms). The machine is shared: the load
average is printed with the figures.

Goals (issue 13): LoCoMo evidence recall@10 hybrid >= 0.75, Chinese hit@3
>= 0.90, Recall p50 (~600 episodes) <= 15 ms, RecordEpisode with the
default embedder batched >= 200 episodes/s.

Run: `.venv/bin/python -m bench.locomo [--locomo-dir DIR] [--modes ...]`.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import math
import os
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from statekeeper.adapters.multilingual_embedder import MODEL_NAME, MultilingualEmbedder
from statekeeper.core.limits import Limits
from statekeeper.core.memory import lexical
from statekeeper.core.memory.config import MemoryConfig
from statekeeper.core.memory.context import ContextRequest
from statekeeper.core.memory.episodes import EpisodeDraft, RecallQuery
from statekeeper.core.memory.models import Episode, ValueSource, Vector, content_hash
from statekeeper.core.sessions.service import SessionManager
from statekeeper.core.sessions.summarizer import ExtractiveSummarizer
from statekeeper.core.tokens import TokenCounter
from statekeeper.memory_app import MemoryApp, ModelEndpoints
from statekeeper.storage.embedded.memory import EmbeddedMemoryStore
from statekeeper.storage.embedded.sessions import EmbeddedStorage

REPO = Path(__file__).resolve().parents[1]
DEFAULT_LOCOMO = REPO / ".." / "shared" / "locomo-dev"
CHINESE = REPO / "tests" / "memory" / "chinese_conversation.json"
TENANT = "default"
TOP_K = 10
CONCURRENCY = 64
MODES = ("lexical", "vector", "hybrid", "bm25-\\w+", "bm25-terms")
# --lexical-budget: MemoryLimits.lexical_match_budget for every app (None:
# the server's default).
LEXICAL_BUDGET: int | None = None
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    text: str
    occur_time: float


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]
    category: int = 0  # LoCoMo's: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop


@dataclass(frozen=True)
class Conversation:
    name: str
    turns: list[Turn]
    questions: list[Question]


@dataclass
class Tally:
    recall: list[float] = field(default_factory=list)
    hit10: list[float] = field(default_factory=list)
    hit3: list[float] = field(default_factory=list)
    category: list[int] = field(default_factory=list)
    latency: list[float] = field(default_factory=list)
    context_episodes: list[int] = field(default_factory=list)
    context_total: list[int] = field(default_factory=list)
    recorded: int = 0
    record_seconds: float = 0.0

    def add(self, ranked: Sequence[str], evidence: frozenset[str], category: int = 0) -> None:
        self.category.append(category)
        top = set(ranked[:TOP_K])
        self.recall.append(len(top & evidence) / len(evidence))
        self.hit10.append(1.0 if top & evidence else 0.0)
        self.hit3.append(1.0 if set(ranked[:3]) & evidence else 0.0)


# ----- data ----------------------------------------------------------------


def load_locomo(path: Path) -> Conversation:
    data = json.loads(path.read_text())
    turns = []
    session = 1
    while f"session_{session}" in data:
        when = _session_time(data.get(f"session_{session}_date_time", ""))
        for turn in data[f"session_{session}"]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            turns.append(Turn(turn["dia_id"], text, when))
        session += 1
    questions = [
        Question(q["question"], frozenset(_evidence_ids(q.get("evidence", []))), int(q["category"]))
        for q in data["qa"]
        if q.get("category") != 5 and _evidence_ids(q.get("evidence", []))
    ]
    return Conversation(path.stem, turns, questions)


def load_chinese(path: Path) -> Conversation:
    """The Chinese set in tests: sessions of turns with ids, questions
    with evidence ids (the same layout as tests/memory/test_chinese_recall.py
    reads)."""
    data = json.loads(path.read_text())
    turns = [
        Turn(turn["id"], f"{turn['speaker']}: {turn['text']}", _session_time(session["date"]))
        for session in data["sessions"]
        for turn in session["turns"]
    ]
    questions = [Question(q["question"], frozenset(q["evidence"])) for q in data["questions"]]
    return Conversation("chinese", turns, questions)


def _evidence_ids(raw: Sequence[str]) -> list[str]:
    return [part for item in raw for part in re.split(r"[;,\s]+", item) if part]


def _session_time(text: str) -> float:
    for layout in ("%I:%M %p on %d %B, %Y", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            parsed = datetime.strptime(text.strip(), layout)
            return parsed.replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    return time.time()


# ----- the server's recall ---------------------------------------------------


async def run_app(
    conversation: Conversation, embedder_kind: str, modes: list[str]
) -> dict[str, Tally]:
    """Records the conversation in a fresh embedded store, then asks every
    question in each of `modes` (lexical with no embedder; vector and
    hybrid with the default one)."""
    tallies = {mode: Tally() for mode in modes}
    with tempfile.TemporaryDirectory() as folder:
        app, storage = await _app(Path(folder), embedder_kind)
        try:
            if app.embedder is not None:  # the model loads once per process
                await app.embedder.embed(["load the model"])
            by_episode, seconds = await _record(app, conversation)
            for tally in tallies.values():
                tally.recorded, tally.record_seconds = len(conversation.turns), seconds
            for mode in modes:
                await _ask(app, conversation, mode, by_episode, tallies[mode])
        finally:
            await app.stop()
            await storage.close()
    return tallies


async def _record(app: MemoryApp, conversation: Conversation) -> tuple[dict[str, set[str]], float]:
    """Records every turn; returns the dia_ids of each episode (an exact
    duplicate turn maps to the episode it repeats) and the seconds taken."""
    episodes = app.domain.episodes
    by_episode: dict[str, set[str]] = {}
    started = time.perf_counter()
    turns = conversation.turns
    for start in range(0, len(turns), CONCURRENCY):
        chunk = turns[start : start + CONCURRENCY]
        outcomes = await asyncio.gather(
            *(
                episodes.record(
                    TENANT,
                    EpisodeDraft(
                        user_id=conversation.name,
                        session_id=turn.dia_id.split(":")[0],
                        user_message=turn.text,
                        metadata={"dia_id": turn.dia_id},
                        occur_time=turn.occur_time,
                        near_duplicate_threshold=1.0,
                    ),
                )
                for turn in chunk
            )
        )
        for turn, outcome in zip(chunk, outcomes, strict=True):
            by_episode.setdefault(outcome.episode.episode_id, set()).add(turn.dia_id)
    return by_episode, time.perf_counter() - started


async def _ask(
    app: MemoryApp,
    conversation: Conversation,
    mode: str,
    by_episode: dict[str, set[str]],
    tally: Tally,
) -> None:
    episodes = app.domain.episodes
    embedder = app.embedder
    for question in conversation.questions:
        started = time.perf_counter()
        if mode == "vector":
            assert embedder is not None
            vector = (await embedder.embed([question.text]))[0]
            query = RecallQuery(conversation.name, query_vector=vector.tolist(), top_k=TOP_K)
        else:
            query = RecallQuery(conversation.name, query_text=question.text, top_k=TOP_K)
        outcome = await episodes.recall(TENANT, query)
        tally.latency.append(time.perf_counter() - started)
        ranked = [d for r in outcome.results for d in sorted(by_episode[r.episode.episode_id])]
        tally.add(ranked, question.evidence, question.category)
        if mode != "vector":
            built = await app.domain.context.build(
                TENANT,
                ContextRequest(
                    conversation.name, message=question.text, token_budget=4000, max_episodes=10
                ),
            )
            tally.context_episodes.append(built.tokens.episodes)
            tally.context_total.append(built.tokens.total)


# ----- in-process baselines ----------------------------------------------------


def run_baseline(conversation: Conversation, mode: str) -> Tally:
    tally = Tally()
    texts = [turn.text for turn in conversation.turns]
    for question in conversation.questions:
        started = time.perf_counter()
        if mode == "bm25-terms":
            scores = lexical.bm25_texts(question.text, texts)
        else:
            scores = _bm25_words(question.text, texts)
        order = sorted(range(len(texts)), key=lambda i: -scores[i])
        ranked = [conversation.turns[i].dia_id for i in order[:TOP_K] if scores[i] > 0]
        tally.latency.append(time.perf_counter() - started)
        tally.add(ranked, question.evidence, question.category)
    return tally


def _bm25_words(
    query: str, documents: Sequence[str], k1: float = 1.2, b: float = 0.75
) -> list[float]:
    """BM25 with `\\w+` terms, as recall computed it before the lexical index."""
    terms = set(_WORD.findall(query.casefold()))
    docs = [Counter(_WORD.findall(doc.casefold())) for doc in documents]
    lengths = [sum(doc.values()) for doc in docs]
    average = (sum(lengths) / len(lengths)) or 1.0
    frequency = {t: sum(1 for doc in docs if t in doc) for t in terms}
    scores = []
    for doc, length in zip(docs, lengths, strict=True):
        score = 0.0
        for term in terms:
            tf = doc.get(term, 0)
            if tf:
                idf = math.log(1 + (len(docs) - frequency[term] + 0.5) / (frequency[term] + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))
        scores.append(score)
    return scores


# ----- report ------------------------------------------------------------------


def merge(into: dict[str, Tally], more: dict[str, Tally]) -> None:
    for mode, tally in more.items():
        total = into.setdefault(mode, Tally())
        names = ("recall", "hit10", "hit3", "category", "latency")
        for name in (*names, "context_episodes", "context_total"):
            getattr(total, name).extend(getattr(tally, name))
        total.recorded += tally.recorded
        total.record_seconds += tally.record_seconds


def report(title: str, tallies: dict[str, Tally], episodes: int) -> None:
    print(f"\n{title} ({episodes} episodes, {len(next(iter(tallies.values())).recall)} questions)")
    print(
        f"  {'mode':<11} {'recall@10':>9} {'hit@10':>7} {'hit@3':>6} {'p50 ms':>7} {'p95 ms':>7}"
        f" {'ctx ep tok':>10} {'ctx tok':>8} {'record/s':>9}"
    )
    for mode, tally in tallies.items():
        latency = sorted(tally.latency)
        p50 = statistics.median(latency) * 1e3
        p95 = latency[min(len(latency) - 1, int(len(latency) * 0.95))] * 1e3
        episodes_tokens = _mean(tally.context_episodes)
        total_tokens = _mean(tally.context_total)
        rate = tally.recorded / tally.record_seconds if tally.record_seconds else float("nan")
        print(
            f"  {mode:<11} {_mean(tally.recall):>9.3f} {_mean(tally.hit10):>7.3f}"
            f" {_mean(tally.hit3):>6.3f} {p50:>7.2f} {p95:>7.2f} {episodes_tokens:>10.0f}"
            f" {total_tokens:>8.0f} {rate:>9.0f}"
        )
    categories = sorted({c for tally in tallies.values() for c in tally.category if c})
    if categories:
        print(f"  recall@10 by LoCoMo category ({', '.join(_CATEGORIES[c] for c in categories)}):")
        for mode, tally in tallies.items():
            pairs = list(zip(tally.category, tally.recall, strict=True))
            parts = [f"{c}: {_mean([r for k, r in pairs if k == c]):.3f}" for c in categories]
            print(f"  {mode:<11} {'  '.join(parts)}")


_CATEGORIES = {1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop"}


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


async def evaluate(conversations: list[Conversation], modes: list[str]) -> dict[str, Tally]:
    tallies: dict[str, Tally] = {}
    app_modes = [m for m in modes if m in ("vector", "hybrid")]
    for conversation in conversations:
        per: dict[str, Tally] = {}
        if "lexical" in modes:
            per.update(await run_app(conversation, "none", ["lexical"]))
        if app_modes:
            per.update(await run_app(conversation, "multilingual", app_modes))
        for mode in modes:
            if mode.startswith("bm25"):
                per[mode] = run_baseline(conversation, mode)
        merge(tallies, {mode: per[mode] for mode in modes})
    return tallies


async def lexical_at_scale(conversations: list[Conversation], count: int) -> None:
    """Recall p50/p95 (LEXICAL: no embedder) for one user holding `count`
    episodes: LoCoMo turns repeated with a distinct suffix, bulk-imported,
    sessions of 20; the first 200 LoCoMo questions asked, once with every
    query term matched (lexical_match_budget 0) and once with the default
    budget, side by side. recall@10 counts an evidence turn found when a
    returned episode is a copy of it (any copy, of the question's own
    conversation)."""
    turns = [(c.name, turn.dia_id, turn.text) for c in conversations for turn in c.turns]
    texts = [text for _, _, text in turns]
    default = MemoryConfig().limits.lexical_match_budget
    budgets = [0, default]
    with tempfile.TemporaryDirectory() as folder:
        app, storage = await _app(Path(folder), "none")
        try:
            for start in range(0, count, 2000):
                batch = [_bulk_episode(i, texts) for i in range(start, min(start + 2000, count))]
                await app.store.insert_episodes(TENANT, batch)
            episodes = app.domain.episodes
            base = episodes._config
            variants = {}
            for budget in budgets:
                limits = dataclasses.replace(base.limits, lexical_match_budget=budget)
                variants[f"lexical_match_budget {budget}"] = dataclasses.replace(
                    base, limits=limits
                )
            timed = await _ask_at_scale(app, conversations, turns, variants)
            episodes._config = base
        finally:
            await app.stop()
            await storage.close()
    print(f"\nlexical Recall at {count} episodes of one user ({SCALE_QUESTIONS} questions):")
    _print_at_scale(timed)
    names = list(timed)
    ratio = statistics.median(timed[names[0]][0]) / statistics.median(timed[names[1]][0])
    print(f"  p50 without a budget / with the default: {ratio:.1f}x")


async def hybrid_at_scale(conversations: list[Conversation], count: int) -> None:
    """Recall p50/p95 of a text query with the default embedder (HYBRID,
    what `statekeeper serve` does with no flags) for one user holding
    `count` episodes, built as lexical_at_scale's, each with the default
    embedder's vector of the turn it copies (the suffix aside, the same
    text: each distinct turn is embedded once). The episodes are stored
    first and the index built from them at start, as after a restart (above
    50,000 vectors: HNSW with its measured search breadth)."""
    turns = [(c.name, turn.dia_id, turn.text) for c in conversations for turn in c.turns]
    texts = [text for _, _, text in turns]
    embedder = MultilingualEmbedder()
    vectors = await embedder.embed(texts)
    with tempfile.TemporaryDirectory() as folder:
        storage = EmbeddedStorage(Path(folder))
        await storage.start()
        store = EmbeddedMemoryStore(storage)
        for start in range(0, count, 2000):
            batch = [
                _bulk_episode(i, texts, vectors) for i in range(start, min(start + 2000, count))
            ]
            await store.insert_episodes(TENANT, batch)
        await storage.close()
        started = time.perf_counter()
        app, storage = await _app(Path(folder), "multilingual")
        loaded = time.perf_counter() - started
        try:
            timed = await _ask_at_scale(
                app, conversations, turns, {"hybrid": app.domain.episodes._config}
            )
        finally:
            await app.stop()
            await storage.close()
    print(
        f"\nhybrid Recall at {count} episodes of one user ({SCALE_QUESTIONS} questions;"
        f" index built from the store at start in {loaded:.1f} s):"
    )
    _print_at_scale(timed)


SCALE_QUESTIONS = 200


async def _ask_at_scale(
    app: MemoryApp,
    conversations: list[Conversation],
    turns: list[tuple[str, str, str]],
    variants: dict[str, MemoryConfig],
) -> dict[str, tuple[list[float], list[float]]]:
    """The first SCALE_QUESTIONS questions asked of user "big" once per
    configuration in `variants`, interleaved (each sees the same load):
    latencies and recall@10 (a copy of an evidence turn counts) per name."""
    questions = [(c.name, q) for c in conversations for q in c.questions][:SCALE_QUESTIONS]
    episodes = app.domain.episodes
    timed: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in variants}
    for name, question in questions:
        for variant, config in variants.items():
            episodes._config = config
            started = time.perf_counter()
            query = RecallQuery("big", query_text=question.text, top_k=TOP_K)
            outcome = await episodes.recall(TENANT, query)
            timed[variant][0].append(time.perf_counter() - started)
            found = set()
            for result in outcome.results:
                number = int(result.episode.episode_id.rsplit("-", 1)[1])
                source, dia_id, _ = turns[number % len(turns)]
                if source == name:
                    found.add(dia_id)
            timed[variant][1].append(len(found & question.evidence) / len(question.evidence))
    return timed


def _print_at_scale(timed: dict[str, tuple[list[float], list[float]]]) -> None:
    for name, (latencies, recalls) in timed.items():
        ordered = sorted(latencies)
        print(
            f"  {name}: p50 {statistics.median(ordered) * 1e3:.1f} ms,"
            f" p95 {ordered[int(len(ordered) * 0.95)] * 1e3:.1f} ms,"
            f" recall@10 {_mean(recalls):.3f}"
        )


def _bulk_episode(
    number: int, texts: list[str], vectors: Sequence[Vector] | None = None
) -> Episode:
    text = f"{texts[number % len(texts)]} (note {number})"
    vector = None if vectors is None else vectors[number % len(texts)]
    return Episode(
        episode_id=f"e-bulk-{number}",
        user_id="big",
        session_id=f"s{number // 20}",
        user_message=text,
        assistant_response="",
        summary="",
        summary_source=ValueSource.NONE,
        embedding_source=ValueSource.NONE if vector is None else ValueSource.MODEL,
        embedding_model="" if vector is None else MODEL_NAME,
        importance=0.5,
        metadata={},
        occur_time=1e9 + number,
        create_time=1e9 + number,
        content_hash=content_hash(text, ""),
        dimension=0 if vector is None else len(vector),
        embedding=vector,
    )


async def _app(folder: Path, embedder_kind: str) -> tuple[MemoryApp, EmbeddedStorage]:
    storage = EmbeddedStorage(folder)
    await storage.start()
    counter = TokenCounter()
    sessions = SessionManager(storage.sessions, counter, ExtractiveSummarizer(counter), Limits())
    defaults = MemoryConfig()
    limits = defaults.limits
    if LEXICAL_BUDGET is not None:
        limits = dataclasses.replace(limits, lexical_match_budget=LEXICAL_BUDGET)
    config = dataclasses.replace(
        defaults,
        limits=limits,
        forgetting_interval_seconds=0.0,
        consolidation_interval_seconds=0.0,
        index_maintenance_interval_seconds=0.0,
    )
    endpoints = ModelEndpoints(embedder_kind=embedder_kind)
    app = MemoryApp(storage, sessions, counter, None, Limits(), config, endpoints)
    await app.start(wait_for_indexes=True)
    return app, storage


async def embedder_rate(texts: list[str]) -> float:
    """Texts/s of the default embedder alone (loaded first), CONCURRENCY
    concurrent single-text calls at a time, as concurrent RecordEpisode
    calls make them: what the record rate would be without the store."""
    embedder = MultilingualEmbedder()
    await embedder.embed(["load the model"])
    started = time.perf_counter()
    for start in range(0, len(texts), CONCURRENCY):
        chunk = texts[start : start + CONCURRENCY]
        await asyncio.gather(*(embedder.embed([text]) for text in chunk))
    return len(texts) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo-dir", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--chinese", type=Path, default=CHINESE)
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--limit", type=int, default=0, help="first N LoCoMo conversations")
    parser.add_argument(
        "--scale",
        type=int,
        default=0,
        help="also time lexical and hybrid recall at N episodes of one user",
    )
    parser.add_argument(
        "--lexical-budget",
        type=int,
        default=None,
        help="memory.limits.lexical_match_budget (default: the server's; 0: none)",
    )
    args = parser.parse_args()
    global LEXICAL_BUDGET
    LEXICAL_BUDGET = args.lexical_budget
    budget = MemoryConfig().limits.lexical_match_budget
    print(f"lexical_match_budget: {budget if LEXICAL_BUDGET is None else LEXICAL_BUDGET}")
    print(f"load average before: {os.getloadavg()}")
    files = sorted(args.locomo_dir.resolve().glob("*.json"))
    if args.limit:
        files = files[: args.limit]
    locomo = [load_locomo(path) for path in files]
    if locomo:
        tallies = asyncio.run(evaluate(locomo, args.modes))
        episodes = sum(len(c.turns) for c in locomo)
        report(f"LoCoMo dev {[c.name for c in locomo]}", tallies, episodes)
    else:
        print(f"no LoCoMo conversations in {args.locomo_dir} (--locomo-dir)")
    if args.chinese.exists():
        chinese = load_chinese(args.chinese)
        report(
            "Chinese conversation", asyncio.run(evaluate([chinese], args.modes)), len(chinese.turns)
        )
    if locomo and args.scale:
        asyncio.run(lexical_at_scale(locomo, args.scale))
        asyncio.run(hybrid_at_scale(locomo, args.scale))
    if locomo:
        rate = asyncio.run(embedder_rate([t.text for t in locomo[0].turns]))
        print(f"\ndefault embedder alone, {CONCURRENCY} concurrent calls: {rate:.0f} texts/s")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
