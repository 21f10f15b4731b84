"""Extraction quality benchmark over a labelled transcript file (JSON Lines).

    from memory_bench.extraction import run_extraction_bench
    report = run_extraction_bench("benchmarks/extraction/labelled_transcripts.jsonl")

Or from a shell: `uv run python -m memory_bench.extraction [path] [--policy crm] [--examples 20]`.

What it does, per transcript:

1. Masks every turn with `mask_identifiers` (as the API does before anything
   is stored or queued) and runs the extractor on the masked transcript.
2. Predicts each candidate's decision with the pure rules of the write
   gateway: `sanitize` -> `screen_for_instructions` -> `classify` ->
   `resolve_conflict(active=None)` (an empty store: no duplicates, no
   tombstones, no active record to contest). A candidate the extractor
   flagged `untrusted_instruction` is screened as flagged too (signal
   `extractor_flag`): the extraction worker must pass the flag on.
3. Aligns candidates to labels by character overlap of spans in the same
   turn (label spans are mapped from the raw text onto the masked text).

Metrics (overall and per domain):

- `admitted_precision`: of the candidates predicted `admitted`, the share
  that overlaps a label with decision `admitted` and the same type
  (`type_level`), and the same type and slot (`type_slot_level`; a slot
  mismatch, e.g. `preference.cadence` for a `preference.contact_channel`
  label, counts as wrong there and right at type level).
- `preference_recall`: preference labels overlapped by a candidate of type
  preference predicted `admitted` (type level; and with the same slot).
- `commercial_recall`: CONTRACT_COMMERCIAL labels overlapped by a
  CONTRACT_COMMERCIAL candidate (`extracted`), of those predicted
  `pending_approval` (`pending_approval`), and with the same slot.
- `per_type`: candidate-level precision and label-level recall and F1 per
  type; injected instructions are their own type `instruction`.
- `per_decision`: label-level precision/recall/F1 per gold decision (a label
  no candidate overlaps is predicted `not_stored`; gateway `rejected` counts
  as `not_stored`), with the confusion matrix.
- `unmasked_identifiers`: candidate and summary texts that still hold a
  Luhn-valid 13-19 digit run, a mod-97-valid IBAN, an SSN-shaped number or an
  "account number NNNNNN".
- `sessions_per_second`: of the extractor alone.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_memory.domain.admission import resolve_conflict
from agent_memory.domain.enums import Decision
from agent_memory.domain.errors import InvalidRequest
from agent_memory.domain.extraction import CandidateMemory, Speaker, Transcript, Turn
from agent_memory.domain.policy import PolicyProfile, profile
from agent_memory.domain.records import MemoryWrite, Source
from agent_memory.domain.sanitize import iban_valid, luhn_valid, mask_identifiers
from agent_memory.ports.extractor import Extractor
from agent_memory.services.admission_steps import prepare
from memory_bench import EXTRACTION_DATA

BENCH_NOW = datetime(2025, 1, 1, tzinfo=UTC)
TARGETS = {
    "admitted_precision": 0.9,
    "preference_recall": 0.7,
    "commercial_recall": 0.7,
    "unmasked_identifiers": 0,
}
INSTRUCTION = "instruction"
NONE = "none"
GOLD_DECISIONS = ("admitted", "pending_approval", "quarantined", "not_stored")

# --------------------------------------------------------------------------- strict identifier detector

_DIGIT_RUN = re.compile(r"(?<![\d])\d(?:[ -]?\d){12,22}(?![\d])")
_IBAN_RUN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{1,4}){2,8}", re.IGNORECASE)
_SSN_SHAPE = re.compile(r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)")
_ACCOUNT_NUMBER = re.compile(r"(?i)\b(?:account|acct|a/c)\s*(?:number|no\.?|#)?\s*(?:is|:)?\s*\d[\d -]{5,}")


def find_identifiers(text: str) -> list[str]:
    """Strict detector, independent of the masking code's own regexes."""
    found: list[str] = []
    for m in _DIGIT_RUN.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            found.append("card")
    for m in _IBAN_RUN.finditer(text):
        raw = m.group(0)
        groups = re.findall(r"[ ]?[A-Z0-9]{1,4}", raw[4:], re.IGNORECASE)
        if any(iban_valid(raw[:4] + "".join(groups[:n])) for n in range(len(groups), 0, -1)):
            found.append("iban")
    found += ["ssn"] * len(_SSN_SHAPE.findall(text))
    found += ["account_number"] * len(_ACCOUNT_NUMBER.findall(text))
    return found


# --------------------------------------------------------------------------- alignment


def _offset_mapper(raw: str, masked: str) -> Any:
    """Map a character offset in `raw` to the corresponding offset in `masked`."""
    if raw == masked:
        return lambda i, is_end=False: i
    opcodes = difflib.SequenceMatcher(None, raw, masked, autojunk=False).get_opcodes()

    def map_pos(i: int, is_end: bool = False) -> int:
        for tag, i1, i2, j1, j2 in opcodes:
            if i1 <= i < i2 or (is_end and i1 < i <= i2):
                if tag == "equal":
                    return j1 + (i - i1)
                return j2 if is_end else j1
        return len(masked)

    return map_pos


@dataclass
class _Label:
    domain: str
    transcript: str
    turn: int
    start: int
    end: int
    quote: str
    type: str
    category: str | None
    slot: str | None
    decision: str
    reason: str | None
    contains_identifier: bool
    best: _Cand | None = None
    overlapping: list[_Cand] = field(default_factory=list)


@dataclass
class _Cand:
    domain: str
    transcript: str
    candidate: CandidateMemory
    type: str
    slot: str | None
    category: str | None
    decision: str
    reasons: list[str]
    labels: list[_Label] = field(default_factory=list)


def _overlap(a0: int, a1: int, b0: int, b1: int) -> int:
    return max(0, min(a1, b1) - max(a0, b0))


def _overlap_with(label: _Label) -> Callable[[_Cand], int]:
    return lambda c: _overlap(label.start, label.end, c.candidate.span.start, c.candidate.span.end)


# --------------------------------------------------------------------------- gateway prediction


def predict_decision(
    candidate: CandidateMemory,
    *,
    subject_id: str,
    session_id: str,
    policy: PolicyProfile,
    now: datetime = BENCH_NOW,
) -> tuple[str, str, str | None, str | None, list[str]]:
    """(decision, type, slot, category, reasons) of the pure gateway rules for this candidate, empty store."""
    write = MemoryWrite(
        subject_id=subject_id,
        type=candidate.type,
        category=candidate.category,
        slot=candidate.slot,
        content=candidate.content,
        value=candidate.value,
        source=Source(kind=candidate.source_kind, system="extractor", span=candidate.span),
        session_id=session_id,
        confidence=candidate.confidence,
        confidence_basis=candidate.confidence_basis[:500],
        extractor=candidate.extractor,
        extractor_version=candidate.extractor_version,
        flags=["untrusted_instruction"] if "untrusted_instruction" in candidate.flags else [],
    )
    try:
        _, classified = prepare(write, policy, now)
    except InvalidRequest as exc:
        return "invalid", candidate.type.value, candidate.slot, candidate.category, [str(exc)]
    if classified.final is not None:
        decision = classified.final
        reasons = classified.reasons
    else:
        outcome = resolve_conflict(classified, None)
        decision, reasons = outcome.decision, [*classified.reasons, *outcome.reasons]
    return decision.value, classified.type.value, classified.slot, classified.category, list(reasons)


def _gold_view(decision: str) -> str:
    """Gateway decisions in the vocabulary of the labels."""
    return {Decision.REJECTED.value: "not_stored", Decision.DUPLICATE.value: "not_stored"}.get(
        decision, decision
    )


# --------------------------------------------------------------------------- metrics


def _prf(tp_pred: int, n_pred: int, tp_gold: int, n_gold: int) -> dict[str, Any]:
    p = tp_pred / n_pred if n_pred else None
    r = tp_gold / n_gold if n_gold else None
    f1 = (
        2 * p * r / (p + r)
        if p is not None and r is not None and (p + r) > 0
        else (0.0 if p == 0 or r == 0 else None)
    )
    return {
        "precision": _round(p),
        "recall": _round(r),
        "f1": _round(f1),
        "predicted": n_pred,
        "gold": n_gold,
        "tp_predicted": tp_pred,
        "tp_gold": tp_gold,
    }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _ratio(num: int, den: int) -> dict[str, Any]:
    return {"value": _round(num / den) if den else None, "correct": num, "total": den}


def _metrics(labels: list[_Label], cands: list[_Cand], summaries: list[CandidateMemory]) -> dict[str, Any]:
    admitted = [c for c in cands if c.decision == Decision.ADMITTED.value]

    def type_ok(c: _Cand, lab: _Label) -> bool:
        return lab.type == c.type

    adm_type = sum(any(lab.decision == "admitted" and type_ok(c, lab) for lab in c.labels) for c in admitted)
    adm_slot = sum(
        any(lab.decision == "admitted" and type_ok(c, lab) and lab.slot == c.slot for lab in c.labels)
        for c in admitted
    )

    prefs = [lab for lab in labels if lab.type == "preference"]
    pref_type = sum(
        any(c.type == "preference" and c.decision == "admitted" for c in lab.overlapping) for lab in prefs
    )
    pref_slot = sum(
        any(
            c.type == "preference" and c.decision == "admitted" and c.slot == lab.slot
            for c in lab.overlapping
        )
        for lab in prefs
    )
    comm = [lab for lab in labels if lab.category == "CONTRACT_COMMERCIAL"]
    comm_ext = sum(any(c.category == "CONTRACT_COMMERCIAL" for c in lab.overlapping) for lab in comm)
    comm_pending = sum(
        any(c.category == "CONTRACT_COMMERCIAL" and c.decision == "pending_approval" for c in lab.overlapping)
        for lab in comm
    )
    comm_slot = sum(
        any(c.category == "CONTRACT_COMMERCIAL" and c.slot == lab.slot for c in lab.overlapping)
        for lab in comm
    )

    types = sorted({lab.type for lab in labels if lab.type != NONE} | {c.type for c in cands})
    per_type: dict[str, Any] = {}
    for t in types:
        pred = [c for c in cands if c.type == t]
        gold = [lab for lab in labels if lab.type == t]
        entry = _prf(
            sum(any(lab.type == t for lab in c.labels) for c in pred),
            len(pred),
            sum(any(c.type == t for c in lab.overlapping) for lab in gold),
            len(gold),
        )
        if t in ("fact", "preference"):
            entry["type_slot"] = _prf(
                sum(any(lab.type == t and lab.slot == c.slot for lab in c.labels) for c in pred),
                len(pred),
                sum(any(c.type == t and c.slot == lab.slot for c in lab.overlapping) for lab in gold),
                len(gold),
            )
        per_type[t] = entry

    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for lab in labels:
        predicted = _gold_view(lab.best.decision) if lab.best else "not_stored"
        confusion[lab.decision][predicted] += 1
    per_decision: dict[str, Any] = {}
    predicted_names = sorted({p for row in confusion.values() for p in row} | set(GOLD_DECISIONS))
    for d in predicted_names:
        tp = confusion[d][d] if d in confusion else 0
        n_pred = sum(row[d] for row in confusion.values())
        n_gold = sum(confusion[d].values()) if d in confusion else 0
        per_decision[d] = _prf(tp, n_pred, tp, n_gold)
    cand_decisions = Counter(c.decision for c in cands)

    texts = [
        c.candidate.content + " " + json.dumps(c.candidate.value) + " " + c.candidate.confidence_basis
        for c in cands
    ]
    texts += [s.content + " " + json.dumps(s.value) for s in summaries]
    unmasked = sum(1 for t in texts if find_identifiers(t))

    return {
        "labels": len(labels),
        "candidates": len(cands),
        "summaries": len(summaries),
        "admitted_precision": {
            "type_level": _ratio(adm_type, len(admitted)),
            "type_slot_level": _ratio(adm_slot, len(admitted)),
        },
        "preference_recall": {
            "type_level": _ratio(pref_type, len(prefs)),
            "type_slot_level": _ratio(pref_slot, len(prefs)),
        },
        "commercial_recall": {
            "extracted": _ratio(comm_ext, len(comm)),
            "pending_approval": _ratio(comm_pending, len(comm)),
            "slot_level": _ratio(comm_slot, len(comm)),
        },
        "per_type": per_type,
        "per_decision": per_decision,
        "confusion_gold_to_predicted": {g: dict(sorted(row.items())) for g, row in sorted(confusion.items())},
        "candidate_decisions": dict(sorted(cand_decisions.items())),
        "unmasked_identifiers": unmasked,
    }


# --------------------------------------------------------------------------- runner


def _load(path: str | Path) -> Iterable[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{n}: not valid JSON: {exc}") from exc


def _subject(transcript_id: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._:@-]", "-", transcript_id) or "subject"
    return cleaned if cleaned[0].isalnum() else "s" + cleaned


def run_extraction_bench(
    path: str | Path,
    extractor: Extractor | None = None,
    policy: str | PolicyProfile = "crm",
    *,
    examples: int = 0,
) -> dict[str, Any]:
    """Run `extractor` (default: the offline RulesExtractor) over a labelled JSONL file and score it."""
    if extractor is None:
        from agent_memory.adapters.extractors.rules import RulesExtractor

        extractor = RulesExtractor()
    prof = profile(policy) if isinstance(policy, str) else policy

    all_labels: list[_Label] = []
    all_cands: list[_Cand] = []
    summaries: dict[str, list[CandidateMemory]] = defaultdict(list)
    extract_seconds = 0.0
    n_transcripts = 0
    per_domain_count: Counter[str] = Counter()
    identifiers_in_input = 0
    invalid = 0

    for record in _load(path):
        n_transcripts += 1
        tid = str(record.get("id", f"t{n_transcripts}"))
        domain = str(record.get("domain") or "unknown")
        per_domain_count[domain] += 1
        raw_turns = record["turns"]
        masked_texts = [mask_identifiers(t["text"]).text for t in raw_turns]
        identifiers_in_input += sum(len(find_identifiers(t["text"])) for t in raw_turns)
        transcript = Transcript(
            session_id=tid,
            subject_id=_subject(tid),
            channel=record.get("channel"),
            occurred_at=BENCH_NOW,
            turns=[
                Turn(speaker=Speaker(t["speaker"]), text=m)
                for t, m in zip(raw_turns, masked_texts, strict=True)
            ],
        )
        t0 = time.perf_counter()
        result = extractor.extract(transcript)
        extract_seconds += time.perf_counter() - t0

        mappers = [_offset_mapper(t["text"], m) for t, m in zip(raw_turns, masked_texts, strict=True)]
        labels: list[_Label] = []
        for lab in record.get("labels", []):
            raw = raw_turns[lab["turn"]]["text"]
            start = raw.find(lab["quote"])
            if start < 0:
                raise ValueError(f"{tid}: quote not found in turn {lab['turn']}: {lab['quote']!r}")
            mapper = mappers[lab["turn"]]
            ltype = lab.get("type") or (INSTRUCTION if lab.get("reason") == "prompt_injection" else NONE)
            labels.append(
                _Label(
                    domain,
                    tid,
                    lab["turn"],
                    mapper(start),
                    mapper(start + len(lab["quote"]), True),
                    lab["quote"],
                    ltype,
                    lab.get("category"),
                    lab.get("slot"),
                    lab["decision"],
                    lab.get("reason"),
                    bool(lab.get("contains_identifier")),
                )
            )
        for c in result.candidates:
            decision, ctype, cslot, ccat, reasons = predict_decision(
                c, subject_id=transcript.subject_id, session_id=tid, policy=prof
            )
            invalid += decision == "invalid"
            if "untrusted_instruction" in c.flags:
                ctype = INSTRUCTION
            cand = _Cand(domain, tid, c, ctype, cslot, ccat, decision, reasons)
            for lab in labels:
                if lab.turn == c.span.turn and _overlap(lab.start, lab.end, c.span.start, c.span.end) > 0:
                    cand.labels.append(lab)
                    lab.overlapping.append(cand)
            all_cands.append(cand)
        for lab in labels:
            if lab.overlapping:
                lab.best = max(lab.overlapping, key=_overlap_with(lab))
        all_labels.extend(labels)
        if result.summary is not None:
            summaries[domain].append(result.summary)

    report: dict[str, Any] = {
        "config": {
            "path": str(path),
            "extractor": {"name": extractor.name, "version": extractor.version},
            "policy": prof.name,
            "transcripts": n_transcripts,
            "transcripts_by_domain": dict(sorted(per_domain_count.items())),
            "alignment": "span overlap in the same turn (label spans mapped to the masked turn)",
            "gateway": "admission_steps.prepare (sanitize, screen, classify), resolve_conflict(active=None)",
        },
        "overall": _metrics(all_labels, all_cands, [s for v in summaries.values() for s in v]),
        "by_domain": {
            d: _metrics(
                [lab for lab in all_labels if lab.domain == d],
                [c for c in all_cands if c.domain == d],
                summaries.get(d, []),
            )
            for d in sorted(per_domain_count)
        },
        "identifiers_in_input": identifiers_in_input,
        "invalid_candidates": invalid,
        "sessions_per_second": round(n_transcripts / extract_seconds, 1) if extract_seconds else None,
    }
    o = report["overall"]
    report["targets"] = {
        "admitted_precision_type_level": _target(o["admitted_precision"]["type_level"]["value"], 0.9),
        "admitted_precision_type_slot_level": _target(
            o["admitted_precision"]["type_slot_level"]["value"], 0.9
        ),
        "preference_recall": _target(o["preference_recall"]["type_level"]["value"], 0.7),
        "commercial_recall_extracted": _target(o["commercial_recall"]["extracted"]["value"], 0.7),
        "commercial_recall_pending_approval": _target(
            o["commercial_recall"]["pending_approval"]["value"], 0.7
        ),
        "unmasked_identifiers": {
            "value": o["unmasked_identifiers"],
            "target": 0,
            "met": o["unmasked_identifiers"] == 0,
        },
    }
    if examples:
        report["examples"] = _examples(all_labels, all_cands, examples)
    return report


def _target(value: float | None, target: float) -> dict[str, Any]:
    return {"value": value, "target": target, "met": value is not None and value >= target}


def _examples(labels: list[_Label], cands: list[_Cand], n: int) -> dict[str, list[dict[str, Any]]]:
    wrong_admits = []
    for c in cands:
        if c.decision == "admitted" and not any(
            lab.decision == "admitted" and lab.type == c.type for lab in c.labels
        ):
            gold = c.labels[0] if c.labels else None
            wrong_admits.append(
                {
                    "transcript": c.transcript,
                    "turn": c.candidate.span.turn,
                    "content": c.candidate.content,
                    "predicted": f"{c.type}/{c.slot}",
                    "gold": f"{gold.type}/{gold.slot}/{gold.decision}/{gold.reason}" if gold else None,
                }
            )
    slot_mismatch = [
        {
            "transcript": c.transcript,
            "content": c.candidate.content,
            "predicted": c.slot,
            "gold": [lab.slot for lab in c.labels if lab.type == c.type],
        }
        for c in cands
        if c.decision == "admitted"
        and c.slot
        and any(lab.type == c.type and lab.decision == "admitted" for lab in c.labels)
        and not any(lab.slot == c.slot for lab in c.labels)
    ]
    missed = [
        {
            "transcript": lab.transcript,
            "turn": lab.turn,
            "quote": lab.quote,
            "gold": f"{lab.type}/{lab.slot}/{lab.decision}",
            "predicted": f"{lab.best.type}/{lab.best.slot}/{lab.best.decision}"
            if lab.best
            else "not proposed",
        }
        for lab in labels
        if lab.decision != "not_stored"
        and not (lab.best and lab.best.type == lab.type and _gold_view(lab.best.decision) == lab.decision)
    ]
    return {"wrong_admits": wrong_admits[:n], "slot_mismatches": slot_mismatch[:n], "missed": missed[:n]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(EXTRACTION_DATA))
    parser.add_argument("--policy", default="crm")
    parser.add_argument("--examples", type=int, default=0)
    args = parser.parse_args(argv)
    report = run_extraction_bench(args.path, policy=args.policy, examples=args.examples)
    json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
