"""Ranking of retrieval candidates (docs/rules.md, Retrieval): relevance first, then
authority, verification, confidence and recency decay by type.

Relevance is a normalised fusion of a dense signal (the better of the memory's
own vector and its best sentence's vector) and BM25 over the candidates'
stemmed lexemes (PostgreSQL's `english` tsvector, so no stemming here). Inside
the returned head, a newer memory about the same thing as an older one, that names
what the question names as the older one does, moves above it: for a question
whose answer changed, the newest version wins; a newer memory about something else
that only resembles it does not.
What each choice bought on LongMemEval is in docs/benchmarks.md.

Pure: the broker gives it what the database found and gets back ordered candidates.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple, Protocol

import numpy as np

from agent_memory.domain.enums import VERIFIED_AUTHORITIES, Authority, MemoryType
from agent_memory.domain.memory_types import TYPE_SPECS

W_LEXICAL = 0.3  # weight of normalised BM25 against normalised dense similarity
BM25_K1 = 1.2
# Weak length normalisation: a conversational memory is often a long message whose one clause is
# the evidence, and the textbook b = 0.75 let its length bury that clause under short messages that
# merely share a word (the lexical twin of matching by best sentence). LongMemEval: b 0.75 -> 0.2
# raised turn recall@5 0.744 -> 0.758 and session 0.925 -> 0.929, and lowered neither in either half
# of a 2-fold split (docs/benchmarks.md).
BM25_B = 0.2
SUPERSEDE_SIMILARITY = 0.3  # two memories this similar are "about the same thing"
SUPERSEDE_MARGIN = 0.3  # ...and the newer may pass the older when within this much score
# ...and when it names the question's terms the older one names, but for at most this many.
# Similar vectors alone do not make a new version: memories written alike (one call summary and the
# next) are as similar to each other whatever they are about as the old and new answers of a
# LongMemEval knowledge update are. The update restates what was asked about (the mortgage and its
# lender); another event names only part of it (the same complaint on another topic). Without this
# test, newer calls on other topics took first place from the asked-for one within the five best
# (`memory bench peer`: right first 0.58 by rank, cosine alone 0.88); with it 0.92. LongMemEval:
# recall unchanged, knowledge-update ordering 34 of 36 instead of 36 (docs/benchmarks.md).
SUPERSEDE_MISSING_TERMS = 1
# Half-lives in days, per type (memory_types.TYPE_SPECS): episodes and sentiment fade, facts do not.
HALF_LIFE_DAYS: dict[MemoryType, float | None] = {t: s.half_life_days for t, s in TYPE_SPECS.items()}
REORDER_WINDOW = 5  # the newest-version reorder acts among the five best: it changes which version
# comes first, never which memories rank first (a wider window cost LongMemEval turn recall@5 0.10)
RECENCY_WEIGHT = 0.05  # at most 5% of a score: age breaks near-ties, it never outvotes relevance
# The factors that scale relevance into a score (rank_candidates; a re-statement of the ranking in
# SQL takes these too): trust by authority rank, 0.85 (inference) .. 1.0 (system of record), a
# bonus for a verified authority, and the memory's own confidence, 0.8 .. 1.0.
TRUST_BASE = 0.85
TRUST_PER_RANK = 0.03
VERIFIED_BOOST = 1.05
CONFIDENCE_BASE = 0.8
CONFIDENCE_WEIGHT = 0.2

# Question filler that carries no topic ("how many weeks ago did I mention..."), as words: matched
# before stemming, so "currently" is filler while "my current job" keeps its topic word (the stem
# "current" would conflate them).
QUERY_FILLER = frozenset(
    [
        "many",
        "much",
        "long",
        "often",
        "ago",
        "currently",
        "recently",
        "first",
        "last",
        "total",
        "number",
        "times",
        "time",
        "days",
        "weeks",
        "months",
        "years",
        "day",
        "week",
        "month",
        "year",
        "remind",
        "mention",
        "mentioned",
        "tell",
        "know",
        # the same question verbs in their other forms
        "reminds",
        "reminded",
        "mentions",
        "mentioning",
        "tells",
        "told",
        "telling",
        "knows",
        "knew",
    ]
)
_WORDS = re.compile(r"[A-Za-z0-9']+|[^A-Za-z0-9']+")
_HAS_WORD = re.compile(r"[A-Za-z0-9]")


def topical_query(text: str) -> str:
    """The query without its filler words, for full-text matching; the query itself if only filler.
    A question of filler and stop words ("How many times?") then has no full-text terms at all: it
    names no topic, and matching its filler would only add noise. The vector still sees it whole."""
    kept = "".join(w for w in _WORDS.findall(text) if w.lower() not in QUERY_FILLER)
    return kept if _HAS_WORD.search(kept) else text


class Ranked(Protocol):
    """What ranking reads of a memory: a stored MemoryRecord has it, and so does the narrow row
    the retrieval query returns before the chosen few are fetched whole."""

    @property
    def id(self) -> str: ...
    @property
    def type(self) -> MemoryType: ...
    @property
    def authority(self) -> Authority: ...
    @property
    def confidence(self) -> float: ...
    @property
    def effective_at(self) -> datetime: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def slot(self) -> str | None: ...
    @property
    def verified(self) -> bool: ...
    @property
    def category(self) -> str | None: ...


class CandidateFacts(NamedTuple):
    """The facts ranking reads of one candidate row (immutable; a tuple, the cheapest to build
    for every row a retrieval reads)."""

    id: str
    type: MemoryType
    authority: Authority
    confidence: float
    effective_at: datetime
    session_id: str | None
    slot: str | None
    category: str | None = None

    @property
    def verified(self) -> bool:
        return self.authority in VERIFIED_AUTHORITIES


@dataclass
class Candidate:
    record: Ranked
    similarity: float | None  # cosine of the memory's vector; None without a vector yet
    lexical: float  # ts_rank_cd, 0 when no term matched
    sentence_similarity: float | None = None
    embedding: np.ndarray | None = None
    term_counts: dict[str, int] = field(default_factory=dict)  # query lexeme -> occurrences in the memory
    length: int = 0  # stemmed tokens in the memory
    relevance: float = 0.0
    score: float = 0.0

    @property
    def dense(self) -> float | None:
        """The better of the memory's and its best sentence's cosine (None without either)."""
        s, t = self.similarity, self.sentence_similarity
        if s is None:
            return t
        return s if t is None or s >= t else t


def recency_weight(memory_type: MemoryType, effective_at: datetime, now: datetime) -> float:
    """Half-life decay by type (1.0 for types that do not fade)."""
    half_life = HALF_LIFE_DAYS.get(memory_type)
    if half_life is None:
        return 1.0
    age_days = max(0.0, (now.timestamp() - effective_at.timestamp()) / 86400.0)
    return float(0.5 ** (age_days / half_life))


def bm25_counts(
    query: Sequence[str], term_counts: Sequence[Mapping[str, int]], lengths: Sequence[int]
) -> np.ndarray:
    """BM25 from what the database counted: each doc's occurrences of the query terms and its length."""
    n = len(term_counts)
    scores = np.zeros(n)
    terms = list(dict.fromkeys(query))
    if not n or not terms:
        return scores
    df = dict.fromkeys(terms, 0)
    for tf in term_counts:
        for t in tf:
            if t in df and tf[t]:
                df[t] += 1
    avg = (sum(lengths) / n) or 1.0
    idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    k1, b = BM25_K1, BM25_B
    for i, tf in enumerate(term_counts):
        if not tf:
            continue
        norm = k1 * (1 - b + b * lengths[i] / avg)
        scores[i] = sum(idf[t] * f * (k1 + 1) / (f + norm) for t, f in tf.items() if f and t in idf)
    return scores


def _minmax(x: np.ndarray) -> np.ndarray:
    if x.size == 0:
        return x
    lo, hi = float(x.min()), float(x.max())
    return np.zeros_like(x) if hi - lo < 1e-12 else (x - lo) / (hi - lo)


def rank_candidates(
    candidates: list[Candidate], now: datetime, *, query_tokens: Sequence[str] = (), head: int = 10
) -> list[Candidate]:
    """Score and order the candidates; the first `head` (at most REORDER_WINDOW) get the
    newest-version reorder."""
    if not candidates:
        return []
    dense = np.array([0.0 if (d := c.dense) is None else d for c in candidates])
    if query_tokens and any(c.length for c in candidates):
        lexical = bm25_counts(
            query_tokens, [c.term_counts for c in candidates], [c.length for c in candidates]
        )
    else:
        lexical = np.array([c.lexical for c in candidates])
    fused = (W_LEXICAL * _minmax(lexical) + (1 - W_LEXICAL) * _minmax(dense)).tolist()
    now_ts = now.timestamp()
    keys: dict[int, tuple[float, float, str]] = {}
    for c, f in zip(candidates, fused, strict=True):
        r = c.record
        c.relevance = f
        trust, verified = _AUTHORITY_FACTORS[r.authority]
        confidence = CONFIDENCE_BASE + CONFIDENCE_WEIGHT * r.confidence
        effective_ts = r.effective_at.timestamp()
        half_life = HALF_LIFE_DAYS.get(r.type)
        # recency_weight(r.type, r.effective_at, now), with each timestamp taken once
        decay = (
            1.0
            if half_life is None
            else float(0.5 ** (max(0.0, (now_ts - effective_ts) / 86400.0) / half_life))
        )
        recency = 1 - RECENCY_WEIGHT + RECENCY_WEIGHT * decay
        c.score = score = f * trust * verified * confidence * recency
        keys[id(c)] = (-score, -effective_ts, r.id)
    ordered = sorted(candidates, key=lambda c: keys[id(c)])
    return newest_version_first(ordered, head)


# Per authority: (trust, verified bonus) as rank_candidates multiplies them, worked out once.
_AUTHORITY_FACTORS: dict[Authority, tuple[float, float]] = {
    a: (TRUST_BASE + TRUST_PER_RANK * a.rank, VERIFIED_BOOST if a in VERIFIED_AUTHORITIES else 1.0)
    for a in Authority
}


def newest_version_first(ordered: list[Candidate], head: int) -> list[Candidate]:
    """Apply the newest-version reorder to the first `head` (at most REORDER_WINDOW) of a ranked
    list whose window members carry their embeddings; reported scores stay non-increasing."""
    window = min(head, REORDER_WINDOW)
    result = _newest_version_first(ordered[:window]) + ordered[window:]
    ceiling = math.inf
    for c in result:  # keep reported scores monotone after the reorder
        c.score = min(c.score, ceiling)
        ceiling = c.score
    return result


def _newest_version_first(head: list[Candidate]) -> list[Candidate]:
    """Move each memory above the first higher-ranked OLDER memory about the same thing (another
    session, similar vectors, close in score, naming what the question names as the older one
    does): what changed later is what is true now."""
    out: list[Candidate] = []
    for c in head:
        position = len(out)
        for p, other in enumerate(out):
            if (
                c.embedding is not None
                and other.embedding is not None
                and c.record.effective_at > other.record.effective_at
                and (c.record.session_id is None or c.record.session_id != other.record.session_id)
                and c.score >= other.score - SUPERSEDE_MARGIN
                and names_what_it_names(c, other)
                and float(c.embedding @ other.embedding) >= SUPERSEDE_SIMILARITY
            ):
                position = p
                break
        out.insert(position, c)
    return out


def names_what_it_names(newer: Candidate, older: Candidate) -> bool:
    """The newer memory names the query's terms that the older one names, but for at most
    SUPERSEDE_MISSING_TERMS (an update may reword one). Always true when the older names at most
    that many, as for a query without full-text terms: there the vectors alone decide, as before."""
    missing = sum(1 for term, n in older.term_counts.items() if n and not newer.term_counts.get(term))
    return missing <= SUPERSEDE_MISSING_TERMS
