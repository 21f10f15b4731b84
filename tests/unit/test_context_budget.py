"""Context assembly: the budget is never exceeded, the lowest-priority lines are dropped first,
and skipping per-line tokenisation while an upper bound fits changes nothing."""

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.domain import context
from agent_memory.domain.context import ContextLine, assemble
from agent_memory.domain.tokens import count_tokens

SECTIONS = ["verified_facts", "relevant", "supporting", "unverified"]

line_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=120).map(
    lambda t: "- " + context.escape_text(t)
)
lines = st.lists(st.tuples(st.sampled_from(SECTIONS), line_text), max_size=12).map(
    lambda xs: [ContextLine(f"mem_{i}", section, text) for i, (section, text) in enumerate(xs)]
)


def assemble_counting_every_line(subject, pinned, ranked, max_tokens):
    """The reference: every line tokenised (the upper bound disabled)."""
    original = context.upper_bound_tokens
    context.upper_bound_tokens = lambda text: 10**9
    try:
        return assemble(subject, pinned, ranked, max_tokens)
    finally:
        context.upper_bound_tokens = original


@settings(max_examples=150, deadline=None)
@given(ranked=lines, max_tokens=st.integers(min_value=40, max_value=900))
def test_the_fast_path_takes_exactly_the_lines_exact_counting_takes(ranked, max_tokens):
    # Given any lines and any budget that fits the delimiters
    # When assembled with and without the upper-bound shortcut
    fast = assemble("S-1", [], ranked, max_tokens)
    reference = assemble_counting_every_line("S-1", [], ranked, max_tokens)
    # Then the same lines are kept, the budget holds, and the count is the text's real count
    assert fast.included == reference.included
    assert fast.text == reference.text
    assert fast.tokens == count_tokens(fast.text) <= max_tokens


def test_lowest_priority_lines_are_dropped_first_and_the_pinned_ticket_never():
    # Given a pinned ticket line and three memory lines in priority order
    pinned = [ContextLine("ticket", "ticket", "- ticket T-1: status=open", pinned=True)]
    ranked = [ContextLine(f"mem_{i}", "relevant", f"- [mem_{i}] " + "word " * 30) for i in range(3)]
    base = assemble("S-1", pinned, [], 10_000).tokens
    two_lines = assemble("S-1", pinned, ranked[:2], 10_000).tokens
    # When the budget holds the ticket and two lines only
    out = assemble("S-1", pinned, ranked, two_lines + 5)
    # Then the last line is the one dropped, the ticket stays, and the budget holds
    assert base < two_lines
    assert out.included == ["ticket", "mem_0", "mem_1"]
    assert out.dropped == ["mem_2"]
    assert out.tokens <= two_lines + 5


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(
        st.one_of(
            st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80),
            st.sampled_from(["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", "\n\n", "  ", "1234567"]),
        ),
        max_size=8,
    ).map("".join)
)
def test_a_count_is_the_length_of_the_larger_encoding_with_special_tokens_read_as_text(text):
    # Given any text, special-token markers and all
    from agent_memory.domain.tokens import _encoders

    # When counted
    counted = count_tokens(text)
    # Then it is the number of ids the larger of the two encodings gives it as ordinary text
    assert counted == max(len(enc.encode_ordinary(text)) for enc in _encoders())
