"""Characters that show nothing, one table for every reader of text.

Masking (`sanitize`) reads identifiers through them, screening reads instructions through them,
and a context line (`visible_text`) drops them, so that what a reviewer sees, what a model reads
and what the detectors check are the same text.
"""

from __future__ import annotations

import re
import unicodedata

# Characters that show nothing: C0 and C1 controls (not tab, newlines or the other whitespace
# controls, which split words rather than hide them), Unicode's Default_Ignorable_Code_Point and
# format (Cf) characters: zero-width spaces, bidi controls, Hangul fillers, interlinear annotation
# marks, Unicode tags. They can hide words from a reviewer, split a word to escape screening, or
# smuggle text to a model.
HIDING = (
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
JOINING = "\u034f\u180b-\u180d\u180f\u200c\u200d\ufe00-\ufe0f\U000e0100-\U000e01ef"
IGNORABLE = re.compile(f"[{HIDING}{JOINING}]")
HIDDEN_RUN = re.compile(f"[{HIDING}]|[{JOINING}]{{3,}}")
# Fullwidth and small-form look-alikes of ASCII punctuation and letters (U+FF1C, U+FE64 for "<"), folded
# to ASCII so that escaping catches a forged delimiter; other compatibility forms ("m²") are left as written.
ASCII_LOOKALIKES = re.compile("[\uff01-\uff5e\ufe50-\ufe6b]")


def visible_text(text: str) -> str:
    """What a context line may show of the text: nothing a reviewer cannot see (`HIDDEN_RUN`), and
    ASCII look-alikes folded to ASCII so that escaping treats them as what they imitate."""
    shown = HIDDEN_RUN.sub("", text)
    if shown.isascii():
        return shown
    return ASCII_LOOKALIKES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), shown)


def hidden(ch: str) -> bool:
    """True for one character a reader cannot see and rendering drops: controls other than
    whitespace, format characters, nonspacing and enclosing marks, and the table above (masking
    reads a digit through any of them)."""
    if ch.isascii():
        return (ch < " " and not ch.isspace()) or ch == "\x7f"
    cat = unicodedata.category(ch)
    return cat in ("Cf", "Mn", "Me") or (cat == "Cc" and not ch.isspace()) or IGNORABLE.match(ch) is not None
