"""The sensitive-detail lexicon (seed 001): what it recognises as a person's sensitive detail, and
the business sentences it leaves alone."""

import pytest

from agent_memory.domain.sensitive import sensitive_categories


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("My divorce is final.", "family_status"),
        ("We're expecting a baby in March.", "family_status"),
        ("I was diagnosed with diabetes last spring.", "health"),
        ("She is on medical leave until June.", "health"),
        ("Our church runs the scholarship fund.", "religion"),
        ("I'm a practising Muslim, so no interest-bearing products.", "religion"),
        ("I'm gay and my husband co-signs.", "sexual_orientation"),
        ("I'm a union member at the plant.", "union_membership"),
        ("He has a criminal record from 2010.", "criminal_record"),
        ("My ethnic background matters for the scholarship.", "ethnicity"),
    ],
)
def test_a_sensitive_statement_names_its_category(text, category):
    assert category in sensitive_categories(text)


@pytest.mark.parametrize(
    "text",
    [
        "Please send the quarterly statements by email.",
        "The account health score dropped after the outage.",
        "We run a health check before each release.",
        "Data must stay in the European Union.",
        "The family of products includes the mobile app.",
        "We are a hospital group with 40 sites.",
        "Renewal is due in March at $42 per seat.",
    ],
)
def test_a_business_sentence_is_not_sensitive(text):
    assert sensitive_categories(text) == ()
