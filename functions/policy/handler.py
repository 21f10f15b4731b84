"""Policy API: the tenant's policy profile (a preset and overrides), read and changed by its admin."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import create_app, current_principal
from agent_memory.api.models.policy import PolicyChange, PolicyView
from agent_memory.bootstrap import get_container
from agent_memory.observability import logger, metrics, tracer

app = create_app()


@app.get("/v1/policy", summary="The tenant's policy: preset, overrides and the effective values")
def show_policy() -> PolicyView:
    return PolicyView.model_validate(get_container().policy_admin.show(current_principal(app)))


@app.put("/v1/policy", summary="Choose a preset and override fields; refused if it relaxes a hard rule")
def change_policy(body: PolicyChange) -> PolicyView:
    view = get_container().policy_admin.change(current_principal(app), body.profile, body.overrides)
    return PolicyView.model_validate(view)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
