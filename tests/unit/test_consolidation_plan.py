"""Consolidation's pure parts: which record keeps which, and who corroborates an observation."""

from __future__ import annotations

import numpy as np

from agent_memory.services.consolidation import corroborations, merge_plan


def test_given_an_exact_group_and_near_pairs_when_planned_then_nothing_is_merged_twice_or_into_a_merged_record() -> (
    None
):
    # Given an exact-duplicate group a<-b,c and near pairs that would chain through merged records
    groups = [{"ids": ["a", "b", "c"]}]
    pairs = [
        {"keep": "b", "merge": "d"},  # b is merged away: it cannot keep d
        {"keep": "e", "merge": "a"},  # a keeps others: it cannot be merged into e
        {"keep": "e", "merge": "f"},
        {"keep": "g", "merge": "f"},  # f already went to e
    ]
    # When planned
    plan = merge_plan(groups, pairs)
    # Then each record is merged away at most once, never into a merged-away record
    assert plan == {"a": {"b", "c"}, "e": {"f"}}


def test_given_observations_when_weighed_then_only_other_sessions_saying_nearly_the_same_corroborate() -> (
    None
):
    # Given three observations of one subject: two sessions saying the same, one saying something else,
    # and a second observation from the first session
    same, other = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    obs = [
        {"id": "o1", "session_id": "s1", "embedding": same},
        {"id": "o2", "session_id": "s2", "embedding": same * 2},
        {"id": "o3", "session_id": "s3", "embedding": other},
        {"id": "o4", "session_id": "s1", "embedding": same},
    ]
    # When weighed
    found = {o["id"]: sources for o, sources in corroborations(obs)}
    # Then the own session never counts and dissimilar text never corroborates
    assert found == {"o1": {"s2"}, "o2": {"s1"}, "o3": set(), "o4": {"s2"}}


def test_given_three_near_copies_in_any_pair_order_when_planned_then_the_oldest_keeps_both() -> None:
    # Given three near copies a < b < c whose pairs the database returns in an unlucky order
    pairs = [{"keep": "a", "merge": "c"}, {"keep": "b", "merge": "c"}, {"keep": "a", "merge": "b"}]
    # When planned
    plan = merge_plan([], pairs)
    # Then c is folded once (not into a and b both) and the oldest keeps the others
    assert plan == {"a": {"b", "c"}}
