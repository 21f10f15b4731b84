"""The labelled extraction sets follow their labelling rules, checked by the validator every new
file goes through (benchmarks/extraction/validate.py)."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parents[2] / "benchmarks" / "extraction"
_spec = importlib.util.spec_from_file_location("labelled_validate", HERE / "validate.py")
assert _spec is not None and _spec.loader is not None
validate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(validate)

RECORD: dict[str, Any] = {
    "id": "t-1",
    "domain": "crm",
    "channel": "chat",
    "turns": [{"speaker": "customer", "text": "Hi! Please email me, not phone."}],
    "labels": [
        {
            "turn": 0, "quote": "Hi!", "outcome": "not_stored", "type": None, "category": None,
            "slot": None, "decision": "not_stored", "reason": "greeting", "contains_identifier": False,
        },
        {
            "turn": 0, "quote": "Please email me, not phone.", "outcome": "stored", "type": "preference",
            "category": "PREFERENCE", "slot": "preference.contact_channel", "decision": "admitted",
            "reason": None, "contains_identifier": False,
        },
    ],
}  # fmt: skip


@pytest.mark.parametrize("path", sorted(HERE.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_labelled_file_validates(path: Path) -> None:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert records
    assert {r["id"]: validate.problems_of(r) for r in records if validate.problems_of(r)} == {}


def test_a_well_formed_record_has_no_problem() -> None:
    assert validate.problems_of(RECORD) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda r: r["labels"][1].update(quote="Please email me."), "not a unique substring"),
        (lambda r: r["labels"].pop(0), "not covered"),
        (lambda r: r["labels"][1].update(category="STAKEHOLDER"), "category PREFERENCE"),
        (lambda r: r["labels"][1].update(slot="preference.favourite_colour"), "not in the vocabulary"),
        (lambda r: r["turns"][0].update(speaker="agent"), "an agent does not give a preference"),
        (lambda r: r["turns"][0].update(text="Hi! Card 4111 1111 1111 1111 please."), "unique substring"),
    ],
)
def test_a_broken_record_is_named(change: Any, problem: str) -> None:
    # Given a record with one rule broken
    record = copy.deepcopy(RECORD)
    change(record)
    # Then the validator names it
    assert any(problem in p for p in validate.problems_of(record)), validate.problems_of(record)


def test_an_unflagged_identifier_is_named() -> None:
    record = copy.deepcopy(RECORD)
    record["turns"][0]["text"] = "Hi! Please email me, not phone. Card 4111 1111 1111 1111."
    record["labels"].append(
        {**RECORD["labels"][0], "quote": "Card 4111 1111 1111 1111.", "reason": "sensitive_identifier_only"}
    )
    assert any("not in a flagged label" in p for p in validate.problems_of(record))
    record["labels"][-1]["contains_identifier"] = True
    assert validate.problems_of(record) == []
