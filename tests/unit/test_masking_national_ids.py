"""National identifiers beyond the US and UK (Canadian SIN, Aadhaar, German Steuer-ID, French NIR),
cards under other labels, SSN-shaped part numbers, and the personal classes a tenant masks or keeps."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_memory.domain.sanitize import (
    PERSONAL_CLASSES,
    aadhaar_valid,
    mask_free_text,
    mask_identifiers,
    nir_valid,
    sin_valid,
    steuer_id_valid,
)

SIN = "130692544"  # Luhn-valid
AADHAAR = "658073021578"  # Verhoeff-valid
STEUER_ID = "36514705928"  # ISO 7064 MOD 11,10
NIR = "184057645108931"  # key 31 = 97 - (1840576451089 mod 97)
NIR_CORSICA = "269112A12345687"


def _off_by_one(number: str) -> str:
    return number[:-1] + str((int(number[-1]) + 1) % 10)


# ------------------------------------------------------------------------------------ checksums
@pytest.mark.parametrize(
    "valid, number",
    [
        (sin_valid, SIN),
        (aadhaar_valid, AADHAAR),
        (steuer_id_valid, STEUER_ID),
        (nir_valid, NIR),
        (nir_valid, NIR_CORSICA),
    ],
    ids=["sin", "aadhaar", "steuer_id", "nir", "nir corsica"],
)
def test_given_a_number_with_its_right_check_digit_when_validated_then_it_passes_and_one_off_fails(
    valid, number
):
    # Given a number whose check digit is right, and the same number with its last digit changed
    # When each is validated
    # Then the first passes and the second fails
    assert valid(number)
    assert not valid(_off_by_one(number))


def test_given_a_steuer_id_whose_first_ten_digits_repeat_none_when_validated_then_it_fails():
    # Given ten distinct digits (a Steuer-ID always repeats exactly one) with a right check digit
    assert not steuer_id_valid("1234567890" + "0")
    # And a SIN led by 0 (fictitious) or 8 (unused)
    assert not sin_valid("046454286") and not sin_valid("800000002")


# ---------------------------------------------------------------------------- detection in text
@pytest.mark.parametrize(
    "text, type_",
    [
        (f"my SIN is {SIN[:3]} {SIN[3:6]} {SIN[6:]}", "sin"),
        (f"Social Insurance Number: {SIN}", "sin"),
        (f"for payroll use {SIN[:3]}-{SIN[3:6]}-{SIN[6:]}", "sin"),
        (f"Aadhaar: {AADHAAR}", "aadhaar"),
        (f"KYC done with {AADHAAR[:4]} {AADHAAR[4:8]} {AADHAAR[8:]}", "aadhaar"),
        (f"Steuer-ID {STEUER_ID}", "steuer_id"),
        (f"please file with {STEUER_ID[:2]} {STEUER_ID[2:5]} {STEUER_ID[5:8]} {STEUER_ID[8:]}", "steuer_id"),
        (f"NIR {NIR}", "nir"),
        ("mon numéro est 1 84 05 76 451 089 31", "nir"),
        (f"carte Vitale {NIR_CORSICA}", "nir"),
        (f"S.I.N. {SIN}", "sin"),
        (f"Steuer-IdNr. {STEUER_ID[:2]} {STEUER_ID[2:5]} {STEUER_ID[5:8]} {STEUER_ID[8:]}", "steuer_id"),
        (f"\u0906\u0927\u093e\u0930 {AADHAAR[:4]} {AADHAAR[4:8]} {AADHAAR[8:]}", "aadhaar"),
        ("numéro INSEE 1840576451089 31", "nir"),
    ],
)
def test_given_a_national_id_with_a_valid_check_when_masked_then_it_is_a_taxid(text: str, type_: str):
    # Given a national identifier, labelled or in its usual grouping
    # When the text is masked
    out = mask_identifiers(text)
    # Then it is one TAXID of its type and only its last four characters show
    assert [(f.kind, f.type) for f in out.found] == [("TAXID", type_)]
    assert "TAXID-***-" in out.text


@pytest.mark.parametrize(
    "text",
    [
        f"SIN {SIN[:3]} {SIN[3:6]} {_off_by_one(SIN)[6:]}",
        f"Aadhaar {_off_by_one(AADHAAR)}",
        f"Steuer-ID {_off_by_one(STEUER_ID)}",
        f"NIR {NIR[:13]}32",
        "Part 123-45-6789 is on backorder",
        "replacement filter 334-12-0098 ships Friday",
        "SKU 402-18-7731",
        "Please send 2 pcs of 334-12-0098 and 1 of 334-12-0099",
        "334-12-0098 is back in stock",
        "Order 4532015112830367 shipped",
        "meeting on 12/03/2026",
        "on 01.02.2024",
        "Order 123-456-789",
        "invoice 2024-001-0042",
    ],
)
def test_given_a_look_alike_when_masked_then_it_is_left_as_written(text: str):
    # Given a number of an identifier's shape whose check fails, or that the sentence calls a part
    # When it is masked
    # Then nothing changes
    assert mask_identifiers(text).text == text


def test_given_an_ssn_shaped_number_with_a_tax_label_near_a_part_word_when_masked_then_the_label_wins():
    # Given an SSN whose sentence also speaks of a part
    out = mask_identifiers("SSN 334-12-0098 for the part order")
    # Then it is masked as an SSN
    assert [f.type for f in out.found] == ["ssn"]


def test_given_a_card_in_a_source_reference_when_read_then_it_is_masked():
    # Given a reference carrying a card after another label
    # When read as a free-text field
    # Then the card is masked
    assert mask_free_text("ref 4111111111111111") == "ref CARD-***-1111"


# ------------------------------------------------------------------------------ personal classes
@pytest.mark.parametrize(
    "text, type_, raw",
    [
        ("write to maria.gonzalez@example.org", "email", "maria.gonzalez@example.org"),
        ("call me on +1 415-555-0132 after 6pm", "phone", "415-555-0132"),
        ("mobile 07700 900456", "phone", "07700 900456"),
        ("DOB 12/03/1984", "date_of_birth", "12/03/1984"),
        ("born on 3 March 1984", "date_of_birth", "3 March 1984"),
        ("passport number X1234567", "passport", "X123"),
        ("date of birth is the 12th of March 1984", "date_of_birth", "1984"),
        ("06 12 34 56 78", "phone", "12 34 56"),
        ("(415)555-0132", "phone", "555-0"),
        ("Reisepassnummer C01X00T47", "passport", "C01X0"),
    ],
)
def test_given_a_personal_identifier_when_masked_by_default_then_it_is_replaced(text, type_, raw):
    # Given an e-mail address, phone number, date of birth or passport number
    # When masked with the default policy (mask every class)
    out = mask_identifiers(text)
    # Then it is replaced and reported
    assert [f.type for f in out.found] == [type_] and raw not in out.text


def test_given_a_tenant_that_keeps_e_mail_and_phone_when_masked_then_they_stay_and_are_reported():
    # Given a text with an e-mail address, a phone number and a card
    text = "Reach Dana at dana@acme.example or +44 20 7946 0958; card 4111 1111 1111 1111"
    # When masked keeping e-mail and phone
    out = mask_identifiers(text, keep=("email", "phone"))
    # Then both stay as written, are reported as kept, and the card is still masked
    assert "dana@acme.example" in out.text and "+44 20 7946 0958" in out.text
    assert sorted(f.type for f in out.kept) == ["email", "phone"]
    assert out.kinds == ["CARD"]


def test_given_an_e_mail_or_a_date_of_birth_when_masked_then_the_surrogate_keeps_none_of_it():
    # Given an e-mail address and a date of birth
    out = mask_identifiers("mail li.wei@example.cn, DOB 1979-11-02")
    # Then neither the domain nor the year shows
    assert "example" not in out.text and ".cn" not in out.text and "1979" not in out.text


# ------------------------------------------------------------------------------------- benchmark
def test_given_a_heldout_file_beside_the_corpus_when_benchmarked_then_it_is_its_own_split(tmp_path: Path):
    from memory_bench.identifiers import run_with_heldout

    # Given the development corpus and a held-out file in the same folder
    corpus = Path(__file__).resolve().parents[2] / "benchmarks" / "identifiers" / "identifiers.jsonl"
    shutil.copy(corpus, tmp_path / "identifiers.jsonl")
    rows = [
        {"id": "h-1", "type": "sin", "text": f"SIN {SIN}", "identifiers": [{"type": "sin", "value": SIN}]},
        {"id": "h-2", "type": "negative", "category": "part", "text": "part 123-45-6789", "identifiers": []},
        {"id": "h-3", "type": "national_id", "text": f"her number is {SIN[:3]} {SIN[3:6]} {SIN[6:]}",
         "identifiers": [{"type": "national_id", "value": f"{SIN[:3]} {SIN[3:6]} {SIN[6:]}"}]},
    ]  # fmt: skip
    (tmp_path / "heldout_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    # When the benchmark runs
    report = run_with_heldout(tmp_path / "identifiers.jsonl", repeats=1)
    # Then the held-out file is scored apart, per class
    held = report["heldout"]["heldout_test.jsonl"]
    assert held["examples"] == 3 and held["per_type"]["sin"]["recall"] == 1.0
    # and a type the detector has no name for counts as found when a surrogate covers it
    assert held["per_type"]["national_id"]["recall"] == 1.0 and held["per_type"]["sin"]["precision"] == 1.0
    assert report["split"] == "development" and report["examples"] > 400
    assert set(PERSONAL_CLASSES) <= set(report["per_type"])


def test_given_the_policy_model_when_its_personal_classes_are_listed_then_they_are_the_detectors():
    from typing import get_args

    from agent_memory.domain.policy import PersonalClass, PolicyProfile

    # Given the classes the policy names and the ones the masker detects
    # Then they are the same, and a profile masks every one by default
    assert get_args(PersonalClass) == PERSONAL_CLASSES
    default = PolicyProfile(name="x", ttl_days={})
    assert default.personal_identifiers == dict.fromkeys(PERSONAL_CLASSES, "mask")
    assert default.kept_identifier_classes() == frozenset()
