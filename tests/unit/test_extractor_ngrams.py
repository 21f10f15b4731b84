"""The learned extractor's word n-gram features at run time (numpy) are scikit-learn's TF-IDF, which
training fits and the layer does not ship."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.adapters.extractors.learned import ExtractorHead
from agent_memory.adapters.extractors.ngrams import NgramFeatures, ngrams

sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")

CORPUS = [
    "I prefer email communication.",
    "From now on, send billing questions to finance@example.com, not to me.",
    "We run our email on Exchange Online.",
    "Our auditors insist the data stays in Canada!",
    "Ça va? Ravi in procurement signs off anything over 20k now.",
    "thanks!! that fixed it :)",
    "Would you knock 10% off if we signed for three years?",
    "I prefer email, honestly; email is easiest.",
]


def fitted(texts: list[str]) -> tuple[object, NgramFeatures]:
    vectorizer = sklearn_text.TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True)
    vectorizer.fit(texts)
    vocabulary = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.__getitem__)
    return vectorizer, NgramFeatures(vocabulary, vectorizer.idf_)


def test_the_run_time_features_are_scikit_learns() -> None:
    # Given a vocabulary fitted by scikit-learn and the same vocabulary at run time
    vectorizer, features = fitted(CORPUS)
    probe = [*CORPUS, "EMAIL email Email?", "", "nothing known here", "prefer email prefer email"]
    # When both weigh the same texts
    expected = vectorizer.transform(probe).toarray()
    got = features.transform(probe)
    # Then the numbers are the same
    np.testing.assert_allclose(got, expected, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab cdé,.'!\n1_"), max_size=40), min_size=1, max_size=8))
def test_any_text_gets_the_same_features(texts: list[str]) -> None:
    # Given a vocabulary fitted on the corpus and any texts of letters, accents, digits and punctuation
    vectorizer, features = fitted([*CORPUS, "ab cd ab", "dé ab_1"])
    # Then the run time's rows equal scikit-learn's
    np.testing.assert_allclose(features.transform(texts), vectorizer.transform(texts).toarray(), atol=1e-6)


def test_ngrams_are_unigrams_then_bigrams_of_two_letter_tokens() -> None:
    assert ngrams("I prefer E-mail") == ["prefer", "mail", "prefer mail"]


def test_a_vocabulary_and_idf_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="differ"):
        NgramFeatures(["a", "b"], np.ones(3))


def test_the_committed_head_reads_words() -> None:
    # Given the committed head
    head = ExtractorHead.load()
    # Then it was trained with word features, and they change its answer
    assert head.ngrams is not None and head.ngrams.dimension > 1000
    v = np.zeros((2, head.dimension), dtype=np.float32)
    p = head.probabilities(v, ["customer", "customer"], ["I prefer email", "we run email on Exchange"])
    assert not np.allclose(p[0], p[1])


def test_the_heads_forward_pass_is_the_dense_product() -> None:
    # Given the committed head and statements with and without known words
    head = ExtractorHead.load()
    texts = ["I prefer email", "zzqx", "Please send the invoices to finance, not to me.", ""]
    rng = np.random.default_rng(1)
    v = rng.normal(size=(len(texts), head.dimension)).astype(np.float32)
    speakers = ["customer", "agent", "customer", "system"]
    # When the probabilities are computed, and again by the plain dense product of every feature
    got = head.probabilities(v, speakers, texts)
    x = head.features(v, speakers, texts)
    logits = (np.maximum(x @ head.w1 + head.b1, 0.0) @ head.w2 + head.b2) / head.temperature
    expected = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    # Then they are the same
    np.testing.assert_allclose(got, expected, atol=1e-5)
