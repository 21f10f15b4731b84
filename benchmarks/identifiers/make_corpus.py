"""Write `identifiers.jsonl`: the labelled identifier-masking corpus (see README.md).

    python benchmarks/identifiers/make_corpus.py [out.jsonl]

Seeded and self-contained (its own Luhn and mod-97, nothing from the masking code), so the
labels do not depend on the detector they measure. Running it again writes the same file.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

SEED = 20261130
OUT = Path(__file__).with_name("identifiers.jsonl")


# ------------------------------------------------------------------------------------ validators
def luhn_check_digit(body: str) -> str:
    for d in "0123456789":
        total = 0
        for i, ch in enumerate(reversed(body + d)):
            n = int(ch) * (2 if i % 2 else 1)
            total += n - 9 if n > 9 else n
        if total % 10 == 0:
            return d
    raise AssertionError


def luhn_ok(number: str) -> bool:
    return luhn_check_digit(number[:-1]) == number[-1]


_VD = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
       [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
       [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
       [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]  # fmt: skip
_VP = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
       [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
       [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]  # fmt: skip
_VINV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def verhoeff_check_digit(body: str) -> str:
    c = 0
    for i, ch in enumerate(reversed(body)):
        c = _VD[c][_VP[(i + 1) % 8][int(ch)]]
    return str(_VINV[c])


def steuer_check_digit(body: str) -> str:
    product = 10
    for ch in body:
        total = (int(ch) + product) % 10 or 10
        product = (total * 2) % 11
    return str((11 - product) % 10)


def nir_key(body: str) -> str:
    numeric = body.replace("2A", "19").replace("2B", "18")
    return f"{97 - int(numeric) % 97:02d}"


def iban_with_check(country: str, bban: str) -> str:
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(numeric) % 97:02d}{bban}"


# ---------------------------------------------------------------------------------------- values
CARD_BRANDS: list[tuple[str, str, int]] = [
    ("visa", "4", 16),
    ("visa13", "4", 13),
    ("visa19", "4", 19),
    ("mastercard", "5", 16),  # 51-55 drawn below
    ("mastercard2", "2", 16),  # 2221-2720
    ("amex", "3", 15),  # 34 / 37
    ("discover", "6011", 16),
    ("jcb", "35", 16),  # 3528-3589
    ("diners", "36", 14),
    ("unionpay", "62", 19),
    ("maestro", "6759", 16),
]


def card(rnd: random.Random, brand: str) -> str:
    lead, length = next((p, n) for b, p, n in CARD_BRANDS if b == brand)
    if brand == "mastercard":
        lead = str(rnd.randint(51, 55))
    elif brand == "mastercard2":
        lead = str(rnd.randint(2221, 2720))
    elif brand == "amex":
        lead = rnd.choice(["34", "37"])
    elif brand == "jcb":
        lead = str(rnd.randint(3528, 3589))
    body = lead + "".join(str(rnd.randint(0, 9)) for _ in range(length - len(lead) - 1))
    return body + luhn_check_digit(body)


def group_sizes(number: str) -> tuple[int, ...]:
    if len(number) == 15:
        return (4, 6, 5)
    if len(number) == 14:
        return (4, 6, 4)
    sizes = [4] * (len(number) // 4)
    if len(number) % 4:
        sizes.append(len(number) % 4)
    return tuple(sizes)


def grouped(number: str, sep: str, sizes: tuple[int, ...] | None = None) -> str:
    parts, pos = [], 0
    for size in sizes or group_sizes(number):
        parts.append(number[pos : pos + size])
        pos += size
    return sep.join(parts)


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


CARD_FORMATS: dict[str, Callable[[str], str]] = {
    "plain": lambda n: n,
    "spaces": lambda n: grouped(n, " "),
    "hyphens": lambda n: grouped(n, "-"),
    "zero-width space": lambda n: grouped(n, "\u200b"),
    "zero-width space between digits": lambda n: "\u200b".join(n),
    "zero-width joiner/non-joiner": lambda n: grouped(n, "\u200d").replace(n[5], n[5] + "\u200c", 1),
    "soft hyphen": lambda n: grouped(n, "\u00ad"),
    "word joiner": lambda n: grouped(n, "\u2060"),
    "byte-order mark": lambda n: grouped(n, "\ufeff"),
    "bidi controls": lambda n: "\u202a" + grouped(n, "\u200e") + "\u202c",
    "tab": lambda n: grouped(n, "\t"),
    "newline": lambda n: grouped(n, "\n"),
    "CRLF": lambda n: grouped(n, "\r\n"),
    "dots": lambda n: grouped(n, "."),
    "double spaces": lambda n: grouped(n, "  "),
    "en-dash": lambda n: grouped(n, "\u2013"),
    "em-dash": lambda n: grouped(n, "\u2014"),
    "non-breaking space": lambda n: grouped(n, "\u00a0"),
    "narrow no-break space": lambda n: grouped(n, "\u202f"),
    "fullwidth digits": fullwidth,
    "space-dash-space": lambda n: grouped(n, " - "),
    "underscores": lambda n: grouped(n, "_"),
    "mixed separators": lambda n: grouped(n, " ").replace(" ", "-", 1).replace(" ", ".", 1),
    "spaces and soft hyphen inside a group": lambda n: grouped(n, " ")[:2] + "\u00ad" + grouped(n, " ")[2:],
}
CARD_PREFIXES = ["", "", "", "PAN-", "card_", "PAN:", "cc#", "card no. ", "CC "]
CARD_SENTENCES = [
    "Please charge {x} for the renewal.",
    "my card is {x}",
    "The customer read out {x} over the phone.",
    "Refund to {x} please, it was charged twice.",
    "Use {x} exp 09/28 for the annual invoice.",
    "Card on file: {x}",
    "payment details {x} (the business one)",
    "she typed {x} into the chat",
    "{x}",
    "Could you update the billing to {x}? Thanks!",
]


def ssn(rnd: random.Random) -> str:
    area = rnd.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}{rnd.randint(1, 99):02d}{rnd.randint(1, 9999):04d}"


def itin(rnd: random.Random) -> str:
    group = rnd.choice([*range(50, 66), *range(70, 89), *range(90, 93), *range(94, 100)])
    return f"9{rnd.randint(0, 99):02d}{group:02d}{rnd.randint(0, 9999):04d}"


EIN_PREFIXES = [1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15, 16, 20, 21, 22, 23, 24, 25, 26, 27, 30, 31, 32, 33,
                34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 50, 51, 52, 53, 54, 55, 56, 57, 58,
                59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 71, 72, 73, 74, 75, 76, 77, 80, 81, 82, 83, 84, 85, 86,
                87, 88, 90, 91, 92, 93, 94, 95, 98, 99]  # fmt: skip


def ein(rnd: random.Random) -> str:
    return f"{rnd.choice(EIN_PREFIXES):02d}{rnd.randint(0, 9999999):07d}"


NINO_FIRST = "ABCEGHJKLMNOPRSTWXYZ"
NINO_SECOND = "ABCEGHJKLMNPRSTWXYZ"


def nino(rnd: random.Random) -> str:
    while True:
        prefix = rnd.choice(NINO_FIRST) + rnd.choice(NINO_SECOND)
        if prefix not in {"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"}:
            break
    return prefix + f"{rnd.randint(0, 999999):06d}" + rnd.choice("ABCD")


IBAN_BBANS: dict[str, Callable[[random.Random], str]] = {
    "GB": lambda r: r.choice(["WEST", "NWBK", "BARC", "MIDL"]) + "".join(r.choice("0123456789") for _ in range(14)),
    "DE": lambda r: "".join(r.choice("0123456789") for _ in range(18)),
    "FR": lambda r: "".join(r.choice("0123456789") for _ in range(20)) + "M0" + "".join(r.choice("0123456789") for _ in range(1)),
    "NL": lambda r: r.choice(["ABNA", "INGB", "RABO"]) + "".join(r.choice("0123456789") for _ in range(10)),
    "ES": lambda r: "".join(r.choice("0123456789") for _ in range(20)),
    "IT": lambda r: "X" + "".join(r.choice("0123456789") for _ in range(10)) + "".join(r.choice("0123456789") for _ in range(12)),
    "BE": lambda r: "".join(r.choice("0123456789") for _ in range(12)),
    "CH": lambda r: "".join(r.choice("0123456789") for _ in range(17)),
    "IE": lambda r: "AIBK" + "".join(r.choice("0123456789") for _ in range(14)),
    "PL": lambda r: "".join(r.choice("0123456789") for _ in range(24)),
}  # fmt: skip
IBAN_FORMATS: dict[str, Callable[[str], str]] = {
    "compact": lambda s: s,
    "spaces": lambda s: grouped(s, " ", (4,) * (len(s) // 4) + ((len(s) % 4,) if len(s) % 4 else ())),
    "hyphens": lambda s: grouped(s, "-", (4,) * (len(s) // 4) + ((len(s) % 4,) if len(s) % 4 else ())),
    "en-dash": lambda s: grouped(s, "\u2013", (4,) * (len(s) // 4) + ((len(s) % 4,) if len(s) % 4 else ())),
    "dots": lambda s: grouped(s, ".", (4,) * (len(s) // 4) + ((len(s) % 4,) if len(s) % 4 else ())),
    "double spaces": lambda s: grouped(s, "  ", (4,) * (len(s) // 4) + ((len(s) % 4,) if len(s) % 4 else ())),
    "lower case": lambda s: grouped(s.lower(), " ", (4,) * (len(s) // 4) + ((len(s) % 4,) if len(s) % 4 else ())),
    "lower case hyphens": lambda s: grouped(s.lower(), "-", (4,) * (len(s) // 4) + ((len(s) % 4,) if len(s) % 4 else ())),
    "zero-width space": lambda s: grouped(s, "\u200b", (4,) * (len(s) // 4) + ((len(s) % 4,) if len(s) % 4 else ())),
    "soft hyphen": lambda s: s[:8] + "\u00ad" + s[8:],
}  # fmt: skip


# ------------------------------------------------------ national ids beyond the US and UK, personal
def sin(rnd: random.Random) -> str:
    body = str(rnd.choice([1, 2, 3, 4, 5, 6, 7, 9])) + "".join(str(rnd.randint(0, 9)) for _ in range(7))
    return body + luhn_check_digit(body)


def aadhaar(rnd: random.Random) -> str:
    body = str(rnd.randint(2, 9)) + "".join(str(rnd.randint(0, 9)) for _ in range(10))
    return body + verhoeff_check_digit(body)


def steuer_id(rnd: random.Random) -> str:
    """Ten digits (no leading 0) in which one digit occurs twice and the others once, then the check."""
    while True:
        digits = rnd.sample("0123456789", 9)
        digits.insert(rnd.randint(0, 9), rnd.choice(digits))
        body = "".join(digits)
        if body[0] != "0":
            return body + steuer_check_digit(body)


def nir(rnd: random.Random) -> str:
    dept = rnd.choice([f"{rnd.randint(1, 95):02d}", "2A", "2B"])
    body = f"{rnd.choice('12')}{rnd.randint(40, 99):02d}{rnd.randint(1, 12):02d}{dept}{rnd.randint(1, 990):03d}{rnd.randint(1, 999):03d}"
    return body + nir_key(body)


def national_and_personal(
    rnd: random.Random, positive: Callable[[str, str, str, str], None], negative: Callable[[str, str], None]
) -> None:
    """Development examples of Canadian SINs, Aadhaar numbers, German Steuer-IDs, French NIRs,
    e-mail addresses, phone numbers, dates of birth and passport numbers, and their look-alikes."""
    for k in range(12):
        n = sin(rnd)
        written = [f"{n[:3]} {n[3:6]} {n[6:]}", f"{n[:3]}-{n[3:6]}-{n[6:]}", n][k % 3]
        sentence = ["my SIN is {x}", "Social Insurance Number: {x}", "NAS {x} pour la paie", "SIN {x}"][k % 4]
        if k % 3 != 2 and k >= 8:
            sentence = "for payroll use {x} please"  # the grouped shape alone
        positive("sin", ["spaced", "dashed", "compact"][k % 3], sentence.format(x=written), written)
    for k in range(12):
        n = aadhaar(rnd)
        written = [f"{n[:4]} {n[4:8]} {n[8:]}", f"{n[:4]}-{n[4:8]}-{n[8:]}", n][k % 3]
        sentence = ["Aadhaar: {x}", "my aadhaar number is {x}", "UID {x} for KYC", "Aadhaar card {x}"][k % 4]
        if k % 3 != 2 and k >= 8:
            sentence = "KYC done with {x} yesterday"
        positive("aadhaar", ["spaced", "dashed", "compact"][k % 3], sentence.format(x=written), written)
    for k in range(12):
        n = steuer_id(rnd)
        written = [n, f"{n[:2]} {n[2:5]} {n[5:8]} {n[8:]}"][k % 2]
        sentence = ["Steuer-ID {x}", "meine Steueridentifikationsnummer ist {x}", "IdNr: {x}",
                    "steuerliche Identifikationsnummer {x}", "please file with {x}"][k % 5]  # fmt: skip
        positive("steuer_id", ["compact", "spaced"][k % 2], sentence.format(x=written), written)
    for k in range(12):
        n = nir(rnd)
        written = [n, f"{n[0]} {n[1:3]} {n[3:5]} {n[5:7]} {n[7:10]} {n[10:13]} {n[13:]}"][k % 2]
        sentence = ["NIR {x}", "numéro de sécurité sociale : {x}", "carte Vitale {x}", "mon numéro est {x}"][
            k % 4
        ]
        positive("nir", ["compact", "spaced"][k % 2], sentence.format(x=written), written)
    emails = ["write to maria.gonzalez@example.org", "my email is j.smith+renewals@corp.example.com",
              "CC: OPS-Team@Example.IO on the thread", "reach Anna at anna_k@mail.example.de.", "email: li.wei@example.cn"]  # fmt: skip
    for t in emails:
        value = re.search(r"[\w.+\-]+@[\w.\-]+[A-Za-z]", t)
        assert value is not None
        positive("email", "labelled" if ":" in t else "in a sentence", t, value.group(0))
    phones = [("call me on +1 415-555-0132 after 6pm", "+1 415-555-0132"), ("mobile 07700 900456", "07700 900456"),
              ("my number is (212) 555-0187", "(212) 555-0187"), ("tel: +49 30 901820", "+49 30 901820"),
              ("WhatsApp me at +91 98765 43210", "+91 98765 43210"), ("ring 020 7946 0321 tomorrow", "020 7946 0321")]  # fmt: skip
    for t, v in phones:
        positive("phone", "in a sentence", t, v)
    dobs = [("DOB 12/03/1984", "12/03/1984"), ("date of birth: 1979-11-02", "1979-11-02"),
            ("born on 3 March 1984", "3 March 1984"), ("geboren am 14.07.1990", "14.07.1990"),
            ("birthday is July 4, 1976", "July 4, 1976"), ("D.O.B. 01-02-1965", "01-02-1965")]  # fmt: skip
    for t, v in dobs:
        positive("date_of_birth", "labelled", t, v)
    passports = [("passport number X1234567", "X1234567"), ("Passport no. 533180241", "533180241"),
                 ("my passport is C01X00T47", "C01X00T47"), ("passeport 12AB34567", "12AB34567"),
                 ("passport: A2096457", "A2096457")]  # fmt: skip
    for t, v in passports:
        positive("passport", "labelled", t, v)
    # look-alikes: part numbers of an SSN's shape, numbers failing their check, ordinary dates
    for t in ["Part 123-45-6789 is on backorder", "replacement filter 334-12-0098 ships Friday",
              "model 512-33-1200 kit", "SKU 402-18-7731"]:  # fmt: skip
        negative("part-number", t)
    n = sin(rnd)
    negative("near-miss", f"SIN {n[:3]} {n[3:6]} {n[6:8]}{(int(n[8]) + 1) % 10}")
    n = aadhaar(rnd)
    negative("near-miss", f"Aadhaar {n[:4]} {n[4:8]} {n[8:11]}{(int(n[11]) + 1) % 10}")
    n = steuer_id(rnd)
    negative("near-miss", f"Steuer-ID {n[:10]}{(int(n[10]) + 1) % 10}")
    n = nir(rnd)
    negative("near-miss", f"NIR {n[:13]}{(int(n[13:]) + 1) % 97:02d}")
    for t in ["meeting on 12/03/2026", "renewal date 2026-11-02", "contract signed 3 March 2024"]:
        negative("date", t)


# ----------------------------------------------------------------------------------------- build
def main(out: Path = OUT) -> int:
    rnd = random.Random(SEED)  # noqa: S311 - a reproducible corpus, not a secret
    rows: list[dict[str, Any]] = []

    def positive(type_: str, fmt: str, text: str, value: str) -> None:
        assert text.count(value) == 1, (text, value)
        rows.append({"id": f"{type_}-{sum(r['type'] == type_ for r in rows) + 1:03d}", "type": type_,
                     "format": fmt, "text": text, "identifiers": [{"type": type_, "value": value}]})  # fmt: skip

    def negative(category: str, text: str) -> None:
        rows.append({"id": f"neg-{category}-{sum(r.get('category') == category for r in rows) + 1:03d}",
                     "type": "negative", "category": category, "text": text, "identifiers": []})  # fmt: skip

    # cards: every format, each with a few brands, prefixes and sentences
    brands = [b for b, _, _ in CARD_BRANDS]
    for fmt, write in CARD_FORMATS.items():
        for k in range(5):
            brand = brands[(k * 3 + len(rows)) % len(brands)]
            written = write(card(rnd, brand))
            sentence = rnd.choice(CARD_SENTENCES)
            prefix = rnd.choice(CARD_PREFIXES)
            text = sentence.format(x=prefix + written)
            positive("card", f"{fmt}{' / ' + prefix.strip() if prefix.strip() else ''}", text, written)
    for k in range(6):  # a card with its security code or expiry straight after it
        number = card(rnd, brands[k])
        written = grouped(number, " ")
        positive("card", "followed by its code", f"card {written} {rnd.randint(100, 999)}", written)

    # SSNs
    ssn_formats: dict[str, Callable[[str], str]] = {
        "hyphens": lambda s: f"{s[:3]}-{s[3:5]}-{s[5:]}",
        "en-dash": lambda s: f"{s[:3]}\u2013{s[3:5]}\u2013{s[5:]}",
        "em-dash": lambda s: f"{s[:3]}\u2014{s[3:5]}\u2014{s[5:]}",
        "spaces": lambda s: f"{s[:3]} {s[3:5]} {s[5:]}",
        "non-breaking hyphen": lambda s: f"{s[:3]}\u2011{s[3:5]}\u2011{s[5:]}",
        "zero-width space": lambda s: f"{s[:3]}-\u200b{s[3:5]}-{s[5:]}",
        "minus sign": lambda s: f"{s[:3]}\u2212{s[3:5]}\u2212{s[5:]}",
        "plain with label": lambda s: s,
    }
    ssn_sentences = ["SSN {x}", "my social security number is {x}", "SSN: {x} for the W-9",
                     "ssn#{x}", "Social Security No. {x}", "her number is {x}"]  # fmt: skip
    for fmt, write in ssn_formats.items():
        for k in range(4):
            sentence = (
                ssn_sentences[k % 5] if fmt == "plain with label" else ssn_sentences[k + (2 if k > 1 else 0)]
            )
            written = write(ssn(rnd))
            positive("ssn", fmt, sentence.format(x=written), written)

    # ITINs, bare and labelled
    itin_sentences = ["the number on the W-7 letter: {x}.", "ITIN {x}", "my ITIN is {x}",
                      "Individual Taxpayer Identification Number {x}", "{x} is on the IRS letter"]  # fmt: skip
    itin_formats = [
        ssn_formats["hyphens"],
        ssn_formats["en-dash"],
        ssn_formats["spaces"],
        ssn_formats["zero-width space"],
    ]
    for k in range(20):
        written = itin_formats[k % 4](itin(rnd))
        positive("itin", ["hyphens", "en-dash", "spaces", "zero-width space"][k % 4],
                 itin_sentences[k % 5].format(x=written), written)  # fmt: skip

    # EINs under every label people use
    ein_labels = ["EIN {x}", "FEIN {x}", "FEIN: {x}", "Employer Identification Number: {x}",
                  "Employer Identification Number (EIN) {x}", "our federal EIN is {x}", "Federal Tax ID #{x}",
                  "tax id: {x}", "Employer ID Number {x}", "EIN# {x}", "F.E.I.N. aside, the FEIN is {x}",
                  "Taxpayer Identification Number (TIN): {x}"]  # fmt: skip
    ein_formats: dict[str, Callable[[str], str]] = {
        "hyphen": lambda s: f"{s[:2]}-{s[2:]}",
        "en-dash": lambda s: f"{s[:2]}\u2013{s[2:]}",
        "plain": lambda s: s,
        "zero-width space": lambda s: f"{s[:2]}-\u200b{s[2:]}",
    }
    for k, label in enumerate(ein_labels * 2):
        fmt = list(ein_formats)[k % 4]
        written = ein_formats[fmt](ein(rnd))
        positive(
            "ein",
            f"{fmt} / {label.split(' {x}')[0].split('{x}')[0].strip()}",
            label.format(x=written),
            written,
        )

    # UK National Insurance numbers in any case
    nino_formats: dict[str, Callable[[str], str]] = {
        "upper compact": lambda s: s,
        "upper spaced": lambda s: f"{s[:2]} {s[2:4]} {s[4:6]} {s[6:8]} {s[8]}",
        "lower compact": lambda s: s.lower(),
        "lower spaced": lambda s: f"{s[:2]} {s[2:4]} {s[4:6]} {s[6:8]} {s[8]}".lower(),
        "mixed dashed": lambda s: f"{s[0]}{s[1].lower()}-{s[2:4]}-{s[4:6]}-{s[6:8]}-{s[8]}",
        "zero-width space": lambda s: f"{s[:2]}\u200b{s[2:]}",
    }
    nino_sentences = ["my NI number is {x}", "National Insurance number: {x}", "NINO {x} for payroll", "{x}"]
    for k in range(24):
        fmt = list(nino_formats)[k % 6]
        written = nino_formats[fmt](nino(rnd))
        positive("nino", fmt, nino_sentences[k % 4].format(x=written), written)

    # IBANs
    iban_sentences = [
        "wire it to {x} please",
        "IBAN: {x}",
        "Beneficiary {x} (Acme GmbH)",
        "pay {x} by Friday",
    ]
    for k, (fmt, write) in enumerate(list(IBAN_FORMATS.items()) * 3):
        country = list(IBAN_BBANS)[k % len(IBAN_BBANS)]
        written = write(iban_with_check(country, IBAN_BBANS[country](rnd)))
        positive("iban", fmt, iban_sentences[k % 4].format(x=written), written)

    # bank accounts and routing numbers (labelled: a bare account number is just a number)
    account_sentences = ["my account number is {x}", "acct #: {x}", "bank account {x} at Chase", "routing number {x}",
                         "checking account no. {x}", "sort code {x}", "a/c {x}"]  # fmt: skip
    for k in range(14):
        digits = "".join(str(rnd.randint(0, 9)) for _ in range(rnd.randint(8, 12)))
        sentence = account_sentences[k % 7]
        written = f"{digits[:2]}-{digits[2:4]}-{digits[4:6]}" if "sort code" in sentence else digits
        if k >= 7 and "sort code" not in sentence:
            written = f"{digits[:4]}\u200b{digits[4:]}"
        positive(
            "account",
            "zero-width space" if "\u200b" in written else "plain",
            sentence.format(x=written),
            written,
        )

    # ------------------------------------------------------------------------- negatives
    def luhn_number(lead: str, length: int) -> str:
        body = lead + "".join(str(rnd.randint(0, 9)) for _ in range(length - len(lead) - 1))
        return body + luhn_check_digit(body)

    def labelled_number(lead: str, length: int) -> str:
        """An order, tracking or ticket number: Luhn-valid at lengths cards rarely have (13, 18,
        19), failing Luhn at 15 and 16 (a valid card number there is masked under any label)."""
        number = luhn_number(lead, length)
        return number[:-1] + str((int(number[-1]) + 1) % 10) if length in (15, 16) else number

    order_sentences = ["Order {x} shipped on Tuesday", "order #{x} is delayed", "Order No. {x}", "ORD-{x}",
                       "your order number is {x}", "Purchase order {x} approved", "PO {x}", "order id: {x}"]  # fmt: skip
    for k in range(16):
        number = labelled_number(rnd.choice(["4", "5", "6", "37", "35"]), rnd.choice([15, 16, 16, 19]))
        written = grouped(number, " ") if k % 4 == 3 else number
        negative("order", order_sentences[k % 8].format(x=written))
    tracking = ["Tracking number {x} from the courier", "tracking: {x}", "UPS 1Z999AA1{d8}", "AWB {x}",
                "USPS 9400 1000 0000 {d4} {d4} {d2}", "parcel {x} left the depot", "shipment {x} is in customs",
                "FedEx tracking {d12}"]  # fmt: skip
    for k in range(16):
        number = labelled_number(rnd.choice(["4", "5", "6", "9", "1"]), rnd.choice([15, 16, 18]))
        d = lambda n: "".join(str(rnd.randint(0, 9)) for _ in range(n))  # noqa: E731
        negative("tracking", tracking[k % 8].format(x=number, d8=d(8), d4=d(4), d2=d(2), d12=d(12)))
    phones = ["call +1 (415) 555-0132", "+44 20 7946 0958", "phone 555-123-4567", "+86 138 0013 8000",
              "mobile: +49 30 1234 5678", "tel. 020 7946 0958", "ring me on 07700 900123", "+61 2 9876 5432 ext 12",
              "WhatsApp +91 98765 43210", "fax (212) 555-0199", "+33 1 23 45 67 89", "call 1-800-555-0100",
              "+1 212 555 0147 or +1 212 555 0148", "+55 11 91234 5678", "+81 3-1234-5678", "+353 1 234 5678"]  # fmt: skip
    for p in phones:
        # the number as written: from its first "+", "(" or digit to its last digit, before any "ext"
        number = re.search(r"[+(0-9][0-9()+ \-]*[0-9]", p.split(" or ")[0].split(" ext")[0])
        assert number is not None
        positive("phone", "international" if p.startswith("+") else "national", p, number.group(0))
        if " or " in p:
            rows[-1]["identifiers"].append({"type": "phone", "value": p.split(" or ")[1]})
    for k in range(12):
        number = labelled_number(rnd.choice(["4", "5", "6"]), 16)
        negative("invoice", ["Invoice INV-{x} is overdue", "invoice {x}", "INV{x}", "Invoice no. {x} attached",
                             "receipt {x}", "INV-2024-{y}"][k % 6].format(x=number, y=rnd.randint(100000, 999999)))  # fmt: skip
    dates = ["released 2024-01-15", "on 15.01.2024", "due 01/15/2024", "at 2024-01-15T10:30:00Z",
             "from 2026-09-01 to 2027-08-31", "since 1 Jan 2024", "20240115 batch", "week 2024-W03",
             "between 2024-01-15 and 2024-02-15", "timestamp 1705314600", "Q3 2025", "dated 15 01 2024"]  # fmt: skip
    for t in dates:
        negative("date", t)
    versions = ["version 4.1.1.1111", "build 10.0.19045.3803", "v1.2.3-rc.4", "release 2024.01.15.1234",
                "agent 5.11.2 on 6.8.0-45-generic", "firmware 4.1.12.1111.2", "v4.11.1111.1111.111"]  # fmt: skip
    for t in versions:
        negative("version", t)
    amounts = ["total $1,234,567.89", "EUR 4.111,11", "12,345,678.90 USD", "500 seats at $42/seat/month",
               "\u00a3 4 111 111.11", "amount 4111.11", "budget of 1 234 567 EUR", "$1,111,111,111,111"]  # fmt: skip
    for t in amounts:
        negative("amount", t)
    tickets = ["ticket JIRA-41111", "T-1042", "TKT-20240115-0042", "INC0012345", "case #45321", "SR 1-234567890",
               "ticket {x}", "incident {x}", "case number {x}", "ref: {x}", "confirmation no. {x}", "booking {x}"]  # fmt: skip
    for t in tickets:
        negative("ticket", t.format(x=labelled_number(rnd.choice(["4", "5", "6"]), 16)))
    positive("email", "plus address", "mail anna.lee+billing@example.com", "anna.lee+billing@example.com")
    others = ["IMEI {imei}", "ISBN 978-3-16-148410-0", "serial {x}",
              "customer id {x}", "member {x}", "policy {x}", "claim {x}", "loyalty number {x}",
              "id 550e8400-e29b-41d4-a716-446655440000", "commit d71a1c8f1b2e", "sku 4006381333931",
              "EAN 4006381333931", "IP 192.168.100.200", "account manager Ann, 4 seats"]  # fmt: skip
    for t in others:
        imei = luhn_number("35", 15)
        negative("other", t.format(x=labelled_number(rnd.choice(["4", "5", "6"]), 16), imei=imei))

    # marketplace order numbers pasted bare (3-7-7 digits), and references with no label at all
    for _ in range(10):
        number = f"{rnd.randint(100, 999)}-{rnd.randint(0, 9999999):07d}-{rnd.randint(0, 9999999):07d}"
        negative("order", f"{number} arrived damaged" if rnd.random() < 0.5 else f"Amazon order {number}")
    for t in [f"eBay item {rnd.randint(10**11, 10**12 - 1)}", "Shopify order #1001",
              "UPC 036000291452", "GTIN 00012345600012", "credit note CN-2024-0042", "Stripe charge ch_3MqLiJLkdIwHu7ix0snN0B15",
              "Zendesk #123456", "transfer reference 2024011500042", "batch 000123456789012", "rooms 401, 402 and 403",
              "timestamp 1705314600123"]:  # fmt: skip
        negative("other", t)
    positive("phone", "international 00", "0044 20 7946 0958", "0044 20 7946 0958")
    positive("phone", "bare mobile", "138 0013 8000", "138 0013 8000")
    positive("email", "bare", "jane.doe@example.co.uk", "jane.doe@example.co.uk")
    # near misses: the right shape, but failing the check a real identifier passes
    for t in ["card 4111 1111 1111 1112", "IBAN GB83 WEST 1234 5698 7654 32", "part 000-12-3456", "part 666-12-3456",
              "part 123-00-4567", "NI number QQ 12 34 56 A", "NI number BG 12 34 56 A", "NI number AB 12 34 56 E",
              "IBAN DE89 3704 0044 0532 0130 0", "Visa 4111 1111 1111 11", "form 912-93-1234",
              "card 1234 5678 9012 3456"]:  # fmt: skip
        negative("near-miss", t)

    national_and_personal(rnd, positive, negative)

    for row in rows:
        row["split"] = "development"
        for ident in row["identifiers"]:
            assert ident["value"] in row["text"]
    out.write_text("".join(json.dumps(r, ensure_ascii=True) + "\n" for r in rows))
    print(f"{len(rows)} examples -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
