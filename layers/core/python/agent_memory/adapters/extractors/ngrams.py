"""Word n-gram TF-IDF features for the learned extractor's head, in numpy.

The sentence vectors say what a statement is about; the words say what it does. "I prefer email"
and "we run our email on Exchange" sit close together as vectors, but "prefer" is the difference
between a preference and a fact about the technical environment. The head therefore also reads
the statement's words and word pairs, weighted as scikit-learn's `TfidfVectorizer` weighs them with
the settings training uses (lower case, tokens of two or more word characters, unigrams and
bigrams, sublinear term frequency, the fitted inverse document frequencies, rows scaled to unit
length). Training fits the vocabulary with scikit-learn, which the layer does not ship; this module
computes the same numbers at run time (`tests/unit/test_extractor_ngrams.py` compares the two).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import pairwise

import numpy as np

# scikit-learn's default token pattern.
_TOKEN = re.compile(r"(?u)\b\w\w+\b")


def ngrams(text: str) -> list[str]:
    """The statement's unigrams and bigrams, as scikit-learn builds them for `ngram_range=(1, 2)`."""
    tokens = _TOKEN.findall(text.lower())
    return tokens + [f"{a} {b}" for a, b in pairwise(tokens)]


class NgramFeatures:
    """A fitted vocabulary and its inverse document frequencies: texts -> unit-length TF-IDF rows."""

    def __init__(self, vocabulary: list[str], idf: np.ndarray) -> None:
        if len(vocabulary) != len(idf):
            raise ValueError("the n-gram vocabulary and its idf weights differ in length")
        self.vocabulary = vocabulary
        self.index = {term: i for i, term in enumerate(vocabulary)}
        self.idf = np.asarray(idf, dtype=np.float64)

    @property
    def dimension(self) -> int:
        return len(self.vocabulary)

    def sparse(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """One text's row as (columns, unit-length weights): the few n-grams it holds."""
        counts = Counter(self.index[g] for g in ngrams(text) if g in self.index)
        columns = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        if not counts:
            return columns, np.zeros(0, dtype=np.float64)
        tf = np.array([1.0 + math.log(n) for n in counts.values()])
        weights = tf * self.idf[columns]
        return columns, weights / np.linalg.norm(weights)

    def transform(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            columns, weights = self.sparse(text)
            out[row, columns] = weights
        return out


__all__ = ["NgramFeatures", "ngrams"]
