"""Grouping review items: only statements that name the same figures."""

from agent_memory.domain.review_diff import same_figures


def test_statements_are_grouped_only_when_their_figures_agree():
    # Given two wordings of one claim, and one with another figure
    assert same_figures("We promised 20% off at renewal.", "A 20 % renewal discount was promised")
    assert not same_figures("We promised 20% off at renewal.", "We promised 25% off at renewal.")
    # And amounts with separators, and figures in another order, compare as figures
    assert same_figures("$1,200 for 3 seats", "3 seats at $1,200")
    assert not same_figures("10 seats", "ten seats")
