"""Ranking of retrieval candidates (POLICY.md, Retrieval): relevance first, then
authority, verification, confidence and recency decay by type.

Pure: the broker gives it what the database found (cosine similarity and a
full-text rank per candidate) and gets back scored, ordered candidates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from agent_memory.domain.enums import Authority, MemoryType
from agent_memory.domain.records import MemoryRecord

RRF_K = 60
# Half-lives in days: episodes and sentiment fade, verified facts do not.
HALF_LIFE_DAYS: dict[MemoryType, float | None] = {
    MemoryType.FACT: None,
    MemoryType.PREFERENCE: None,
    MemoryType.COMMITMENT: 60.0,
    MemoryType.EPISODE: 90.0,
    MemoryType.RESOLUTION: 180.0,
    MemoryType.SENTIMENT: 60.0,
    MemoryType.OBSERVATION: 30.0,
}

# Similarity floors per embedding model (POLICY.md: 0.78 for text-embedding-3-small).
# The MiniLM floor is calibrated in docs/benchmarks.md ("similarity floor").
SIMILARITY_FLOORS: dict[str, float] = {
    "openai:text-embedding-3-small": 0.78,
    "local-minilm-onnx": 0.15,
}
DEFAULT_FLOOR = 0.15


@dataclass
class Candidate:
    record: MemoryRecord
    similarity: float | None  # cosine, None when the record has no embedding yet
    lexical: float  # ts_rank_cd, 0 when no term matched
    vector_rank: int | None = None
    lexical_rank: int | None = None
    relevance: float = 0.0
    score: float = 0.0
    reasons: list[str] = field(default_factory=list)


def similarity_floor(embedding_model: str) -> float:
    return SIMILARITY_FLOORS.get(embedding_model, DEFAULT_FLOOR)


def recency_weight(memory_type: MemoryType, effective_at: datetime, now: datetime) -> float:
    half_life = HALF_LIFE_DAYS.get(memory_type)
    if half_life is None:
        return 1.0
    age_days = max(0.0, (now - effective_at).total_seconds() / 86400.0)
    return 0.5 ** (age_days / half_life)


def rank_candidates(candidates: list[Candidate], now: datetime) -> list[Candidate]:
    """Fuse vector and lexical ranks (reciprocal rank fusion), then weigh trust and age."""
    by_vec = sorted(
        (c for c in candidates if c.similarity is not None),
        key=lambda c: (-(c.similarity or 0.0), c.record.id),
    )
    for i, c in enumerate(by_vec):
        c.vector_rank = i + 1
    by_lex = sorted((c for c in candidates if c.lexical > 0), key=lambda c: (-c.lexical, c.record.id))
    for i, c in enumerate(by_lex):
        c.lexical_rank = i + 1
    best = 2.0 / (RRF_K + 1)
    for c in candidates:
        fused = sum(1.0 / (RRF_K + r) for r in (c.vector_rank, c.lexical_rank) if r is not None)
        c.relevance = fused / best  # 1.0 = first in both lists
        r = c.record
        trust = 0.85 + 0.03 * r.authority.rank  # 0.85 (inference) .. 1.0 (system of record)
        verified = 1.05 if r.authority in (Authority.SYSTEM_OF_RECORD, Authority.HUMAN_VERIFIED) else 1.0
        confidence = 0.8 + 0.2 * r.confidence
        recency = 0.5 + 0.5 * recency_weight(r.type, r.effective_at, now)
        c.score = c.relevance * trust * verified * confidence * recency
    return sorted(candidates, key=lambda c: (-c.score, -c.record.effective_at.timestamp(), c.record.id))


def is_relevant(c: Candidate, floor: float) -> bool:
    """Hybrid admission: above the model's similarity floor, or a full-text match."""
    return (c.similarity is not None and c.similarity >= floor) or c.lexical > 0
