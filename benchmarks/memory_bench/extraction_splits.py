"""The extraction benchmark's splits: the rules and the learned extractor side by side.

`memory bench extraction` runs it (and `benchmarks/extraction/train.py` trains the committed
head with the same code). Splits, every file in the `labelled_transcripts.jsonl` format:

- `hand_labelled`: `labelled_transcripts.jsonl`, written by hand; in-sample for
  both (the rules were written against it, the head is trained on it too).
- `generated_in_sample`: `train.jsonl`, the learned head's generated training data.
- `written`: `written_<domain>.jsonl`, conversations written by other authors than
  the templates and the hand-labelled set, for breadth of wording; the head
  trains on them, the rules were never written against them.
- `cross_domain:<d>:generated|hand_labelled|written`: a head trained on the other
  two domains only (of every training file), tested on domain `<d>` of each
  file; the rules stay in-sample on the hand-labelled part.
- `heldout`: `heldout.jsonl`, written by a different process than the training
  files and never trained on.

The learned extractor is the default when it does at least as well as the rules on
every headline figure of the splits that neither was fitted to: `cross_domain:written`
and `heldout` (`learned_beats_rules_unseen`).

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
- `review_precision`: candidates sent to a reviewer (pending approval or contested) that
  overlap a real commercial term or contradiction (a label held for review, or of the
  commercial category): the share of the review queue worth a reviewer's time;
- per gold type (recall) and per domain; `ece`: the learned head's expected
  calibration error (15 bins) on the split's gold statements.

Training needs scikit-learn (a development dependency); the layer does not.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.adapters.extractors.learned import ExtractorHead, LearnedExtractor, head_features
from agent_memory.adapters.extractors.ngrams import NgramFeatures
from agent_memory.adapters.extractors.rules import RulesExtractor
from agent_memory.domain.admission import resolve_conflict
from agent_memory.domain.errors import InvalidRequest
from agent_memory.domain.extraction import CandidateMemory, ExtractionResult, Speaker, Transcript, Turn
from agent_memory.domain.policy import profile
from agent_memory.domain.records import MemoryWrite, Source
from agent_memory.domain.sanitize import mask_identifiers
from agent_memory.ports.extractor import ExtractionFailed, Extractor
from agent_memory.services.admission_steps import prepare
from memory_bench import DATA

HERE = DATA / "extraction"
LAYER_DATA = (
    Path(__file__).resolve().parents[1].parent / "layers/core/python/agent_memory/adapters/extractors/data"
)
SPEAKER_SCALE = 1.0
# The statement's words beside its vector: at most this many unigrams and bigrams, scaled by this
# (0 trains a head on the vectors alone).
NGRAM_FEATURES = 6000
NGRAM_SCALE = 1.0
HIDDEN = 128
NOW = datetime(2025, 1, 1, tzinfo=UTC)
SMALL_TALK = {"small_talk", "greeting", "thanks", "venting", "pleasantry", "acknowledgement", "sign_off"}
TARGETS = {
    "recall": 0.85,
    "junk_admitted": 0.05,
    "commercial_held": 1.0,
    "admitted_precision": 0.95,
    "review_precision": 0.9,
}
# The decisions that put a candidate in front of a reviewer.
REVIEW_DECISIONS = frozenset({"pending_approval", "contested"})
FILES = {
    "hand_labelled": HERE / "labelled_transcripts.jsonl",
    "train": HERE / "train.jsonl",
    "heldout": HERE / "heldout.jsonl",
}
# Conversations written for breadth by other authors, one file per domain (training data).
WRITTEN = sorted(HERE.glob("written_*.jsonl"))
# Conversations in business settings none of the above covers (insurance, telecom, logistics,
# healthcare administration, banking, HR and payroll, marketplaces, public sector; the setting is in
# each id), written by other independent authors: never in the shipped head's training, so every
# extractor meets them unseen.
UNSEEN_SETTINGS = sorted(HERE.glob("settings_*.jsonl"))
# What the committed head is trained on.
TRAINING_FILES = [HERE / "train.jsonl", HERE / "labelled_transcripts.jsonl", *WRITTEN]


def load(path: Path | list[Path]) -> list[dict[str, Any]]:
    paths = path if isinstance(path, list) else [path]
    return [
        json.loads(line) for p in paths for line in p.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


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
    return _figures(*score_rows(records, extractor))


def score_rows(
    records: list[dict[str, Any]], extractor: Extractor
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(one row per label, one per admitted candidate, one per candidate sent to review) of
    `extractor` over labelled transcripts."""
    rows: list[dict[str, Any]] = []  # one per label
    admitted: list[dict[str, Any]] = []  # one per admitted candidate
    reviewed: list[dict[str, Any]] = []  # one per candidate sent to a reviewer
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
        for c, _, d in cands:
            if d not in REVIEW_DECISIONS:
                continue
            # Sent to a reviewer: worth their time when it is a real commercial term or a real
            # contradiction, that is, a label held for review or of the commercial category.
            worth = any(
                lab["turn"] == c.span.turn
                and min(s1, c.span.end) > max(s0, c.span.start)
                and (lab["decision"] in REVIEW_DECISIONS or lab.get("category") == "CONTRACT_COMMERCIAL")
                for lab, s0, s1 in spans
            )
            reviewed.append({"domain": record["domain"], "ok": worth})
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
    return rows, admitted, reviewed


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _figures(
    rows: list[dict[str, Any]],
    admitted: list[dict[str, Any]],
    reviewed: list[dict[str, Any]],
    by_domain: bool = True,
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
        "review_precision": _ratio(sum(r["ok"] for r in reviewed), len(reviewed)),
        "counts": {
            "remember": len(remember),
            "small_talk": len(talk),
            "commercial": len(commercial),
            "admitted": len(admitted),
            "sent_to_review": len(reviewed),
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
                [r for r in rows if r["domain"] == d],
                [a for a in admitted if a["domain"] == d],
                [r for r in reviewed if r["domain"] == d],
                False,
            )
            for d in sorted({r["domain"] for r in rows})
        }
    return out


def ece_of(head: ExtractorHead, embedder: Any, path: Path | list[Path], domain: str | None = None) -> float:
    """ECE of the head's statement labels (speaker rules applied) on the files' gold statements."""
    paths = path if isinstance(path, list) else [path]
    rows = [r for p in paths for r in load_statements(p) if domain is None or r["domain"] == domain]
    extractor = LearnedExtractor(embedder, head=head)
    got = extractor.classify_statements([r["text"] for r in rows], [r["speaker"] for r in rows])
    conf = np.array([p for _, p in got])
    correct = np.array([label == r["label"] for (label, _), r in zip(got, rows, strict=True)])
    return expected_calibration_error(conf, correct)


def run(*, seed: int = 0) -> dict[str, Any]:
    """Both extractors on every split; the cross-domain heads are trained here (scikit-learn)."""
    embedder = CachedEmbedder()
    head = ExtractorHead.load()
    rules = RulesExtractor()
    learned = LearnedExtractor(embedder, head=head)
    data = {name: load(path) for name, path in FILES.items()}
    data["written"] = load(WRITTEN)
    splits: dict[str, Any] = {}
    pooled: dict[str, dict[str, tuple[list[Any], list[Any], list[Any]]]] = {}

    def both(name: str, records: list[dict[str, Any]], model: LearnedExtractor, ece: float | None) -> None:
        r_rows, l_rows = score_rows(records, rules), score_rows(records, model)
        splits[name] = {
            "transcripts": len(records),
            "rules": _figures(*r_rows),
            "learned": {**_figures(*l_rows), "ece": ece},
        }
        if name.startswith("cross_domain:"):
            key = "cross_domain:" + name.rsplit(":", 1)[1]
            acc = pooled.setdefault(key, {"rules": ([], [], []), "learned": ([], [], [])})
            for mine, theirs in zip(acc["rules"], r_rows, strict=True):
                mine += theirs
            for mine, theirs in zip(acc["learned"], l_rows, strict=True):
                mine += theirs

    both("hand_labelled", data["hand_labelled"], learned, ece_of(head, embedder, FILES["hand_labelled"]))
    both("generated_in_sample", data["train"], learned, ece_of(head, embedder, FILES["train"]))
    if data["written"]:
        both("written_in_sample", data["written"], learned, ece_of(head, embedder, WRITTEN))
    train_rows = [row for path in TRAINING_FILES for row in load_statements(path)]
    parts = {"train": "generated", "hand_labelled": "hand_labelled", "written": "written"}
    for domain in ("crm", "support", "wealth"):
        trained = fit_head([r for r in train_rows if r["domain"] != domain], embedder, seed=seed)
        held_head = ExtractorHead(trained["weights"])
        model = LearnedExtractor(embedder, head=held_head)
        for part, split in parts.items():
            records = [r for r in data[part] if r["domain"] == domain]
            if records:
                files = WRITTEN if part == "written" else FILES[part]
                both(
                    f"cross_domain:{domain}:{split}",
                    records,
                    model,
                    ece_of(held_head, embedder, files, domain),
                )
    both("heldout", data["heldout"], learned, ece_of(head, embedder, FILES["heldout"]))
    if UNSEEN_SETTINGS:
        both("unseen_settings", load(UNSEEN_SETTINGS), learned, ece_of(head, embedder, UNSEEN_SETTINGS))
    embedder.save()
    for key, acc in pooled.items():
        splits[key] = {
            "transcripts": sum(
                splits[n]["transcripts"]
                for n in splits
                if n.endswith(key.split(":")[1]) and n.count(":") == 2
            ),
            "rules": _figures(*acc["rules"]),
            "learned": _figures(*acc["learned"]),
        }
    return {
        "splits": splits,
        "targets_cross_domain": TARGETS,
        "learned_beats_rules_unseen": _beats(splits),
        "extractors": {
            "rules": {"name": rules.name, "version": rules.version},
            "learned": {
                "name": learned.name,
                "version": learned.version,
                "min_confidence": learned.min_confidence,
            },
        },
    }


class CountingFailures:
    """An extractor whose rejected sessions (malformed, partial or refused model output) are counted
    and score as sessions that yielded nothing, so one bad answer does not end the run."""

    def __init__(self, inner: Extractor) -> None:
        self.inner = inner
        self.name = inner.name
        self.version = inner.version
        self.failures: dict[str, int] = {}

    def extract(self, transcript: Transcript) -> ExtractionResult:
        try:
            return self.inner.extract(transcript)
        except ExtractionFailed as exc:
            reason = str(exc)
            self.failures[reason] = self.failures.get(reason, 0) + 1
            return ExtractionResult()


def run_llm(
    llm: Extractor, files: dict[str, Path] | None = None, embedder: CachedEmbedder | None = None
) -> dict[str, Any]:
    """The LLM extractor beside the rules and the learned head on the hand-labelled and held-out
    files (every transcript is one request, or more when long). Nothing is trained here."""
    files = files or {"hand_labelled": FILES["hand_labelled"], "heldout": FILES["heldout"]}
    counting = CountingFailures(llm)
    embedder = embedder or CachedEmbedder()
    extractors: dict[str, Extractor] = {
        "rules": RulesExtractor(),
        "learned": LearnedExtractor(embedder),
        "llm": counting,
    }
    splits: dict[str, Any] = {}
    for name, path in files.items():
        records = load(path)
        before = sum(counting.failures.values())
        splits[name] = {"transcripts": len(records)}
        for which, extractor in extractors.items():
            splits[name][which] = _figures(*score_rows(records, extractor))
        splits[name]["llm"]["failed_transcripts"] = sum(counting.failures.values()) - before
    embedder.save()
    return {
        "splits": splits,
        "llm_failures": counting.failures,
        "extractors": {which: {"name": e.name, "version": e.version} for which, e in extractors.items()},
    }


def _beats(splits: dict[str, Any]) -> bool:
    """The learned extractor is at least as good as the rules on every headline figure of the splits
    neither was fitted to: written wording of an unseen domain, and the held-out set (the condition
    for it being the default)."""
    for key in ("cross_domain:written", "heldout"):
        if key not in splits:
            return False
        r, lrn = splits[key]["rules"], splits[key]["learned"]
        for metric in ("recall", "commercial_held", "admitted_precision"):
            if (lrn[metric] or 0.0) < (r[metric] or 0.0):
                return False
        if (lrn["junk_admitted"] or 0.0) > (r["junk_admitted"] or 0.0):
            return False
    return True


def table(report: dict[str, Any]) -> str:
    lines = [
        "| split | extractor | recall | junk admitted | commercial held | admitted precision | review precision | ECE |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    order = [
        "hand_labelled",
        "generated_in_sample",
        "written_in_sample",
        "cross_domain:generated",
        "cross_domain:hand_labelled",
        "cross_domain:written",
        "heldout",
    ]
    names = [n for n in order if n in report["splits"]] + [n for n in report["splits"] if n not in order]
    for name in names:
        split = report["splits"][name]
        for which in (w for w in ("rules", "learned", "llm") if w in split):
            f = split[which]
            lines.append(
                f"| {name} | {which} | {f['recall']} | {f['junk_admitted']} | {f['commercial_held']} | "
                f"{f['admitted_precision']} | {f.get('review_precision', '')} | {f.get('ece', '')} |"
            )
    return "\n".join(lines)


# --------------------------------------------------------------------------- training


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


def fit_ngrams(texts: list[str]) -> NgramFeatures:
    """The word n-gram vocabulary and idf, fitted by scikit-learn with the settings the run time
    reproduces (adapters/extractors/ngrams.py)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, max_features=NGRAM_FEATURES)
    vectorizer.fit(texts)
    vocabulary = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.__getitem__)
    return NgramFeatures(vocabulary, vectorizer.idf_)


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

    ngrams = fit_ngrams([r["text"] for r in fit_rows]) if NGRAM_SCALE > 0 else None

    def xy(part: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
        texts = [r["text"] for r in part]
        x = head_features(
            embedder.embed(texts), [r["speaker"] for r in part], texts, SPEAKER_SCALE, ngrams, NGRAM_SCALE
        )
        return x, np.array([index[r["label"]] for r in part])

    x_fit, y_fit = xy(fit_rows)
    x_val, y_val = xy(val_rows)
    model = MLPClassifier(
        hidden_layer_sizes=(HIDDEN,), alpha=1e-3, max_iter=400, random_state=seed, learning_rate_init=2e-3
    )
    model.fit(x_fit, y_fit)
    w1, w2 = model.coefs_
    b1, b2 = model.intercepts_
    # The weights for every class, even one absent from the fit share (its logits stay very low).
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
    if ngrams is not None:
        weights["ngram_vocabulary"] = np.array(ngrams.vocabulary)
        weights["ngram_idf"] = ngrams.idf.astype(np.float32)
        weights["ngram_scale"] = np.array(NGRAM_SCALE, dtype=np.float32)
    return {"weights": weights, "report": report}


def train_and_export(data: list[str | Path], out: Path, *, seed: int = 0) -> dict[str, Any]:
    """Train the head on `data` and write it as a compressed `.npz`; the report names its sha256."""
    embedder = CachedEmbedder()
    rows = [r for path in data for r in load_statements(path)]
    trained = fit_head(rows, embedder, seed=seed)
    embedder.save()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as fh:
        np.savez_compressed(fh, **trained["weights"])
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    return {**trained["report"], "out": str(out), "bytes": out.stat().st_size, "sha256": digest}
