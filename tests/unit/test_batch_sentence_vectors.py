"""Sentence vectors on the batched write path: a batch's record and sentence texts are embedded
in one call, a memory that is one sentence (or shorter than the split threshold) gets no sentence
vectors (its record vector stands for it), and each stored sentence vector is that sentence's own."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from agent_memory.domain import sentences
from agent_memory.domain.enums import Decision, Role
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.domain.sentences import split_sentences
from agent_memory.services.policies import PolicyRegistry
from agent_memory.services.write_gateway import WriteGateway
from fakes.memory_store import MemoryStore

TENANT = "batch-embed"
AGENT = Principal(sub="agent-1", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
ONE_SENTENCE = "The customer asked whether the March invoice can go to the new billing address"
LONG = (
    "We finally moved the quarterly business review to the second week of March after two reschedules. "
    "Dana wants the renewal quote to include forty additional seats for the support team in Lisbon. "
    "Also, please send every invoice to the new billing address on Harbour Street from now on, "
    "and copy the finance mailbox on each one so nothing gets lost between departments again."
)


class Recording:
    """The real embedder, with every call's texts kept."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.dimension = inner, inner.name, inner.dimension
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed(texts)


def episode(content: str) -> MemoryWrite:
    return MemoryWrite.model_validate(
        {
            "subject_id": "S-1",
            "type": "episode",
            "content": content,
            "source": {"kind": "customer_confirmed"},
            "effective_at": datetime(2026, 9, 1, tzinfo=UTC),
        }
    )


def test_given_one_sentence_or_a_short_text_when_split_then_no_sentence_equals_the_whole_text():
    assert split_sentences(ONE_SENTENCE) == []
    assert split_sentences("Short one. Another short one. And a third!") == []  # pieces join: one chunk
    pieces = split_sentences(LONG)
    assert len(pieces) >= 2 and LONG not in pieces
    assert len(LONG) >= sentences.MIN_SPLIT_CHARS


def test_given_a_split_threshold_when_a_text_is_shorter_then_it_has_no_sentences(monkeypatch):
    # Given a threshold just above the long text's length
    monkeypatch.setattr(sentences, "MIN_SPLIT_CHARS", len(LONG) + 1)
    # Then that text is not split, and at its own length it is
    assert split_sentences(LONG) == []
    monkeypatch.setattr(sentences, "MIN_SPLIT_CHARS", len(LONG))
    assert len(split_sentences(LONG)) >= 2


@pytest.fixture
def recording(embedder: Any) -> Recording:
    return Recording(embedder)


def test_given_a_batch_when_written_then_one_embedder_call_and_sentence_vectors_only_for_the_long_memory(
    recording, embedder
):
    # Given a batch of a one-sentence memory, a long memory and another one-sentence memory
    store = MemoryStore()
    gateway = WriteGateway(store, recording, PolicyRegistry(store, "crm"))
    texts = [ONE_SENTENCE, LONG, "Dana prefers email to phone calls for anything about billing"]
    # When written as one batch
    results = gateway.write_many(AGENT, [episode(t) for t in texts])
    # Then all three were admitted after one embedder call holding each record and the long one's sentences
    assert [r.decision for r in results] == [Decision.ADMITTED] * 3
    expected_sentences = split_sentences(LONG)
    assert recording.calls == [[texts[0], texts[1], *expected_sentences, texts[2]]]
    # And only the long memory has sentence vectors, each the sentence's own vector
    stored = store._states[TENANT].sentences
    assert set(stored) == {results[1].memory.id}
    alone = np.stack([embedder.embed([s])[0] for s in expected_sentences])
    np.testing.assert_allclose(stored[results[1].memory.id], alone, atol=1e-5)
