"""Token counting that never under-counts for OpenAI's cl100k and o200k encodings.

Both vocabularies ship inside `quicktok-v1` (exact, tiktoken-identical ids), so
nothing is downloaded at run time. A count is the larger of the two.
"""

from __future__ import annotations

from functools import cache
from typing import Any

ENCODINGS = ("cl100k_base", "o200k_base")


@cache
def _encoders() -> tuple[Any, ...]:
    import quicktok

    return tuple(quicktok.get_encoding(name) for name in ENCODINGS)


def count_tokens(text: str) -> int:
    """Tokens of `text` in the larger of the two encodings, special-token text read as ordinary
    text. `count` is `len(encode_ordinary(...))` without building the list of ids (half the cost
    of a retrieval's counting; tests/unit/test_context_budget.py checks they agree)."""
    if not text:
        return 0
    cl100k, o200k = _encoders()
    return max(cl100k.count(text), o200k.count(text))
