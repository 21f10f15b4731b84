"""The memory types as the SQL names them, built from the type table (domain/memory_types.py).

Where a value can be a bound parameter, queries pass these lists as one; an index predicate cannot,
and a query must spell that predicate the same way for the planner to use the partial index, so
those are rendered as SQL text here, from the enum's values (fixed identifiers, never input).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent_memory.domain.memory_types import TYPE_SPECS, MemoryType


def _quoted(memory_type: MemoryType) -> str:
    if not re.fullmatch(r"[a-z_]+", memory_type.value):
        raise ValueError(f"not a plain type name: {memory_type.value!r}")
    return f"'{memory_type.value}'"


def type_equals_any(column: str, types: Iterable[MemoryType]) -> str:
    """`column = 'a' OR column = 'b'`: a constant predicate the planner can match to an index's."""
    return " OR ".join(f"{column} = {_quoted(t)}" for t in types)


# Searched across the tenant's subjects (resolutions): the partial HNSW index covers these and the
# tenant-scoped memories; migrate.py creates it and retrieval.py's tenant-wide search matches it.
SHARED_TYPES = tuple(t for t, s in TYPE_SPECS.items() if s.shared_across_subjects)


def shared_knowledge_predicate(alias: str = "") -> str:
    """The partial HNSW index's predicate, `alias`-qualified for a query."""
    return " OR ".join([f"{alias}scope = 'tenant'", type_equals_any(f"{alias}type", SHARED_TYPES)])


# A closed commitment is history, not the same follow-up: a new one in the same words is admitted
# (write path), and the nightly consolidation never merges the two.
NOT_CLOSED_COMMITMENT = f"NOT (type = {_quoted(MemoryType.COMMITMENT)} AND value->>'state' = 'closed')"

# Quarantined records corroborated by similarity (observations): the nightly run weighs them.
CORROBORATED_TYPES = sorted(
    t.value for t, s in TYPE_SPECS.items() if s.quarantined and s.vector_in_quarantine
)
