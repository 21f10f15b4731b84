"""SEC-01: identifiers are masked before anything is stored, embedded or logged."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.domain.sanitize import (
    iban_valid,
    luhn_valid,
    mask_identifiers,
    mask_value,
    unstorable_value,
)


def _luhn_complete(prefix: str) -> str:
    for d in "0123456789":
        if luhn_valid(prefix + d):
            return prefix + d
    raise AssertionError


def test_given_a_card_number_with_spaces_when_masked_then_only_the_last_four_remain():
    out = mask_identifiers("Please charge 4111 1111 1111 1111 today")
    assert out.text == "Please charge CARD-***-1111 today"
    assert out.kinds == ["CARD"]


def test_given_a_number_failing_luhn_when_masked_then_it_is_left_alone():
    assert mask_identifiers("order 4111111111111112").text == "order 4111111111111112"


def test_given_valid_and_invalid_ibans_when_masked_then_only_the_valid_one_changes():
    assert iban_valid("GB82 WEST 1234 5698 7654 32")
    assert not iban_valid("GB83 WEST 1234 5698 7654 32")
    out = mask_identifiers("pay GB82 WEST 1234 5698 7654 32 not GB83 WEST 1234 5698 7654 32")
    assert "IBAN-***-5432" in out.text
    assert "GB83 WEST 1234 5698 7654 32" in out.text


def test_given_tax_ids_and_account_numbers_when_masked_then_surrogates_replace_them():
    text = "SSN 123-45-6789, tax id: 12-3456789, my account number is 00123456789"
    out = mask_identifiers(text)
    for raw in ("123-45-6789", "12-3456789", "00123456789"):
        assert raw not in out.text
    assert "ACCT-***-6789" in out.text
    assert out.kinds.count("TAXID") == 2


def test_given_ordinary_numbers_when_masked_then_prices_dates_and_kept_phones_survive():
    # Given prices, a date, a ticket id and a phone number of a class the tenant keeps
    text = "500 seats at $42/seat/month from 2026-09-01, call 555-123-4567, ticket T-1042"
    # When masked
    out = mask_identifiers(text, keep=("phone",))
    # Then the text is as written, and the phone number was seen
    assert out.text == text
    assert [f.type for f in out.kept] == ["phone"]


def test_given_identifiers_nested_in_a_json_value_when_masked_then_every_string_is_clean():
    value = {
        "card": "4111111111111111",
        "nested": [{"iban": "DE89370400440532013000"}],
        "n": 4111111111111111,
    }
    masked, kinds = mask_value(value)
    flat = str(masked)
    assert "4111111111111111" not in flat and "DE89370400440532013000" not in flat
    assert sorted(kinds) == ["CARD", "CARD", "IBAN"]


@given(
    st.integers(min_value=12, max_value=18),
    st.randoms(use_true_random=False),
    st.sampled_from([" ", "-", ""]),
)
def test_property_every_luhn_valid_card_is_masked(length: int, rnd: random.Random, sep: str):
    digits = _luhn_complete("4" + "".join(str(rnd.randint(0, 9)) for _ in range(length - 1)))
    grouped = sep.join(digits[i : i + 4] for i in range(0, len(digits), 4))
    out = mask_identifiers(f"my card is {grouped}.")
    assert digits not in out.text.replace(sep, "") if sep else digits not in out.text
    assert f"CARD-***-{digits[-4:]}" in out.text


def test_unstorable_value_names_the_first_field_and_never_echoes_the_character():
    # Given JSON-like values with a NUL or a lone surrogate somewhere inside, in a value or a key
    payload = {"a": "fine é 😀", "b": [1, {"c": "x\x00y"}], "d": "\ud800"}
    keyed = {"value": {"k\x00": 1}}
    # When each is checked
    # Then the first offender is named by its dotted path, and a bad key is shown without the character
    assert unstorable_value(payload) == ("b.1.c", "text must not contain NUL characters")
    assert unstorable_value({"d": "\udfff"}) == ("d", "text must not contain unpaired surrogate characters")
    assert unstorable_value(keyed) == ("value.k\ufffd", "text must not contain NUL characters")
    # And text PostgreSQL stores (any valid Unicode, paired surrogates decoded) passes
    assert unstorable_value({"q": "naïve 😀 \u202e", "n": [1.5, None, True]}) is None
    assert unstorable_value("\x00") == ("body", "text must not contain NUL characters")


@pytest.mark.parametrize(
    "text",
    [
        "We will call on 2026-11-09 to confirm.",
        "after the call.\n- 2026-11-09: migration agreed",
        "call me on 09.11.2026",
    ],
)
def test_a_calendar_date_after_a_phone_word_is_not_a_phone_number(text):
    # A date after "call" says when; masking it as a phone number loses it for nothing
    assert mask_identifiers(text).text == text


def test_a_phone_number_after_a_phone_word_is_still_masked():
    assert "4567" in mask_identifiers("phone: 555-123-4567").text
    assert "555-123-4567" not in mask_identifiers("phone: 555-123-4567").text
