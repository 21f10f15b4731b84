"""The freshness gate's judgement (docs/rules.md, Retrieval): a memory in a slot the system of record
owns yields to the live value. Pure: what a memory asserts against what the live value is, and
what one retrieval decided about the memories it checked."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from agent_memory.domain.records import RetrievedMemory


def contradicts(record: RetrievedMemory, field_name: str, live_value: Any) -> bool:
    """Does the memory assert a different value than the live one? Its structured value decides
    when it has one (numbers as numbers: 12.0 and "1,000" are 12 and 1000). Otherwise its text must
    name the live value as a whole word or number ("120 seats" does not name 12). Unknown counts
    as stale: the system of record owns the slot. A text that names the live value among others
    ("from Enterprise to Basic") still passes; the live value is pinned above it either way."""
    asserted = record.value.get(field_name, record.value.get("value"))
    if asserted is not None:
        return _normal(asserted) != _normal(live_value)
    return not names_value(record.content, live_value)


def names_value(text: str, live_value: Any) -> bool:
    """Does the text name the live value as a whole word or number? ("120 seats" does not name 12;
    a date or a time of day is not a count.) Also how a statement about a slot the system of record
    owns is checked against it at extraction (domain/statement_rules.py)."""
    target = _normal(live_value)
    text = " ".join(text.casefold().split())
    if isinstance(target, Decimal):  # a date or a time of day is not a count: "2026-03-12" names no 12
        return any(_normal(n) == target for n in _NUMBER.findall(_DATE_OR_TIME.sub(" ", text)))
    return re.search(r"(?<!\w)" + re.escape(str(target)) + r"(?!\w)", text) is not None


_NUMBER = re.compile(r"(?<![\w.,])-?(?:\d{1,3}(?:[,_]\d{3})+|\d+)(?:\.\d+)?(?!\w|[.,_]\d)")
# "may" is a month only in shapes the verb cannot take: "may 12[, 2026]", "12[th] [of] may" before
# a year, punctuation, the end or with/for/and/at/on/from/to, "in/of/since/until may 2026";
# "12 may be unused" is a count
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY = r"(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?"  # "june 40 seats" names a count
_YEAR = r"(?:19|20)\d\d"
_MONTH_NUMBER = r"(?:0?[1-9]|1[0-2])"
_DATE_OR_TIME = re.compile(  # text is casefolded first
    r"(?<![\w.,/:-])(?:"
    r"\d{4}-\d{1,2}-\d{1,2}(?:t\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?"  # 2026-03-12[t09:30z]
    r"|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|\d{4}/\d{1,2}/\d{1,2}"  # 12/03/2026, 12.03.26, 2026/03/12
    rf"|{_MONTH_NUMBER}/{_YEAR}|{_YEAR}-{_MONTH_NUMBER}(?![\d-])"  # 12/2026, 2026-12
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:\s?(?:am|pm|h)\b)?|\d{1,2}\s?(?:am|pm)\b"  # 12:30, 12:30pm, 12:30h, 12pm
    rf"|{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?"  # 12 march 2026, 12th of march
    rf"|{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?|{_MONTH}\s+{_YEAR}"  # march 12, 2026; mar. 12; march 2026
    rf"|{_DAY}\s+(?:of\s+)?may(?:,?\s+{_YEAR}|(?=\s*(?:$|[.,;:!?)])|\s+(?:with|for|and|at|on|from|to)\b))"  # 12 may.
    rf"|\d{{1,2}}(?:st|nd|rd|th)\s+(?:of\s+)?may|\d{{1,2}}\s+of\s+may"  # 12th may, 12 of may
    rf"|may\.?\s+{_DAY}(?:,?\s+{_YEAR})?|(?:in|of|since|until)\s+may\s+{_YEAR}"  # may 12[, 2026]
    r")(?![\w/-]|[.,:]\d)"  # "05/2026: 12 seats" ends its date at the colon
)


def _normal(value: Any) -> Decimal | str:
    """A value as compared: a number as a Decimal (thousands separators removed), text casefolded
    with its whitespace collapsed (so is a digit string with a leading zero)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return Decimal(value)  # any size: no float conversion to overflow
    if isinstance(value, float) and math.isfinite(value):
        return Decimal(str(value))  # Decimal compares by value: 12.0 == 12, no rounding to 28 digits
    text = " ".join(str(value).casefold().split())
    # a leading zero makes it a code, not a count: "02134" is a postcode, not 2134
    if len(text) <= 60 and re.fullmatch(r"[-+]?(?:[1-9]\d{0,2}(?:[,_]\d{3})+|[1-9]\d*|0)(?:\.\d+)?", text):
        return Decimal(text.replace(",", "").replace("_", ""))
    return text


class LiveReading(Protocol):
    """A live value as the system of record answered it (ports.system_of_record.LiveValue)."""

    @property
    def field(self) -> str: ...
    @property
    def value(self) -> Any: ...
    @property
    def read_at(self) -> datetime: ...


@dataclass(frozen=True)
class FreshnessDecisions:
    """What one retrieval found against the live values: memory id -> the live field it
    contradicts, flagged memories now agreeing again (id -> field), and when the live values
    decided on were read (None: none were, and nothing was decided)."""

    contradicting: dict[str, str]
    agreeing: dict[str, str]
    read_at: datetime | None


@dataclass
class FreshnessGate:
    """Memories in slots the system of record owns yield to the live value: one that contradicts
    it is left out (the live value is shown above the memories either way); one flagged earlier is
    cleared when it agrees again, and stays out while no live value can confirm it (an outage, a
    withheld or missing value)."""

    owned: Mapping[str, str]  # memory id -> the live field its slot maps to
    live: Mapping[str, LiveReading]  # live field -> its value, read for this retrieval
    overrides: dict[str, list[str]] = field(default_factory=dict)  # live field -> memory ids it overrode
    contradicting: dict[str, str] = field(default_factory=dict)
    agreeing: dict[str, str] = field(default_factory=dict)

    def exclusion(self, memory_id: str, memory: Callable[[], RetrievedMemory], flagged: bool) -> str | None:
        """Why this memory is left out ("stale_vs_live", "needs_revalidation"), or None. `memory`
        is read only for a memory the system of record owns; `flagged`: its needs_revalidation."""
        slot_field = self.owned.get(memory_id)
        if slot_field is None:
            return None
        lv = self.live.get(slot_field)
        if lv is None:
            return "needs_revalidation" if flagged else None
        if contradicts(memory(), slot_field, lv.value):
            self.overrides.setdefault(lv.field, []).append(memory_id)
            self.contradicting[memory_id] = slot_field
            return "stale_vs_live"
        if flagged:
            self.agreeing[memory_id] = slot_field
        return None

    def due(self, memory_id: str, flagged: bool) -> bool:
        """Shown as needing revalidation: flagged (by age, or by a contradiction the live value no
        longer shows) and not being cleared by this retrieval."""
        return flagged and memory_id not in self.agreeing

    def decisions(self) -> FreshnessDecisions:
        read_at = min((lv.read_at for lv in self.live.values()), default=None)
        return FreshnessDecisions(dict(self.contradicting), dict(self.agreeing), read_at)
