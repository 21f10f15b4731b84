"""The offline embedder embeds each distinct text once per call and keeps recent texts' vectors:
what it returns is what the model computes for each text alone."""

from __future__ import annotations

import numpy as np
import pytest

from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder

pytestmark = pytest.mark.integration

TEXTS = [
    "Customer moved the QBR to March",
    "Prefers email, not phone",
    "Renewal call went well; they want forty more seats and a new invoice address",
]


@pytest.fixture(scope="module")
def small_cache() -> MiniLMOnnxEmbedder:
    return MiniLMOnnxEmbedder(cache_texts=2)


def test_given_repeated_texts_in_one_call_when_embedded_then_each_runs_once_and_matches_it_alone(small_cache):
    # Given a call holding the same text three times among others
    texts = [TEXTS[0], TEXTS[2], TEXTS[0], TEXTS[1], TEXTS[0]]
    before = small_cache.misses
    # When it is embedded
    vectors = small_cache.embed(texts)
    # Then the model ran once per distinct text, and every row is that text's own vector
    assert small_cache.misses - before == 3
    alone = np.stack([MiniLMOnnxEmbedder(cache_texts=0).embed([t])[0] for t in texts])
    assert vectors.shape == (5, 384)
    assert np.all(np.sum(vectors * alone, axis=1) > 0.9999)
    assert np.array_equal(vectors[0], vectors[2]) and np.array_equal(vectors[0], vectors[4])


def test_given_a_text_embedded_before_when_embedded_again_then_it_comes_from_the_cache_until_evicted(
    small_cache,
):
    # Given a text just embedded
    first = small_cache.embed([TEXTS[1]])[0]
    hits = small_cache.hits
    # When it is embedded again, then it is a hit and the same vector
    assert np.array_equal(small_cache.embed([TEXTS[1]])[0], first)
    assert small_cache.hits == hits + 1
    # And once two other texts came after it (the cache holds two), it runs through the model again
    small_cache.embed([TEXTS[0]])
    small_cache.embed([TEXTS[2]])
    misses = small_cache.misses
    again = small_cache.embed([TEXTS[1]])[0]
    assert small_cache.misses == misses + 1
    assert float(again @ first) > 0.9999


def test_given_no_cache_when_the_same_text_comes_twice_then_both_run_through_the_model():
    embedder = MiniLMOnnxEmbedder(cache_texts=0)
    embedder.embed([TEXTS[0]])
    embedder.embed([TEXTS[0]])
    assert (embedder.hits, embedder.misses) == (0, 2)
