"""Policy API: the tenant's policy profile (a preset and overrides), read and changed by its admin."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, Field

from agent_memory.api.http import create_app, current_principal
from agent_memory.bootstrap import get_container
from agent_memory.observability import logger, metrics, tracer

app = create_app()


class PolicyChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    profile: str = Field(min_length=1, max_length=40, description="a preset: crm, support or wealth")
    overrides: dict[str, Any] = Field(default_factory=dict, description="fields of the profile to change")


@app.get("/v1/policy", summary="The tenant's policy: preset, overrides and the effective values")
def show_policy() -> dict[str, Any]:
    return get_container().policy_admin.show(current_principal(app))


@app.put("/v1/policy", summary="Choose a preset and override fields; refused if it relaxes a hard rule")
def change_policy(body: PolicyChange) -> dict[str, Any]:
    return get_container().policy_admin.change(current_principal(app), body.profile, body.overrides)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
