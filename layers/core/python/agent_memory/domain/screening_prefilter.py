"""Which screening patterns can match a text at all, decided by a cheap look at its words.

Every pattern in `screening_patterns` is a regular expression over the folded text, and none of
them can match unless the text holds certain literal strings: "ignore" or "disregard" or...,
"you are now", "<|". Those strings, a pattern's *triggers*, are derived here from the pattern
itself (`triggers`, from the parse tree `re` builds), never written by hand, so that a pattern
edited or added later gets its own with it. The derivation keeps only what every match must
contain, in *clauses*: each run of characters the pattern matches literally and in a row
(alternatives multiplied out while they stay few), each clause of a part that must match, and
for an alternation the union of one clause per branch. A match holds a string of every clause.
Where the pattern also puts a word boundary on both sides of a piece of a trigger ("\\bignore\\s"),
that piece is a whole word of the text (`Trigger.word`), which a set of the text's words answers.

`Prefilter.candidates` reads the text's words once and returns the patterns whose first clause
is present and whose other word clauses are; screening runs only those. A pattern skipped lacks
a string every one of its matches needs, so it could not have matched: the result is exactly that
of running every pattern (tests/unit/test_screening_prefilter.py checks the derivation against
the patterns' own matches, and the result against every pattern on the screening corpora and on
generated disguises). A pattern without triggers always runs; none has any today, and the tests
fail if one is added.
"""

from __future__ import annotations

import functools
import re
import re._constants as _c  # the parse tree's opcodes (CPython's `re`)
import re._parser as _parser  # the parse tree `re.compile` builds
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

__all__ = ["Prefilter", "Trigger", "triggers", "words_of"]

Item = tuple[Any, Any]  # one node of `re`'s parse tree: (opcode, argument)

# How many exact strings a run of alternatives may multiply out to before it is cut in two.
_MAX_STRINGS = 64
# Stands, inside a derived string, for "no word character on the other side": a word boundary,
# a line's start or end, or a neighbouring part of the pattern that only matches non-word text.
_EDGE = "\ue000"
_LOOKAROUNDS = (_c.ASSERT, _c.ASSERT_NOT)
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT))
_EDGES = {_c.AT_BOUNDARY, _c.AT_BEGINNING, _c.AT_BEGINNING_LINE, _c.AT_BEGINNING_STRING}
_EDGES |= {_c.AT_END, _c.AT_END_LINE, _c.AT_END_STRING, _c.AT_UNI_BOUNDARY}
_LINE_STARTS = {_c.AT_BEGINNING, _c.AT_BEGINNING_LINE, _c.AT_BEGINNING_STRING}
_LINE_ENDS = {_c.AT_END, _c.AT_END_LINE, _c.AT_END_STRING}
_NON_WORD_CATEGORIES = {
    _c.CATEGORY_SPACE,
    _c.CATEGORY_NOT_WORD,
    _c.CATEGORY_LINEBREAK,
    _c.CATEGORY_UNI_SPACE,
    _c.CATEGORY_UNI_NOT_WORD,
    _c.CATEGORY_UNI_LINEBREAK,
}
_WORD = re.compile(r"\w+")


def words_of(text: str) -> set[str]:
    """The text's words as `\\b` sees them: its maximal runs of word characters."""
    return set(_WORD.findall(text))


@dataclass(frozen=True)
class Trigger:
    """One string of a clause (every match of the pattern contains one of its clause's), and,
    when the pattern bounds part of it on both sides, that part: then a whole word of the text."""

    text: str
    word: str | None = None


def triggers(pattern: str, flags: int = 0) -> tuple[frozenset[Trigger], ...]:
    """The clauses of `pattern`: every match contains a trigger of each clause (and the text
    around it has that trigger's word, if it has one). The clause to look for first comes first.
    Empty when the pattern could match without any literal; then it must always run.
    Case-sensitive patterns only: under IGNORECASE a literal stands for more than itself."""
    parsed = _parser.parse(pattern, flags)
    if parsed.state.flags & re.IGNORECASE:  # the flags given, or set in the pattern: "(?i)..."
        return ()
    marked = _required(_frozen(parsed))
    clauses = {frozenset(_trigger(s) for s in clause) for clause in marked}
    # what all the strings of a clause share is needed too, and one string is quicker to look for
    shared = {_common_substring([t.text for t in c]) for c in clauses if len(c) > 1}
    clauses |= {frozenset((Trigger(s),)) for s in shared if s}
    return tuple(sorted(clauses, key=_order))


def _common_substring(strings: list[str]) -> str:
    """The longest string that all of `strings` contain (the first such, in the shortest)."""
    shortest = min(strings, key=len)
    for size in range(len(shortest), 0, -1):
        for start in range(len(shortest) - size + 1):
            piece = shortest[start : start + size]
            if all(piece in s for s in strings):
                return piece
    return ""


def _trigger(marked: str) -> Trigger:
    """The plain string, and its longest piece of word characters that has no word character on
    either side (a neighbour in the string, or an edge mark), if any."""
    pieces = re.finditer(r"\w+", marked)
    whole = [
        m.group()
        for m in pieces
        if m.start() > 0 and m.end() < len(marked)  # both neighbours are in the string: non-word
    ]
    return Trigger(marked.replace(_EDGE, ""), max(whole, key=len) if whole else None)


def _order(clause: frozenset[Trigger]) -> tuple[bool, int, int, tuple[tuple[str, str], ...]]:
    """Clauses answered by words first, the one whose shortest word is longest (rarer in text)
    first; then the others, cheapest first: a string to look for costs one, a two-character one
    three more and a character that ordinary text is full of twenty more (it would let the
    pattern run on almost every text). The sorted triggers fix the order of the rest."""
    shortest = min(len(t.word or t.text) for t in clause)
    fixed = tuple(sorted((t.text, t.word or "") for t in clause))
    if all(t.word is not None for t in clause):
        return (False, -shortest, len(clause), fixed)
    cost = sum(1 + (20 if _common(t.text) else 3 if len(t.text) == 2 else 0) for t in clause)
    return (True, cost, -shortest, fixed)


# Characters that support text is full of: a poor thing to look for on their own.
_COMMON_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789 \n\t.,:;'\"-()!?/#&%+*")


def _common(text: str) -> bool:
    """A character that support text is full of, or any single letter of another script (a Russian
    text is full of "и", a Chinese one of "你")."""
    return text in _COMMON_CHARS or (len(text) == 1 and text.isalpha())


# --------------------------------------------------------------------------- derivation


def _frozen(items: Any) -> tuple[Item, ...]:
    """The parse tree in tuples, so that the steps below can remember what they found for a part
    (the patterns share many parts: the names for an AI, the verbs of dismissal)."""
    return tuple(_frozen_item(op, arg) for op, arg in items)


def _frozen_item(op: Any, arg: Any) -> Item:
    if op is _c.IN:
        return op, tuple(arg)
    if op is _c.BRANCH:
        return op, (None, tuple(_frozen(b) for b in arg[1]))
    if op is _c.SUBPATTERN:
        return op, (*arg[:3], _frozen(arg[3]))
    if op in _REPEATS:
        return op, (arg[0], arg[1], _frozen(arg[2]))
    if op in _LOOKAROUNDS:
        return op, (arg[0], _frozen(arg[1]))
    if op is _c.ATOMIC_GROUP:
        return op, _frozen(arg)
    if op is _c.GROUPREF_EXISTS:
        return op, (arg[0], _frozen(arg[1]), _frozen(arg[2]) if arg[2] is not None else None)
    return op, arg  # a literal, a position, a group reference: numbers already


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"  # what `\w` and `\b` take for a word character


@functools.cache
def _exact(item: Item) -> frozenset[str] | None:
    """Every string one parse item can match, edge marks included, if they are few; else None."""
    op, arg = item
    if op is _c.LITERAL:
        return frozenset((chr(arg),)) if chr(arg) != _EDGE else None
    if op is _c.AT:
        return frozenset((_EDGE if arg in _EDGES else "",))
    if op in _LOOKAROUNDS:
        return frozenset(("",))
    if op is _c.IN:
        chars: set[str] = set()
        for kind, value in arg:
            if kind is _c.LITERAL:
                chars.add(chr(value))
            elif kind is _c.RANGE and value[1] - value[0] < 8:
                chars.update(chr(x) for x in range(value[0], value[1] + 1))
            else:  # NEGATE, a category (\w, \s), a wide range: too many to list
                return None
        return frozenset(chars) if 0 < len(chars) <= 8 else None
    if op is _c.SUBPATTERN:
        return None if arg[1] & re.IGNORECASE else _exact_sequence(arg[3])
    if op is _c.ATOMIC_GROUP:
        return _exact_sequence(arg)
    if op is _c.BRANCH:
        out: set[str] = set()
        for branch in arg[1]:
            strings = _exact_sequence(branch)
            if strings is None or len(out) + len(strings) > _MAX_STRINGS:
                return None
            out.update(strings)
        return frozenset(out)
    if op in _REPEATS:
        low, high, body = arg
        strings = _exact_sequence(body)
        if strings is None or high > 3:
            return None
        out = set()
        for times in range(low, high + 1):
            for parts in product(strings, repeat=times):
                out.add("".join(parts))
                if len(out) > _MAX_STRINGS:
                    return None
        return frozenset(out)
    return None


@functools.cache
def _exact_sequence(items: Sequence[Item]) -> frozenset[str] | None:
    out = frozenset(("",))
    for item in items:
        strings = _exact(item)
        if strings is None or len(out) * len(strings) > _MAX_STRINGS:
            return None
        out = frozenset(a + b for a in out for b in strings)
    return out


@functools.cache
def _required(items: Sequence[Item], before: str = "", after: str = "") -> tuple[frozenset[str], ...]:
    """Clauses of marked strings, each a set of which any match of the sequence contains one:
    each run of consecutive exactly-known items (their strings multiplied out), and the clauses
    of any item that must match at least once. `before` and `after` are edge marks the context
    guarantees around the sequence."""
    clauses: list[frozenset[str]] = []
    run = frozenset((before,))
    for at, item in enumerate(items):
        strings = _exact(item)
        if strings is not None and len(run) * len(strings) <= _MAX_STRINGS:
            run = frozenset(a + b for a in run for b in strings)
            continue
        left = _EDGE if all(s and not _is_word_char(s[-1]) for s in run) else ""
        if strings is None and _starts_non_word(items[at:]):
            run = frozenset(s + _EDGE for s in run)
        clauses.append(run)
        if strings is not None:
            run = strings
            continue
        right = after if at == len(items) - 1 else _edge_before(items[at + 1 :])
        clauses.extend(_required_item(item, left, right))
        run = frozenset((_EDGE if _ends_non_word(items[: at + 1]) else "",))
    run = frozenset(s + after for s in run)
    clauses.append(run)
    return tuple(_minimal(c) for c in clauses if all(s.replace(_EDGE, "") for s in c))


def _edge_before(items: Sequence[Item]) -> str:
    """An edge mark if whatever follows starts with a non-word character or an edge."""
    if _starts_non_word(items):
        return _EDGE
    strings = _exact(items[0]) if items else None
    return _EDGE if strings and all(s and not _is_word_char(s[0]) for s in strings) else ""


@functools.cache
def _required_item(item: Item, before: str = "", after: str = "") -> tuple[frozenset[str], ...]:
    op, arg = item
    if op is _c.SUBPATTERN:
        return () if arg[1] & re.IGNORECASE else _required(arg[3], before, after)
    if op is _c.ATOMIC_GROUP:
        return _required(arg, before, after)
    if op is _c.BRANCH:
        # one of the branches matched: the union of one clause of each branch
        out: set[str] = set()
        for branch in arg[1]:
            clauses = _required(branch, before, after)
            if not clauses:
                return ()
            best: frozenset[str] = min(clauses, key=_marked_order)
            out.update(best)
        return (_minimal(frozenset(out)),)
    if op in _REPEATS and arg[0] >= 1:
        return _required(arg[2])  # which repetition is first or last is not known
    return ()


@functools.cache
def _marked_order(clause: frozenset[str]) -> tuple[bool, int, int, tuple[tuple[str, str], ...]]:
    return _order(frozenset(_trigger(s) for s in clause))


def _minimal(strings: frozenset[str]) -> frozenset[str]:
    """Drop a string that contains another of the set: the shorter is present whenever it is."""
    return frozenset(s for s in strings if not any(o != s and o in s for o in strings))


def _non_word_set(arg: list[tuple[Any, Any]]) -> bool:
    """A character class (IN) that only matches non-word characters."""
    for kind, value in arg:
        if kind is _c.LITERAL:
            if _is_word_char(chr(value)):
                return False
        elif kind is _c.RANGE:
            if value[1] - value[0] > 256 or any(_is_word_char(chr(x)) for x in range(value[0], value[1] + 1)):
                return False
        elif kind is not _c.CATEGORY or value not in _NON_WORD_CATEGORIES:
            return False  # NEGATE, \w, \d, ...
    return True


def _starts_non_word(items: Sequence[Item]) -> bool:
    """Wherever the sequence starts matching, the character there is not a word character, or
    there is none (the end of a line or of the text)."""
    return _edge_non_word(tuple(items), False)


def _ends_non_word(items: Sequence[Item]) -> bool:
    """Wherever the sequence stops matching, the character before is not a word character, or
    there is none (the start of a line or of the text)."""
    return _edge_non_word(tuple(items), True)


@functools.cache
def _edge_non_word(items: tuple[Item, ...], at_end: bool) -> bool:
    """The sequence's first item (its last, `at_end`) that matches something decides the edge."""
    for op, arg in reversed(items) if at_end else items:
        if op in _LOOKAROUNDS or (op in _REPEATS and arg[0] == 0 and _edge_non_word(tuple(arg[2]), at_end)):
            continue  # matches nothing here, or something whose edge is a non-word character
        if op is _c.AT:
            return arg in (_LINE_STARTS if at_end else _LINE_ENDS)
        return _one_edge_non_word(op, arg, at_end)
    return False


def _one_edge_non_word(op: Any, arg: Any, at_end: bool) -> bool:
    if op is _c.LITERAL:
        return not _is_word_char(chr(arg))
    if op is _c.IN:
        return _non_word_set(arg)
    if op is _c.SUBPATTERN:
        return not arg[1] & re.IGNORECASE and _edge_non_word(tuple(arg[3]), at_end)
    if op is _c.BRANCH:
        return all(_edge_non_word(tuple(b), at_end) for b in arg[1])
    if op in _REPEATS:
        return arg[0] >= 1 and _edge_non_word(tuple(arg[2]), at_end)
    return False


# --------------------------------------------------------------------------- the scan


@dataclass
class Prefilter:
    """The triggers of a list of patterns, indexed for one look at a text's words."""

    patterns: Sequence[str]
    flags: int = 0
    clauses: list[tuple[frozenset[Trigger], ...]] = field(init=False)
    # the patterns that have no trigger and always run
    untriggered: frozenset[int] = field(init=False)
    _by_word: dict[str, frozenset[int]] = field(init=False, repr=False)
    # strings that are not words, by their first character: a text is looked through only for those
    # that start with one of its characters (a Latin text never for the Chinese ones)
    _by_text: dict[str, tuple[tuple[str, frozenset[int]], ...]] = field(init=False, repr=False)
    _word_clauses: dict[int, tuple[frozenset[str], ...]] = field(init=False, repr=False)
    _string_clauses: dict[int, tuple[str, ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.clauses = [triggers(p, self.flags) for p in self.patterns]
        self.untriggered = frozenset(i for i, c in enumerate(self.clauses) if not c)
        by_word: dict[str, set[int]] = {}
        by_text: dict[str, set[int]] = {}
        for i, clauses in enumerate(self.clauses):
            for t in clauses[0] if clauses else ():
                if t.word is not None:
                    by_word.setdefault(t.word, set()).add(i)
                else:
                    by_text.setdefault(t.text, set()).add(i)
        self._by_word = {w: frozenset(ids) for w, ids in by_word.items()}
        by_first: dict[str, list[tuple[str, frozenset[int]]]] = {}
        for string, ids in sorted(by_text.items()):
            by_first.setdefault(string[0], []).append((string, frozenset(ids)))
        self._by_text = {ch: tuple(strings) for ch, strings in by_first.items()}
        # the other clauses quick to check before a pattern runs: those that words answer, and
        # single strings
        self._word_clauses = {
            i: tuple(
                frozenset(t.word for t in c if t.word is not None)
                for c in clauses[1:]
                if all(t.word is not None for t in c)
            )
            for i, clauses in enumerate(self.clauses)
        }
        self._string_clauses = {
            i: tuple(t.text for c in clauses[1:] if len(c) == 1 for t in c if t.word is None)
            for i, clauses in enumerate(self.clauses)
        }

    def candidates(self, text: str) -> set[int]:
        """Indexes of the patterns that can match `text`: those with a trigger of every clause in
        it (as far as its words tell), and the untriggered ones."""
        words = words_of(text)
        found: set[int] = set()
        by_word = self._by_word
        for w in words.intersection(by_word):
            found |= by_word[w]
        by_text = self._by_text
        for ch in by_text.keys() & set(text):
            for t, ids in by_text[ch]:
                if t in text:
                    found |= ids
        word_clauses, string_clauses = self._word_clauses, self._string_clauses
        out = {
            i
            for i in found
            if all(not c.isdisjoint(words) for c in word_clauses[i])
            and all(s in text for s in string_clauses[i])
        }
        return out | self.untriggered
