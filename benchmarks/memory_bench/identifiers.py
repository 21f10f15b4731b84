"""Identifier masking benchmark: recall and precision of `mask_identifiers` per identifier type
over a labelled corpus (JSON Lines, `benchmarks/identifiers/identifiers.jsonl`).

    memory bench identifiers [--data FILE] [--json OUT] [--markdown]

Each line is one short text: a positive holds exactly one identifier, written as people type it
(split by invisible characters or unusual separators, prefixed, in lower case, under a long
label), with its type and its exact substring; a negative holds none (order, tracking, phone,
invoice and ticket numbers, dates, versions, amounts...).

- recall of a type: its identifiers whose whole span (as written, invisible characters included)
  is replaced by a surrogate of the right kind (`CARD`, `IBAN`, `TAXID`, `ACCT`);
- precision of a type: detections of that type that overlap an identifier of that type. A tax
  number whose kind neither its label nor its shape tells (`tax_id`) counts as right on any tax
  identifier;
- `visible_after_rendering`: positives of which more than the surrogate's last four characters
  can still be read once the masked text is rendered (invisible characters dropped, compatibility
  forms folded), a check independent of the span bookkeeping;
- negatives: per category, the examples in which anything was masked.

Every personal class (e-mail, phone, date of birth, passport) is scored as detected and masked,
whatever a tenant's policy keeps. Held-out sets beside the corpus (`heldout*.jsonl`, same format)
are reported as their own split under `heldout`.

Only example ids are reported, never their text.
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from agent_memory.domain.sanitize import PERSONAL_CLASSES, PERSONAL_KINDS, Found, mask_identifiers
from agent_memory.domain.screening import visible_text

KIND = {
    "card": "CARD",
    "iban": "IBAN",
    "ssn": "TAXID",
    "itin": "TAXID",
    "ein": "TAXID",
    "nino": "TAXID",
    "tax_id": "TAXID",
    "account": "ACCT",
    "sin": "TAXID",
    "aadhaar": "TAXID",
    "steuer_id": "TAXID",
    "nir": "TAXID",
    **PERSONAL_KINDS,
}
TARGETS = {"recall": 1.0, "precision": 0.98}
# E-mail addresses, phone numbers, dates of birth and passport numbers are written in more ways than
# any pattern knows ("138 0013 8000" bare is a phone number to a reader only): a lower recall aim.
PERSONAL_TARGETS = {"recall": 0.9, "precision": 0.95}
HELDOUT_PATTERN = "heldout*.jsonl"


def _load(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _readable(text: str) -> str:
    """The letters and digits a reader sees in the text."""
    return re.sub(r"[^0-9A-Za-z]", "", unicodedata.normalize("NFKC", visible_text(text))).upper()


def _type_matches(found: Found, gold_type: str) -> bool:
    if gold_type not in KIND:  # a type the detector has no name for: any detection on it is right
        return True
    return found.type == gold_type or (found.type == "tax_id" and KIND[gold_type] == "TAXID")


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def run_identifier_bench(path: str | Path, *, repeats: int = 5) -> dict[str, Any]:
    """Mask every example of the corpus at `path` and score the detections against its labels."""
    rows = _load(path)
    gold_count: Counter[str] = Counter()
    recalled: Counter[str] = Counter()
    missed: defaultdict[str, list[str]] = defaultdict(list)
    detections: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    false_positive: defaultdict[str, list[str]] = defaultdict(list)
    negatives: defaultdict[str, Counter[str]] = defaultdict(Counter)
    visible: list[str] = []
    visible_always_masked: list[str] = []  # of the classes every tenant masks
    formats: defaultdict[str, Counter[str]] = defaultdict(Counter)

    for row in rows:
        text = row["text"]
        masked = mask_identifiers(text)
        gold = []
        for ident in row["identifiers"]:
            start = text.find(ident["value"])
            if start < 0:
                raise ValueError(f"{row['id']}: identifier value is not a substring of the text")
            gold.append((ident["type"], start, start + len(ident["value"]), ident["value"]))
        for gold_type, start, end, value in gold:
            gold_count[gold_type] += 1
            # a type the detector has no name for (a held-out set may bring one) counts as found
            # when any surrogate replaces its whole span
            hit = any(
                KIND.get(gold_type, f.kind) == f.kind and f.start <= start and end <= f.end
                for f in masked.found
            )
            if hit:
                recalled[gold_type] += 1
            else:
                missed[gold_type].append(row["id"])
                formats[gold_type][str(row.get("format", ""))] += 1
            head = _readable(value)[:-4]
            if len(head) >= 4 and head in _readable(masked.text):
                visible.append(row["id"])
                if gold_type not in PERSONAL_CLASSES:
                    visible_always_masked.append(row["id"])
        for f in masked.found:
            detections[f.type] += 1
            if any(_type_matches(f, t) and f.start < e and s < f.end for t, s, e, _ in gold):
                correct[f.type] += 1
            else:
                false_positive[f.type].append(row["id"])
        if row["type"] == "negative":
            category = str(row.get("category", "other"))
            negatives[category]["examples"] += 1
            negatives[category]["with_a_detection"] += bool(masked.found)

    per_type: dict[str, dict[str, Any]] = {}
    for t in sorted(set(gold_count) | set(detections)):
        per_type[t] = {
            "identifiers": gold_count[t],
            "recall": _ratio(recalled[t], gold_count[t]),
            "detections": detections[t],
            "precision": _ratio(correct[t], detections[t]),
            "missed": missed[t],
            "missed_formats": dict(formats[t]),
            "false_positives": false_positive[t],
        }
    total_gold, total_recalled = sum(gold_count.values()), sum(recalled.values())
    total_detections, total_correct = sum(detections.values()), sum(correct.values())

    started = time.perf_counter()
    for _ in range(repeats):
        for row in rows:
            mask_identifiers(row["text"])
    seconds = time.perf_counter() - started

    def target(t: str) -> dict[str, float]:
        return PERSONAL_TARGETS if t in PERSONAL_CLASSES else TARGETS

    recall_ok = all(v["recall"] is None or v["recall"] >= target(t)["recall"] for t, v in per_type.items())
    precision_ok = all(
        v["precision"] is None or v["precision"] >= target(t)["precision"] for t, v in per_type.items()
    )
    return {
        "data": str(path),
        "examples": len(rows),
        "positives": sum(1 for r in rows if r["identifiers"]),
        "negatives": sum(1 for r in rows if not r["identifiers"]),
        "per_type": per_type,
        "overall": {
            "recall": _ratio(total_recalled, total_gold),
            "precision": _ratio(total_correct, total_detections),
        },
        "negative_categories": {k: dict(v) for k, v in sorted(negatives.items())},
        "visible_after_rendering": visible,
        "targets": TARGETS,
        "personal_targets": PERSONAL_TARGETS,
        "meets_targets": recall_ok and precision_ok and not visible_always_masked,
        "texts_per_second": round(repeats * len(rows) / seconds) if seconds else None,
    }


def run_with_heldout(path: str | Path, *, repeats: int = 5) -> dict[str, Any]:
    """The development corpus at `path`, and each held-out set beside it (`heldout*.jsonl`, the
    same record format, written apart from the detector) as a separate split under `heldout`."""
    report = run_identifier_bench(path, repeats=repeats)
    report["split"] = "development"
    report["heldout"] = {
        held.name: run_identifier_bench(held, repeats=1) | {"split": "heldout"}
        for held in sorted(Path(path).resolve().parent.glob(HELDOUT_PATTERN))
    }
    return report


def markdown_table(report: dict[str, Any]) -> str:
    """The per-type table of a report, as in docs/benchmarks.md."""

    def fmt(value: float | None, num: int, den: int) -> str:
        return "—" if value is None else f"{value:.2f} ({num}/{den})"

    lines = ["| type | identifiers | recall | detections | precision |", "|---|---|---|---|---|"]
    for t, v in report["per_type"].items():
        recalled = v["identifiers"] - len(v["missed"])
        right = v["detections"] - len(v["false_positives"])
        lines.append(
            f"| {t} | {v['identifiers']} | {fmt(v['recall'], recalled, v['identifiers'])} | {v['detections']} "
            f"| {fmt(v['precision'], right, v['detections'])} |"
        )
    flagged = sum(c["with_a_detection"] for c in report["negative_categories"].values())
    lines.append(f"\nNegatives with anything masked: {flagged} of {report['negatives']}.")
    for name, held in report.get("heldout", {}).items():
        lines.append(f"\nHeld-out split `{name}`:\n")
        lines.append(markdown_table(held))
    return "\n".join(lines)
