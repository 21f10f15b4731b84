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
    if not text.isascii() or _IGNORABLE.search(text):
        forms.append(unicodedata.normalize("NFKC", _IGNORABLE.sub("", text)))
        hidden = "".join(chr(ord(ch) - _TAG_OFFSET) for ch in text if _TAG_FIRST <= ord(ch) <= _TAG_LAST)
        if hidden:
            forms.append(hidden)
    signals = tuple(name for name, pattern in _PATTERNS if any(pattern.search(f) for f in forms))
    return Screening(flagged=bool(signals), signals=signals)


_TAG_OFFSET, _TAG_FIRST, _TAG_LAST = 0xE0000, 0xE0020, 0xE007E  # tag characters shadowing printable ASCII
# Characters that show nothing: C0 and C1 controls (not tab, newlines or the other whitespace
# controls, which split words rather than hide them), Unicode's Default_Ignorable_Code_Point and
# format (Cf) characters: zero-width spaces, bidi controls, Hangul fillers, interlinear annotation
# marks, Unicode tags. They can hide words from a reviewer, split a word to escape screening, or
# smuggle text to a model.
_HIDING = (
    "\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f"
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180e"
    "\u200b\u200e\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e00ff\U000e01f0-\U000e0fff"
)
# ...and the ones ordinary text needs: joiners (Persian and Indic spelling, emoji sequences such as
# a woman technologist), the combining grapheme joiner (Hebrew), Mongolian free variation selectors,
# and variation selectors (emoji presentation, ideographic variants of CJK names). Screening ignores
# them too; a context line keeps them, except in runs of three or more, which no spelling needs
# and which could carry a message in binary.
_JOINING = "\u034f\u180b-\u180d\u180f\u200c\u200d\ufe00-\ufe0f\U000e0100-\U000e01ef"
_IGNORABLE = re.compile(f"[{_HIDING}{_JOINING}]")
_HIDDEN = re.compile(f"[{_HIDING}]|[{_JOINING}]{{3,}}")
# Fullwidth and small-form look-alikes of ASCII punctuation and letters (U+FF1C, U+FE64 for "<"), folded
# to ASCII so that escaping catches a forged delimiter; other compatibility forms ("m²") are left as written.
_ASCII_LOOKALIKES = re.compile("[\uff01-\uff5e\ufe50-\ufe6b]")


def visible_text(text: str) -> str:
    """What a context line may show of the text: nothing a reviewer cannot see (`_HIDDEN`), and
    ASCII look-alikes folded to ASCII so that escaping treats them as what they imitate."""
    shown = _HIDDEN.sub("", text)
    if shown.isascii():
        return shown
    return _ASCII_LOOKALIKES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), shown)
