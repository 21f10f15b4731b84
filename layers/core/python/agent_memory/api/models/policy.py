"""Policy: the tenant's profile (a preset and overrides), read and changed by its admin."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from agent_memory.api.models.common import RequestModel, ResponseModel, omitted_unless_true
from agent_memory.domain.policy import PRESETS, PolicyProfile, profile


class PolicyChange(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"profile": "support", "overrides": {"working_ttl_seconds": 600}}]}
    )

    profile: str = Field(min_length=1, max_length=40, description="a preset: crm, support or wealth")
    overrides: dict[str, Any] = Field(default_factory=dict, description="fields of the profile to change")


class PolicyView(ResponseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "tenant_id": "acme",
                    "profile": "support",
                    "overrides": {},
                    "source": "tenant",
                    "effective": profile("support").model_dump(mode="json"),
                    "presets": list(PRESETS),
                }
            ]
        }
    )

    tenant_id: str
    profile: str = Field(description="the preset in force")
    overrides: dict[str, Any] = Field(description="the fields the tenant changed")
    source: Literal["tenant", "deployment_default"]
    effective: PolicyProfile = Field(description="the preset with the overrides applied")
    presets: list[str] = Field(description="the presets a tenant may choose")
    overrides_refused: bool = omitted_unless_true(
        "true when the stored overrides break a rule added since (the preset applies; PUT a valid policy)"
    )
