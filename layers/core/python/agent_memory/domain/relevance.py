"""Whether a memory is relevant to a query (POLICY.md, Retrieval; MC-RT-01: "select top-5
chunks passing cosine similarity cutoff >= 0.78").

A cosine means something else for every embedding model: 0.78 is the seed's floor for
text-embedding-3-small, and every other embedder's floor is calibrated on development data to do
what that floor does, keep the memories about the question and reject the rest
(`memory bench floor`, docs/benchmarks.md). The floors live in EMBEDDER_RELEVANCE, one row per
embedder, and nowhere else.

A memory is relevant when its similarity to the query reaches the floor, or when it shares a word
with the query and its similarity reaches the embedder's keyword bar (lower than the floor): a word
in common lifts a memory that is already close to the question, never one that only shares a word
("prefers dark mode" for a question about the contact channel the customer prefers). A memory
without a vector yet, or any memory when the query could not be embedded, has no similarity to
check: a word in common is then all there is, and it is enough.

Pure: the broker and the selection ask it; the embedder's name picks the row.
"""

from __future__ import annotations

from dataclasses import dataclass

# Why a memory was not relevant enough to serve (the retrieve response's `relevance_excluded`).
BELOW_SIMILARITY_FLOOR = "below_similarity_floor"  # below the floor, no word in common with the query
KEYWORD_ONLY_BELOW_BAR = "keyword_only_below_bar"  # a word in common, but below the keyword bar
NO_VECTOR_NO_SHARED_WORD = "no_vector_no_shared_word"  # nothing to compare: no vector, no word in common


@dataclass(frozen=True)
class RelevanceBar:
    """What one embedder's similarities must reach for a memory to be relevant."""

    floor: float  # relevant on similarity alone
    keyword_bar: float  # relevant with a word in common with the query (never above the floor)

    def __post_init__(self) -> None:
        if self.keyword_bar > self.floor:
            raise ValueError("the keyword bar is at most the floor: a shared word can only lower it")

    def exclusion(self, similarity: float | None, shares_a_word: bool) -> str | None:
        """Why a memory with this similarity (None: no vector to compare) is not relevant, or None."""
        if similarity is None:
            return None if shares_a_word else NO_VECTOR_NO_SHARED_WORD
        if similarity >= self.floor:
            return None
        if not shares_a_word:
            return BELOW_SIMILARITY_FLOOR
        return None if similarity >= self.keyword_bar else KEYWORD_ONLY_BELOW_BAR


# One row per embedder, by its name (`Embedder.name`). text-embedding-3-small's floor is the seed's
# own 0.78; it cannot be calibrated offline, so its keyword bar is the floor itself: no shared word
# lowers the seed's cutoff. MiniLM's row is calibrated on the development half of LongMemEval-S
# (`memory bench floor`; the rule and its figures are in docs/benchmarks.md).
EMBEDDER_RELEVANCE: dict[str, RelevanceBar] = {
    "openai:text-embedding-3-small": RelevanceBar(floor=0.78, keyword_bar=0.78),
    "local-minilm-onnx": RelevanceBar(floor=0.29, keyword_bar=0.2),
}
# An embedder without a row of its own (an OpenAI model other than the seed's, a test double) is
# held to the offline model's: calibrate it with `memory bench floor` and add its row.
UNCALIBRATED = EMBEDDER_RELEVANCE["local-minilm-onnx"]


def relevance_bar(embedder_name: str) -> RelevanceBar:
    """The relevance bar calibrated for the embedder of this name."""
    return EMBEDDER_RELEVANCE.get(embedder_name, UNCALIBRATED)
