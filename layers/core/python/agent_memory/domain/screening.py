"""Injection screening: memory text is data, never an instruction.

A memory that reads like an instruction to a model ("ignore previous
instructions", role tags, tool-call syntax, our own delimiters) is flagged
`untrusted_instruction` and quarantined by the gateway: it is kept for review
as inert data and never retrieved as context.
"""

from __future__ import annotations

import re
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
    ("delimiter", re.compile(r"(?i)</?\s*retrieved_memory\b|<\|[a-z_]+\|>|\[/?INST\]|<<SYS>>")),
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
    """Return which instruction-like signals the text carries (empty = clean)."""
    signals = tuple(name for name, pattern in _PATTERNS if pattern.search(text))
    return Screening(flagged=bool(signals), signals=signals)
