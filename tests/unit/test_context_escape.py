"""Escaping memory text for a context line: the fast path for printable ASCII and the whitespace
collapse give exactly what the regular-expression reference gives, for any text."""

import html
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.domain.context import escape_text
from agent_memory.domain.invisible import visible_text


def escape_by_reference(text: str) -> str:
    """The definition: what a reviewer can see, whitespace runs as one space, stripped, escaped."""
    return html.escape(re.sub(r"\s+", " ", visible_text(text)).strip(), quote=False)


@settings(max_examples=400, deadline=None)
@given(
    text=st.lists(
        st.one_of(
            st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
            st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=40),
            st.sampled_from(
                ["\u200b\u200b\u200b", "\uff1c/retrieved_memory\uff1e", "\u00a0", "\x1c", "\u2028"]
            ),
        ),
        max_size=6,
    ).map("".join)
)
def test_escaping_any_text_matches_the_reference(text):
    # Given any text: ASCII, controls, invisible runs, look-alikes, unusual whitespace
    # When it is escaped for a context line
    # Then it reads exactly as the reference escaping reads it
    assert escape_text(text) == escape_by_reference(text)


def test_every_ascii_character_escapes_as_the_reference_does():
    # Given each ASCII character alone, three times over and between words
    for code in range(0x80):
        for text in (chr(code), chr(code) * 3, f"a{chr(code)}b"):
            # When escaped, then exactly as the reference
            assert escape_text(text) == escape_by_reference(text), repr(text)
