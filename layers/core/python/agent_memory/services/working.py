"""Working memory: one open session's short-lived values (the product requirements' first layer).

The exchange rate just quoted, the customer's current goal, a half-finished calculation: any JSON,
kept under a key for a hard TTL (the policy's `working_ttl_seconds` unless the caller names one,
never above `working_max_ttl_seconds`), bounded per session in count and bytes. Values are masked
and screened before they are stored: a value that reads like an instruction is refused (422 naming
where it is), since working memory has no review queue and is shown to the model within minutes.

Working memory never becomes long-term memory by itself: closing the session clears it (the
transcript is the way from a conversation to memories), and erasing the subject clears it too.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.domain.enums import EventType, Role
from agent_memory.domain.errors import (
    OUTSIDE_BINDING,
    Conflict,
    Forbidden,
    InvalidRequest,
    PayloadTooLarge,
    RateLimited,
)
from agent_memory.domain.ids import ID_RULE, SubjectId, valid_id
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.records import Principal, utcnow
from agent_memory.domain.working import (
    PreparedValue,
    instruction_at,
    key_carries_identifier,
    mask_working_value,
    value_bytes,
)
from agent_memory.observability import logger
from agent_memory.ports.store import MemoryStore, NewEvent, TenantSession, WorkingItem, WorkingSessionState
from agent_memory.services.authorization import require_mutation, require_read
from agent_memory.services.policies import PolicyRegistry


class WorkingPutRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subject_id: SubjectId
    value: Any = Field(description="any JSON; identifiers are masked before it is stored")
    ttl_seconds: int | None = Field(
        default=None,
        ge=1,
        strict=True,
        description="seconds the value lives; defaults to the policy's working_ttl_seconds and may "
        "not exceed its working_max_ttl_seconds",
    )


class WorkingItemView(BaseModel):
    key: str
    value: Any
    expires_at: datetime


class WorkingSessionView(BaseModel):
    session_id: str
    subject_id: str | None = Field(description="the subject the session's values belong to; null when none")
    items: list[WorkingItemView]


def item_view(item: WorkingItem) -> WorkingItemView:
    return WorkingItemView(key=item.key, value=item.value, expires_at=item.expires_at)


class WorkingMemoryService:
    def __init__(self, store: MemoryStore, policies: PolicyRegistry) -> None:
        self.store = store
        self.policies = policies

    def put(
        self, principal: Principal, session_id: str, key: str, request: WorkingPutRequest
    ) -> WorkingItemView:
        """Store one value under `key` (replacing the key's earlier value and TTL)."""
        require_mutation(principal, Role.AGENT, action="write working memory")
        _check_ids(session_id, key)
        if key_carries_identifier(key):
            raise InvalidRequest(
                "key must not contain an identifier (a card, account, IBAN or tax number)", field="key"
            )
        policy = self.policies.for_tenant(principal.tenant_id)
        ttl = _ttl(request, policy)
        prepared = _prepared(request, policy, session_id)
        with self.store.tenant(principal.tenant_id) as s:
            s.lock_working_session(session_id, request.subject_id)
            # Checked as the caller sees the session (its binding's rows only), then its owner: for
            # a bound token, another subject's session gets every answer an unused id would.
            _check_room(s.working_session_state(session_id, request.subject_id, key), prepared.bytes, policy)
            if not owned_by(s, principal, session_id, request.subject_id, route="working_put"):
                # Another subject's session, outside the token: answered as a write to an unused
                # id is, and nothing is written.
                return WorkingItemView(
                    key=key, value=prepared.value, expires_at=utcnow() + timedelta(seconds=ttl)
                )
            item = s.put_working_item(
                session_id=session_id,
                subject_id=request.subject_id,
                key=key,
                value=prepared.value,
                size=prepared.bytes,
                ttl_seconds=ttl,
                actor=principal.sub,
            )
            payload: dict[str, Any] = {
                "session_id": session_id,
                "key": key,
                "bytes": prepared.bytes,
                "ttl_seconds": ttl,
            }
            if prepared.masked_kinds:
                payload["masked"] = list(prepared.masked_kinds)
            s.append_events(
                [
                    NewEvent(
                        EventType.WORKING_WRITTEN.value,
                        principal.sub,
                        None,
                        request.subject_id,
                        "working_put",
                        payload,
                    )
                ]
            )
        return item_view(item)

    def show(self, principal: Principal, session_id: str) -> WorkingSessionView:
        """The session's live values, by key (an expired value is never returned)."""
        require_read(principal, Role.AGENT)
        _check_ids(session_id)
        with self.store.tenant(principal.tenant_id) as s:
            items = s.working_items(session_id)
        return WorkingSessionView(
            session_id=session_id,
            subject_id=items[0].subject_id if items else None,
            items=[item_view(i) for i in items],
        )

    def delete(self, principal: Principal, session_id: str, key: str) -> None:
        """Delete one value; deleting a key that is absent or expired is not an error."""
        require_mutation(principal, Role.AGENT, action="delete working memory")
        _check_ids(session_id, key)
        with self.store.tenant(principal.tenant_id) as s:
            s.lock_working_session(session_id)
            gone = s.delete_working_item(session_id, key)
            if gone is not None and gone.live:
                s.append_events(
                    [
                        NewEvent(
                            EventType.WORKING_DELETED.value,
                            principal.sub,
                            None,
                            gone.subject_id,
                            "working_delete",
                            {"session_id": session_id, "key": key},
                        )
                    ]
                )


SESSION_OF_ANOTHER_SUBJECT = "session_of_another_subject"


def owned_by(s: TenantSession, principal: Principal, session_id: str, subject_id: str, *, route: str) -> bool:
    """Whether `session_id` may be used for `subject_id`: a session belongs to the subject of its
    first use (its close, or its live working values). Call it under the session's lock.

    Another subject's session is a 409 naming `subject_id` for a caller who may see that subject.
    For a token bound to other subjects it is False: the caller answers as for an unused id and
    writes nothing (the refusal is audited, the rule named, no content), so the answer tells
    nothing about which ids exist. A subject outside the token's binding is refused as always."""
    if not principal.may_touch(subject_id):
        raise Forbidden(OUTSIDE_BINDING)
    owner = s.session_subject(session_id)
    if owner is None or owner == subject_id:
        return True
    if principal.may_touch(owner):
        raise Conflict("the session belongs to another subject", field="subject_id")
    s.append_events(
        [
            NewEvent(
                EventType.AUTHORIZATION_DENIED.value,
                principal.sub,
                None,
                subject_id,
                SESSION_OF_ANOTHER_SUBJECT,
                {"session_id": session_id, "route": route, "rule": SESSION_OF_ANOTHER_SUBJECT},
            )
        ]
    )
    return False


def working_cleared_events(
    actor: str, session_id: str, cleared: list[WorkingItem], reason: str
) -> list[NewEvent]:
    """One event per subject whose values a close or an erasure cleared (keys and counts, no values)."""
    by_subject: dict[str, list[str]] = {}
    for item in cleared:
        by_subject.setdefault(item.subject_id, []).append(item.key)
    return [
        NewEvent(
            EventType.WORKING_CLEARED.value,
            actor,
            None,
            subject,
            reason,
            {"session_id": session_id, "cleared": len(keys), "keys": sorted(keys)},
        )
        for subject, keys in sorted(by_subject.items())
    ]


def _check_ids(session_id: str, key: str | None = None) -> None:
    # The HTTP edge applies the id rule to path ids already; other callers (the CLI, tests) get it here.
    if not valid_id(session_id):
        raise InvalidRequest(f"session_id must be {ID_RULE}", field="session_id")
    if key is not None and not valid_id(key):
        raise InvalidRequest(f"key must be {ID_RULE}", field="key")


def _ttl(request: WorkingPutRequest, policy: PolicyProfile) -> int:
    """The value's time to live: as asked, else the policy's default, never above its ceiling."""
    ceiling = policy.working_max_ttl_seconds
    ttl = request.ttl_seconds if request.ttl_seconds is not None else min(policy.working_ttl_seconds, ceiling)
    if ttl > ceiling:
        raise InvalidRequest(
            f"ttl_seconds {ttl} exceeds the policy's ceiling of {ceiling}", field="ttl_seconds"
        )
    return ttl


def _prepared(request: WorkingPutRequest, policy: PolicyProfile, session_id: str) -> PreparedValue:
    """The value masked, within the session's byte limit, and refused if it reads like an instruction."""
    limit = policy.working_max_bytes
    if value_bytes(request.value) > 4 * limit:  # masking never grows a value this much: not worth masking
        raise PayloadTooLarge(f"value exceeds the session's {limit} bytes of working memory", field="value")
    prepared = mask_working_value(request.value)
    if prepared.bytes > limit:
        raise PayloadTooLarge(f"value exceeds the session's {limit} bytes of working memory", field="value")
    flagged_at = instruction_at(prepared.value)
    if flagged_at is not None:
        logger.warning("instruction-like working value refused", extra={"session_id": session_id})
        raise InvalidRequest(
            f"{flagged_at}: reads like an instruction to a model; working memory holds data only",
            field=flagged_at,
        )
    return prepared


def _check_room(state: WorkingSessionState, size: int, policy: PolicyProfile) -> None:
    """The session is open, not being erased, and has room for one more value."""
    if state.closed:
        raise Conflict("the session is closed; its working memory ended with it", field="session_id")
    if state.erasing:
        raise Conflict("an erasure of this subject is in progress", field="subject_id")
    if state.items + 1 > policy.working_max_items:
        raise RateLimited(
            f"the session already holds {state.items} working values, the policy's maximum"
            f" is {policy.working_max_items}; delete one or let it expire",
            field="working_max_items",
            reason="working_items_per_session",
            limit=policy.working_max_items,
            retry_after_s=policy.working_ttl_seconds,  # by then a value written with the default TTL is gone
        )
    if size > policy.working_max_bytes:  # never fits, however long the caller waits
        raise PayloadTooLarge(
            f"the value is {size} bytes, the policy's maximum for a session is {policy.working_max_bytes}",
            field="value",
        )
    if state.bytes + size > policy.working_max_bytes:
        raise RateLimited(
            f"the session's working memory would hold {state.bytes + size} bytes,"
            f" the policy's maximum is {policy.working_max_bytes}",
            field="working_max_bytes",
            reason="working_bytes_per_session",
            limit=policy.working_max_bytes,
            retry_after_s=policy.working_ttl_seconds,  # by then a value written with the default TTL is gone
        )
