"""Who may do what (docs/rules.md, Roles). Checked before anything is read or written."""

from __future__ import annotations

from agent_memory.domain.enums import Authority, Role, Sensitivity
from agent_memory.domain.errors import Forbidden, UnauthorizedMutation
from agent_memory.domain.records import MemoryRecord, Principal

# Which source kinds each writing role may assert.
ASSERTABLE_SOURCES: dict[Role, frozenset[Authority]] = {
    Role.AGENT: frozenset(
        {
            Authority.CUSTOMER_CONFIRMED,
            Authority.CONFIRMED_OUTCOME,
            Authority.CUSTOMER_CLAIM,
            Authority.AGENT_INFERENCE,
        }
    ),
    Role.INTEGRATION: frozenset(
        {
            Authority.SYSTEM_OF_RECORD,
            Authority.CUSTOMER_CONFIRMED,
            Authority.CONFIRMED_OUTCOME,
            Authority.CUSTOMER_CLAIM,
            Authority.AGENT_INFERENCE,
        }
    ),
}


def require_read(principal: Principal, *roles: Role) -> None:
    if not principal.has(*roles):
        raise Forbidden(
            f"roles {sorted(r.value for r in principal.roles)} may not read this; needs one of "
            f"{sorted(r.value for r in roles)}"
        )


def require_mutation(principal: Principal, *roles: Role, action: str) -> None:
    if not principal.has(*roles):
        names = ",".join(sorted(r.value for r in principal.roles)) or "none"
        raise UnauthorizedMutation(f"role {names} may not {action}")


def require_tenant_wide(principal: Principal, *, action: str) -> None:
    """A change that reaches every subject of the tenant (its policy) needs a token that is not
    bound to subjects: a binding restricts its token to those subjects, so it never widens to
    all of them through a tenant-wide setting."""
    if principal.subjects is not None:
        raise UnauthorizedMutation(
            f"a token bound to subjects may not {action} (it applies to every subject)"
        )


def require_source_assertion(principal: Principal, kind: Authority) -> None:
    """Only `integration` may assert system_of_record; nobody asserts human_verified (review does)."""
    allowed: set[Authority] = set()
    for role in principal.roles:
        allowed |= ASSERTABLE_SOURCES.get(role, frozenset())
    if kind not in allowed:
        names = ",".join(sorted(r.value for r in principal.roles)) or "none"
        raise UnauthorizedMutation(f"role {names} may not assert source kind {kind.value}")


def cleared_for(principal: Principal, sensitivity: Sensitivity) -> bool:
    """The one clearance rule: a caller sees a record only up to its clearance. Every response that
    carries a record, or a reference to one, applies it; above clearance looks like absent."""
    return sensitivity.rank <= principal.clearance.rank


def visible(principal: Principal, record: MemoryRecord | None) -> MemoryRecord | None:
    return record if record is not None and cleared_for(principal, record.sensitivity) else None
