"""PostgreSQL's tsvector text form, read for BM25: how often a row holds each query lexeme, and
its length in tokens. Reading the text costs less than counting in SQL, where unnest over each
candidate's tsvector cost more server time than this does client time (docs/benchmarks.md)."""

from __future__ import annotations

import re
from collections.abc import Sequence

_TSV_ENTRY = re.compile(r"'(?:[^']|'')*'")


def tsvector_counts(tsvector_text: str, lexemes: Sequence[str]) -> tuple[dict[str, int], int]:
    """From `tsvector::text` ("'bake':3 'cake':1,4"): occurrences of each wanted lexeme, and the
    document's length in tokens (positions). Only the wanted lexemes are looked up: parsing every
    entry cost more than the rest of the ranking."""
    if not tsvector_text:
        return {}, 0
    counts: dict[str, int] = {}
    for lexeme in lexemes:
        quoted = "'" + lexeme.replace("'", "''") + "'"
        at = tsvector_text.find(quoted)
        while at > 0 and tsvector_text[at - 1] != " ":  # a match inside another entry
            at = tsvector_text.find(quoted, at + 1)
        if at < 0:
            continue
        end = at + len(quoted)
        if end < len(tsvector_text) and tsvector_text[end] not in " :":
            continue
        if end < len(tsvector_text) and tsvector_text[end] == ":":
            stop = tsvector_text.find(" ", end)
            counts[lexeme] = tsvector_text.count(",", end, stop if stop >= 0 else len(tsvector_text)) + 1
        else:
            counts[lexeme] = 1
    with_positions = tsvector_text.count("':")
    entries = len(_TSV_ENTRY.findall(tsvector_text)) if with_positions == 0 else with_positions
    return counts, entries + tsvector_text.count(",")
