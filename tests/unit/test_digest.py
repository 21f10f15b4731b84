"""The extractive digest of expiring episodes: deterministic, newest first, bounded, and rolling."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_memory.domain.digest import DigestSource, build_digest, first_sentence


def at(day: int) -> datetime:
    return datetime(2026, 3, day, 10, 0, tzinfo=UTC)


def test_a_digest_keeps_each_episodes_date_and_first_sentence_newest_first():
    # Given three episodes of one subject
    sources = [
        DigestSource(at(3), "Called about the invoice mismatch. They wanted a credit note too.", False),
        DigestSource(at(12), "Migration to the EU region was scheduled for April. Dana joined.", False),
        DigestSource(at(7), "Asked for a training session for new admins.", False),
    ]
    # When they are digested
    digest = build_digest(sources, 1500)
    # Then one header and one line per episode, newest first, first sentences only
    assert digest is not None
    lines = digest.splitlines()
    assert lines[0] == "Earlier history, digested from 3 episode(s), 2026-03-03 to 2026-03-12:"
    assert lines[1:] == [
        "- 2026-03-12: Migration to the EU region was scheduled for April.",
        "- 2026-03-07: Asked for a training session for new admins.",
        "- 2026-03-03: Called about the invoice mismatch.",
    ]
    # And the same episodes in another order give the same digest
    assert build_digest(list(reversed(sources)), 1500) == digest


def test_a_digest_fits_its_bound_and_says_what_it_left_out():
    sources = [
        DigestSource(at(d), f"Episode number {d} went on about the renewal at length.", False)
        for d in range(1, 29)
    ]
    digest = build_digest(sources, 400)
    assert digest is not None and len(digest) <= 400
    assert digest.splitlines()[1].startswith("- 2026-03-28") and "earlier episode(s) not shown" in digest


def test_an_expiring_digest_is_folded_into_the_next_one():
    # Given an earlier digest expiring with a newer episode
    earlier = build_digest([DigestSource(at(1), "First contact about onboarding.", False)], 1500)
    assert earlier is not None
    digest = build_digest(
        [DigestSource(at(20), "Renewal call went well.", False), DigestSource(at(5), earlier, True)], 1500
    )
    # Then its lines follow the newer ones, and its dates widen the range
    assert digest is not None
    assert digest.splitlines()[1:] == [
        "- 2026-03-20: Renewal call went well.",
        "- 2026-03-01: First contact about onboarding.",
    ]
    assert "2026-03-01 to 2026-03-20" in digest.splitlines()[0]


def test_first_sentence_is_one_bounded_line():
    assert first_sentence("Short.  Next one") == "Short.  Next one".replace("  ", " ")
    assert first_sentence("A long opening sentence that is surely past twenty characters. Then more.") == (
        "A long opening sentence that is surely past twenty characters."
    )
    assert len(first_sentence("x" * 1000)) == 220
    assert build_digest([], 1500) is None
