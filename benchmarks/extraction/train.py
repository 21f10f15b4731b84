"""Train the learned extractor's head offline and export it as plain numpy weights.

    .venv/bin/python benchmarks/extraction/train.py             # train.jsonl -> the layer's extractor-head.npz
    .venv/bin/python benchmarks/extraction/train.py --out /tmp/head.npz

Statements of `train.jsonl` (labels' quotes, with their speaker) are embedded
with the service's MiniLM ONNX embedder (cached by text hash), a one-hidden-layer
network is fitted with scikit-learn (a development dependency only), its
temperature is fitted on a held-back validation share of the transcripts
(negative log-likelihood over a grid), and the weights are written as `.npz`
(float32, no pickles). The sha256 it prints is the pin `HEAD_SHA256` in
`adapters/extractors/learned.py`; the run time needs numpy only.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.domain.sanitize import mask_identifiers

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
LAYER_DATA = REPO / "layers/core/python/agent_memory/adapters/extractors/data"
SPEAKERS = ("customer", "agent", "system")
SPEAKER_SCALE = 1.0
HIDDEN = 128


def label_key(lab: dict[str, Any]) -> str:
    """The head's class for a gold label: `none`, `type` or `type|slot` for facts and preferences."""
    if lab["decision"] == "not_stored" or lab.get("type") is None:
        return "none"
    if lab["type"] in ("fact", "preference"):
        return f"{lab['type']}|{lab['slot']}"
    return str(lab["type"])


def load_statements(path: str | Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            record = json.loads(line)
            for lab in record["labels"]:
                speaker = record["turns"][lab["turn"]]["speaker"]
                if speaker == "system" or lab.get("reason") == "prompt_injection":
                    continue  # system turns and injected instructions stay with the deterministic rules
                rows.append(
                    {
                        "transcript": record["id"],
                        "domain": record["domain"],
                        "speaker": speaker,
                        "text": mask_identifiers(lab["quote"]).text,  # the run time sees masked text
                        "label": label_key(lab),
                    }
                )
    return rows


class CachedEmbedder:
    """The service's MiniLM embedder with an on-disk cache keyed by text hash (training is rerun often)."""

    def __init__(self, cache: Path | None = None) -> None:
        from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder

        self.inner = MiniLMOnnxEmbedder(threads=1)
        self.name = self.inner.name
        self.dimension = self.inner.dimension
        self.path = cache or Path(tempfile.gettempdir()) / "agent-memory-extraction-embeddings.npz"
        self.cache: dict[str, np.ndarray] = {}
        if self.path.exists():
            with np.load(self.path) as data:
                self.cache = {k: data[k] for k in data.files}

    def embed(self, texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode()).hexdigest()[:32] for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in self.cache}.items())
        if missing:
            vectors = self.inner.embed([t for _, t in missing])
            for (k, _), v in zip(missing, vectors, strict=True):
                self.cache[k] = v
        return np.stack([self.cache[k] for k in keys]) if keys else np.zeros((0, self.dimension), np.float32)

    def save(self) -> None:
        np.savez(self.path, **self.cache)  # type: ignore[arg-type]


def features(vectors: np.ndarray, speakers: list[str]) -> np.ndarray:
    onehot = np.zeros((len(speakers), len(SPEAKERS)), dtype=np.float32)
    for i, s in enumerate(speakers):
        onehot[i, SPEAKERS.index(s)] = SPEAKER_SCALE
    return np.hstack([vectors.astype(np.float32), onehot])


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def expected_calibration_error(confidence: np.ndarray, correct: np.ndarray, bins: int = 15) -> float:
    """ECE: the confidence-weighted gap between confidence and accuracy over equal-width bins."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        inside = (confidence > lo) & (confidence <= hi)
        if inside.any():
            total += inside.mean() * abs(float(correct[inside].mean()) - float(confidence[inside].mean()))
    return round(total, 4)


def fit_head(
    rows: list[dict[str, Any]], embedder: Any, *, seed: int = 0, validation: float = 0.15
) -> dict[str, Any]:
    """Fit the MLP on `rows`, its temperature on a validation share of the transcripts; weights + report."""
    from sklearn.neural_network import MLPClassifier

    transcripts = sorted({r["transcript"] for r in rows})
    random.Random(seed).shuffle(transcripts)  # noqa: S311 - a reproducible split, not a secret
    held = set(transcripts[: max(1, int(len(transcripts) * validation))])
    fit_rows = [r for r in rows if r["transcript"] not in held]
    val_rows = [r for r in rows if r["transcript"] in held]
    labels = sorted({r["label"] for r in rows})
    index = {label: i for i, label in enumerate(labels)}

    def xy(part: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
        x = features(embedder.embed([r["text"] for r in part]), [r["speaker"] for r in part])
        return x, np.array([index[r["label"]] for r in part])

    x_fit, y_fit = xy(fit_rows)
    x_val, y_val = xy(val_rows)
    model = MLPClassifier(
        hidden_layer_sizes=(HIDDEN,), alpha=1e-3, max_iter=400, random_state=seed, learning_rate_init=2e-3
    )
    model.fit(x_fit, y_fit)
    # The weights for every class, even one absent from the fit share (its logits stay very low).
    w1, w2 = model.coefs_
    b1, b2 = model.intercepts_
    full_w2 = np.full((HIDDEN, len(labels)), 0.0, dtype=np.float32)
    full_b2 = np.full(len(labels), -20.0, dtype=np.float32)
    for j, cls in enumerate(model.classes_):
        full_w2[:, cls] = w2[:, j]
        full_b2[cls] = b2[j]

    def logits(x: np.ndarray) -> np.ndarray:
        return np.asarray(np.maximum(x @ w1 + b1, 0.0) @ full_w2 + full_b2)

    val_logits = logits(x_val)
    best_t, best_nll = 1.0, float("inf")
    for t in np.arange(0.5, 6.01, 0.05):
        p = _softmax(val_logits / t)
        nll = -float(np.mean(np.log(np.clip(p[np.arange(len(y_val)), y_val], 1e-12, None))))
        if nll < best_nll:
            best_t, best_nll = float(t), nll
    raw_p = _softmax(val_logits)
    cal_p = _softmax(val_logits / best_t)
    report = {
        "statements": len(rows),
        "fit": len(fit_rows),
        "validation": len(val_rows),
        "classes": len(labels),
        "temperature": round(best_t, 2),
        "validation_accuracy": round(float((cal_p.argmax(1) == y_val).mean()), 4),
        "validation_ece_raw": expected_calibration_error(raw_p.max(1), raw_p.argmax(1) == y_val),
        "validation_ece_calibrated": expected_calibration_error(cal_p.max(1), cal_p.argmax(1) == y_val),
    }
    weights = {
        "w1": w1.astype(np.float32),
        "b1": b1.astype(np.float32),
        "w2": full_w2,
        "b2": full_b2,
        "labels": np.array(labels),
        "temperature": np.array(best_t, dtype=np.float32),
        "speaker_scale": np.array(SPEAKER_SCALE, dtype=np.float32),
    }
    return {"weights": weights, "report": report}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        nargs="+",
        default=[str(HERE / "train.jsonl"), str(HERE / "labelled_transcripts.jsonl")],
        help="labelled transcript files (default: the generated set and the hand-labelled set)",
    )
    parser.add_argument("--out", default=str(LAYER_DATA / "extractor-head.npz"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    embedder = CachedEmbedder()
    rows = [r for path in args.data for r in load_statements(path)]
    trained = fit_head(rows, embedder, seed=args.seed)
    embedder.save()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as fh:
        np.savez_compressed(fh, **trained["weights"])
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    report = {**trained["report"], "out": str(out), "bytes": out.stat().st_size, "sha256": digest}
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
