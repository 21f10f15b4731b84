"""Working memory, the pure part: how a value is made safe to keep and to show.

A working value is any JSON. Before it is stored, every string in it (dictionary keys included)
has its identifiers masked, and every string is screened for instructions: a value that reads like
one is refused, naming where it is, since working memory has no review queue to hold it for and
lives only minutes. Its size is the length of its compact JSON in UTF-8 bytes, as stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agent_memory.domain.sanitize import mask_identifiers, mask_value
from agent_memory.domain.screening import screen_for_instructions


@dataclass(frozen=True)
class PreparedValue:
    value: Any  # masked
    masked_kinds: tuple[str, ...]
    bytes: int


def value_bytes(value: Any) -> int:
    """The value's size as stored: compact JSON, UTF-8."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def mask_working_value(value: Any) -> PreparedValue:
    """Identifiers masked in every string of the value, its dictionary keys included (the memory
    write path's `mask_value` leaves keys as written; here a key is as likely to carry one)."""
    kinds: list[str] = []

    def keys_masked(v: Any) -> Any:
        if isinstance(v, dict):
            out: dict[str, Any] = {}
            for k, item in v.items():
                masked = mask_identifiers(str(k))
                kinds.extend(masked.kinds)
                out[masked.text] = keys_masked(item)
            return out
        if isinstance(v, list):
            return [keys_masked(x) for x in v]
        return v

    masked, value_kinds = mask_value(keys_masked(value))
    kinds.extend(value_kinds)
    return PreparedValue(masked, tuple(dict.fromkeys(kinds)), value_bytes(masked))


def instruction_at(value: Any) -> str | None:
    """Where in the value a piece of text reads like an instruction to a model, as the request
    field that holds it (`value`, `value.note`, `value.steps.2`), or None when it is clean. Each
    string and key is screened on its own (pass the masked value: the field is logged), then all of them together as lines (a directive split
    across two fields still reads as one)."""
    pieces = list(_strings(value, "value"))
    for where, text in pieces:
        if screen_for_instructions(text).flagged:
            return where
    if len(pieces) > 1 and screen_for_instructions("\n".join(t for _, t in pieces)).flagged:
        return "value"
    return None


def key_carries_identifier(key: str) -> bool:
    """A key is a name the caller reads and deletes by: it cannot be masked without changing it,
    so one that holds an identifier (a card, an account number) is refused."""
    return mask_identifiers(key).changed


KEY_IN_FIELD_CHARS = 64  # a key as named in an error's field: the caller's own words, kept short


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{str(key)[:KEY_IN_FIELD_CHARS]}"
            yield where, str(key)
            yield from _strings(item, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}.{i}")
