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
    if not text:
        return 0
    return max(len(enc.encode_ordinary(text)) for enc in _encoders())
