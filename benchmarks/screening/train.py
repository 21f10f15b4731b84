"""Train the screening classifier offline and export it as plain numpy weights.

    .venv/bin/python benchmarks/screening/train.py             # -> the layer's screening-classifier.npz
    .venv/bin/python benchmarks/screening/train.py --out /tmp/classifier.npz

Training data, and nothing else:

- the `dev` split of `screening.jsonl` (the held-out items of that file, and every `heldout*.jsonl`,
  are never read here);
- `train_written.jsonl`, injections and benign support text written for training, in 15 languages,
  each with one disguised copy (zero-width characters, look-alike letters, fullwidth, spaced letters,
  leetspeak, base64; picked from a fixed seed, as `build.py` does for the screening set);
- the customer turns of the extraction training transcripts (`benchmarks/extraction/train.jsonl`)
  that are not labelled as injections, as benign English.

Every text is read in the forms screening reads it in (`screening.reading_forms`) and turned into the
classifier's hashed n-gram features (`screening_classifier.feature_buckets`): the very code the service
runs. A logistic regression (scikit-learn, a development dependency only; L2, balanced classes) is
fitted; its regularisation and the decision threshold are chosen by five-fold cross-validation over
the training data (grouped, so that a disguised copy is in the fold of its original): the threshold is
the out-of-fold score that leaves `--target-fpr` of the benign texts flagged. The weights are written as
float16 in a compressed `.npz` (no pickles). Deterministic for a seed. The sha256 it prints is the pin
`WEIGHTS_SHA256` in `agent_memory/domain/screening_classifier.py`.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedGroupKFold

from agent_memory.domain.screening import reading_forms, screen_with_patterns
from agent_memory.domain.screening_classifier import BUCKETS, WEIGHTS_FILE, design_matrix

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEV = HERE / "screening.jsonl"
WRITTEN = HERE / "train_written.jsonl"
TRANSCRIPTS = ROOT / "benchmarks" / "extraction" / "train.jsonl"
OUT = ROOT / "layers" / "core" / "python" / "agent_memory" / "domain" / "data" / WEIGHTS_FILE
PROSE = {"override", "role_override", "ai_directive", "exfiltration", "authority", "reader_note"}
C_GRID = (30.0, 100.0, 300.0)

sys.path.insert(0, str(HERE))
import build  # noqa: E402  (the disguises of the screening set)


def dev_items() -> list[dict[str, Any]]:
    """The development split only: held-out lines are skipped before they are parsed into items."""
    items = []
    for line in DEV.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            if item.get("split") == "dev":
                items.append(item)
    return items


def written_items(rng: random.Random) -> list[dict[str, Any]]:
    """The written training items, each with one disguised copy."""
    items = []
    for line in WRITTEN.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        items.append(item)
        copy = dict(item)
        if item["label"] == "injection" and item["category"] in PROSE and rng.random() < 0.2:
            copy["text"] = base64.b64encode(item["text"].encode("utf-8")).decode("ascii")
            copy["disguise"] = "base64"
        else:
            choices = ["zero_width", "homoglyph", "fullwidth"]
            if item["label"] == "injection" and item["category"] in PROSE:
                choices += ["spaced", "leet", "homoglyph+zero_width"]
            if item["language"] in build.NON_LATIN:
                choices = [c for c in choices if c in ("zero_width", "fullwidth")]
            copy["disguise"] = rng.choice(choices)
            copy["text"] = build.DISGUISES[copy["disguise"]](item["text"], rng)
        copy["id"] = f"{item['id']}-{copy['disguise']}"
        items.append(copy)
    return items


def transcript_items(limit: int, rng: random.Random) -> list[dict[str, Any]]:
    """Customer turns of the extraction training transcripts that are not labelled injections."""
    texts = set()
    for line in TRANSCRIPTS.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        injected = {lab["turn"] for lab in record["labels"] if lab.get("reason") == "prompt_injection"}
        for k, turn in enumerate(record["turns"]):
            if turn["speaker"] == "customer" and k not in injected:
                texts.add(turn["text"])
    chosen = rng.sample(sorted(texts), min(limit, len(texts)))
    return [
        {"id": f"transcript-{k}", "text": t, "label": "benign", "category": "support", "language": "en"}
        for k, t in enumerate(chosen)
    ]


DISGUISES = ("zero_width", "homoglyph+zero_width", "homoglyph", "fullwidth", "spaced", "leet", "base64")


def group_of(item_id: str) -> str:
    """Disguised copies share their original's group (`en-override-3-leet` -> `en-override-3`)."""
    for disguise in DISGUISES:
        if item_id.endswith("-" + disguise):
            return item_id[: -len(disguise) - 1]
    return item_id


def threshold_at(scores: np.ndarray, labels: np.ndarray, target_fpr: float) -> float:
    """The lowest score threshold whose false-positive rate on the benign scores is at most the target."""
    benign = np.sort(scores[labels == 0])[::-1]
    allowed = int(np.floor(target_fpr * benign.size))
    # flagged: score >= threshold; allow `allowed` benign scores above it
    return float(np.nextafter(benign[allowed], np.inf)) if allowed < benign.size else float(benign.min())


def train_and_export(out: Path, *, seed: int, target_fpr: float, transcripts: int) -> dict[str, Any]:
    rng = random.Random(seed)  # noqa: S311 - a fixed seed for the disguises and the sample, not secrecy
    items = dev_items() + written_items(rng) + transcript_items(transcripts, rng)
    labels = np.array([item["label"] == "injection" for item in items], dtype=np.int64)
    data, indices, indptr = design_matrix(reading_forms(item["text"]) for item in items)
    x = csr_matrix((data, indices, indptr), shape=(len(items), BUCKETS))
    groups = np.array([group_of(item["id"]) for item in items])
    folds = list(StratifiedGroupKFold(n_splits=5, shuffle=True, random_state=seed).split(x, labels, groups))

    def fit(c: float, rows: np.ndarray) -> LogisticRegression:
        model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000, solver="liblinear")
        return model.fit(x[rows], labels[rows])

    cv: dict[float, dict[str, float]] = {}
    best_c, best_recall, best_scores = C_GRID[0], -1.0, np.zeros(0)
    for c in C_GRID:
        scores = np.zeros(len(items))
        for train_rows, test_rows in folds:
            scores[test_rows] = fit(c, train_rows).decision_function(x[test_rows])
        t = threshold_at(scores, labels, target_fpr)
        recall = float((scores[labels == 1] >= t).mean())
        cv[c] = {"recall": round(recall, 4), "fpr": round(float((scores[labels == 0] >= t).mean()), 4)}
        if recall > best_recall:
            best_c, best_recall, best_scores = c, recall, scores
    threshold = threshold_at(best_scores, labels, target_fpr)
    model = fit(best_c, np.arange(len(items)))
    weights = model.coef_[0].astype(np.float16)
    out.parent.mkdir(parents=True, exist_ok=True)
    buffer = out.with_suffix(".tmp.npz")
    # np.savez_compressed stamps no time into the archive members' data; the zip dates are fixed below.
    np.savez_compressed(
        buffer,
        weights=weights,
        bias=np.float32(model.intercept_[0]),
        threshold=np.float32(threshold),
    )
    _normalise_zip(buffer, out)
    raw = out.read_bytes()
    by_language: dict[str, dict[str, float]] = {}
    oof = best_scores >= threshold
    for language in sorted({item["language"] for item in items}):
        rows = np.array([item["language"] == language for item in items])
        inj, ben = rows & (labels == 1), rows & (labels == 0)
        by_language[language] = {
            "recall": round(float(oof[inj].mean()), 4) if inj.any() else None,
            "fpr": round(float(oof[ben].mean()), 4) if ben.any() else None,
            "injections": int(inj.sum()),
            "benign": int(ben.sum()),
        }
    # The patterns were never tuned on the written set: there, both halves meet text new to them.
    written = np.array([item["id"].startswith("w") for item in items])
    patterns = np.array(
        [
            screen_with_patterns(item["text"]).flagged if w else False
            for item, w in zip(items, written, strict=True)
        ]
    )
    fresh = {}
    for name, marks in (("patterns", patterns), ("classifier_out_of_fold", oof), ("either", patterns | oof)):
        fresh[name] = {
            "recall": round(float(marks[written & (labels == 1)].mean()), 4),
            "fpr": round(float(marks[written & (labels == 0)].mean()), 4),
        }
    return {
        "written_set": fresh,
        "out": str(out),
        "bytes": len(raw),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "items": len(items),
        "injections": int(labels.sum()),
        "benign": int((labels == 0).sum()),
        "sources": dict(Counter(_source(item["id"]) for item in items)),
        "c": best_c,
        "threshold": round(threshold, 4),
        "cross_validation": {str(c): v for c, v in cv.items()},
        "out_of_fold_by_language": by_language,
        "nonzero_weights": int(np.count_nonzero(weights)),
    }


def _source(item_id: str) -> str:
    if item_id.startswith("transcript-"):
        return "extraction_transcripts"
    return "train_written" if item_id.startswith("w") else "screening_dev"


def _normalise_zip(source: Path, out: Path) -> None:
    """Rewrite the archive with fixed member dates, so that the same weights give the same sha256."""
    import zipfile

    with zipfile.ZipFile(source) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2026, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(fixed, src.read(info.filename))
    source.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target-fpr", type=float, default=0.005)
    parser.add_argument("--transcripts", type=int, default=1500, help="benign customer turns to use")
    args = parser.parse_args(argv)
    report = train_and_export(
        Path(args.out), seed=args.seed, target_fpr=args.target_fpr, transcripts=args.transcripts
    )
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
