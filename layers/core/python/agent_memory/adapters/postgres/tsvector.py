"""PostgreSQL's tsvector text form, read for BM25: how often a row holds each query lexeme, and
its length in tokens. Reading the text costs less than counting in SQL, where unnest over each
candidate's tsvector cost more server time than this does client time (docs/benchmarks.md)."""

from __future__ import annotations

import re
from collections.abc import Sequence

_TSV_ENTRY = re.compile(r"'(?:[^']|'')*'")


class LexemeCounter:
    """`tsvector_counts` for one query's lexemes, over every candidate row of a retrieval: each
    lexeme's quoted form is worked out once, not once a row."""

    def __init__(self, lexemes: list[str]) -> None:
        self.lexemes = lexemes
        # An entry starts the text or follows a space: the text is searched with a space in front,
        # so the first hit of " 'lexeme'" is the first entry-start hit, with no step back to check.
        self._needles = [(lexeme, " '" + lexeme.replace("'", "''") + "'") for lexeme in lexemes]

    def __call__(self, tsvector_text: str) -> tuple[dict[str, int], int]:
        """From `tsvector::text` ("'bake':3 'cake':1,4"): occurrences of each wanted lexeme, and
        the document's length in tokens (positions). Only the wanted lexemes are looked up:
        parsing every entry cost more than the rest of the ranking."""
        if not tsvector_text:
            return {}, 0
        text = " " + tsvector_text
        size = len(text)
        counts: dict[str, int] = {}
        for lexeme, needle in self._needles:
            at = text.find(needle)
            if at < 0:
                continue
            end = at + len(needle)
            following = text[end] if end < size else " "
            if following == ":":
                stop = text.find(" ", end)
                counts[lexeme] = text.count(",", end, stop if stop >= 0 else size) + 1
            elif following == " ":
                counts[lexeme] = 1
        with_positions = tsvector_text.count("':")
        entries = len(_TSV_ENTRY.findall(tsvector_text)) if with_positions == 0 else with_positions
        return counts, entries + tsvector_text.count(",")


def tsvector_counts(tsvector_text: str, lexemes: Sequence[str]) -> tuple[dict[str, int], int]:
    """Occurrences of each of `lexemes` in `tsvector_text`, and its length (LexemeCounter)."""
    return LexemeCounter(list(lexemes))(tsvector_text)
