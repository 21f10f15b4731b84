"""Which policy profile a tenant runs under: stored per tenant, default from settings.

Cached for a short while so the write and read paths do not pay a query for it: a change
reaches every running process within CACHE_SECONDS. Every change is an audit event written in
the same transaction as the change.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from pydantic import ValidationError

from agent_memory.domain.enums import EventType, Role
from agent_memory.domain.errors import InvalidRequest
from agent_memory.domain.policy import PRESETS, PROFILES, PolicyProfile, guardrail_violations, profile
from agent_memory.domain.records import Principal
from agent_memory.observability import logger
from agent_memory.ports.store import MemoryStore, NewEvent
from agent_memory.services.authorization import require_mutation, require_read, require_tenant_wide

CACHE_SECONDS = 30.0


class PolicyRegistry:
    def __init__(self, store: MemoryStore, default_profile: str) -> None:
        self.store = store
        self.default = profile(default_profile)
        self._cache: dict[str, tuple[float, PolicyProfile]] = {}
        self._lock = threading.Lock()

    def for_tenant(self, tenant_id: str) -> PolicyProfile:
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(tenant_id)
        if hit and now - hit[0] < CACHE_SECONDS:
            return hit[1]
        stored = self.stored(tenant_id)
        resolved = self.default if stored is None else self.resolve_stored(tenant_id, *stored)[0]
        with self._lock:
            self._cache[tenant_id] = (now, resolved)
        return resolved

    def resolve_stored(
        self, tenant_id: str, name: str, overrides: dict[str, Any]
    ) -> tuple[PolicyProfile, bool]:
        """The stored policy, and whether it is valid. One that a later release's bounds refuse is
        served as its preset without the overrides, loudly, rather than failing every call."""
        try:
            return _resolve(name, overrides), True
        except (KeyError, ValidationError) as exc:
            logger.error(
                "stored tenant policy is invalid; serving its preset without overrides",
                extra={"tenant_id": tenant_id, "profile": name, "error": type(exc).__name__},
            )
            return (profile(name) if name in PROFILES else self.default), False

    def stored(self, tenant_id: str) -> tuple[str, dict[str, Any]] | None:
        with self.store.tenant(tenant_id) as session:
            return session.tenant_policy()

    def set(
        self, tenant_id: str, profile_name: str, overrides: dict[str, Any] | None = None, *, actor: str
    ) -> PolicyProfile:
        """Store the tenant's profile and overrides (validated first) with an audit event."""
        overrides = overrides or {}
        resolved = _resolve(profile_name, overrides)
        with self.store.tenant(tenant_id) as session:
            previous = session.tenant_policy(for_update=True)  # the audit's "previous" is exact
            session.set_tenant_policy(profile_name, overrides)
            session.append_events(
                [
                    NewEvent(
                        EventType.POLICY_CHANGED.value,
                        actor,
                        reason="tenant_policy_set",
                        payload={
                            "profile": profile_name,
                            "overrides": overrides,
                            "previous_profile": previous[0] if previous else None,
                            "previous_overrides": previous[1] if previous else None,
                        },
                    )
                ]
            )
        with self._lock:
            self._cache[tenant_id] = (time.monotonic(), resolved)
        return resolved


class PolicyAdmin:
    """The tenant admin's view and change of its policy (docs/rules.md, Roles: admin manages policy
    profiles). An admin picks a preset and overrides fields, within the rules no tenant may relax
    (`domain.policy.guardrail_violations`); the `benchmark` profile is not on offer."""

    def __init__(self, registry: PolicyRegistry) -> None:
        self.registry = registry

    def show(self, principal: Principal) -> dict[str, Any]:
        require_read(principal, Role.ADMIN)
        stored = self.registry.stored(principal.tenant_id)
        name, overrides = stored if stored else (self.registry.default.name, {})
        effective, valid = self.registry.resolve_stored(principal.tenant_id, name, overrides)
        view: dict[str, Any] = {
            "tenant_id": principal.tenant_id,
            "profile": name,
            "overrides": overrides,
            "source": "tenant" if stored else "deployment_default",
            "effective": effective.model_dump(mode="json"),
            "presets": list(PRESETS),
        }
        if not valid:
            view["overrides_refused"] = True  # stored before a bound existed; PUT a valid policy
        return view

    def change(self, principal: Principal, profile_name: str, overrides: dict[str, Any]) -> dict[str, Any]:
        require_mutation(principal, Role.ADMIN, action="change the tenant's policy")
        require_tenant_wide(principal, action="change the tenant's policy")
        if profile_name not in PRESETS:
            raise InvalidRequest(f"profile must be one of {list(PRESETS)}", field="profile")
        try:
            resolved = _resolve(profile_name, overrides)
        except ValidationError as exc:
            first = exc.errors()[0]
            path = ".".join(str(p) for p in first["loc"])
            raise InvalidRequest(f"overrides.{path}: {first['msg']}", field=f"overrides.{path}") from None
        violations = guardrail_violations(resolved, profile(profile_name))
        if violations:
            name, why = violations[0]
            raise InvalidRequest(f"overrides.{name}: {why}", field=f"overrides.{name}")
        self.registry.set(principal.tenant_id, profile_name, overrides, actor=principal.sub)
        return self.show(principal)


def _resolve(name: str, overrides: dict[str, Any]) -> PolicyProfile:
    base = profile(name)
    return base.with_overrides(overrides) if overrides else base
