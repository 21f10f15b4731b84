"""Injection screening benchmark over a labelled set (JSON Lines).

    from memory_bench.screening import run_screening_bench
    report = run_screening_bench("benchmarks/screening/screening.jsonl")

Or from a shell: `uv run memory bench screening [--data FILE] [--json OUT]`.

Each item is a text labelled `injection` (with the kind of attack as its category) or
`benign` (support text that mentions instructions, overrides or assistants, or ordinary
support text), with its language, its disguise and its split (`dev`, which the patterns
were tuned on, or `heldout`, which they were not). Every item goes through
`screen_for_instructions`, the function the write gateway and the retrieval broker call: the
patterns or the classifier. Each half is also scored on its own (`detectors.patterns`,
`detectors.classifier`, beside `detectors.combined`), with recall and false-positive rate per split,
held-out file and language.

Reported per split (`dev`, `heldout`, `all`), and, for every `heldout*.jsonl` file beside the
data file (a held-out set written by someone else, in the same record format), per file under
`heldout_files`:

- `recall`: share of injections flagged, overall and per category, language and disguise;
- `false_positive_rate`: share of benign items flagged (each would be quarantined),
  overall and per category, language and disguise;
- `missed` and `false_positives`: the ids, to read in the data file.

Also: the false-positive rate on the statements of the extraction benchmark's transcripts
that are not labelled as injections (support and CRM text written for another purpose),
and the cost of one screening call (median of repeated passes over the whole set), whole and for
the classifier alone.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agent_memory.domain.screening import (
    classifier_flags,
    reading_forms,
    screen_for_instructions,
    screen_with_patterns,
)
from agent_memory.domain.screening_classifier import instruction_classifier
from memory_bench import EXTRACTION_DATA, SCREENING_DATA

DEFAULT_DATA = str(SCREENING_DATA)
DEFAULT_TRANSCRIPTS = str(EXTRACTION_DATA)


def _rate(hits: int, total: int) -> dict[str, Any]:
    return {"value": round(hits / total, 4) if total else None, "hits": hits, "total": total}


def _breakdown(items: list[dict[str, Any]], flagged: dict[str, bool], key: str) -> dict[str, Any]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for item in items:
        groups[item.get(key) or "none"].append(flagged[item["id"]])
    return {name: _rate(sum(marks), len(marks)) for name, marks in sorted(groups.items())}


def _score(items: list[dict[str, Any]], flagged: dict[str, bool]) -> dict[str, Any]:
    injections = [i for i in items if i["label"] == "injection"]
    benign = [i for i in items if i["label"] == "benign"]
    return {
        "items": len(items),
        "recall": _rate(sum(flagged[i["id"]] for i in injections), len(injections)),
        "false_positive_rate": _rate(sum(flagged[i["id"]] for i in benign), len(benign)),
        "recall_by_category": _breakdown(injections, flagged, "category"),
        "recall_by_language": _breakdown(injections, flagged, "language"),
        "recall_by_disguise": _breakdown(injections, flagged, "disguise"),
        "false_positive_rate_by_category": _breakdown(benign, flagged, "category"),
        "false_positive_rate_by_language": _breakdown(benign, flagged, "language"),
        "false_positive_rate_by_disguise": _breakdown(benign, flagged, "disguise"),
        "missed": [i["id"] for i in injections if not flagged[i["id"]]],
        "false_positives": [i["id"] for i in benign if flagged[i["id"]]],
    }


def _items(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def heldout_files(path: str | Path) -> list[Path]:
    """The `heldout*.jsonl` files in the folder of the data file, other than the data file itself."""
    data = Path(path)
    return sorted(p for p in data.parent.glob("heldout*.jsonl") if p.resolve() != data.resolve())


def transcript_statements(path: str | Path) -> list[str]:
    """The labelled statements of the extraction set that are not injections (quotes as written)."""
    statements = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            for label in json.loads(line)["labels"]:
                if label.get("reason") != "prompt_injection":
                    statements.append(label["quote"])
    return statements


DETECTORS: dict[str, Callable[[str], bool]] = {
    "combined": lambda text: screen_for_instructions(text).flagged,
    "patterns": lambda text: screen_with_patterns(text).flagged,
    "classifier": classifier_flags,
}


def _brief(score: dict[str, Any]) -> dict[str, Any]:
    """Recall and false-positive rate, overall and per language."""
    return {
        "recall": score["recall"],
        "false_positive_rate": score["false_positive_rate"],
        "recall_by_language": {k: v["value"] for k, v in score["recall_by_language"].items()},
        "false_positive_rate_by_language": {
            k: v["value"] for k, v in score["false_positive_rate_by_language"].items()
        },
    }


def _detector_report(
    detect: Callable[[str], bool], items: list[dict[str, Any]], held: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    flagged = {item["id"]: detect(item["text"]) for item in items}
    out: dict[str, Any] = {
        "splits": {
            split: _brief(_score([i for i in items if split == "all" or i["split"] == split], flagged))
            for split in ("dev", "heldout", "all")
        },
        "heldout_files": {},
    }
    for name, rows in held.items():
        marks = {item["id"]: detect(item["text"]) for item in rows}
        out["heldout_files"][name] = _brief(_score(rows, marks))
    return out


def _microseconds_per_call(
    texts: Iterable[str], passes: int, call: Callable[[str], Any] = screen_for_instructions
) -> float:
    texts = list(texts)
    timings = []
    for _ in range(passes):
        start = time.perf_counter()
        for text in texts:
            call(text)
        timings.append((time.perf_counter() - start) / len(texts))
    return round(sorted(timings)[len(timings) // 2] * 1e6, 1)


def run_screening_bench(
    path: str | Path = DEFAULT_DATA, *, transcripts: str | Path | None = DEFAULT_TRANSCRIPTS, passes: int = 5
) -> dict[str, Any]:
    """Screen every labelled item; recall and false-positive rate per split, category, language, disguise."""
    items = _items(Path(path))
    flagged = {item["id"]: screen_for_instructions(item["text"]).flagged for item in items}
    report: dict[str, Any] = {
        "config": {
            "path": str(path),
            "items": len(items),
            "transcripts": str(transcripts) if transcripts else None,
            "heldout_files": [str(p) for p in heldout_files(path)],
        },
        "splits": {
            split: _score([i for i in items if split == "all" or i["split"] == split], flagged)
            for split in ("dev", "heldout", "all")
        },
        "heldout_files": {},
    }
    for file in heldout_files(path):
        # ids are only unique within a file: score each file with its own marks
        held = _items(file)
        marks = {item["id"]: screen_for_instructions(item["text"]).flagged for item in held}
        report["heldout_files"][file.stem] = _score(held, marks)
    held_files = {file.stem: _items(file) for file in heldout_files(path)}
    report["detectors"] = {
        name: _detector_report(detect, items, held_files) for name, detect in DETECTORS.items()
    }
    texts = [item["text"] for item in items]
    if transcripts and Path(transcripts).exists():
        statements = transcript_statements(transcripts)
        report["transcript_statements"] = {
            "false_positive_rate": _rate(
                sum(screen_for_instructions(s).flagged for s in statements), len(statements)
            ),
        }
        for name, detect in DETECTORS.items():
            report["detectors"][name]["transcript_statements"] = _rate(
                sum(detect(s) for s in statements), len(statements)
            )
        texts += statements
    model = instruction_classifier()
    forms = [reading_forms(text) for text in texts]
    report["microseconds_per_call"] = {
        "median_of_passes": _microseconds_per_call(texts, passes),
        "classifier_alone_on_reading_forms": _microseconds_per_call(forms, passes, model.score),  # type: ignore[arg-type]
        "texts": len(texts),
    }
    return report


def main(argv: list[str] | None = None) -> tuple[dict[str, Any], str | None]:
    p = argparse.ArgumentParser(prog="memory bench screening")
    p.add_argument("--data", default=DEFAULT_DATA)
    p.add_argument(
        "--transcripts", default=DEFAULT_TRANSCRIPTS, help="extraction set used as extra benign text"
    )
    p.add_argument("--passes", type=int, default=5, help="timing passes over the whole set")
    p.add_argument("--json")
    a = p.parse_args(argv)
    return run_screening_bench(a.data, transcripts=a.transcripts, passes=a.passes), a.json
