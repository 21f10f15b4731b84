"""API Gateway Lambda (REQUEST/TOKEN) authorizer: validates the bearer token and
passes tenant_id, roles, sub and clearance to the handlers as context."""

from typing import Any

from aws_lambda_powertools.utilities import parameters
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.identity import TokenRefused, authorizer_context, refused_context, verify_token
from agent_memory.config import Settings
from agent_memory.domain.errors import Unauthenticated
from agent_memory.observability import logger


def _secret() -> str:
    """The signing secret from settings (MEMORY_JWT_SECRET), else from Secrets Manager
    (MEMORY_JWT_SECRET_ARN, cached five minutes)."""
    settings = Settings()
    if settings.jwt_secret is not None:
        return settings.jwt_secret.get_secret_value()
    if not settings.jwt_secret_arn:
        raise RuntimeError("the authorizer needs MEMORY_JWT_SECRET or MEMORY_JWT_SECRET_ARN")
    return str(parameters.get_secret(settings.jwt_secret_arn, max_age=300))


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    token = (event.get("authorizationToken") or "").removeprefix("Bearer ").strip()
    try:
        ctx = authorizer_context(verify_token(_secret(), token))
    except TokenRefused as exc:
        # Signed by us, claims refused (expired, unknown role): the function answers 401 before
        # routing and records the refusal in the tenant's audit chain; the context grants nothing.
        logger.info("token refused", extra={"reason": exc.message})
        ctx = refused_context(exc)
    except Unauthenticated as exc:
        logger.info("token refused", extra={"reason": exc.message})
        raise Exception("Unauthorized") from exc  # API Gateway's contract for a 401
    return {
        "principalId": ctx["sub"],
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [
                {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": event["methodArn"]}
            ],
        },
        "context": ctx,
    }
