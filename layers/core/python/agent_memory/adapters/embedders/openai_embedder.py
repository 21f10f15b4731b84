"""Production embedder: any OpenAI-compatible embeddings endpoint (openai SDK)."""

from __future__ import annotations

import numpy as np

from agent_memory.ports.embedder import EmbeddingUnavailable


class OpenAIEmbedder:
    def __init__(
        self,
        *,
        model: str,
        dimensions: int,
        api_key: str | None,
        base_url: str | None = None,
        timeout_s: float = 10.0,
        max_retries: int = 2,
    ) -> None:
        from openai import OpenAI

        self.name = f"openai:{model}"
        self.model = model
        self.dimension = dimensions
        self.client = OpenAI(
            api_key=api_key or "unset", base_url=base_url, timeout=timeout_s, max_retries=max_retries
        )

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        from openai import OpenAIError

        try:
            resp = self.client.embeddings.create(model=self.model, input=texts, dimensions=self.dimension)
        except OpenAIError as exc:
            raise EmbeddingUnavailable(type(exc).__name__) from exc
        rows = sorted(resp.data, key=lambda d: d.index)
        out = np.array([r.embedding for r in rows], dtype=np.float32)
        if out.shape != (len(texts), self.dimension):
            raise EmbeddingUnavailable(
                f"embedding endpoint returned shape {out.shape}, expected {self.dimension}-d"
            )
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.clip(norms, 1e-12, None)
