"""Sentence splitting for sentence-level vectors (pure)."""

from __future__ import annotations

import re

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
MIN_CHARS = 40
MAX_SENTENCES = 32


def split_sentences(text: str) -> list[str]:
    """Sentence-ish chunks; a very short piece joins the previous one. One chunk -> no sentence vectors."""
    out: list[str] = []
    for part in (p.strip() for p in _SPLIT.split(text)):
        if not part:
            continue
        if out and len(part) < MIN_CHARS:
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out[:MAX_SENTENCES] if len(out) > 1 else []
