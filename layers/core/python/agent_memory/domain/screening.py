"""Injection screening: memory text is data, never an instruction.

A memory that reads like an instruction to a model ("ignore previous
instructions", role tags, tool-call syntax, our own delimiters) is flagged
`untrusted_instruction` and quarantined by the gateway: it is kept for review
as inert data and never retrieved as context.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "override_instructions",
        re.compile(
            r"(?i)\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b"
            r"(previous|prior|above|earlier|all|system|your)\b[^.\n]{0,20}\b(instructions?|prompts?|rules|context)"
        ),
    ),
    (
        "role_tag",
        re.compile(
            r"(?im)(^|\s)(system|assistant|developer)\s*:\s|<\|?(system|im_start|im_end)\|?>"
            r"|</?\s*(admin|root|sudo|system|developer|assistant)\s*>"
        ),
    ),
    # our delimiter's name in any brackets (look-alikes of "<" included), and other models' markers
    ("delimiter", re.compile(r"(?i)retrieved_memory\b|<\|[a-z_]+\|>|\[/?INST\]|<<SYS>>")),
    ("tool_call", re.compile(r"(?i)\"?(tool_calls?|function_call)\"?\s*[:=]|<tool_call>|\bcall_tool\s*\(")),
    (
        "you_are_now",
        re.compile(r"(?i)\b(you are now|act as|pretend to be|from now on,? you)\b"),
    ),
    (
        "directive_to_model",
        re.compile(
            r"(?i)\b(as an ai|the (ai|assistant|agent|model) (must|should|will) (always|never)|"
            r"(always|never) (tell|say to|offer) (the )?(customer|client|user))\b"
        ),
    ),
]


@dataclass(frozen=True)
class Screening:
    flagged: bool
    signals: tuple[str, ...]


def screen_for_instructions(text: str) -> Screening:
    """Return which instruction-like signals the text carries (empty = clean), in any form a
    model could read it: as written, as it looks (`visible_text`, then compatibility forms such
    as fullwidth letters folded), and the ASCII hidden in Unicode tag characters, which models
    read although people cannot see it ("ASCII smuggling")."""
    forms = [text]
    if not text.isascii():
        forms.append(unicodedata.normalize("NFKC", visible_text(text)))
        hidden = "".join(chr(ord(ch) - _TAG_OFFSET) for ch in text if _TAG_FIRST <= ord(ch) <= _TAG_LAST)
        if hidden:
            forms.append(hidden)
    signals = tuple(name for name, pattern in _PATTERNS if any(pattern.search(f) for f in forms))
    return Screening(flagged=bool(signals), signals=signals)


_TAG_OFFSET, _TAG_FIRST, _TAG_LAST = 0xE0000, 0xE0020, 0xE007E  # tag characters shadowing printable ASCII
# Fullwidth and small-form look-alikes of ASCII punctuation and letters (U+FF1C, U+FE64 for "<"), folded
# to ASCII so that escaping catches a forged delimiter; other compatibility forms ("m²") are left as written.
_ASCII_LOOKALIKES = re.compile("[\uff01-\uff5e\ufe50-\ufe6b]")


def visible_text(text: str) -> str:
    """The text without invisible format characters (zero-width joiners and spaces, bidi
    overrides, Unicode tags: category Cf), which can hide words from a reviewer or smuggle them
    to a model, and with ASCII look-alikes folded to ASCII."""
    if text.isascii():
        return text
    kept = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return _ASCII_LOOKALIKES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), kept)
