"""SEC-01: mask financial and national identifiers before anything is stored,
embedded or logged.

Each detector validates what it finds (Luhn plus the card schemes' number ranges
for cards, ISO 13616 mod-97 and the country's length for IBANs, the issuing
ranges for SSNs, ITINs and National Insurance numbers, Luhn for Canadian SINs,
Verhoeff for Aadhaar numbers, ISO 7064 mod 11,10 for the German Steuer-ID, the
mod-97 key of the French NIR) so ordinary numbers (order ids, part numbers,
prices) survive.

Personal identifiers beyond those (e-mail addresses, phone numbers, dates of
birth, passport numbers: `PERSONAL_CLASSES`) are detected too; a tenant's policy
masks them (the default) or keeps them (`keep`).
The surrogate keeps the last four characters so a human can still match it
against the system of record: `CARD-***-1111`, `IBAN-***-4432`, `ACCT-***-5678`.

Detection reads the text as a model would: invisible characters (format
characters such as zero-width spaces and soft hyphens, ignorables, control
characters) dropped, compatibility forms folded (NFKC: fullwidth digits,
no-break spaces) and every decimal digit read as ASCII. Rendering drops the
same invisible characters, so a card split by them would otherwise reach the
agent whole. Only the identifiers themselves (and the invisible characters
glued to them) are replaced; the rest of the text is returned as written.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator

from agent_memory.domain.invisible import hidden as _hidden

# Separators people put between the digit groups of a card: whitespace, dots, underscores and
# every dash (hyphen, non-breaking hyphen, figure, en and em dash, minus sign). Up to three in a
# row ("4111 - 1111", "4111\r\n1111"); more than that joins two unrelated numbers.
_DASHES = "\\-\u2010-\u2015\u2212"
_GROUP_SEP = f"[\\s._{_DASHES}]"
_CARD_RUN = re.compile(f"(?<![0-9])[0-9]+(?:{_GROUP_SEP}{{1,3}}[0-9]+)*")
_DIGIT_GROUP = re.compile("[0-9]+")

_LABEL_TAIL = (
    r"(?![a-z])(?:[\s:#=_.()/\-]|(?<![a-z])(?:number|num|nr|no|id|code|is|was|ref|details)(?![a-z]))*$"
)
_CARD_WORDS = (
    r"(?<![a-z])(?:card|cards|cardholder|cc|ccn|pan|visa|master\s?card|amex|american express|jcb|"
    r"diners(?: club)?|maestro|union\s?pay|cvv2?|cvc)"
)
# A card word right before the number (glued or not): "card 4111…", "PAN-4111…", "card_4111…".
_CARD_LABEL = re.compile(_CARD_WORDS + _LABEL_TAIL, re.IGNORECASE)
_CARD_NEARBY = re.compile(_CARD_WORDS + r"(?![a-z])", re.IGNORECASE)
# A label that says the number is something else. It decides unless a card word is nearer.
# ("case" only as "case #", "case number": "just in case 4111 …" is a card.)
_OTHER_LABEL = re.compile(
    r"(?<![a-z])(?:order|ord|po|purchase order|tracking|track|trk|shipment|parcel|package|consignment|"
    r"awb|waybill|invoice|inv|receipt|rcpt|ticket|tkt|case(?=\s*(?:#|no|number|num|id|ref)(?![a-z]))|incident|reference|ref|confirmation|conf|"
    r"booking|reservation|itinerary|pnr|sku|serial|s/n|sn|imei|iccid|meid|transaction|txn|trx|ean|upc|"
    r"gtin|isbn|barcode|member|membership|customer|cust|policy|claim|loyalty|id|phone|tel|telephone|"
    r"mobile|cell|fax|call|whatsapp|sms|version|ver|build|release)s?" + _LABEL_TAIL,
    re.IGNORECASE,
)
_SENTENCE_BREAK = re.compile(r"[.!?;]\s+(?=[A-Z])|\n\s*\n")
_PHONE_LABEL = re.compile(
    r"(?<![a-z])(?:phone|tel|telephone|mobile|cell|fax|call|whatsapp|sms)" + _LABEL_TAIL, re.IGNORECASE
)

# IBAN: country, check digits, then groups of up to four letters or digits. The groups are
# possessive so that a long run of letters cannot make the pattern backtrack exponentially.
_IBAN_SEP = f"[ \\t.{_DASHES}]"
_IBAN = re.compile(
    f"(?<![A-Za-z0-9])[A-Za-z]{{2}}[0-9]{{2}}(?:{_IBAN_SEP}{{0,2}}[A-Za-z0-9]{{1,4}}+){{3,10}}"
)
_IBAN_GROUP = re.compile(f"{_IBAN_SEP}{{0,2}}[A-Za-z0-9]{{1,4}}+")
# ISO 13616 registry lengths; a country not listed here is accepted at any length 15-34.
_IBAN_LENGTHS = {
    **dict.fromkeys(["NO"], 15),
    **dict.fromkeys(["BE"], 16),
    **dict.fromkeys(["DK", "FI", "FO", "GL", "NL", "SD", "FK"], 18),
    **dict.fromkeys(["MK", "SI"], 19),
    **dict.fromkeys(["AT", "BA", "EE", "KZ", "LT", "LU", "XK", "MN"], 20),
    **dict.fromkeys(["CH", "HR", "LI", "LV"], 21),
    **dict.fromkeys(["BG", "BH", "CR", "DE", "GB", "GE", "IE", "ME", "RS", "VA"], 22),
    **dict.fromkeys(["AE", "GI", "IL", "IQ", "TL", "SO", "OM"], 23),
    **dict.fromkeys(["AD", "CZ", "ES", "MD", "PK", "RO", "SA", "SE", "SK", "TN", "VG"], 24),
    **dict.fromkeys(["PT", "ST", "LY"], 25),
    **dict.fromkeys(["IS", "TR"], 26),
    **dict.fromkeys(["FR", "GR", "IT", "MC", "MR", "SM", "BI", "DJ"], 27),
    **dict.fromkeys(["AL", "AZ", "BY", "CY", "DO", "GT", "HU", "LB", "PL", "SV", "NI", "HN"], 28),
    **dict.fromkeys(["BR", "EG", "PS", "QA", "UA"], 29),
    **dict.fromkeys(["JO", "KW", "MU", "YE"], 30),
    **dict.fromkeys(["MT", "SC"], 31),
    **dict.fromkeys(["LC"], 32),
    **dict.fromkeys(["RU"], 33),
}

# US SSN (AAA-GG-SSSS; never 000, 666 or 9xx, never group 00 or serial 0000) and ITIN (9xx with a
# group in 50-65, 70-88, 90-92 or 94-99), separated by a hyphen, any dash, a space or a dot; not
# a piece of a longer chain of digit groups.
_TAX_SEP = f"[ .{_DASHES}]"
_NOT_AFTER_DIGITS = f"(?<![0-9])(?<![0-9]{_TAX_SEP})"
_NOT_BEFORE_DIGITS = f"(?![0-9])(?!{_TAX_SEP}[0-9])"
_US_SSN = re.compile(
    f"{_NOT_AFTER_DIGITS}(?!000|666|9)[0-9]{{3}}{_TAX_SEP}(?!00)[0-9]{{2}}{_TAX_SEP}(?!0000)[0-9]{{4}}"
    f"{_NOT_BEFORE_DIGITS}"
)
_US_ITIN = re.compile(
    f"{_NOT_AFTER_DIGITS}9[0-9]{{2}}{_TAX_SEP}(?:5[0-9]|6[0-5]|7[0-9]|8[0-8]|9[0-24-9]){_TAX_SEP}[0-9]{{4}}"
    f"{_NOT_BEFORE_DIGITS}"
)
_TAX_LABEL = (
    r"(?P<label>ssn|ss#|ss no\.?|social security(?: number| no\.?| #)?|social insurance number|"
    r"tax (?:id|identification)(?: number| no\.?)?|taxpayer (?:id|identification)(?: number| no\.?)?|"
    r"federal (?:ein|tax id)|employer (?:identification|id|tax id)(?: number| no\.?)?|"
    r"individual taxpayer identification number|itin|fein|ein|tin)"
)
_SSN_CONTEXT = re.compile(
    r"(?<![a-z])" + _TAX_LABEL + r"(?![a-z])"
    r"(?:[\s:#=.()\-]|(?<![a-z])(?:is|was|number|no|num|nr|ein|fein|tin|itin|ssn)(?![a-z])){0,12}?"
    f"(?P<number>[0-9](?:{_TAX_SEP}?[0-9]){{6,11}}){_NOT_BEFORE_DIGITS}",
    re.IGNORECASE,
)
# UK National Insurance number: two letters (first not D F I Q U V, second not D F I O Q U V, and
# not BG GB NK KN TN NT ZZ), six digits, a suffix A-D; any case, optionally spaced or dashed.
_UK_NINO = re.compile(
    r"(?<![A-Za-z0-9])(?!bg|gb|nk|kn|tn|nt|zz)[a-ceghj-pr-tw-z][a-ceghj-npr-tw-z]"
    r"(?:[ .\-]?[0-9]{2}){3}[ .\-]?[a-d](?![A-Za-z0-9])",
    re.IGNORECASE,
)
_ACCOUNT_CONTEXT = re.compile(
    r"(?i)\b((?:bank |checking |savings |brokerage )?(?:account|acct|a/c)(?: number| no\.?| #)?"
    r"|routing(?: number)?|sort code)(?![a-z0-9])[\s:#.-]*(?:is|=)?[\s:#-]*"
    f"([0-9][0-9 {_DASHES}]{{4,20}}[0-9])"
)

_ASCII_HIDDEN = re.compile("[\x00-\x08\x0e-\x1b\x7f]")


def _detection_view(text: str) -> tuple[str, list[int] | None]:
    """The text as detection reads it, and for each of its characters the index of the character
    of `text` it came from (None when the two are the same)."""
    if text.isascii() and not _ASCII_HIDDEN.search(text):
        return text, None
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        if _hidden(ch):
            continue
        if ch.isascii():
            chars.append(ch)
            origin.append(i)
            continue
        for c in unicodedata.normalize("NFKC", ch):
            if not c.isascii() and unicodedata.category(c) == "Nd":
                c = str(unicodedata.decimal(c))
            chars.append(c)
            origin.append(i)
    return "".join(chars), origin


@dataclass(frozen=True)
class Found:
    """One identifier found: its surrogate kind (CARD, IBAN, TAXID, ACCT), what it is (card, iban,
    ssn, itin, ein, tax_id, nino, account), and where it was in the text given (end exclusive)."""

    kind: str
    type: str
    start: int
    end: int


@dataclass
class Masked:
    """The text with its identifiers replaced; `found` the ones masked, `kept` the personal ones
    detected but left as written (the tenant keeps their class)."""

    text: str
    kinds: list[str] = field(default_factory=list)
    found: list[Found] = field(default_factory=list)
    kept: list[Found] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


@dataclass
class _Hit:
    start: int  # in the detection view
    end: int
    kind: str
    type: str
    raw: str  # as the view reads it


class _Scan:
    """Detectors read and replace `view`; every replacement is tracked back to a span of the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.view, origin = _detection_view(text)
        self._origin = origin
        self._starts: list[int] | None = None
        self._ends: list[int] | None = None
        self.found: list[tuple[Found, str]] = []

    def replace(self, hits: list[_Hit]) -> None:
        if not hits:
            return
        if self._starts is None or self._ends is None:
            origin = self._origin if self._origin is not None else list(range(len(self.view)))
            self._starts = list(origin)
            self._ends = [i + 1 for i in origin]
        starts, ends, view = self._starts, self._ends, self.view
        for hit in sorted(hits, key=lambda h: h.start, reverse=True):
            begin, finish = starts[hit.start], ends[hit.end - 1]
            surrogate = _surrogate(hit.kind, hit.raw)
            view = view[: hit.start] + surrogate + view[hit.end :]
            starts[hit.start : hit.end] = [begin] * len(surrogate)
            ends[hit.start : hit.end] = [finish] * len(surrogate)
            self.found.append((Found(hit.kind, hit.type, begin, finish), surrogate))
        self.view = view

    def result(self, keep: frozenset[str] = frozenset()) -> Masked:
        # A later hit that took in an earlier surrogate covers that hit's whole span: keep the outer.
        kept = [
            (f, s)
            for f, s in self.found
            if not any(o is not f and o.start <= f.start and f.end <= o.end for o, _ in self.found)
        ]
        text, out, pos = self.text, [], 0
        widened: dict[int, Found] = {}
        for f, surrogate in sorted(kept, key=lambda fs: fs[0].start):
            start, end = f.start, f.end
            # invisible characters glued to the identifier go with it: none is left beside a digit
            while start > pos and _hidden(text[start - 1]):
                start -= 1
            while end < len(text) and _hidden(text[end]):
                end += 1
            if f.type in keep:
                start, end = f.start, f.end  # left as written, invisible characters included
                surrogate = text[start:end]
            out.append(text[pos:start] + surrogate)
            widened[id(f)] = Found(f.kind, f.type, start, end)
            pos = end
        out.append(text[pos:])
        found = [widened[id(f)] for f, _ in kept if f.type not in keep]
        left = [widened[id(f)] for f, _ in kept if f.type in keep]
        return Masked(text="".join(out), kinds=[f.kind for f in found], found=found, kept=left)


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


def card_range_valid(digits: str) -> bool:
    """True if the number is in a card scheme's issuer range at one of that scheme's lengths
    (Visa, Mastercard, Amex, Discover, UnionPay, JCB, Diners, Maestro, Mir, RuPay)."""
    n, p2, p4 = len(digits), int(digits[:2]), int(digits[:4])
    first = digits[0]
    if first == "4":
        return n in (13, 16, 19)
    if first == "2":
        return (2221 <= p4 <= 2720 and n == 16) or (2200 <= p4 <= 2204 and 16 <= n <= 19)
    if first == "3":
        return (
            (p2 in (34, 37) and n == 15)
            or (3528 <= p4 <= 3589 and 16 <= n <= 19)
            or (300 <= int(digits[:3]) <= 305 and 14 <= n <= 19)
            or (p2 in (36, 38, 39) and 14 <= n <= 19)
        )
    if first == "5":
        return (51 <= p2 <= 55 and n == 16) or (p2 in (50, 56, 57, 58) and 13 <= n <= 19)
    if first == "6":
        return 13 <= n <= 19
    if first == "8":
        return p2 in (81, 82) and n == 16
    return False


def iban_valid(raw: str) -> bool:
    s = re.sub(r"[^0-9A-Za-z]", "", raw).upper()
    if not (15 <= len(s) <= 34) or not s[:2].isalpha() or not s[2:4].isdigit():
        return False
    if _IBAN_LENGTHS.get(s[:2], len(s)) != len(s):
        return False
    rearranged = s[4:] + s[:4]
    numeric = "".join(str(int(c, 36)) for c in rearranged)
    return int(numeric) % 97 == 1


def _surrogate(kind: str, raw: str) -> str:
    # An e-mail address keeps nothing (its last characters are its domain's), a date of birth
    # nothing (they are the year).
    tail = "" if kind in ("EMAIL", "DOB") else re.sub(r"[^0-9A-Za-z]", "", raw)[-4:]
    return f"{kind}-***-{tail or 'x'}"


def _iban_hits(view: str) -> list[_Hit]:
    """IBANs are written in groups of four; take the longest run of groups that validates."""
    hits, pos = [], 0
    for m in _IBAN.finditer(view):
        if m.start() < pos:
            continue
        ends = [m.start() + 4 + g.end() for g in _IBAN_GROUP.finditer(m.group(0)[4:])]
        for end in reversed(ends[2:]):
            if iban_valid(view[m.start() : end]):
                hits.append(_Hit(m.start(), end, "IBAN", "iban", view[m.start() : end]))
                pos = end
                break
    return hits


def _sentence_around(view: str, start: int, end: int, reach: int = 48) -> tuple[str, str]:
    """The part of the sentence before `start` and after `end`, up to `reach` characters each."""
    before = view[max(0, start - reach) : start]
    breaks = list(_SENTENCE_BREAK.finditer(before))
    after = view[end : end + reach]
    cut = _SENTENCE_BREAK.search(after)
    return (before[breaks[-1].end() :] if breaks else before), (after[: cut.start()] if cut else after)


def _is_card(view: str, start: int, end: int, digits: str) -> bool:
    if not (13 <= len(digits) <= 19 and luhn_valid(digits)):
        return False
    before = view[max(0, start - 48) : start]
    if _CARD_LABEL.search(before):
        return True
    if (before.rstrip().endswith("+") or _PHONE_LABEL.search(before)) and len(digits) <= 15:
        return False  # a phone number (E.164 allows at most 15 digits)
    # A card word in the same sentence decides, whatever label precedes the number
    # ("Order 4111 1111 1111 1111 is my visa card").
    sentence_before, sentence_after = _sentence_around(view, start, end)
    if _CARD_NEARBY.search(sentence_before) or _CARD_NEARBY.search(sentence_after):
        return True
    if _OTHER_LABEL.search(before):
        # A label says what the writer calls it, not what it is: a valid card number at a scheme's
        # usual length (16; 15 for Amex; 14 for Diners) is masked under any label ("ref 4111…");
        # the rarer lengths (13, 17-19) under another label are left as written.
        return _usual_card_length(digits) and card_range_valid(digits)
    return card_range_valid(digits)


def _usual_card_length(digits: str) -> bool:
    n = len(digits)
    return n in (15, 16) or (n == 14 and (digits[:2] in ("36", "38", "39") or "300" <= digits[:3] <= "305"))


def _card_hits(view: str) -> list[_Hit]:
    """A card is a run of digit groups, or a stretch of a longer run ("… 1111 123" with its
    code): the longest stretch from the left that validates wins."""
    hits: list[_Hit] = []
    for run in _CARD_RUN.finditer(view):
        groups = [
            (run.start() + g.start(), run.start() + g.end()) for g in _DIGIT_GROUP.finditer(run.group(0))
        ]
        if sum(e - s for s, e in groups) < 13:
            continue
        i = 0
        while i < len(groups):
            found = None
            digits = ""
            candidates = []
            for j in range(i, len(groups)):
                digits += view[groups[j][0] : groups[j][1]]
                if len(digits) > 19:
                    break
                candidates.append((j, digits))
            for j, digits in reversed(candidates):
                start, end = groups[i][0], groups[j][1]
                if _is_card(view, start, end, digits):
                    found = _Hit(start, end, "CARD", "card", digits)
                    i = j + 1
                    break
            if found is None:
                i += 1
            else:
                hits.append(found)
    return hits


def _tax_type(label: str, raw: str) -> str:
    """What a labelled tax number is: the label says so, else its shape as written (NN-NNNNNNN is
    an EIN, NNN-NN-NNNN an SSN or, in the 9XX ranges, an ITIN), else a tax id of no known kind."""
    label = label.lower()
    if label.startswith(("itin", "individual")):
        return "itin"
    if "ein" in label or label.startswith("employer"):
        return "ein"
    if label.startswith("social insurance"):
        return "sin"
    if label.startswith(("ss", "social")):
        return "ssn"
    shape = re.sub(f"{_TAX_SEP}+", "-", re.sub("[0-9]", "9", raw))
    if shape == "99-9999999":
        return "ein"
    if shape == "999-99-9999":
        return "itin" if _US_ITIN.fullmatch(raw) else "ssn"
    return "tax_id"


def _pattern_hits(pattern: re.Pattern[str], view: str, kind: str, type_: str) -> Iterator[_Hit]:
    for m in pattern.finditer(view):
        yield _Hit(m.start(), m.end(), kind, type_, m.group(0))


def _context_hits(view: str) -> Iterator[_Hit]:
    for m in _SSN_CONTEXT.finditer(view):
        digits = re.sub(r"\D", "", m.group("number"))
        if len(digits) >= 7:
            yield _Hit(
                m.start("number"),
                m.end("number"),
                "TAXID",
                _tax_type(m.group("label"), m.group("number")),
                m.group("number"),
            )


def _account_hits(view: str) -> Iterator[_Hit]:
    for m in _ACCOUNT_CONTEXT.finditer(view):
        if len(re.sub(r"\D", "", m.group(2))) >= 6:
            yield _Hit(m.start(2), m.end(2), "ACCT", "account", m.group(2))


# -- national ids beyond the US and UK ------------------------------------------------------------
# Words after which a number is a product's, not a person's: an SSN-shaped part number stays.
_PRODUCT_WORDS = re.compile(
    r"(?<![a-z])(?:part|parts|p/n|pn|model|item|sku|catalog|catalogue|component|assembly|kit|filter|"
    r"cartridge|spare|replacement|serial|s/n|lot|batch|drawing|revision|rev|order|invoice|tracking|"
    r"ticket|case|booking|confirmation|product|article|art\.?\s?nr|qty|quantity|pcs|pieces|units|"
    r"backorder|backordered|stock|inventory|warehouse|reorder)(?![a-z])",
    re.IGNORECASE,
)
_TAX_WORDS = re.compile(r"(?<![a-z])" + _TAX_LABEL + r"(?![a-z])", re.IGNORECASE)
# SSNs the Social Security Administration never issued though they are in range (the Woolworth
# wallet card, an advertised sample card). 123-45-6789 is masked: people use it as their example.
_NEVER_ISSUED_SSN = {"078051120", "219099999"}

_NUMBER_TAIL = r"(?:[\s:#=.()\-]|(?<![a-z])(?:is|was|number|no|num|nr|id)(?![a-z])){0,8}?"
_SIN_LABEL = re.compile(
    r"(?<![a-z])(?:sin|s\.i\.n\.?|social insurance (?:number|no\.?|#)|nas|num[eé]ro d'assurance sociale)(?![a-z])"
    + _NUMBER_TAIL
    + f"(?P<number>[0-9]{{3}}{_TAX_SEP}?[0-9]{{3}}{_TAX_SEP}?[0-9]{{3}}){_NOT_BEFORE_DIGITS}",
    re.IGNORECASE,
)
_SIN_GROUPED = re.compile(
    f"{_NOT_AFTER_DIGITS}[1-79][0-9]{{2}}([ \\-])[0-9]{{3}}\\1[0-9]{{3}}{_NOT_BEFORE_DIGITS}"
)
_AADHAAR_LABEL = re.compile(
    r"(?<![a-z])(?:aadhaar|aadhar|uidai|uid|\u0906\u0927\u093e\u0930)(?:\s*card)?(?![a-z])"
    + _NUMBER_TAIL
    + f"(?P<number>[2-9][0-9]{{3}}{_TAX_SEP}?[0-9]{{4}}{_TAX_SEP}?[0-9]{{4}}){_NOT_BEFORE_DIGITS}",
    re.IGNORECASE,
)
_AADHAAR_GROUPED = re.compile(
    f"{_NOT_AFTER_DIGITS}[2-9][0-9]{{3}}([ \\-])[0-9]{{4}}\\1[0-9]{{4}}{_NOT_BEFORE_DIGITS}"
)
_STEUER_LABEL = re.compile(
    r"(?<![a-z])(?:steuer[\s-]?id(?:nr\.?)?|steuer[\s-]?identifikationsnummer|steuerliche identifikationsnummer|"
    r"identifikationsnummer|idnr\.?|tax id)(?![a-z])"
    + _NUMBER_TAIL
    + f"(?P<number>[1-9](?:{_TAX_SEP}?[0-9]){{10}}){_NOT_BEFORE_DIGITS}",
    re.IGNORECASE,
)
_STEUER_BARE = re.compile(
    f"{_NOT_AFTER_DIGITS}(?:[1-9][0-9]{{10}}|[1-9][0-9] [0-9]{{3}} [0-9]{{3}} [0-9]{{3}}){_NOT_BEFORE_DIGITS}"
)
# French NIR: sex, year, month, department (2A/2B for Corsica), commune, order, then the key.
_NIR_SEP = "[ .\\-]?"
_NIR = re.compile(
    f"(?<![0-9A-Za-z])[1-478]{_NIR_SEP}[0-9]{{2}}{_NIR_SEP}[0-9]{{2}}{_NIR_SEP}(?:[0-9]{{2}}|2[AaBb]){_NIR_SEP}"
    f"[0-9]{{3}}{_NIR_SEP}[0-9]{{3}}{_NIR_SEP}[0-9]{{2}}(?![0-9A-Za-z])"
)

_VERHOEFF_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 2, 3, 4, 0, 6, 7, 8, 9, 5),
    (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7),
    (4, 0, 1, 2, 3, 9, 5, 6, 7, 8),
    (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2),
    (7, 6, 5, 9, 8, 2, 1, 0, 4, 3),
    (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)
_VERHOEFF_P = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 5, 7, 6, 2, 8, 3, 0, 9, 4),
    (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7),
    (9, 4, 5, 3, 1, 2, 6, 8, 7, 0),
    (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5),
    (7, 0, 4, 6, 9, 1, 3, 2, 5, 8),
)


def verhoeff_valid(digits: str) -> bool:
    """The Verhoeff check (Aadhaar's last digit)."""
    c = 0
    for i, ch in enumerate(reversed(digits)):
        c = _VERHOEFF_D[c][_VERHOEFF_P[i % 8][int(ch)]]
    return c == 0


def sin_valid(digits: str) -> bool:
    """A Canadian Social Insurance Number: nine digits, Luhn; 0 (fictitious) and 8 (unused) never
    lead."""
    return len(digits) == 9 and digits[0] not in "08" and luhn_valid(digits)


def aadhaar_valid(digits: str) -> bool:
    """An Aadhaar number: twelve digits, never leading 0 or 1, Verhoeff check digit."""
    return len(digits) == 12 and digits[0] not in "01" and verhoeff_valid(digits)


def steuer_id_valid(digits: str) -> bool:
    """The German tax identification number: eleven digits, no leading 0; in the first ten one
    digit occurs twice or three times and every other at most once; ISO 7064 MOD 11,10 check."""
    if len(digits) != 11 or digits[0] == "0":
        return False
    repeated = [n for n in Counter(digits[:10]).values() if n > 1]
    if len(repeated) != 1 or repeated[0] > 3:
        return False
    product = 10
    for ch in digits[:10]:
        total = (int(ch) + product) % 10 or 10
        product = (total * 2) % 11
    return (11 - product) % 10 == int(digits[10])


def nir_valid(raw: str) -> bool:
    """A French social security number (NIR): 13 characters and a two-digit key, 97 minus the
    number modulo 97 (Corsica's 2A and 2B read as 19 and 18); month 01-12, or 20-42 and 50-99 as
    issued for unknown months."""
    s = re.sub(r"[^0-9A-Za-z]", "", raw).upper()
    if len(s) != 15 or not s[13:].isdigit():
        return False
    month = int(s[3:5])
    if not (1 <= month <= 12 or 20 <= month <= 42 or month >= 50):
        return False
    body = s[:5] + {"2A": "19", "2B": "18"}.get(s[5:7], s[5:7]) + s[7:13]
    return body.isdigit() and 97 - int(body) % 97 == int(s[13:])


def _another_thing(view: str, start: int, end: int) -> bool:
    """The sentence names the number as something else (a part, an order) and never as a tax id."""
    before, after = _sentence_around(view, start, end)
    if _TAX_WORDS.search(before) or _TAX_WORDS.search(after):
        return False
    return bool(
        _OTHER_LABEL.search(view[max(0, start - 48) : start])
        or _PRODUCT_WORDS.search(before)
        or _PRODUCT_WORDS.search(after)
    )


def _us_tax_hits(view: str) -> Iterator[_Hit]:
    """SSN- and ITIN-shaped numbers with no tax label: masked unless the sentence calls them a
    part, an order or another thing, or the SSA never issued them (labelled ones: `_context_hits`)."""
    for pattern, type_ in ((_US_SSN, "ssn"), (_US_ITIN, "itin")):
        for m in pattern.finditer(view):
            digits = re.sub(r"\D", "", m.group(0))
            if digits in _NEVER_ISSUED_SSN or _another_thing(view, m.start(), m.end()):
                continue
            yield _Hit(m.start(), m.end(), "TAXID", type_, m.group(0))


def _national_hits(view: str) -> Iterator[_Hit]:
    """Canadian SIN, Aadhaar, German Steuer-ID and French NIR: after their label in any grouping,
    or bare in their usual grouping, and always only when their check digits are right."""
    labelled: list[tuple[re.Pattern[str], str, Callable[[str], bool]]] = [
        (_SIN_LABEL, "sin", sin_valid),
        (_AADHAAR_LABEL, "aadhaar", aadhaar_valid),
        (_STEUER_LABEL, "steuer_id", steuer_id_valid),
    ]
    taken: list[tuple[int, int]] = []
    for pattern, type_, valid in labelled:
        for m in pattern.finditer(view):
            if valid(re.sub(r"\D", "", m.group("number"))):
                taken.append((m.start("number"), m.end("number")))
                yield _Hit(m.start("number"), m.end("number"), "TAXID", type_, m.group("number"))
    bare: list[tuple[re.Pattern[str], str, Callable[[str], bool]]] = [
        (_SIN_GROUPED, "sin", sin_valid),
        (_AADHAAR_GROUPED, "aadhaar", aadhaar_valid),
        (_STEUER_BARE, "steuer_id", steuer_id_valid),
    ]
    for pattern, type_, valid in bare:
        for m in pattern.finditer(view):
            if any(s < m.end() and m.start() < e for s, e in taken):
                continue
            if valid(re.sub(r"\D", "", m.group(0))) and not _another_thing(view, m.start(), m.end()):
                taken.append((m.start(), m.end()))
                yield _Hit(m.start(), m.end(), "TAXID", type_, m.group(0))


def _nir_hits(view: str) -> Iterator[_Hit]:
    for m in _NIR.finditer(view):
        if nir_valid(m.group(0)):
            yield _Hit(m.start(), m.end(), "TAXID", "nir", m.group(0))


# -- personal identifiers a tenant masks or keeps ----------------------------------------------
PERSONAL_CLASSES = ("email", "phone", "date_of_birth", "passport")
PERSONAL_KINDS = {"email": "EMAIL", "phone": "PHONE", "date_of_birth": "DOB", "passport": "PASSPORT"}

_EMAIL = re.compile(
    r"(?<![\w.%+\-])[A-Za-z0-9][\w.%+\-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62}\.)+[A-Za-z]{2,24}(?![\w\-])"
)
_PHONE_SEP = r"[ .\-\u2010-\u2015]"
_PHONE = re.compile(
    # international: +CC or 00CC, then groups (an area code may be in parentheses)
    r"(?<![\w+])(?<![0-9]"
    + _PHONE_SEP
    + r")(?:\+|00)[1-9][0-9]{0,3}(?:"
    + _PHONE_SEP
    + r"{0,2}(?:\([0-9]{1,5}\)|[0-9]{1,6})){1,6}(?![0-9])"
    # North American: (415) 555-0132, 415-555-0132, 1-800-555-0100, 415.555.0132
    r"|(?<![\w\-.])(?<![0-9]"
    + _PHONE_SEP
    + r")(?:1"
    + _PHONE_SEP
    + r")?(?:\([2-9][0-9]{2}\)\s?|[2-9][0-9]{2}"
    + _PHONE_SEP
    + r")[2-9][0-9]{2}"
    + _PHONE_SEP
    + r"[0-9]{4}(?![0-9])(?!"
    + _PHONE_SEP
    + r"[0-9])"
    # French: 06 12 34 56 78, 01.23.45.67.89 (five pairs, one separator throughout)
    r"|(?<![\w\-.])(?<![0-9]"
    + _PHONE_SEP
    + r")0[1-9]([ .\-])[0-9]{2}(?:\1[0-9]{2}){3}(?![0-9])(?!"
    + _PHONE_SEP
    + r"[0-9])"
    # national with a trunk 0: 020 7946 0958, 07700 900123, 030 1234 5678
    r"|(?<![\w\-.])(?<![0-9]" + _PHONE_SEP + r")0[1-9][0-9]{1,4}(?:" + _PHONE_SEP + r"[0-9]{2,4}){1,3}"
    r"(?![0-9])(?!" + _PHONE_SEP + r"[0-9])"
)
_PHONE_LABELLED = re.compile(
    r"(?<![a-z])(?:phone|tel|telephone|mobile|cell|fax|call(?: me)?(?: at| on)?|ring(?: me)?(?: on| at)?|"
    r"whatsapp|sms|text(?: me)? (?:at|on)|handy|t[eé]l[eé]phone|portable)(?![a-z])"
    r"(?:[\s:#=.()\-]|(?<![a-z])(?:is|was|number|no|num|nr)(?![a-z])){0,8}?"
    r"(?P<number>\(?[0-9][0-9()]*(?:" + _PHONE_SEP + r"{0,2}\(?[0-9]+\)?){0,6})(?![0-9])",
    re.IGNORECASE,
)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE = (
    r"(?:[0-9]{1,2}[./\-][0-9]{1,2}[./\-](?:[0-9]{4}|[0-9]{2})(?![0-9])|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?![0-9])"
    r"|[0-9]{1,2}(?:st|nd|rd|th)?\s(?:of\s)?"
    + _MONTH
    + r",?\s[0-9]{4}|"
    + _MONTH
    + r"\s[0-9]{1,2}(?:st|nd|rd|th)?,?\s[0-9]{4})"
)
_DOB = re.compile(
    r"(?<![a-z])(?:dob|d\.o\.b\.?|date of birth|birth\s?date|birthday|born(?: on)?|geboren(?: am)?|"
    r"geburtsdatum|n[ée]e? le|date de naissance|fecha de nacimiento)(?![a-z])"
    r"(?:[\s:#=,\-]|(?<![a-z])(?:is|was|on|the)(?![a-z])){0,6}?(?P<date>" + _DATE + ")",
    re.IGNORECASE,
)
_PASSPORT = re.compile(
    r"(?<![a-z])(?:passport|reisepass(?:nummer)?|passeport|pasaporte|passaporto)(?![a-z])"
    r"(?:[\s:#=.\-]|(?<![a-z])(?:is|was|number|no|num|nr|id|n°)(?![a-z])){0,8}?"
    r"(?P<number>(?=[A-Za-z]{0,3}[0-9])[A-Za-z0-9]{6,9})(?![A-Za-z0-9])",
    re.IGNORECASE,
)


def _personal_hits(view: str) -> Iterator[_Hit]:
    for m in _EMAIL.finditer(view):
        yield _Hit(m.start(), m.end(), "EMAIL", "email", m.group(0))
    for m in _DOB.finditer(view):
        yield _Hit(m.start("date"), m.end("date"), "DOB", "date_of_birth", m.group("date"))
    for m in _PASSPORT.finditer(view):
        yield _Hit(m.start("number"), m.end("number"), "PASSPORT", "passport", m.group("number"))


_NUMERIC_DATE = re.compile(
    r"(?P<y>[0-9]{4})[./\-](?P<m>[0-9]{1,2})[./\-](?P<d>[0-9]{1,2})"
    r"|(?P<d2>[0-9]{1,2})[./\-](?P<m2>[0-9]{1,2})[./\-](?P<y2>[0-9]{4})"
)


def _calendar_date(number: str) -> bool:
    """A calendar date written with dashes, dots or slashes (2026-11-09, 09.11.2026, 11/09/2026):
    after "call on" it is when, not a number to call."""
    m = _NUMERIC_DATE.fullmatch(number.strip())
    if m is None:
        return False
    year, a, b = (
        (int(m["y"]), int(m["m"]), int(m["d"])) if m["y"] else (int(m["y2"]), int(m["m2"]), int(m["d2"]))
    )
    plausible = lambda month, day: 1 <= month <= 12 and 1 <= day <= 31  # noqa: E731
    return 1900 <= year <= 2100 and (plausible(a, b) or plausible(b, a))


def _phone_hits(view: str) -> Iterator[_Hit]:
    """Phone numbers: international (+ or 00), North American and trunk-0 national shapes, and any
    run of 7 to 15 digits after a phone word."""
    spans: list[tuple[int, int]] = []
    for m in _PHONE.finditer(view):
        if 7 <= len(re.sub(r"\D", "", m.group(0))) <= 15:
            spans.append((m.start(), m.end()))
    for m in _PHONE_LABELLED.finditer(view):
        number = m.group("number")
        if 7 <= len(re.sub(r"\D", "", number)) <= 15 and not _calendar_date(number):
            spans.append((m.start("number"), m.end("number")))
    end = -1
    for start, stop in sorted(spans):
        if start < end:
            continue
        end = stop
        yield _Hit(start, stop, "PHONE", "phone", view[start:stop])


def mask_identifiers(text: str, *, keep: Collection[str] = ()) -> Masked:
    """Replace every detected identifier with its surrogate; report the kinds found, in the
    order they were detected, and where each was (`found`). Personal identifiers of the classes
    in `keep` (`PERSONAL_CLASSES`: a tenant's policy) are detected but left as written (`kept`)."""
    scan = _Scan(text)
    scan.replace(_iban_hits(scan.view))
    scan.replace(list(_nir_hits(scan.view)))
    scan.replace(_card_hits(scan.view))
    scan.replace(list(_context_hits(scan.view)))
    scan.replace(list(_national_hits(scan.view)))
    scan.replace(list(_us_tax_hits(scan.view)))
    scan.replace(list(_pattern_hits(_UK_NINO, scan.view, "TAXID", "nino")))
    scan.replace(list(_account_hits(scan.view)))
    scan.replace(list(_personal_hits(scan.view)))
    scan.replace(list(_phone_hits(scan.view)))
    if not scan.found:
        return Masked(text=text)
    return scan.result(keep=frozenset(keep))


SURROGATE = re.compile(r"\b(CARD|IBAN|TAXID|ACCT)-\*\*\*-\w{1,4}\b")
PERSONAL_SURROGATE = re.compile(r"\b(EMAIL|PHONE|DOB|PASSPORT)-\*\*\*-\w{1,4}\b")


def identifier_kinds(text: str | None) -> list[str]:
    """The financial and national identifiers (not the personal classes a tenant may keep) a text
    holds or held: those masking would find now, and the surrogates of those masked already (a `MaskedText` field is masked when the request is read, so the write
    gateway would otherwise not know an identifier was there)."""
    if not text:
        return []
    return [m.group(1) for m in SURROGATE.finditer(text)] + [
        k for k in mask_identifiers(text).kinds if k not in PERSONAL_KINDS.values()
    ]


def mask_free_text(text: str | None) -> str | None:
    """Mask identifiers in a short free-text field (a source reference, a ticket id, an evidence
    reference, a hold reason, an erasure request reference) and return the masked text; None and
    "" come back as they are. Ordinary references ("TKT-20240115-0042") are left as written."""
    if not text:
        return text
    return mask_identifiers(text).text


def mask_value(value: Any, *, keep: Collection[str] = ()) -> tuple[Any, list[str]]:
    """Mask every string inside a JSON-like value; numbers that look like cards too."""
    kinds: list[str] = []

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            m = mask_identifiers(v, keep=keep)
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


# A short free-text field of a request (a reference, a ticket id, a reason) as it is stored and
# audited: identifiers masked when the request is read, before any service sees it.
MaskedText = Annotated[str, AfterValidator(mask_free_text)]
