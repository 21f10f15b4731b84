"""What a review item shows a reviewer: how a waiting record differs from the active record of its
slot (the product requirements: the newcomer waits with a diff against the active one). Pure."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Any

from agent_memory.domain.records import MemoryRecord

# The fields besides content and value that decide a conflict or tell a reviewer where each came from.
COMPARED_FIELDS = ("authority", "confidence", "effective_at", "category", "sensitivity")


def word_diff(active: str, candidate: str) -> list[dict[str, str]]:
    """A word-level diff from the active text to the candidate's: runs of `equal`, `removed` (only
    in the active) and `added` (only in the candidate) words, in reading order. Words are split on
    whitespace, so punctuation stays with its word ("$42/seat/month." is one word)."""
    a, b = active.split(), candidate.split()
    ops: list[dict[str, str]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            ops.append({"op": "equal", "text": " ".join(a[i1:i2])})
            continue
        if i2 > i1:  # replace or delete
            ops.append({"op": "removed", "text": " ".join(a[i1:i2])})
        if j2 > j1:  # replace or insert
            ops.append({"op": "added", "text": " ".join(b[j1:j2])})
    return ops


def value_diff(active: dict[str, Any], candidate: dict[str, Any]) -> dict[str, Any]:
    """The structured values' top-level keys: added, removed, and changed (with both sides)."""
    return {
        "added": {k: candidate[k] for k in sorted(candidate.keys() - active.keys())},
        "removed": {k: active[k] for k in sorted(active.keys() - candidate.keys())},
        "changed": {
            k: {"active": active[k], "candidate": candidate[k]}
            for k in sorted(active.keys() & candidate.keys())
            if active[k] != candidate[k]
        },
    }


def review_diff(active: MemoryRecord, candidate: MemoryRecord) -> dict[str, Any]:
    """The review item's diff of `candidate` (waiting) against `active` (served)."""
    a, c = active.model_dump(mode="json"), candidate.model_dump(mode="json")
    return {
        "content": word_diff(active.content, candidate.content),
        "value": value_diff(active.value, candidate.value),
        "fields": {f: {"active": a[f], "candidate": c[f]} for f in COMPARED_FIELDS if a[f] != c[f]},
        "source": {"active": a["source"], "candidate": c["source"]} if a["source"] != c["source"] else {},
    }


_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")


def same_figures(a: str, b: str) -> bool:
    """Whether two statements name the same figures (amounts, percentages, dates, counts), so they
    may be reviewed as one: sentences an embedder finds alike can still differ in the one number
    that matters ("20% off" and "25% off")."""
    return sorted(_FIGURE.findall(a)) == sorted(_FIGURE.findall(b))
