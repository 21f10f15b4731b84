"""Reading tsvector text for BM25 (the postgres adapter's one pure parser)."""

import re

from hypothesis import given
from hypothesis import strategies as st

_ENTRY = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")


def reference_tokens(text: str) -> list[str]:
    """Every lexeme once per position, by parsing each entry (the slow, obvious way)."""
    out: list[str] = []
    for lexeme, positions in _ENTRY.findall(text):
        out.extend([lexeme.replace("''", "'")] * (positions.count(",") + 1 if positions else 1))
    return out


lexeme = st.text(alphabet="abcé'-", min_size=1, max_size=6)
entries = st.dictionaries(
    lexeme, st.lists(st.integers(1, 300), min_size=0, max_size=4, unique=True), max_size=10
)


@given(entries=entries, wanted=st.lists(lexeme, max_size=5))
def test_tsvector_counts_agree_with_parsing_every_entry(entries, wanted):
    # Given a tsvector in PostgreSQL's text form (lexemes sorted, quotes doubled, optional positions)
    from agent_memory.adapters.postgres.tsvector import tsvector_counts

    text = " ".join(
        "'" + lx.replace("'", "''") + "'" + (":" + ",".join(map(str, sorted(ps))) if ps else "")
        for lx, ps in sorted(entries.items())
    )
    if entries and any(entries.values()) and not all(entries.values()):
        return  # PostgreSQL never mixes entries with and without positions
    # When counted for some wanted lexemes
    counts, length = tsvector_counts(text, wanted)
    # Then occurrences and length match the full parse
    tokens = reference_tokens(text)
    assert length == len(tokens)
    assert counts == {w: tokens.count(w) for w in wanted if w in tokens}
