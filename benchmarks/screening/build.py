# ruff: noqa: RUF001 - the homoglyph table holds look-alike letters on purpose
"""Build `screening.jsonl` from the hand-written items in `written.txt`.

Every hand-written item is kept as written (disguise "none"), and each one also gets one
disguised copy, chosen per item from a fixed seed so the file is reproducible:

- injections in prose (override, role_override, ai_directive, exfiltration): one of
  zero_width, homoglyph, fullwidth, spaced, leet, homoglyph+zero_width;
- injections in markup or tool-call syntax: one of zero_width, homoglyph, fullwidth
  (spelling JSON or tags out in leetspeak would stop a model from reading them too);
- benign items: one of zero_width, homoglyph, fullwidth, to measure that folding the
  disguises away does not turn ordinary text into an alarm;
- items in a script without Latin letters (ru, zh, ja, ko, ar, hi): zero_width, fullwidth or,
  except in Korean and Hindi, spaced (the other disguises only touch Latin letters);
- items holding `{b64:...}`: that text is replaced by its base64 (disguise `base64`), and they get
  no second copy.

Run from the repository root: `python benchmarks/screening/build.py`.
"""

from __future__ import annotations

import base64
import json
import random
import re
from pathlib import Path

HERE = Path(__file__).parent
PROSE = {"override", "role_override", "ai_directive", "exfiltration", "authority"}
NON_LATIN = {"ru", "zh", "ja", "ko", "ar", "hi"}
B64 = re.compile(r"\{b64:([^}]*)\}")

# Latin letters and the Cyrillic or Greek letters that look like them.
HOMOGLYPHS = {
    "a": "аα",
    "c": "с",
    "e": "е",
    "i": "іι",
    "o": "оο",
    "p": "рρ",
    "s": "ѕ",
    "x": "х",
    "y": "у",
    "A": "АΑ",
    "B": "ВΒ",
    "C": "С",
    "E": "ЕΕ",
    "H": "НΗ",
    "I": "ІΙ",
    "K": "КΚ",
    "M": "МΜ",
    "N": "Ν",
    "O": "ОΟ",
    "P": "РΡ",
    "S": "Ѕ",
    "T": "ТΤ",
    "X": "ХΧ",
    "Y": "Υ",
}
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"}


def zero_width(text: str, rng: random.Random) -> str:
    return "".join(
        ch + (rng.choice(ZERO_WIDTH) if ch.isalpha() and rng.random() < 0.4 else "") for ch in text
    )


def homoglyph(text: str, rng: random.Random) -> str:
    return "".join(
        rng.choice(HOMOGLYPHS[ch]) if ch in HOMOGLYPHS and rng.random() < 0.5 else ch for ch in text
    )


def fullwidth(text: str, rng: random.Random) -> str:
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in text)


def spaced(text: str, rng: random.Random) -> str:
    return "   ".join(" ".join(word) for word in text.split())


def leet(text: str, rng: random.Random) -> str:
    return "".join(LEET.get(ch.lower(), ch) if rng.random() < 0.6 else ch for ch in text)


def homoglyph_zero_width(text: str, rng: random.Random) -> str:
    return zero_width(homoglyph(text, rng), rng)


DISGUISES = {
    "zero_width": zero_width,
    "homoglyph": homoglyph,
    "fullwidth": fullwidth,
    "spaced": spaced,
    "leet": leet,
    "homoglyph+zero_width": homoglyph_zero_width,
}


def written_items() -> list[dict[str, str]]:
    items: list[dict[str, str]] = []
    header: list[str] | None = None
    for line in (HERE / "written.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if m := re.fullmatch(r"\[(\w+) (\w+) (\w+) (\w+)\]", line.strip()):
            header = list(m.groups())
            continue
        assert header is not None, line
        label, category, language, split = header
        items.append(
            {
                "label": label,
                "category": category,
                "language": language,
                "split": split,
                "text": line.replace("\\n", "\n"),
            }
        )
    return items


def build() -> list[dict[str, str]]:
    rng = random.Random(20261201)  # noqa: S311 - reproducible sampling, not security
    out: list[dict[str, str]] = []
    for n, item in enumerate(written_items(), start=1):
        base_id = f"{item['language']}-{item['category']}-{n:03d}"
        if B64.search(item["text"]):
            text = B64.sub(lambda m: base64.b64encode(m.group(1).encode()).decode(), item["text"])
            out.append({"id": f"{base_id}-base64", **item, "text": text, "disguise": "base64"})
            continue
        out.append({"id": base_id, **item, "disguise": "none"})
        if item["language"] in NON_LATIN:
            # letters of these scripts spaced apart read back as words, except Hangul syllables and
            # Devanagari vowel signs, which a space would cut from their letter
            choices = ["zero_width", "fullwidth"] + ([] if item["language"] in ("ko", "hi") else ["spaced"])
        elif item["label"] == "benign":
            choices = ["zero_width", "homoglyph", "fullwidth"]
        elif item["category"] in PROSE:
            choices = list(DISGUISES)
        else:
            choices = ["zero_width", "homoglyph", "fullwidth"]
        disguise = rng.choice(choices)
        text = DISGUISES[disguise](item["text"], rng)
        out.append({"id": f"{base_id}-{disguise}", **item, "text": text, "disguise": disguise})
    return out


if __name__ == "__main__":
    rows = build()
    with (HERE / "screening.jsonl").open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} items written")
