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


def test_given_texts_of_very_different_lengths_when_embedded_by_length_then_same_vectors_as_in_given_order():
    # Given more texts than one mini-batch, short and long interleaved (the long ones past 128 tokens)
    embedder = MiniLMOnnxEmbedder(cache_texts=0)
    texts = [
        " ".join([TEXTS[i % 3]] * (1 + (i * 7) % 12)) if i % 2 else f"{TEXTS[i % 3]} #{i}" for i in range(70)
    ]
    lengths = [len(e.ids) for e in embedder.tokenizer.encode_batch(texts)]
    assert min(lengths) < 20 and max(lengths) > 128  # each text its own length: no padding by the tokenizer
    # When embedded in length-sorted mini-batches and in the given order
    by_length = embedder._run(texts)
    given_order = embedder._run(texts, by_length=False)
    # Then every row is the same vector, in the texts' order, and each equals the text embedded alone
    np.testing.assert_allclose(by_length, given_order, atol=1e-5)
    for i in (0, 1, 33, 69):
        np.testing.assert_allclose(by_length[i], embedder._run([texts[i]])[0], atol=1e-5)
    assert np.all(np.abs(np.linalg.norm(by_length, axis=1) - 1) < 1e-5)
