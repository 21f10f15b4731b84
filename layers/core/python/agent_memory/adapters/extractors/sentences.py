"""Sentence splitting for the offline extractors: the one `split_sentences`, with character spans.

A turn is cut into blank-line blocks (an email's salutation, body and sign-off), then at sentence
ends (not after a known abbreviation) and before a role tag ("system: ...") that starts a new
instruction. Each sentence keeps its span in the turn, which every candidate carries.

(`domain.sentences` is another cut, for the write path's sentence vectors: it joins short pieces
and keeps no spans.)
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from agent_memory.domain.extraction import (
    Speaker,
)

_BLOCK_SEP = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*\s+")
_ROLE_TAG_START = re.compile(r"\s+(?=(?:system|assistant|developer|user)\s*:\s)", re.IGNORECASE)
_ABBREVIATIONS = frozenset(
    {
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "st",
        "jr",
        "sr",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "approx",
        "no",
        "inc",
        "ltd",
        "co",
        "corp",
        "dept",
        "est",
        "fig",
        "min",
        "max",
        "p.m",
        "a.m",
    }
)


@dataclass(frozen=True)
class Sentence:
    turn: int
    start: int
    end: int
    text: str
    speaker: Speaker
    last_block: bool  # in the last blank-line block of a multi-block turn (email sign-off)


def split_sentences(turn_index: int, speaker: Speaker, text: str) -> list[Sentence]:
    """Sentences of one turn with their character spans in that turn's text."""
    blocks: list[tuple[int, int]] = []
    pos = 0
    for m in _BLOCK_SEP.finditer(text):
        blocks.append((pos, m.start()))
        pos = m.end()
    blocks.append((pos, len(text)))
    out: list[Sentence] = []
    multi = len([b for b in blocks if text[b[0] : b[1]].strip()]) > 1
    for bi, (b_start, b_end) in enumerate(blocks):
        cuts = [b_start]
        block = text[b_start:b_end]
        for m in _SENTENCE_END.finditer(block):
            word = re.search(r"([\w.]+)[.!?]+[\"'\u201d\u2019)\]]*\s+$", block[: m.end()])
            if word and word.group(1).lower().rstrip(".") in _ABBREVIATIONS and m.group(0).startswith("."):
                continue
            cuts.append(b_start + m.end())
        for m in _ROLE_TAG_START.finditer(block):
            cuts.append(b_start + m.end())
        cuts = [*sorted(set(cuts)), b_end]
        for s, e in itertools.pairwise(cuts):
            seg = text[s:e]
            lead = len(seg) - len(seg.lstrip())
            trail = len(seg) - len(seg.rstrip())
            if not seg.strip():
                continue
            s2, e2 = s + lead, e - trail
            out.append(Sentence(turn_index, s2, e2, text[s2:e2], speaker, multi and bi == len(blocks) - 1))
    return out
