"""Check labelled transcript files against the labelling rules in this folder's README.

    .venv/bin/python benchmarks/extraction/validate.py FILE [FILE ...]

Prints one line per problem (file, transcript id, what is wrong) and exits 1 if there is any.
The checks: the keys and enums, each quote a unique substring of its turn, the labels of a turn in
text order, not overlapping and covering the turn apart from whitespace and punctuation between
quotes, slots from the vocabulary, category agreeing with type and slot, decision agreeing with
type and category, reasons from the vocabulary, the speaker rules, and every identifier-shaped
number inside a flagged label.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

DOMAINS = {"crm", "support", "wealth"}
CHANNELS = {"meeting", "chat", "email", "phone"}
SPEAKERS = {"customer", "agent", "system"}
TYPES = {"fact", "preference", "episode", "resolution", "observation", "sentiment", "commitment", None}
DECISIONS = {"admitted", "pending_approval", "quarantined", "not_stored"}
SLOTS = {
    "preference": {
        "contact_channel",
        "contact_time",
        "cadence",
        "tone",
        "language",
        "meeting_format",
        "report_format",
    },
    "contract": {"seat_price", "discount", "sla", "payment_terms", "renewal_terms", "pricing"},
    "stakeholder": {
        "executive_sponsor",
        "primary_contact",
        "billing_contact",
        "technical_contact",
        "decision_maker",
    },
    "tech": {
        "crm_platform",
        "identity_provider",
        "data_warehouse",
        "cloud_provider",
        "integration",
        "email_platform",
    },
    "profile": {
        "industry",
        "headquarters",
        "fiscal_year_end",
        "employee_count",
        "risk_tolerance",
        "investment_horizon",
        "retirement_age",
        "income_needs",
        "dependants",
        "data_residency",
    },
    "account": {"plan_tier", "seats"},
}
FACT_CATEGORY = {
    "contract": "CONTRACT_COMMERCIAL",
    "stakeholder": "STAKEHOLDER",
    "tech": "TECHNICAL_ENVIRONMENT",
    "profile": "ACCOUNT_PROFILE",
}
NOT_STORED_REASONS = set(
    [
        "greeting",
        "thanks",
        "small_talk",
        "venting",
        "pleasantry",
        "acknowledgement",
        "sign_off",
        "procedural",
        "agent_question",
        "customer_question",
        "owned_by_system_of_record",
        "agent_restatement",
        "agent_claim_unverified",
        "resolution_step",
        "unconfirmed_fix",
        "transient_tool_output",
        "duplicate_tool_output",
        "duplicate_confirmation",
        "duplicate_statement",
        "superseded_in_session",
        "context_only",
        "declined_to_state",
        "uncertain_statement",
        "no_explicit_preference",
        "one_off_request",
        "transient_request",
        "transient_ticket_state",
        "offer_declined",
        "knowledge_base_owned",
        "policy_explanation",
        "sensitive_identifier_only",
        "transaction_instruction",
        "verification_detail",
        "third_party_unconfirmed",
    ]
)
KEYS = {"id", "domain", "channel", "turns", "labels"}
LABEL_KEYS = {
    "turn",
    "quote",
    "outcome",
    "type",
    "category",
    "slot",
    "decision",
    "reason",
    "contains_identifier",
}
_LONG_NUMBER = re.compile(r"\b\d(?:[ -]?\d){12,18}\b")
_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_ACCOUNT_NUMBER = re.compile(r"\baccount (?:number|no\.?) ?:? ?\d{6,}", re.IGNORECASE)
_GAP = re.compile(r"[\s.,;:!?\-\u2013\u2014\"'()]*")


def _slot_problems(lab: dict[str, Any]) -> list[str]:
    kind, slot, category = lab["type"], lab["slot"], lab["category"]
    if slot is not None:
        prefix, _, name = slot.partition(".")
        if name not in SLOTS.get(prefix, set()):
            return [f"slot {slot!r} is not in the vocabulary"]
        if prefix == "account":
            if lab["decision"] != "not_stored" or lab["reason"] != "owned_by_system_of_record":
                return ["account.* must be not_stored with reason owned_by_system_of_record"]
            return []
    if kind in ("fact", "preference") and slot is None:
        return [f"a {kind} needs a slot"]
    if kind == "preference" and (not slot.startswith("preference.") or category != "PREFERENCE"):
        return ["a preference's slot is preference.* and its category PREFERENCE"]
    if kind == "fact":
        prefix = slot.split(".")[0]
        if FACT_CATEGORY.get(prefix) != category:
            return [f"fact slot {slot} needs category {FACT_CATEGORY.get(prefix)}"]
        want = "pending_approval" if prefix == "contract" else "admitted"
        if lab["decision"] != want:
            return [f"fact {slot} needs decision {want}"]
    elif kind not in (None, "preference"):
        if slot is not None:
            return [f"a {kind} has no slot"]
        if category != kind.upper():
            return [f"a {kind} has category {kind.upper()}"]
    return []


def _decision_problems(lab: dict[str, Any], speaker: str) -> list[str]:
    kind, decision, reason = lab["type"], lab["decision"], lab["reason"]
    problems: list[str] = []
    if kind is None:
        if reason == "prompt_injection":
            if decision != "quarantined" or lab["outcome"] != "stored":
                problems.append("an injected instruction is stored and quarantined")
        elif decision != "not_stored" or lab["outcome"] != "not_stored" or reason not in NOT_STORED_REASONS:
            problems.append("a label without a type is not_stored with a reason from the vocabulary")
        return problems
    if lab["outcome"] != "stored":
        problems.append("a typed label is stored")
    if kind == "observation" and (decision != "quarantined" or reason != "agent_inference"):
        problems.append("an observation is quarantined with reason agent_inference")
    if kind in ("episode", "resolution", "sentiment", "commitment", "preference") and decision != "admitted":
        problems.append(f"a {kind} is admitted")
    commercial = (lab["slot"] or "").startswith("contract.")
    if commercial and reason != "commercial_requires_human_approval":
        problems.append("a commercial term has reason commercial_requires_human_approval")
    if decision == "admitted" and reason is not None:
        problems.append("an admitted label has reason null")
    if speaker == "customer" and kind in ("commitment", "observation"):
        problems.append(f"a customer does not give a {kind}")
    if speaker == "agent" and kind in ("preference", "sentiment", "episode", "resolution"):
        problems.append(f"an agent does not give a {kind}")
    if speaker == "agent" and kind == "fact" and not commercial:
        problems.append("an agent states no non-commercial fact")
    if speaker == "system" and kind not in ("episode", "resolution"):
        problems.append(f"a system turn gives no {kind}")
    return problems


def _label_problems(lab: dict[str, Any], turns: list[dict[str, Any]]) -> list[str]:
    if set(lab) != LABEL_KEYS:
        return [f"label keys {sorted(set(lab) ^ LABEL_KEYS)} differ"]
    if not isinstance(lab["turn"], int) or not 0 <= lab["turn"] < len(turns):
        return [f"label turn {lab['turn']!r} is out of range"]
    problems: list[str] = []
    if lab["type"] not in TYPES:
        problems.append(f"type {lab['type']!r}")
    if lab["decision"] not in DECISIONS:
        problems.append(f"decision {lab['decision']!r}")
    if lab["outcome"] not in ("stored", "not_stored"):
        problems.append(f"outcome {lab['outcome']!r}")
    if not isinstance(lab["contains_identifier"], bool):
        problems.append("contains_identifier is a boolean")
    if problems:
        return problems
    return _slot_problems(lab) + _decision_problems(lab, turns[lab["turn"]]["speaker"])


def _coverage_problems(index: int, text: str, labels: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    pos = 0
    for lab in labels:
        quote = lab["quote"]
        if not quote or text.count(quote) != 1:
            problems.append(f"turn {index}: quote {quote[:40]!r} is not a unique substring of its turn")
            continue
        start = text.find(quote)
        if start < pos:
            problems.append(f"turn {index}: quote {quote[:40]!r} overlaps or is out of order")
            continue
        if not _GAP.fullmatch(text[pos:start]):
            problems.append(f"turn {index}: text {text[pos:start][:40]!r} is not covered by any label")
        pos = start + len(quote)
    if not _GAP.fullmatch(text[pos:]):
        problems.append(f"turn {index}: text {text[pos:][:40]!r} is not covered by any label")
    return problems


def _identifier_problems(index: int, text: str, labels: list[dict[str, Any]]) -> list[str]:
    flagged = [lab["quote"] for lab in labels if lab["contains_identifier"]]
    problems = []
    for pattern in (_LONG_NUMBER, _SSN, _IBAN, _ACCOUNT_NUMBER):
        for m in pattern.finditer(text):
            if not any(m.group(0) in quote for quote in flagged):
                problems.append(
                    f"turn {index}: identifier-shaped {pattern.pattern[:12]}... not in a flagged label"
                )
    return problems


def problems_of(record: dict[str, Any]) -> list[str]:
    if set(record) != KEYS:
        return [f"keys {sorted(set(record) ^ KEYS)} differ"]
    problems: list[str] = []
    if record["domain"] not in DOMAINS:
        problems.append(f"domain {record['domain']!r}")
    if record["channel"] not in CHANNELS:
        problems.append(f"channel {record['channel']!r}")
    turns = record["turns"]
    if not 1 <= len(turns) <= 20:
        problems.append(f"{len(turns)} turns")
    for t in turns:
        if set(t) != {"speaker", "text"} or t["speaker"] not in SPEAKERS:
            problems.append(f"turn {t!r:.60} needs a speaker from {sorted(SPEAKERS)} and a text")
            return problems
    for lab in record["labels"]:
        problems += _label_problems(lab, turns)
    if problems:
        return problems
    for index, turn in enumerate(turns):
        labels = [lab for lab in record["labels"] if lab["turn"] == index]
        problems += _coverage_problems(index, turn["text"], labels)
        problems += _identifier_problems(index, turn["text"], labels)
    return problems


def main(argv: list[str] | None = None) -> int:
    files = argv if argv is not None else sys.argv[1:]
    bad = 0
    seen: set[str] = set()
    for name in files:
        for number, line in enumerate(Path(name).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                print(f"{name}:{number}: not JSON ({exc.msg})")
                bad += 1
                continue
            rid = str(record.get("id"))
            found = problems_of(record)
            if rid in seen:
                found.append("duplicate id")
            seen.add(rid)
            for p in found:
                print(f"{name}:{number} {rid}: {p}")
            bad += len(found)
    print(f"{bad} problems in {len(seen)} transcripts")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
