"""Offline ranking loop for LoCoMo and the Chinese conversation: variants of
hybrid Recall's ranking compared in seconds, without a store.

The default embedder's vectors of every turn and question are computed
once and cached (`--cache`, default /tmp/sk-locomo/vectors.npz); then each
question is ranked the way `core.memory.recall` ranks a HYBRID query: the
best 100 by cosine, the lexical matches the store would return (an
in-memory SQLite FTS5 table picks 200 by its bm25, as the embedded store
does), BM25 over them, fusion, session neighbours, top 10. The figures
(evidence recall@10, hit@10, hit@3, per LoCoMo category) track
`bench.locomo`'s hybrid mode, which goes through the real domain and store;
use this loop to explore, that one to confirm.

Run: `.venv/bin/python -m bench.locomo_offline [--locomo-dir DIR]`. With
`--sweep NAME=v1,v2,...` (repeatable: a grid) it also ranks with each
combination of those core.memory.recall weights and prints the
leave-one-conversation-out figures: for each conversation, the weights
chosen on the other four and their recall@10 on the one left out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import sqlite3
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bench.locomo import CHINESE, DEFAULT_LOCOMO, Conversation, load_chinese, load_locomo
from statekeeper.adapters.multilingual_embedder import MODEL_NAME, MultilingualEmbedder
from statekeeper.core.memory import lexical, recall
from statekeeper.core.memory.lexical import LexicalCandidate, LexicalMatches, Neighbour
from statekeeper.core.memory.periods import named_period
from statekeeper.core.memory.summaries import offline_summary
from statekeeper.core.memory.vector_index import Candidate

CACHE = Path("/tmp/sk-locomo/vectors.npz")
TOP_K = 10
Floats = npt.NDArray[np.float32]


@dataclass
class Prepared:
    """One conversation with everything the ranking needs."""

    conversation: Conversation
    terms: list[str]
    vectors: Floats
    question_vectors: Floats
    sessions: list[str]
    fts: sqlite3.Connection = field(repr=False)


# ----- embeddings, cached -------------------------------------------------------


def cached_vectors(texts: Sequence[str], cache: Path) -> dict[str, Floats]:
    """The default embedder's unit vectors of `texts`, from `cache` when it
    holds them (keyed by model and text), else computed and added to it."""
    known: dict[str, Floats] = {}
    if cache.exists():
        stored = np.load(cache, allow_pickle=False)
        keys = [str(k) for k in stored["keys"]]
        known = dict(zip(keys, stored["vectors"], strict=True))
    missing = sorted({t for t in texts if _key(t) not in known})
    if missing:
        embedder = MultilingualEmbedder()
        vectors = asyncio.run(_embed(embedder, missing))
        known.update({_key(t): v for t, v in zip(missing, vectors, strict=True)})
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, keys=np.array(list(known)), vectors=np.stack(list(known.values())))
    return {t: known[_key(t)] for t in texts}


def _key(text: str) -> str:
    return hashlib.sha1(f"{MODEL_NAME}\0{text}".encode()).hexdigest()


async def _embed(embedder: MultilingualEmbedder, texts: list[str]) -> list[Floats]:
    found: list[Floats] = []
    for start in range(0, len(texts), 128):
        for vector in await embedder.embed(texts[start : start + 128]):
            found.append((vector / np.linalg.norm(vector)).astype(np.float32))
    return found


def prepare(conversation: Conversation, vectors: dict[str, Floats]) -> Prepared:
    # As the store indexes an episode recorded with no summary and no
    # summarizer (statekeeper serve with no flags): message and fallback summary.
    terms = [
        lexical.document_terms(turn.text, "", offline_summary(turn.text, ""))
        for turn in conversation.turns
    ]
    fts = sqlite3.connect(":memory:")
    fts.execute("CREATE VIRTUAL TABLE t USING fts5(terms, tokenize = 'unicode61')")
    fts.executemany("INSERT INTO t(rowid, terms) VALUES (?, ?)", enumerate(terms))
    return Prepared(
        conversation,
        terms,
        np.stack([vectors[turn.text] for turn in conversation.turns]),
        np.stack([vectors[q.text] for q in conversation.questions]),
        [turn.dia_id.split(":")[0] for turn in conversation.turns],
        fts,
    )


# ----- the ranking, as core.memory.recall does it ------------------------------


def lexical_matches(prepared: Prepared, wanted: Sequence[str], depth: int) -> LexicalMatches:
    """What the embedded store returns: every term's document frequency,
    then the best `depth` matches by FTS5's bm25."""
    db = prepared.fts
    frequency = {
        t: int(db.execute("SELECT count(*) FROM t WHERE t MATCH ?", (f'"{t}"',)).fetchone()[0])
        for t in wanted
    }
    present = [t for t in wanted if frequency[t]]
    total = len(prepared.terms)
    if not present:
        return LexicalMatches([], total, frequency)
    rows = db.execute(
        "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?",
        (" OR ".join(f'"{t}"' for t in present), depth),
    )
    candidates = [LexicalCandidate(r[0], prepared.terms[r[0]], 0.5, 0.0) for r in rows]
    return LexicalMatches(candidates, total, frequency)


def neighbours(prepared: Prepared, keys: Sequence[int]) -> list[Neighbour]:
    found = []
    sessions = prepared.sessions
    for key in keys:
        if key > 0 and sessions[key - 1] == sessions[key]:
            found.append(Neighbour(key, key - 1, False, 0.5, 0.0))
        if key + 1 < len(sessions) and sessions[key + 1] == sessions[key]:
            found.append(Neighbour(key, key + 1, True, 0.5, 0.0))
    return found


Fused = dict[int, tuple[float, Candidate]]
Ranker = Callable[[Prepared, int], list[int]]


def server_ranker(prepared: Prepared, number: int) -> list[int]:
    """HYBRID ranking as core.memory.recall does it, with its own functions
    and weights."""
    question = prepared.conversation.questions[number]
    cosine = prepared.vectors @ prepared.question_vectors[number]
    best = np.argsort(-cosine, kind="stable")[: recall._HYBRID_MIN_DEPTH]
    vector_scores = {int(k): _candidate(prepared, int(k), cosine) for k in best if cosine[k] > 0}
    wanted = lexical.query_terms(question.text)
    matches = lexical_matches(prepared, wanted, recall._LEXICAL_MIN_DEPTH)
    scores = lexical.bm25_scores(wanted, matches)
    lexical_scores = {
        c.key: (s, _candidate(prepared, c.key, cosine))
        for c, s in zip(matches.candidates, scores, strict=True)
        if s > 0
    }
    for key in lexical_scores:  # their real cosine (recall._cosines)
        if key not in vector_scores and cosine[key] > 0:
            vector_scores[key] = _candidate(prepared, key, cosine)
    fused = recall._fuse(vector_scores, lexical_scores, recall.VECTOR_SHARE)
    best_cosine = max(c.similarity for c in vector_scores.values())
    fused = with_neighbours(prepared, question.text, fused, cosine, best_cosine)
    return sorted(fused, key=lambda k: (-fused[k][0], k))[:TOP_K]


def with_neighbours(
    prepared: Prepared, text: str, fused: Fused, cosine: Floats, best_cosine: float
) -> Fused:
    """recall._with_neighbours with the hybrid's score_new."""
    sources = sorted(fused, key=lambda key: -fused[key][0])[: recall._NEIGHBOUR_SOURCES]
    links = neighbours(prepared, sources)
    boosted = dict(fused)
    for link in links:
        key = link.neighbour_key
        if key not in fused:
            similarity = max(float(cosine[key]), 0.0)
            boosted[key] = (
                recall.VECTOR_SHARE * similarity / best_cosine,
                _candidate(prepared, key, cosine),
            )
    turns = prepared.conversation.turns
    wanted = set(lexical.query_terms(text))
    asking = {}
    for key in sources:
        asked = recall.questions_asked(turns[key].text, "")
        if asked:
            asking[key] = recall.asks_about(asked, wanted)
    for link in links:
        gain = recall._neighbour_share(link, asking.get(link.key)) * fused[link.key][0]
        if link.neighbour_key in boosted:
            similarity, candidate = boosted[link.neighbour_key]
            boosted[link.neighbour_key] = (similarity + gain, candidate)
    period = named_period(text)
    if period is not None:
        for key, (similarity, candidate) in boosted.items():
            if period.contains(candidate.occur_time):
                boosted[key] = (similarity + recall.NAMED_PERIOD_BOOST, candidate)
    favour_named_speakers(prepared, text, sources, boosted)
    return boosted


def favour_named_speakers(
    prepared: Prepared, text: str, read: Sequence[int], boosted: Fused
) -> None:
    """recall._favour_named_speakers: the speakers the query names among
    those of the episodes read (the neighbour sources), then the bonus for
    the best candidates they spoke."""
    turns = prepared.conversation.turns
    terms = lexical.query_terms(text)
    tags = {tag for key in read if (tag := lexical.speaker_tag(turns[key].text)) is not None}
    named = {tag for tag in tags if lexical.names_speaker(text, terms, tag)}
    if not named:
        return
    best = sorted(boosted, key=lambda key: (-boosted[key][0], key))[: recall._SPEAKER_DEPTH]
    for key in best:
        if lexical.speaker_tag(turns[key].text) in named:
            similarity, candidate = boosted[key]
            boosted[key] = (similarity + recall.NAMED_SPEAKER_BOOST, candidate)


def _candidate(prepared: Prepared, key: int, cosine: Floats) -> Candidate:
    occur_time = prepared.conversation.turns[key].occur_time
    return Candidate(key, max(float(cosine[key]), 0.0), 0.5, occur_time)


# ----- scoring -------------------------------------------------------------------


@dataclass
class Figures:
    recall: list[float] = field(default_factory=list)
    hit10: list[float] = field(default_factory=list)
    hit3: list[float] = field(default_factory=list)

    def add(self, ranked: Sequence[str], evidence: frozenset[str]) -> None:
        top = set(ranked[:TOP_K])
        self.recall.append(len(top & evidence) / len(evidence))
        self.hit10.append(1.0 if top & evidence else 0.0)
        self.hit3.append(1.0 if set(ranked[:3]) & evidence else 0.0)

    def line(self) -> str:
        return (
            f"{_mean(self.recall):.3f} {_mean(self.hit10):.3f} {_mean(self.hit3):.3f}"
            f" (n={len(self.recall)})"
        )


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def evaluate(prepared: Sequence[Prepared], ranker: Ranker) -> dict[int, Figures]:
    """Figures per category (0: all questions)."""
    figures: dict[int, Figures] = {0: Figures()}
    for item in prepared:
        turns = item.conversation.turns
        for number, question in enumerate(item.conversation.questions):
            ranked = [turns[k].dia_id for k in ranker(item, number)]
            for category in (0, question.category):
                figures.setdefault(category, Figures()).add(ranked, question.evidence)
    return figures


def report(name: str, locomo: dict[int, Figures], chinese: dict[int, Figures]) -> None:
    categories = " ".join(f"c{c} {_mean(locomo[c].recall):.3f}" for c in sorted(locomo) if c)
    print(
        f"{name:<28} locomo r@10 {_mean(locomo[0].recall):.3f} h@10 {_mean(locomo[0].hit10):.3f}"
        f" h@3 {_mean(locomo[0].hit3):.3f} | {categories} | zh r@10"
        f" {_mean(chinese[0].recall):.3f} h@3 {_mean(chinese[0].hit3):.3f}"
    )


def load(locomo_dir: Path, cache: Path) -> tuple[list[Prepared], list[Prepared]]:
    locomo = [load_locomo(path) for path in sorted(locomo_dir.resolve().glob("*.json"))]
    chinese = [load_chinese(CHINESE)]
    texts = [t.text for c in locomo + chinese for t in c.turns]
    texts += [q.text for c in locomo + chinese for q in c.questions]
    vectors = cached_vectors(texts, cache)
    return [prepare(c, vectors) for c in locomo], [prepare(c, vectors) for c in chinese]


# ----- leave-one-conversation-out ------------------------------------------------

Setting = tuple[float, ...]


def sweep(
    locomo: Sequence[Prepared], chinese: Sequence[Prepared], grid: dict[str, list[float]]
) -> None:
    """Every combination of the `grid`'s values of core.memory.recall's
    weights (module constants, e.g. NAMED_SPEAKER_BOOST), each ranked on
    every conversation; prints the best combination chosen on all of them
    (in-sample), then, for each conversation, the one chosen on the others
    and its figure on the conversation left out, next to the figures there of
    the current weights and of the grid's first values (e.g. the weights
    before a change)."""
    names = list(grid)
    current: Setting = tuple(float(getattr(recall, name)) for name in names)
    first: Setting = tuple(values[0] for values in grid.values())
    settings = sorted({current, *itertools.product(*grid.values())})
    recalls: dict[Setting, list[list[float]]] = {}
    chinese_hit3: dict[Setting, float] = {}
    for setting in settings:
        with _weights(dict(zip(names, setting, strict=True))):
            recalls[setting] = [evaluate([item], server_ranker)[0].recall for item in locomo]
            chinese_hit3[setting] = _mean(evaluate(chinese, server_ranker)[0].hit3)

    def recall_on(setting: Setting, folds: Sequence[int]) -> float:
        return _mean([value for fold in folds for value in recalls[setting][fold]])

    every = range(len(locomo))
    best = max(settings, key=lambda s: (recall_on(s, every), s == current))
    print(
        f"weights {names}; current {current}: recall@10 {recall_on(current, every):.4f};"
        f" first values {first}: {recall_on(first, every):.4f}"
    )
    print(
        f"in-sample best {best}: recall@10 {recall_on(best, every):.4f},"
        f" Chinese hit@3 {chinese_hit3[best]:.3f}"
    )
    held_out: list[float] = []
    for fold in every:
        others = [f for f in every if f != fold]
        chosen = max(settings, key=lambda s: (recall_on(s, others), s == current))
        held_out += recalls[chosen][fold]
        name = locomo[fold].conversation.name
        print(
            f"  left out {name}: chosen {chosen} on the others, recall@10 there"
            f" {recall_on(chosen, [fold]):.4f} (current {recall_on(current, [fold]):.4f},"
            f" first values {recall_on(first, [fold]):.4f})"
        )
    print(
        f"leave-one-conversation-out recall@10 {_mean(held_out):.4f} (first values"
        f" {recall_on(first, every):.4f})"
    )


@contextlib.contextmanager
def _weights(values: dict[str, float]) -> Iterator[None]:
    saved = {name: getattr(recall, name) for name in values}
    for name, value in values.items():
        setattr(recall, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(recall, name, value)


def _grid(text: str) -> tuple[str, list[float]]:
    name, _, values = text.partition("=")
    if not hasattr(recall, name) or not values:
        raise argparse.ArgumentTypeError(f"expected NAME=v1,v2 with a recall constant: {text}")
    return name, [float(v) for v in values.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo-dir", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument(
        "--sweep",
        type=_grid,
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="a recall weight and values to try (repeat for a grid): leave-one-out figures",
    )
    args = parser.parse_args()
    locomo, chinese = load(args.locomo_dir, args.cache)
    report("server ranking", evaluate(locomo, server_ranker), evaluate(chinese, server_ranker))
    if args.sweep:
        sweep(locomo, chinese, dict(args.sweep))


if __name__ == "__main__":
    main()
