"""Digests instead of forgetting (the product requirements: "summarize old episodes into compact
digests retaining provenance links"): when a subject's episodes reach the end of their retention,
what they said survives as one extractive digest, deterministic and offline: each episode's date
and first sentence, newest first, within a size bound. A digest that itself expires is folded into
the next one (its lines kept after the newer ones), so history compresses rather than vanishes.

Pure: the lifecycle service reads the expiring episodes and writes the digest through the write
gateway (masked, screened, audited like any write)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

DIGEST_SYSTEM = "memory-digest"
_HEADER = "Earlier history, digested from {n} episode(s), {oldest} to {newest}:"
_FIRST_SENTENCE_CHARS = 220


@dataclass(frozen=True)
class DigestSource:
    effective_at: datetime
    content: str
    is_digest: bool  # an earlier digest: its lines are carried over as they are


def first_sentence(text: str) -> str:
    """The text's first sentence, at most `_FIRST_SENTENCE_CHARS` characters, on one line."""
    flat = " ".join(text.split())
    for i, ch in enumerate(flat):
        if ch in ".!?" and (i + 1 == len(flat) or flat[i + 1] == " ") and i >= 20:
            flat = flat[: i + 1]
            break
    return flat if len(flat) <= _FIRST_SENTENCE_CHARS else flat[: _FIRST_SENTENCE_CHARS - 1].rstrip() + "…"


def build_digest(sources: list[DigestSource], max_chars: int) -> str | None:
    """The digest of these episodes (None when there is nothing to keep): one line per episode,
    newest first, then the lines of earlier digests; the oldest lines are dropped to fit
    `max_chars`, and a last line says how many."""
    if not sources:
        return None
    ordered = sorted(sources, key=lambda s: s.effective_at, reverse=True)
    lines = [
        f"- {s.effective_at.date().isoformat()}: {first_sentence(s.content)}"
        for s in ordered
        if not s.is_digest
    ]
    for s in ordered:
        if s.is_digest:
            lines += [ln for ln in s.content.splitlines() if ln.startswith("- ")]
    if not lines:
        return None
    episodes = sum(1 for s in sources if not s.is_digest) + sum(
        1 for s in sources if s.is_digest for ln in s.content.splitlines() if ln.startswith("- ")
    )
    dates = sorted(s.effective_at.date().isoformat() for s in sources)
    header = _HEADER.format(n=episodes, oldest=_oldest(sources, dates[0]), newest=dates[-1])
    kept: list[str] = []
    size = len(header)
    for line in lines:
        if size + 1 + len(line) > max_chars - 40:  # room for the "and N earlier" line
            break
        kept.append(line)
        size += 1 + len(line)
    dropped = len(lines) - len(kept)
    tail = [f"(and {dropped} earlier episode(s) not shown)"] if dropped else []
    return "\n".join([header, *kept, *tail])


def _oldest(sources: list[DigestSource], fallback: str) -> str:
    """The oldest date a digest covers: an earlier digest's own oldest line counts."""
    dates = [fallback]
    for s in sources:
        if s.is_digest:
            dates += [ln[2:12] for ln in s.content.splitlines() if ln.startswith("- ") and len(ln) > 12]
    return min(dates)
