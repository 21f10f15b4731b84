from __future__ import annotations

from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Text -> L2-normalised vectors of a fixed dimension."""

    name: str
    dimension: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Shape (len(texts), dimension), float32, rows of unit length."""
        ...


class EmbeddingUnavailable(Exception):
    """The embedder failed; the write path stores the record and indexes it later."""
