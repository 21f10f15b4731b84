"""The learned half of injection screening: a linear model over hashed character n-grams.

The patterns (`screening_patterns`) name the wordings someone thought of; this model scores the
rest. It reads the same reading forms the patterns read (`screening._reading_forms`: invisible
characters dropped, look-alikes and fullwidth folded, leetspeak and spaced letters joined back,
base64 read decoded), takes the character n-grams of one to five characters of all of them, plus a
its words and pairs of words, and a few signals of how the text is built (a URL with a query string, a template placeholder, a
markdown image), hashes each into one of `BUCKETS` columns, and adds up those columns' weights: a
logistic regression, computed with numpy alone. A text whose score reaches the trained threshold
is flagged `classifier`.

The weights (`data/screening-classifier.npz`, float16, no pickles) are trained offline by
`benchmarks/screening/train.py` (`make train-screening`) on the development split of the
screening set and the written training set, never on a held-out file; the decision threshold
comes with them, chosen by cross-validation for a low false-positive rate. The file is pinned by
its sha256 (`WEIGHTS_SHA256`), checked when it is loaded (on the first screening, not on import):
a file that does not match refuses to load.
"""

from __future__ import annotations

import functools
import hashlib
import io
import itertools
import math
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from agent_memory.domain.errors import ConfigurationError

WEIGHTS_FILE = "screening-classifier.npz"
WEIGHTS_SHA256 = "b0103da6b9c471394e736ece0444771567fff20c7bd313be1cd09baee5821b48"
BUCKETS_BITS = 18
BUCKETS = 1 << BUCKETS_BITS
MAX_N = 5
SIGNAL = "classifier"

# How a text is built, beside what it says: each present one is one more hashed feature.
_STRUCTURE = {
    "url_query": re.compile(r"https?://\S*\?\S*="),
    "url_template": re.compile(r"https?://\S*(?:\{|\$\{|%7b|<)"),
    "template": re.compile(r"\{\{|\}\}|\$\{[^}]*\}|\{[a-z_]{3,}\}"),
    "markdown_image": re.compile(r"!\[[^\]]*\]\("),
    "markdown_link": re.compile(r"\]\(https?://"),
    "role_tag": re.compile(
        r"</?\s*(?:system|assistant|user|im_start|im_end|instructions?|tool)\b|\[/?inst\]|<\|"
    ),
    "json_call": re.compile(r"\{\s*\"(?:tool|function|name|action|arguments|cmd)\""),
}
_SPACES = re.compile(r"\s+")
# A run a model could read as base64 (as `screening._BASE64_RUN`, in folded case). Its letters say
# nothing: screening reads the decoded text as a form of its own, and the model scores that. Left in,
# the run's n-grams would teach the model that any long id is an attack.
_ENCODED_RUN = re.compile(r"(?<![\w+/=-])[a-z0-9+/_-]{24,}={0,2}", re.IGNORECASE)
_WORD = re.compile(r"\w+")
_MAX_WORDS = 400  # per form: the word features of a long text stop there (its n-grams do not)
# Rolling hash and final mix (64-bit, wrapping): fixed, so training and run time hash alike.
_BASE = np.uint64(1_000_003)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(64 - BUCKETS_BITS)
_N_SALT = [np.uint64((0xD6E8FEB86659FD93 * n) & 0xFFFFFFFFFFFFFFFF) for n in range(MAX_N + 1)]


def _ngram_buckets(form: str) -> np.ndarray:
    """The buckets of every character n-gram (1..MAX_N) of one form, word edges marked by spaces."""
    text = " " + _SPACES.sub(" ", form).strip() + " "
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    out: list[np.ndarray] = []
    rolling: np.ndarray = np.zeros(0, dtype=np.uint64)
    for n in range(1, min(MAX_N, len(codes)) + 1):
        rolling = codes.copy() if n == 1 else rolling[:-1] * _BASE + codes[n - 1 :]
        out.append(((rolling ^ _N_SALT[n]) * _MIX) >> _SHIFT)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.uint64)


@functools.lru_cache(maxsize=1 << 16)  # words recur from text to text: hash each once
def _token_bucket(token: str) -> int:
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> (64 - BUCKETS_BITS)


_STRUCTURE_BUCKETS = {name: _token_bucket("\x00structure:" + name) for name in _STRUCTURE}


def _word_buckets(form: str) -> list[int]:
    """Each word and each pair of neighbouring words of one form, hashed."""
    words = _WORD.findall(form)[:_MAX_WORDS]
    tokens = [f"\x00w:{w}" for w in words] + [f"\x00b:{a} {b}" for a, b in itertools.pairwise(words)]
    return [_token_bucket(t) for t in tokens]


def feature_buckets(forms: Sequence[str]) -> np.ndarray:
    """The distinct feature columns of a text read in `forms` (its reading forms, folded first)."""
    joined = "\n".join(forms)
    forms = [_ENCODED_RUN.sub(" ", form) for form in forms]
    parts = [_ngram_buckets(form) for form in forms]
    marks = [b for name, b in _STRUCTURE_BUCKETS.items() if _STRUCTURE[name].search(joined)]
    for form in forms:
        marks += _word_buckets(form)
    if marks:
        parts.append(np.array(marks, dtype=np.uint64))
    return np.unique(np.concatenate(parts)).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


class InstructionClassifier:
    """Weights per bucket, a bias and a threshold: score = bias + sum(weights[buckets]) / sqrt(n)."""

    def __init__(self, weights: np.ndarray, bias: float, threshold: float) -> None:
        if weights.shape != (BUCKETS,):
            raise ConfigurationError(f"screening classifier weights must have {BUCKETS} columns")
        self.weights = weights.astype(np.float32)
        self.bias = float(bias)
        self.threshold = float(threshold)

    @classmethod
    def load(cls, path: Path | None = None, *, sha256: str | None = WEIGHTS_SHA256) -> InstructionClassifier:
        """Load the committed weights (or `path`), refusing a file that does not match its pin."""
        if path is None:
            raw = (resources.files("agent_memory.domain") / "data" / WEIGHTS_FILE).read_bytes()
        else:
            raw = path.read_bytes()
        if sha256 is not None and hashlib.sha256(raw).hexdigest() != sha256:
            raise ConfigurationError(
                "screening classifier weights do not match their pinned sha256 (WEIGHTS_SHA256); "
                "retrain with `make train-screening` or restore the committed file"
            )
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as data:
                return cls(data["weights"], float(data["bias"]), float(data["threshold"]))
        except (ValueError, KeyError, OSError) as exc:
            raise ConfigurationError("screening classifier weights cannot be read") from exc

    def score(self, forms: Sequence[str]) -> float:
        """The logit that the text read in `forms` is an instruction to a model."""
        buckets = feature_buckets(forms)
        if not buckets.size:
            return self.bias
        return self.bias + float(self.weights[buckets].sum()) / math.sqrt(buckets.size)

    def flags(self, forms: Sequence[str]) -> bool:
        return self.score(forms) >= self.threshold


@functools.cache
def instruction_classifier() -> InstructionClassifier:
    """The committed classifier, loaded and checked on first use."""
    return InstructionClassifier.load()


def design_matrix(rows: Iterable[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR parts (data, indices, indptr) of the normalised features of many texts, for training."""
    data: list[np.ndarray] = []
    indices: list[np.ndarray] = []
    indptr = [0]
    for forms in rows:
        buckets = feature_buckets(forms)
        indices.append(buckets)
        data.append(np.full(buckets.size, 1.0 / math.sqrt(max(buckets.size, 1)), dtype=np.float32))
        indptr.append(indptr[-1] + buckets.size)
    return np.concatenate(data), np.concatenate(indices), np.array(indptr, dtype=np.int64)
