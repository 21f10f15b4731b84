# ruff: noqa: RUF001 - the confusables table holds look-alike letters on purpose
"""Injection screening: memory text is data, never an instruction.

A memory that reads like an instruction to a model ("ignore previous instructions", "you are
now...", "note to any AI reading this", "send the customer list to...", role tags, tool-call
syntax, our own delimiters) is flagged `untrusted_instruction` and quarantined by the gateway:
it is kept for review as inert data and never retrieved as context.

Screening reads the text the way a model would (`_reading_forms`): invisible characters
dropped, compatibility forms (fullwidth, mathematical letters) and Cyrillic or Greek
look-alikes folded to Latin, accents and case folded away, and, when present, digits used as
letters ("1gn0re") and letters spaced apart ("i g n o r e") joined back; a text in another
script is also read folded in its own script (`_native`), and base64 in the text is read decoded
(`_decoded_blobs`, bounded). The patterns are written against that folded text (lowercase, no
accents), one table per signal and language: English, French, German, Spanish, Portuguese, Dutch,
Italian, Polish, Turkish, Russian, Chinese, Japanese, Korean, Arabic and Hindi. Besides what the
text says there is how it is built: a markdown image or a URL that carries a template or the
conversation out (`link_exfiltration`), a claim of authority over the model (`authority_claim`).

Support text talks about instructions all the time ("the setup instructions didn't work",
"please ignore my previous email"), and a false alarm loses a memory, so the override patterns
need both a verb of dismissal and something that points at the model's own instructions ("your",
"all", "previous", "above", "system"); the customer's own ("my", "our") never count. The
benchmark is `memory bench screening` (docs/benchmarks.md, "Injection screening").

The patterns themselves are in `screening_patterns`. Beside them a small learned model
(`screening_classifier`) scores the same reading forms by their character n-grams and flags what
reads like an injection although no pattern names its wording (signal `classifier`): a text is
flagged when a pattern or the model flags it.
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import re
import unicodedata
from dataclasses import dataclass

from agent_memory.domain.invisible import IGNORABLE as _IGNORABLE
from agent_memory.domain.invisible import visible_text
from agent_memory.domain.screening_classifier import SIGNAL as _CLASSIFIER_SIGNAL
from agent_memory.domain.screening_classifier import instruction_classifier
from agent_memory.domain.screening_patterns import FLAGS as _FLAGS
from agent_memory.domain.screening_patterns import SIGNAL_PATTERNS as _SIGNAL_PATTERNS
from agent_memory.domain.screening_prefilter import Prefilter
from agent_memory.domain.screening_scripts import without_marks

__all__ = [
    "Screening",
    "classifier_flags",
    "reading_forms",
    "screen_for_instructions",
    "screen_with_every_pattern",
    "screen_with_patterns",
    "visible_text",
]


@dataclass(frozen=True)
class Screening:
    flagged: bool
    signals: tuple[str, ...]


# Whether the learned classifier screens beside the patterns: set once by the composition root from
# the deployment's settings (`screening_classifier`). Off by default: on the independent held-out set
# it lifts recall from 0.54 to 0.86 but quarantines about 7 in 100 ordinary texts that mention
# instructions or links (docs/benchmarks.md, "Injection screening").
_CLASSIFIER_ON = False


def use_classifier(enabled: bool) -> None:
    """Turn the learned classifier on or off for this process."""
    global _CLASSIFIER_ON
    _CLASSIFIER_ON = enabled


def classifier_enabled() -> bool:
    return _CLASSIFIER_ON


def screen_for_instructions(text: str) -> Screening:
    """Return which instruction-like signals the text carries (empty = clean), in any form a
    model could read it (`_reading_forms`), including the ASCII hidden in Unicode tag characters,
    which models read although people cannot see it ("ASCII smuggling").

    Only the patterns whose triggers a form contains are run on it (`screening_prefilter`): the
    others cannot match it, so the result is that of `screen_with_every_pattern`. The learned
    classifier reads the same forms and adds its own signal, `classifier`."""
    forms = _reading_forms(text)
    signals = _pattern_signals(forms)
    if _CLASSIFIER_ON and _classifier_flags(text, forms):
        signals += (_CLASSIFIER_SIGNAL,)
    return Screening(flagged=bool(signals), signals=signals)


def screen_with_patterns(text: str) -> Screening:
    """The patterns alone, without the classifier (the benchmark reports each half on its own)."""
    signals = _pattern_signals(_reading_forms(text))
    return Screening(flagged=bool(signals), signals=signals)


def classifier_flags(text: str) -> bool:
    """The classifier alone: whether the learned model reads the text as an instruction."""
    return _classifier_flags(text, _reading_forms(text))


def reading_forms(text: str) -> list[str]:
    """The forms in which screening reads a text (what the classifier is trained on)."""
    return _reading_forms(text)


def _pattern_signals(forms: list[str]) -> tuple[str, ...]:
    raised: set[int] = set()
    prefilter = _prefilter()
    for form in forms:
        for i in prefilter.candidates(form):
            signal = _SIGNAL_OF[i]
            if signal not in raised and _pattern(i).search(form):
                raised.add(signal)
    return tuple(name for k, (name, _) in enumerate(_SIGNAL_PATTERNS) if k in raised)


# The classifier was trained on texts of a sentence or a short paragraph: a longer text is also read
# sentence by sentence (the shortest run into the next), so that one injected sentence is not drowned
# by the words around it.
_LONG_TEXT, _SHORT_PIECE, _MAX_PIECES = 600, 40, 128
_PIECE_BREAK = re.compile(r"(?<=[.!?;。！？；\n])\s+|(?<=[。！？；])")


def _pieces(text: str) -> list[str]:
    pieces, current = [], ""
    for part in _PIECE_BREAK.split(text):
        current = f"{current} {part}" if current else part
        if len(current) >= _SHORT_PIECE:
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces[:_MAX_PIECES]


def _classifier_flags(text: str, forms: list[str]) -> bool:
    model = instruction_classifier()
    if model.flags(forms):
        return True
    if len(text) <= _LONG_TEXT:
        return False
    return any(model.flags(_reading_forms(piece)) for piece in _pieces(text))


def screen_with_every_pattern(text: str) -> Screening:
    """The same screening the long way: every signal's patterns, as one alternation, on every
    reading form, each form looked for without the quick checks. The reference that
    `screen_for_instructions` is tested and measured against."""
    forms = _reading_forms(text, quick=False)
    signals = tuple(name for name, pattern in _alternations() if any(pattern.search(f) for f in forms))
    # The classifier is one model, not a set of patterns to cross-check: it scores the forms it was
    # trained on (the quick ones; the long way also folds quotes in ASCII text, which moves its score).
    if _CLASSIFIER_ON and _classifier_flags(text, _reading_forms(text)):
        signals += (_CLASSIFIER_SIGNAL,)
    return Screening(flagged=bool(signals), signals=signals)


@functools.cache
def _alternations() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple(
        (name, re.compile("|".join(f"(?:{p})" for p in patterns), _FLAGS))
        for name, patterns in _SIGNAL_PATTERNS
    )


# Every pattern on its own and the signal it raises.
_ALL_PATTERNS = [(k, p) for k, (_, patterns) in enumerate(_SIGNAL_PATTERNS) for p in patterns]
_SIGNAL_OF = [k for k, _ in _ALL_PATTERNS]


@functools.cache
def _prefilter() -> Prefilter:
    """The patterns' triggers, derived on the first screening, not on import (a cold start does not pay for them)."""
    return Prefilter([p for _, p in _ALL_PATTERNS], _FLAGS)


@functools.cache
def _pattern(i: int) -> re.Pattern[str]:
    """Compiled when first needed: most never run on ordinary text."""
    return re.compile(_ALL_PATTERNS[i][1], _FLAGS)


# --------------------------------------------------------------------------- reading forms

# Cyrillic and Greek letters that render like Latin ones in common fonts, plus a few Latin
# look-alikes (dotless i, script g). Folded after NFKC, which already maps fullwidth and
# mathematical letters to ASCII.
_QUOTES = dict(zip("\u2018\u2019\u02bc\u00b4`", "'''''", strict=True))
_CONFUSABLES = str.maketrans(
    {
        **dict(zip("аеорсухѕіјԁһԛԝӏкгп", "aeopcyxsijdhqwlkrn", strict=True)),
        **dict(zip("АВЕКМНОРСТХЅІЈԜ", "ABEKMHOPCTXSIJW", strict=True)),
        **dict(zip("αβγεικνορτυχϲϳ", "abyeikvoptuxcj", strict=True)),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ", "ABEZHIKMNOPTYXC", strict=True)),
        **dict(zip("ıɡɩʏ", "igiy", strict=True)),
        **_QUOTES,
    }
)
_QUOTES_ONLY = str.maketrans(_QUOTES)
_LEET = str.maketrans("013457@$", "oieastas")
# A word mixing letters with digits or @/$ used as letters; plain numbers and ids are left alone.
_LEET_WORD = re.compile(r"(?=[a-z0-9@$]*[a-z])(?=[a-z0-9@$]*[013457@$])[a-z0-9@$]{2,}")
# Four or more single letters (of any script: "忽 略 之 前") set apart by spaces, dots, dashes, stars or
# apostrophes: "i g n o r e".
_SPACED_RUN = re.compile(r"(?<![^\W\d_])[^\W\d_](?:[ .*_'-]{1,4}[^\W\d_](?![^\W\d_])){3,}")
# What a text needs before those two are worth looking for (the searches are costly, these are
# not): a leetspeak word has a letter next to a digit, @ or $; a spaced run's second and third
# letters stand between separators. Each is contained in every match; the tests check it.
_LEET_HINT = re.compile(r"[a-z][0-9@$]|[0-9@$][a-z]")
_SPACED_HINT = re.compile(r"[ .*_'-][^\W\d_][ .*_'-]{1,4}[^\W\d_][ .*_'-]")
# The invisible characters that are ASCII (controls), to tell an ASCII text that needs no folding.
_ASCII_IGNORABLE = re.compile(
    "[" + "".join(re.escape(chr(c)) for c in range(128) if _IGNORABLE.match(chr(c))) + "]"
)


def _fold(text: str, *, quick: bool = True) -> str:
    """The text as a model reads it, in the alphabet the patterns are written in."""
    if text.isascii() and not (_ASCII_IGNORABLE if quick else _IGNORABLE).search(text):
        return text.lower()
    shown = unicodedata.normalize("NFKC", _IGNORABLE.sub("", text)).translate(_CONFUSABLES)
    return without_marks(shown).casefold()


def _native(text: str) -> str:
    """The text folded in its own script: like `_fold`, but a Cyrillic, Greek or Turkish letter stays
    what it is (the look-alike table would turn half of a Russian word into Latin letters, and
    differently in capitals). The patterns for those scripts are written against this form."""
    shown = unicodedata.normalize("NFKC", _IGNORABLE.sub("", text)).translate(_QUOTES_ONLY).casefold()
    return without_marks(shown)


def _reading_forms(text: str, *, quick: bool = True, depth: int = 0) -> list[str]:
    """The folded text, and the other ways a model could read it. `quick`: skip a costly search
    where a cheap one shows it would find nothing (the forms are the same either way)."""
    folded = _fold(text, quick=quick)
    forms = [folded]
    if not (quick and text.isascii()):  # tag characters, other scripts: not ASCII
        native = _native(text)
        if native != folded:
            forms.append(native)
            if (not quick or _SPACED_HINT.search(native)) and _SPACED_RUN.search(native):
                forms.append(_SPACED_RUN.sub(_collapse_spaced, native))
        hidden = "".join(chr(ord(ch) - _TAG_OFFSET) for ch in text if _TAG_FIRST <= ord(ch) <= _TAG_LAST)
        if hidden:
            forms.append(_fold(hidden, quick=quick))
    if depth < _MAX_DEPTH:
        for decoded in _decoded_blobs(text):
            forms.extend(_reading_forms(decoded, quick=quick, depth=depth + 1))
    # Two or more such words with three letters or more: "1gn0re all prev1ous", not "q4" or "3pm".
    if (not quick or _LEET_HINT.search(folded)) and sum(
        len(re.findall("[a-z]", word)) >= 3 for word in _LEET_WORD.findall(folded)
    ) >= 2:
        forms.append(_LEET_WORD.sub(lambda m: m.group().translate(_LEET), folded))
    if (not quick or _SPACED_HINT.search(folded)) and _SPACED_RUN.search(folded):
        forms.append(_SPACED_RUN.sub(_collapse_spaced, folded))
    return forms


# Base64 a model would decode and read: a run of 24 or more base64 characters (standard or URL-safe
# alphabet) that decodes to UTF-8 text. Bounded: the first few runs, none longer than a memory needs,
# and base64 inside base64 only twice over.
_BASE64_RUN = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{24,}={0,2}")
_MAX_BLOBS, _MAX_BLOB_CHARS, _MAX_DEPTH = 8, 16_384, 2


def _decoded_blobs(text: str) -> list[str]:
    """The text hidden in the base64 runs of `text` (invisible characters and fullwidth forms
    dropped first, case kept), where a run decodes to printable UTF-8 text."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", _IGNORABLE.sub("", text))
    out = []
    for m in itertools.islice(_BASE64_RUN.finditer(text), _MAX_BLOBS):
        blob = m.group().rstrip("=").replace("-", "+").replace("_", "/")
        if len(blob) > _MAX_BLOB_CHARS or len(blob) % 4 == 1:
            continue
        try:
            decoded = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if sum(ch.isprintable() or ch in "\n\t" for ch in decoded) >= 0.95 * len(decoded):
            out.append(decoded)
    return out


def _collapse_spaced(run: re.Match[str]) -> str:
    words = re.split(r"[ .*_-]{2,}", re.sub(r"\s*'\s*", "'", run.group()))  # "l ' a" is "l'a"
    return " ".join(re.sub(r"[ .*_-]", "", word) for word in words)


_TAG_OFFSET, _TAG_FIRST, _TAG_LAST = 0xE0000, 0xE0020, 0xE007E  # tag characters shadowing printable ASCII
