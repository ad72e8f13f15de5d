"""Lexical terms and BM25, shared by every store so both backends agree.

Text is turned into terms here, in Python, once at write time; the stores
only index the resulting space-separated term string (SQLite FTS5,
PostgreSQL tsvector) and never tokenize it themselves. So English and
Chinese are split the same way on both backends:

* runs of Latin (and other space-delimited) letters and digits become
  words, case-folded, English stop words dropped, Snowball-stemmed
  ("hiking" and "hikes" both give "hike");
* runs of CJK characters (no spaces between words) become their
  characters and their overlapping character bigrams ("团子三岁" gives
  "团 子 三 岁 团子 子三 三岁"). Bigrams need no dictionary and match
  Chinese words of two or more characters, the common case; characters
  match the rest ("养狗" and "养一只狗" share 养 and 狗), and BM25's idf
  keeps common ones (的, 了) cheap. On the Chinese test conversation,
  characters with bigrams lift hybrid hit@3 from 0.87 to 0.92.

Stores return the matching episodes with their terms and the corpus
statistics (document count, per-term document frequency); `bm25_scores`
ranks them. Ranking in Python, not in SQL, keeps the scores the same on
both backends (PostgreSQL's ts_rank knows no inverse document frequency).

`speaker_tag` and `names_speaker` read who speaks in a transcript turn
("Caroline: ...") and whether a query names that speaker, for recall's
gain to the named speaker's turns (core/memory/recall.py).
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import snowballstemmer

# Changing the terms a text gives needs a migration that sets the stores'
# lexical_terms to NULL (and empties the SQLite FTS table): the backfill run
# at start then derives them again.
MAX_QUERY_TERMS = 64
# Longer words (hashes, base64 blobs) are not indexed: nobody searches for
# them by hand, and PostgreSQL refuses lexemes over 2047 bytes.
MAX_WORD_CHARS = 100

_RUN = re.compile(r"[^\W_]+")
_CJK = re.compile(
    "([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002ffff]+)"
)
# Words too common to tell episodes apart; they would only add noise to the
# OR query (idf makes them cheap but not free).
_STOP_WORD_TEXT = """a about above after again against all am an and any are as at be because
    been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve"""
_STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())
_stemmer = snowballstemmer.stemmer("english")


def terms(text: str) -> list[str]:
    """The index terms of `text`, in order, repeats kept (they count)."""
    return list(_iter_terms(text))


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, first occurrence first, at most
    MAX_QUERY_TERMS."""
    return list(dict.fromkeys(_iter_terms(text)))[:MAX_QUERY_TERMS]


def document_terms(*parts: str) -> str:
    """The term string stored and indexed for an episode's texts."""
    return " ".join([t for part in parts if part for t in _part_terms(part)])


def _part_terms(text: str) -> list[str]:
    """`terms(text)`; text without CJK characters (most of it) skips the
    per-run CJK split: one scan of the whole text instead of one regex call
    per word."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    if _CJK.search(normal) is not None:
        return list(_iter_terms(text))
    return [
        _stem(run)
        for run in _RUN.findall(normal)
        if run not in _STOP_WORDS and len(run) <= MAX_WORD_CHARS
    ]


def scope_token(tenant: str, user_id: str) -> str:
    """One opaque index term per (tenant, user), so a full-text query can
    be limited to one user's episodes by the index itself."""
    digest = hashlib.blake2b(f"{tenant}\0{user_id}".encode(), digest_size=12).hexdigest()
    return "u" + digest


def _iter_terms(text: str) -> Iterator[str]:
    normal = unicodedata.normalize("NFKC", text).casefold()
    for run in _RUN.findall(normal):
        for piece in _CJK.split(run):
            if not piece:
                continue
            if _CJK.fullmatch(piece):
                yield from _cjk_terms(piece)
            elif piece not in _STOP_WORDS and len(piece) <= MAX_WORD_CHARS:
                yield _stem(piece)


def _cjk_terms(run: str) -> Iterator[str]:
    yield from run
    for i in range(len(run) - 1):
        yield run[i : i + 2]


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    # Numbers stem to themselves; skipping the stemmer matters because each
    # new number misses this cache (~80 µs a stem).
    if word.isascii() and word.isdigit():
        return word
    stem: str = _stemmer.stemWord(word)
    return stem


@dataclass(slots=True)
class LexicalCandidate:
    """An episode that matches at least one query term. Read-only by
    convention, not frozen: a recall builds hundreds, and a frozen
    dataclass costs about seven times as much to construct."""

    key: int
    terms: str
    importance: float
    occur_time: float


@dataclass(frozen=True)
class LexicalMatches:
    """What a store's full-text index found for a user, with the corpus
    statistics BM25 needs."""

    candidates: list[LexicalCandidate]
    document_count: int
    document_frequency: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Neighbour:
    """The episode recorded just before (`after` False) or just after
    (`after` True) episode `key` in the same user and session. Read-only by
    convention, not frozen (see LexicalCandidate)."""

    key: int
    neighbour_key: int
    after: bool
    importance: float
    occur_time: float


def match_terms(wanted: Sequence[str], frequency: dict[str, int], budget: int) -> list[str]:
    """The query terms a store's full-text index is asked to match: all of
    them while their document frequencies add up to at most `budget` (0: no
    budget), else the rarest ones that fit (at least the rarest of all).

    The index scores every match to pick the best `limit`, so the cost of a
    recall grows with the matches of its most common terms (thousands for a
    user with 100,000 episodes). The dropped, common terms still count in
    `bm25_scores` for every candidate found through a rarer one; only
    episodes that match nothing but common words are skipped, and BM25 ranks
    those low anyway (small idf). A user small enough that the terms fit is
    searched exactly as without a budget."""
    present = [t for t in wanted if frequency.get(t, 0) > 0]
    if budget <= 0 or sum(frequency[t] for t in present) <= budget:
        return present
    kept: set[str] = set()
    spent = 0
    for term in sorted(present, key=lambda t: (frequency[t], t)):
        if kept and spent + frequency[term] > budget:
            break
        kept.add(term)
        spent += frequency[term]
    return [t for t in present if t in kept]


# Okapi BM25 parameters: those commonly used for short passages (Anserini's
# defaults) rather than the textbook 1.2 / 0.75 tuned for long documents. An
# episode is a turn or two: a longer one is not less relevant for being
# longer, and a term repeated in a short turn says little more. On the LoCoMo
# development conversations (bench/locomo_offline.py) they lift hybrid hit@3
# from 0.626 to 0.646 and lexical recall@10 from 0.695 to 0.702.
BM25_K1 = 0.9
BM25_B = 0.4


def bm25_scores(
    query: Sequence[str], matches: LexicalMatches, k1: float = BM25_K1, b: float = BM25_B
) -> list[float]:
    """Okapi BM25 of each candidate for the distinct `query` terms, in the
    candidates' order. The average length is the candidates' (the stores do
    not keep the user's), which only shifts the length normalisation."""
    documents = [c.terms.split() for c in matches.candidates]
    if not documents:
        return []
    lengths = [len(words) for words in documents]
    average = (sum(lengths) / len(lengths)) or 1.0
    count = max(matches.document_count, len(documents))
    idf = {}
    for term in query:
        frequency = min(max(matches.document_frequency.get(term, 0), 1), count)
        idf[term] = math.log(1 + (count - frequency + 0.5) / (frequency + 0.5))
    weighted = [(term, idf[term]) for term in query]
    scale = k1 + 1
    scores = []
    for words, length in zip(documents, lengths, strict=True):
        norm = k1 * (1 - b + b * length / average)
        score = 0.0
        # list.count per query term: a few short scans in C cost less than
        # building a Counter of every word of every candidate.
        for term, weight in weighted:
            tf = words.count(term)
            if tf:
                score += weight * tf * scale / (tf + norm)
        scores.append(score)
    return scores


def bm25_texts(query: str, documents: Sequence[str]) -> list[float]:
    """BM25 of raw texts (no store), e.g. for a baseline or small sets."""
    wanted = query_terms(query)
    candidates = [
        LexicalCandidate(i, document_terms(doc), 0.0, 0.0) for i, doc in enumerate(documents)
    ]
    frequency: Counter[str] = Counter()
    for candidate in candidates:
        frequency.update(set(candidate.terms.split()))
    matches = LexicalMatches(candidates, len(candidates), dict(frequency))
    return bm25_scores(wanted, matches)


# A speaker tag opening a transcript turn ("Caroline: ...", "Dr. Lee: ...",
# "王芳: ..."): one to three words, the first a letter, before a colon that
# starts no URL ("http://..."). NFKC folds the full-width colon first.
_SPEAKER_TAG = re.compile(r"\s*([^\W\d_][^\W_]*(?:[ '.\-]{1,2}[^\W\d_][^\W_]*){0,2})\.?\s*:(?!/)")


# A tag is a few words at the opening: only that much of a text is folded
# to look for one (NFKC over a whole 64 KiB text can take tens of ms).
_TAG_SCAN_CHARS = 200


def speaker_tag(text: str) -> str | None:
    """Who speaks in `text` when it is written as a transcript turn ("Name:
    what they said"), case-folded; None if it opens with no tag."""
    found = _SPEAKER_TAG.match(unicodedata.normalize("NFKC", text[:_TAG_SCAN_CHARS]))
    return found.group(1).casefold() if found else None


def without_speaker_tag(text: str) -> str:
    """`text` (NFKC-folded) without the speaker tag it opens with, if any
    (see speaker_tag)."""
    found = _SPEAKER_TAG.match(text)
    return text[found.end() :] if found else text


def names_speaker(query_text: str, wanted: Sequence[str], tag: str) -> bool:
    """True if the query (its text, and its `wanted` terms) names the
    speaker `tag` (see speaker_tag): one of the tag's words is a query term
    ("What did Caroline research?" names "caroline"; "What did John say?"
    names "john smith"), or, for a name in CJK characters (no spaces between
    words), the query holds the whole name ("王芳家的猫叫什么名字" names
    "王芳", not "王伟")."""
    if _CJK.search(tag):
        return tag in unicodedata.normalize("NFKC", query_text).casefold()
    return not set(_part_terms(tag)).isdisjoint(wanted)
