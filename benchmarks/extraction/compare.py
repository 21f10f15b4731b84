"""The rules and the learned extractor side by side, on in-sample, cross-domain and held-out splits.

    .venv/bin/python benchmarks/extraction/compare.py            # table on stdout
    .venv/bin/python benchmarks/extraction/compare.py --json     # the full report

Splits (every file in the `labelled_transcripts.jsonl` format):

- `hand_labelled`: `labelled_transcripts.jsonl`, written by hand; in-sample for
  both (the rules were written against it, the head is trained on it too).
- `generated_in_sample`: `train.jsonl`, the learned head's generated training data.
- `cross_domain:<d>`: a head trained on the other two domains only (of both
  training files), tested on domain `<d>` of `train.jsonl` and of the
  hand-labelled file; the rules stay in-sample on the hand-labelled part.
- `heldout`: `heldout.jsonl`, written by a different process than `train.jsonl`.

Each candidate's decision is the write gateway's pure rules (`prepare`, then
`resolve_conflict` against an empty store); candidates align to labels by
character overlap in the same turn. Metrics:

- `recall`: labels that should be remembered (decision other than
  `not_stored`) whose best-overlapping candidate has the gold type and gets the
  gold decision;
- `junk_admitted`: small-talk labels (small talk, greetings, thanks, venting,
  pleasantries, acknowledgements, sign-offs) overlapped by an admitted candidate,
  as a share of them;
- `commercial_held`: CONTRACT_COMMERCIAL labels held `pending_approval`;
- `admitted_precision`: admitted candidates overlapping an admitted label of the
  same type;
- per gold type (recall) and per domain; `ece` of the learned head's
  statement labels (15 bins) on the split's gold statements.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from train import CachedEmbedder, expected_calibration_error, fit_head, load_statements  # noqa: E402

from agent_memory.adapters.extractors.learned import ExtractorHead, LearnedExtractor  # noqa: E402
from agent_memory.adapters.extractors.rules import RulesExtractor  # noqa: E402
from agent_memory.domain.admission import resolve_conflict  # noqa: E402
from agent_memory.domain.errors import InvalidRequest  # noqa: E402
from agent_memory.domain.extraction import CandidateMemory, Speaker, Transcript, Turn  # noqa: E402
from agent_memory.domain.policy import profile  # noqa: E402
from agent_memory.domain.records import MemoryWrite, Source  # noqa: E402
from agent_memory.domain.sanitize import mask_identifiers  # noqa: E402
from agent_memory.ports.extractor import Extractor  # noqa: E402
from agent_memory.services.write_gateway import prepare  # noqa: E402

NOW = datetime(2025, 1, 1, tzinfo=UTC)
SMALL_TALK = {"small_talk", "greeting", "thanks", "venting", "pleasantry", "acknowledgement", "sign_off"}
TARGETS = {"recall": 0.85, "junk_admitted": 0.05, "commercial_held": 1.0, "admitted_precision": 0.95}
FILES = {
    "hand_labelled": HERE / "labelled_transcripts.jsonl",
    "train": HERE / "train.jsonl",
    "heldout": HERE / "heldout.jsonl",
}


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def decision_of(c: CandidateMemory, session_id: str) -> str:
    """The write gateway's decision for one candidate against an empty store."""
    write = MemoryWrite(
        subject_id="bench-subject",
        type=c.type,
        category=c.category,
        slot=c.slot,
        content=c.content,
        value=c.value,
        source=Source(kind=c.source_kind, system="extractor", span=c.span),
        session_id=session_id,
        confidence=c.confidence,
        confidence_basis=c.confidence_basis[:500],
        extractor=c.extractor,
        extractor_version=c.extractor_version,
        flags=["untrusted_instruction"] if "untrusted_instruction" in c.flags else [],
    )
    try:
        _, classified = prepare(write, profile("crm"), NOW)
    except InvalidRequest:
        return "invalid"
    if classified.final is not None:
        return str(classified.final.value)
    return str(resolve_conflict(classified, None).decision.value)


def _gold_type(lab: dict[str, Any]) -> str:
    if lab.get("reason") == "prompt_injection":
        return "instruction"
    return str(lab.get("type") or "none")


def score(records: list[dict[str, Any]], extractor: Extractor) -> dict[str, Any]:
    """Run `extractor` over labelled transcripts; the four headline figures, per type and per domain."""
    rows: list[dict[str, Any]] = []  # one per label
    admitted: list[dict[str, Any]] = []  # one per admitted candidate
    for record in records:
        masked = [mask_identifiers(t["text"]).text for t in record["turns"]]
        transcript = Transcript(
            session_id=record["id"],
            subject_id="bench-subject",
            channel=record.get("channel"),
            occurred_at=NOW,
            turns=[
                Turn(speaker=Speaker(t["speaker"]), text=m)
                for t, m in zip(record["turns"], masked, strict=True)
            ],
        )
        result = extractor.extract(transcript)
        cands = []
        for c in result.candidates:
            ctype = "instruction" if "untrusted_instruction" in c.flags else c.type.value
            cands.append((c, ctype, decision_of(c, record["id"])))
        spans = []
        for lab in record["labels"]:
            text = masked[lab["turn"]]
            quote = mask_identifiers(lab["quote"]).text
            start = text.find(quote)
            spans.append((lab, start, start + len(quote) if start >= 0 else -1))
        for lab, s0, s1 in spans:
            over = [
                (min(s1, c.span.end) - max(s0, c.span.start), c, t, d)
                for c, t, d in cands
                if c.span.turn == lab["turn"] and min(s1, c.span.end) > max(s0, c.span.start)
            ]
            best = max(over, key=lambda o: o[0]) if over else None
            rows.append(
                {
                    "domain": record["domain"],
                    "type": _gold_type(lab),
                    "category": lab.get("category"),
                    "decision": lab["decision"],
                    "reason": lab.get("reason"),
                    "pred_type": best[2] if best else None,
                    "pred_decision": best[3] if best else "not_stored",
                    "admitted_overlap": any(o[3] == "admitted" for o in over),
                }
            )
        for c, ctype, d in cands:
            if d != "admitted":
                continue
            ok = any(
                lab["turn"] == c.span.turn
                and min(s1, c.span.end) > max(s0, c.span.start)
                and lab["decision"] == "admitted"
                and _gold_type(lab) == ctype
                for lab, s0, s1 in spans
            )
            admitted.append({"domain": record["domain"], "ok": ok})
    return _figures(rows, admitted)


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _figures(
    rows: list[dict[str, Any]], admitted: list[dict[str, Any]], by_domain: bool = True
) -> dict[str, Any]:
    remember = [r for r in rows if r["decision"] != "not_stored"]
    hit = [r for r in remember if r["pred_type"] == r["type"] and r["pred_decision"] == r["decision"]]
    talk = [r for r in rows if r["decision"] == "not_stored" and r["reason"] in SMALL_TALK]
    commercial = [r for r in rows if r["category"] == "CONTRACT_COMMERCIAL"]
    out: dict[str, Any] = {
        "recall": _ratio(len(hit), len(remember)),
        "junk_admitted": _ratio(sum(r["admitted_overlap"] for r in talk), len(talk)),
        "commercial_held": _ratio(
            sum(r["pred_decision"] == "pending_approval" for r in commercial), len(commercial)
        ),
        "admitted_precision": _ratio(sum(a["ok"] for a in admitted), len(admitted)),
        "counts": {
            "remember": len(remember),
            "small_talk": len(talk),
            "commercial": len(commercial),
            "admitted": len(admitted),
        },
    }
    per_type: dict[str, Any] = {}
    for t in sorted({r["type"] for r in remember}):
        of_type = [r for r in remember if r["type"] == t]
        per_type[t] = {"recall": _ratio(sum(r in hit for r in of_type), len(of_type)), "n": len(of_type)}
    out["per_type"] = per_type
    if by_domain:
        out["per_domain"] = {
            d: _figures(
                [r for r in rows if r["domain"] == d], [a for a in admitted if a["domain"] == d], False
            )
            for d in sorted({r["domain"] for r in rows})
        }
    return out


def ece_of(head: ExtractorHead, embedder: Any, path: Path, domain: str | None = None) -> float:
    """ECE of the head's statement labels (speaker rules applied) on a file's gold statements."""
    rows = [r for r in load_statements(path) if domain is None or r["domain"] == domain]
    extractor = LearnedExtractor(embedder, head=head)
    got = extractor.classify_statements([r["text"] for r in rows], [r["speaker"] for r in rows])
    conf = np.array([p for _, p in got])
    correct = np.array([label == r["label"] for (label, _), r in zip(got, rows, strict=True)])
    return expected_calibration_error(conf, correct)


def run() -> dict[str, Any]:
    embedder = CachedEmbedder()
    head = ExtractorHead.load()
    rules = RulesExtractor()
    learned = LearnedExtractor(embedder, head=head)
    data = {name: load(path) for name, path in FILES.items()}
    report: dict[str, Any] = {"splits": {}}

    def both(name: str, records: list[dict[str, Any]], model: LearnedExtractor, ece: float | None) -> None:
        report["splits"][name] = {
            "transcripts": len(records),
            "rules": score(records, rules),
            "learned": {**score(records, model), "ece": ece},
        }

    both("hand_labelled", data["hand_labelled"], learned, ece_of(head, embedder, FILES["hand_labelled"]))
    both("generated_in_sample", data["train"], learned, ece_of(head, embedder, FILES["train"]))
    train_rows = load_statements(FILES["train"]) + load_statements(FILES["hand_labelled"])
    for domain in ("crm", "support", "wealth"):
        trained = fit_head([r for r in train_rows if r["domain"] != domain], embedder, seed=0)
        held_head = ExtractorHead(trained["weights"])
        model = LearnedExtractor(embedder, head=held_head)
        both(
            f"cross_domain:{domain}:generated",
            [r for r in data["train"] if r["domain"] == domain],
            model,
            ece_of(held_head, embedder, FILES["train"], domain),
        )
        both(
            f"cross_domain:{domain}:hand_labelled",
            [r for r in data["hand_labelled"] if r["domain"] == domain],
            model,
            ece_of(held_head, embedder, FILES["hand_labelled"], domain),
        )
    both("heldout", data["heldout"], learned, ece_of(head, embedder, FILES["heldout"]))
    embedder.save()
    report["targets_cross_domain"] = TARGETS
    return report


def table(report: dict[str, Any]) -> str:
    lines = [
        "| split | extractor | recall | junk admitted | commercial held | admitted precision | ECE |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, split in report["splits"].items():
        for which in ("rules", "learned"):
            f = split[which]
            lines.append(
                f"| {name} | {which} | {f['recall']} | {f['junk_admitted']} | {f['commercial_held']} | "
                f"{f['admitted_precision']} | {f.get('ece', '')} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run()
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
