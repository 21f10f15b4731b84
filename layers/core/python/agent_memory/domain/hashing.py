"""Stable hashes: content identity for dedupe and tombstones, and the audit chain."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from typing import Any

GENESIS_HASH = "0" * 64


def normalize_content(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", text).strip().rstrip(".!")


def content_hash(subject_id: str, memory_type: str, slot: str | None, content: str) -> str:
    """Identity of a memory's meaning within its subject, independent of whitespace and case."""
    basis = "\x1f".join([subject_id, memory_type, slot or "", normalize_content(content)])
    return hashlib.sha256(basis.encode()).hexdigest()


def text_hash(text: str) -> str:
    return hashlib.sha256(normalize_content(text).encode()).hexdigest()


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def chain_hash(prev_hash: str, event: dict[str, Any]) -> str:
    """Hash of one audit event linked to its predecessor (tamper evidence)."""
    return hashlib.sha256((prev_hash + "\n" + canonical_json(event)).encode()).hexdigest()


def request_fingerprint(data: Any) -> str:
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()
