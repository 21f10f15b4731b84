"""SEC-01: mask financial and national identifiers before anything is stored,
embedded or logged.

Each detector validates what it finds (Luhn for cards, ISO 13616 mod-97 for
IBANs) so ordinary numbers (order ids, prices, phone numbers) survive.
The surrogate keeps the last four characters so a human can still match it
against the system of record: `CARD-***-1111`, `IBAN-***-4432`, `ACCT-***-5678`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_CARD = re.compile(r"(?<![\w-])(?:\d[ -]?){12,18}\d(?![\w-])")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{1,4}){3,8}\b", re.IGNORECASE)
_US_SSN = re.compile(r"\b(?!000|666|9\d\d)\d{3}[- ](?!00)\d{2}[- ](?!0000)\d{4}\b")
_SSN_CONTEXT = re.compile(
    r"(?i)\b(ssn|social security(?: number| no\.?)?|tax (?:id|identification number)|tin|ein|itin)\b"
    r"[\s:#-]*(?:is|=)?[\s:#-]*([0-9][0-9 -]{6,14}[0-9])"
)
_UK_NINO = re.compile(r"\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b")
_ACCOUNT_CONTEXT = re.compile(
    r"(?i)\b((?:bank |checking |savings |brokerage )?(?:account|acct|a/c)(?: number| no\.?| #)?"
    r"|routing(?: number)?|sort code)\b[\s:#-]*(?:is|=)?[\s:#-]*([0-9][0-9 -]{4,20}[0-9])"
)


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def iban_valid(raw: str) -> bool:
    s = re.sub(r"\s", "", raw).upper()
    if not (15 <= len(s) <= 34) or not s[:2].isalpha() or not s[2:4].isdigit():
        return False
    rearranged = s[4:] + s[:4]
    numeric = "".join(str(int(c, 36)) for c in rearranged)
    return int(numeric) % 97 == 1


def _mask_ibans(text: str) -> tuple[str, list[str]]:
    """IBANs are written in groups of four; try the longest run of groups that validates."""
    out, kinds, pos = [], [], 0
    for m in _IBAN.finditer(text):
        if m.start() < pos:
            continue
        groups = re.findall(r"[ ]?[A-Z0-9]{1,4}", m.group(0)[4:], re.IGNORECASE)
        for n in range(len(groups), 2, -1):
            candidate = m.group(0)[:4] + "".join(groups[:n])
            if iban_valid(candidate):
                out.append(text[pos : m.start()] + _surrogate("IBAN", candidate))
                kinds.append("IBAN")
                pos = m.start() + len(candidate)
                break
    out.append(text[pos:])
    return "".join(out), kinds


def _surrogate(kind: str, raw: str) -> str:
    tail = re.sub(r"[^0-9A-Za-z]", "", raw)[-4:]
    return f"{kind}-***-{tail}"


@dataclass
class Masked:
    text: str
    kinds: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


def mask_identifiers(text: str) -> Masked:
    """Replace every detected identifier with its surrogate; report the kinds found."""
    kinds: list[str] = []

    def sub(pattern: re.Pattern[str], kind: str, valid: Callable[[str], bool], group: int = 0) -> None:
        nonlocal text

        def repl(m: re.Match[str]) -> str:
            raw = m.group(group)
            if not valid(raw):
                return m.group(0)
            kinds.append(kind)
            if group == 0:
                return _surrogate(kind, raw)
            start, end = m.span(group)
            whole = m.group(0)
            off = m.start(0)
            return whole[: start - off] + _surrogate(kind, raw) + whole[end - off :]

        text = pattern.sub(repl, text)

    text, iban_kinds = _mask_ibans(text)
    kinds += iban_kinds
    sub(
        _CARD,
        "CARD",
        lambda raw: 13 <= len(re.sub(r"\D", "", raw)) <= 19 and luhn_valid(re.sub(r"\D", "", raw)),
    )
    sub(_US_SSN, "TAXID", lambda raw: True)
    sub(_SSN_CONTEXT, "TAXID", lambda raw: len(re.sub(r"\D", "", raw)) >= 7, group=2)
    sub(_UK_NINO, "TAXID", lambda raw: True)
    sub(_ACCOUNT_CONTEXT, "ACCT", lambda raw: len(re.sub(r"\D", "", raw)) >= 6, group=2)
    return Masked(text=text, kinds=kinds)


def mask_value(value: Any) -> tuple[Any, list[str]]:
    """Mask every string inside a JSON-like value; numbers that look like cards too."""
    kinds: list[str] = []

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            m = mask_identifiers(v)
            kinds.extend(m.kinds)
            return m.text
        if isinstance(v, bool) or v is None or isinstance(v, float):
            return v
        if isinstance(v, int):
            m = mask_identifiers(str(v))
            if m.changed:
                kinds.extend(m.kinds)
                return m.text
            return v
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {str(k): walk(x) for k, x in v.items()}
        return v

    return walk(value), kinds


def unstorable_value(value: Any, path: str = "") -> tuple[str, str] | None:
    """The first value in a JSON-like structure (keys included) that PostgreSQL cannot store, as
    (dotted path, why), or None. `text` and `jsonb` refuse a NUL character; a lone surrogate (a
    JSON escape such as "\\ud800" with no partner) is not valid UTF-8; `jsonb` refuses NaN and
    Infinity, which Python's JSON parser accepts. Each used to reach the database as a 500."""
    if isinstance(value, str):
        if "\x00" in value:
            return path or "body", "text must not contain NUL characters"
        if _LONE_SURROGATE.search(value):
            return path or "body", "text must not contain unpaired surrogate characters"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (path or "body", "numbers must be finite")
    if isinstance(value, dict):
        for key, item in value.items():
            shown = _LONE_SURROGATE.sub("\ufffd", str(key).replace("\x00", "\ufffd"))  # never echo it
            where = f"{path}.{shown}" if path else shown
            found = unstorable_value(key, where) if isinstance(key, str) else None
            if found is None:
                found = unstorable_value(item, where)
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = unstorable_value(item, f"{path}.{i}" if path else str(i))
            if found is not None:
                return found
    return None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
