"""The release gate on quality: `make eval` (`python -m memory_bench.eval_gate`).

Two benchmarks on their small fixed sets, each figure against a threshold; exit 1 when any
figure is on the wrong side of its threshold. Every figure is deterministic (fixed data, the local
ONNX embedder, fixed clocks); nothing is timed.

- Extraction: both offline extractors (the rules and the learned head with its committed
  weights) on the hand-labelled transcripts, the held-out set and the written conversations
  (`benchmarks/extraction/`; the head is trained on the first and the last),
  scored as `memory bench extraction` scores them: recall of what should be remembered,
  small talk admitted, commercial statements held for approval, admitted precision.
- Retrieval: `benchmarks/retrieval/quality.jsonl` written through the real write gateway into an
  embedded PostgreSQL and asked through the real broker (as `memory bench longmemeval` does):
  turn and session recall@5, nDCG@5 and, for knowledge updates, the newer value above the older.

The thresholds are what the shipped code reached when they were set, less a small margin
(docs/evaluation.md); a change that moves a figure past one fails CI. When a deliberate change
(retrained weights, a better rule) moves the figures, set the thresholds again from a run of this
gate, and say so in the commit.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

from memory_bench import DATA

RETRIEVAL_DATA = DATA / "retrieval" / "quality.jsonl"

# (at least | at most, threshold) per figure. "min" figures must reach the threshold, "max" ones
# must not exceed it. Commercial holds keep no margin where every statement is held today.
EXTRACTION_THRESHOLDS: dict[str, dict[str, dict[str, tuple[str, float]]]] = {
    "rules": {
        "hand_labelled": {
            "recall": ("min", 0.97),
            "junk_admitted": ("max", 0.02),
            "commercial_held": ("min", 1.0),
            "admitted_precision": ("min", 0.98),
        },
        "heldout": {
            "recall": ("min", 0.18),
            "junk_admitted": ("max", 0.14),
            "commercial_held": ("min", 0.16),
            "admitted_precision": ("min", 0.59),
        },
        "written": {
            "recall": ("min", 0.52),
            "junk_admitted": ("max", 0.05),
            "commercial_held": ("min", 0.36),
            "admitted_precision": ("min", 0.79),
        },
    },
    "learned": {
        "hand_labelled": {
            "recall": ("min", 0.94),
            "junk_admitted": ("max", 0.02),
            "commercial_held": ("min", 1.0),
            "admitted_precision": ("min", 0.97),
        },
        "heldout": {
            "recall": ("min", 0.71),
            "junk_admitted": ("max", 0.10),
            "commercial_held": ("min", 0.97),
            "admitted_precision": ("min", 0.92),
        },
        "written": {
            "recall": ("min", 0.89),
            "junk_admitted": ("max", 0.04),
            "commercial_held": ("min", 1.0),
            "admitted_precision": ("min", 0.93),
        },
    },
}
RETRIEVAL_THRESHOLDS: dict[str, tuple[str, float]] = {
    "turn_recall_all_at_5": ("min", 0.92),
    "session_recall_all_at_5": ("min", 0.92),
    "turn_ndcg_any_at_5": ("min", 0.90),
    "ku_ordering": ("min", 0.5),
}


def _check(name: str, value: float | None, rule: tuple[str, float]) -> dict[str, Any]:
    direction, threshold = rule
    if value is None:
        ok = False
    elif direction == "min":
        ok = value >= threshold
    else:
        ok = value <= threshold
    return {
        "check": name,
        "value": value,
        "rule": f"{'>=' if direction == 'min' else '<='} {threshold}",
        "ok": ok,
    }


def extraction_checks() -> list[dict[str, Any]]:
    """Both offline extractors on the hand-labelled and held-out files, against their thresholds."""
    from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder
    from agent_memory.adapters.extractors.learned import LearnedExtractor
    from agent_memory.adapters.extractors.rules import RulesExtractor
    from memory_bench.extraction_splits import FILES, WRITTEN, load, score

    builders: dict[str, Any] = {
        "rules": RulesExtractor,
        "learned": lambda: LearnedExtractor(MiniLMOnnxEmbedder(threads=1)),
    }
    checks = []
    for which, splits in EXTRACTION_THRESHOLDS.items():
        extractor = builders[which]()
        for split, rules in splits.items():
            figures = score(load(WRITTEN if split == "written" else FILES[split]), extractor)
            for metric, rule in rules.items():
                checks.append(_check(f"extraction {which} {split} {metric}", figures[metric], rule))
    return checks


def retrieval_checks(data: Path = RETRIEVAL_DATA) -> list[dict[str, Any]]:
    """The fixed retrieval set through the write gateway and the broker, against its thresholds."""
    from agent_memory.observability import logger
    from memory_bench.longmemeval import run

    logger.setLevel(logging.WARNING)  # one decision line per write would bury the checks
    with tempfile.TemporaryDirectory(prefix="memory-eval-") as data_dir:
        report = run(str(data), data_dir=data_dir)
    return [
        _check(f"retrieval {metric}", report.get(metric), rule)
        for metric, rule in RETRIEVAL_THRESHOLDS.items()
    ]


def default_extractor() -> str:
    from agent_memory.config import Settings

    return str(Settings.model_fields["extractor"].default)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m memory_bench.eval_gate", description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=["extraction", "retrieval"], help="run one of the two benchmarks")
    p.add_argument("--json", help="write every check here as well")
    a = p.parse_args(argv)
    checks: list[dict[str, Any]] = []
    if a.only in (None, "extraction"):
        checks += extraction_checks()
    if a.only in (None, "retrieval"):
        checks += retrieval_checks()
    print(f"default extractor: {default_extractor()}")
    width = max(len(c["check"]) for c in checks)
    for c in checks:
        print(f"{'ok  ' if c['ok'] else 'FAIL'}  {c['check']:<{width}}  {c['value']}  (needs {c['rule']})")
    failed = sum(not c["ok"] for c in checks)
    if a.json:
        Path(a.json).write_text(json.dumps(checks, indent=2) + "\n")
    print(f"eval: {len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
