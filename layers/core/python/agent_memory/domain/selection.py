"""Which ranked memories one retrieval returns, and in which section (docs/rules.md, Retrieval):
verified facts first, one version per slot, relevance (domain/relevance.py) unless a slot is asked
for by name or the policy makes a verified fact's category mandatory, at most top_k across all
sections."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from agent_memory.domain.enums import Authority
from agent_memory.domain.memory_types import TYPE_SPECS, commercial_family
from agent_memory.domain.ranking import Candidate
from agent_memory.domain.relevance import RelevanceBar

Buckets = tuple[list[Candidate], list[Candidate], list[Candidate], list[Candidate]]


@dataclass
class Selection:
    buckets: Buckets  # verified facts, relevant, supporting, unverified
    excluded: dict[str, int]
    # the memories `excluded` counts as below_threshold, by why (relevance.BELOW_SIMILARITY_FLOOR...)
    not_relevant: dict[str, int]


# The `excluded` reason of a memory not relevant to the query (why, in `Selection.not_relevant`).
BELOW_THRESHOLD = "below_threshold"


# Why a verified commercial fact was left out: a newer verified source states its family's truth.
FAMILY_SUPERSEDED = "commercial_family_superseded"


def commercial_candidates(ranked: Iterable[Candidate]) -> list[Candidate]:
    """The verified commercial facts among the candidates whose slot belongs to a family."""
    return [c for c in ranked if c.record.verified and commercial_family(c.record.slot)]


def family_rivals(ranked: Iterable[Candidate], independent: Collection[str]) -> set[str]:
    """One commercial truth per family in a prompt (INV-MEM-03 across slots): where the
    verified facts of one family (price, discount and seat price; ...) come from different sources
    (the system of record, a reviewer's approval), the source stated last wins and the other's
    facts are left out. Facts of one source agree with each other; a fact its reviewer approved as
    independent of the family (`independent`) stands beside the others. Returns the ids left out."""
    by_family: dict[str, dict[Authority, list[Candidate]]] = {}
    for c in commercial_candidates(ranked):
        if c.record.id in independent:
            continue
        family = commercial_family(c.record.slot)
        assert family is not None
        by_family.setdefault(family, {}).setdefault(c.record.authority, []).append(c)
    out: set[str] = set()
    for sources in by_family.values():
        if len(sources) < 2:
            continue
        latest = max(sources, key=lambda a: max((c.record.effective_at, c.record.id) for c in sources[a]))
        out.update(c.record.id for a, cs in sources.items() if a is not latest for c in cs)
    return out


def select(
    ranked: list[Candidate],
    bar: RelevanceBar,
    top_k: int,
    verified_cap: int,
    stale: Callable[[Candidate], str | None],
    named_slots: frozenset[str] = frozenset(),
    mandatory_categories: frozenset[str] = frozenset(),
) -> Selection:
    """At most `top_k` memories across all sections: verified facts first (at most `verified_cap`),
    then relevant / supporting / unverified in rank order. Every memory must be relevant to the
    query (`bar`), verified facts too, unless its slot was asked for by name or it is a verified
    fact of a category the policy makes mandatory (the product requirements: "inject verified account facts");
    one version per slot (the store guarantees it; belt and braces). Live values and working
    memory are not memories here: they count in the token budget, never in `top_k`."""
    excluded: dict[str, int] = {}
    not_relevant: dict[str, int] = {}
    seen_slots: set[str] = set()
    verified: list[Candidate] = []
    others: list[Candidate] = []

    def exclude(reason: str) -> None:
        excluded[reason] = excluded.get(reason, 0) + 1

    for c in ranked:
        r = c.record
        reason = stale(c)
        if reason is None and r.slot:
            if r.slot in seen_slots:
                reason = "duplicate_slot"
            else:
                seen_slots.add(r.slot)
        if reason is None and not (
            (r.slot is not None and r.slot in named_slots) or _mandatory(c, mandatory_categories)
        ):
            why = bar.exclusion(c.dense, c.lexical > 0)
            if why is not None:
                reason = BELOW_THRESHOLD
                not_relevant[why] = not_relevant.get(why, 0) + 1
        if reason is not None:
            exclude(reason)
        elif TYPE_SPECS[r.type].heads_context_when_verified and r.verified:
            if len(verified) < verified_cap:
                verified.append(c)
            else:
                exclude("verified_cap")
        else:
            others.append(c)
    for _ in verified[top_k:]:
        exclude("top_k")
    verified = verified[:top_k]
    for _ in others[top_k - len(verified) :]:
        exclude("top_k")
    relevant: list[Candidate] = []
    supporting: list[Candidate] = []
    unverified: list[Candidate] = []
    for c in others[: top_k - len(verified)]:
        r = c.record
        section = TYPE_SPECS[r.type].section
        if r.authority.rank <= Authority.CUSTOMER_CLAIM.rank or section == "unverified":
            unverified.append(c)
        elif section == "supporting":
            supporting.append(c)
        else:
            relevant.append(c)
    return Selection((verified, relevant, supporting, unverified), excluded, not_relevant)


def _mandatory(c: Candidate, categories: frozenset[str]) -> bool:
    """A verified fact (the verified-facts section's kind) of a category the policy makes mandatory."""
    r = c.record
    return r.category in categories and r.verified and TYPE_SPECS[r.type].heads_context_when_verified


def named_slots(slots: Iterable[str] | None, query: str) -> frozenset[str]:
    """Slots a request asks for by name: listed in `slots`, or written out in the query."""
    named = set(slots or ())
    named.update(re.findall(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+", query.casefold()))
    return frozenset(named)


def in_budget_order(buckets: Buckets, ranked: list[Candidate]) -> list[tuple[Candidate, str]]:
    """Priority for the budget: verified facts, then the rest in rank order (not score: the
    newest-version reorder may leave a moved memory tied in score); rendering keeps section order."""
    verified, relevant, supporting, unverified = buckets
    rest = (
        [(c, "relevant") for c in relevant]
        + [(c, "supporting") for c in supporting]
        + [(c, "unverified") for c in unverified]
    )
    position = {id(c): i for i, c in enumerate(ranked)}
    rest.sort(key=lambda cs: position[id(cs[0])])
    return [(c, "verified_facts") for c in verified] + rest


def returned_ranks(ranked: list[Candidate], returned: Collection[str]) -> dict[str, int]:
    """Each returned memory's place in the ranking among those returned, 1 the most relevant. The
    answer lists memories by section (verified facts first, unverified notes last), so an episode
    that ranks first can be listed after a less relevant fact: this is how to read them by relevance."""
    places: dict[str, int] = {}
    for c in ranked:
        if len(places) == len(returned):
            break
        if c.record.id in returned:
            places[c.record.id] = len(places) + 1
    return places
