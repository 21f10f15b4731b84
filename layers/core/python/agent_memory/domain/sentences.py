"""Sentence splitting for sentence-level vectors (pure)."""

from __future__ import annotations

import re

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
MIN_CHARS = 40
MAX_SENTENCES = 32
# Texts shorter than this get no sentence vectors: the whole text's vector already stands for them.
MIN_SPLIT_CHARS = 0


def split_sentences(text: str) -> list[str]:
    """Sentence-ish chunks; a very short piece joins the previous one. One chunk, or a text shorter
    than MIN_SPLIT_CHARS -> no sentence vectors (the record's own vector is the only one)."""
    if len(text) < MIN_SPLIT_CHARS:
        return []
    out: list[str] = []
    for part in (p.strip() for p in _SPLIT.split(text)):
        if not part:
            continue
        if out and len(part) < MIN_CHARS:
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out[:MAX_SENTENCES] if len(out) > 1 else []
