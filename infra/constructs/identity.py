"""Production identity for the API authorizer.

Optional (`cognitoUserPool`): a Cognito user pool for machine clients. A resource server
`agent-memory` has one scope per role of the service; an app client with a secret uses the
client-credentials grant and is allowed the `agent` scope. Cognito's access tokens carry no
`aud` (the app client is `client_id`), their roles are the granted scopes (`agent-memory/agent`)
and one pool serves one tenant (`jwtTenantId`): `authorizer_environment` says exactly that to
the authorizer. With an external IdP (`jwtIssuer`, `jwtJwksUrl`, `jwtAudience`), the same
settings come from context instead.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_cognito as cognito

from agent_memory.domain.enums import Role
from constructs import Construct
from infra.config import DeploymentConfig

RESOURCE_SERVER = "agent-memory"
# The scopes a client may be given, one per role (docs/deploy.md: a client per kind of caller).
ROLE_SCOPES = tuple(role.value for role in Role)
AGENT_CLIENT_SCOPES = ("agent",)


class CognitoIdentity(Construct):
    """Exposes `user_pool`, `resource_server`, `agent_client`, `domain`, `issuer`, `jwks_url`."""

    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig) -> None:
        super().__init__(scope, construct_id)
        self.user_pool = cognito.UserPool(
            self,
            "UserPool",
            user_pool_name=f"agent-memory-{config.environment_name}",
            # Machine clients only: nobody signs up, and a person added by an operator needs MFA.
            self_sign_up_enabled=False,
            sign_in_aliases=cognito.SignInAliases(username=True, email=True),
            mfa=cognito.Mfa.REQUIRED,
            mfa_second_factor=cognito.MfaSecondFactor(sms=False, otp=True),
            password_policy=cognito.PasswordPolicy(
                min_length=14,
                require_lowercase=True,
                require_uppercase=True,
                require_digits=True,
                require_symbols=True,
            ),
            account_recovery=cognito.AccountRecovery.NONE,
            feature_plan=cognito.FeaturePlan.ESSENTIALS,
            deletion_protection=config.deletion_protection,
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.scopes = {
            name: cognito.ResourceServerScope(scope_name=name, scope_description=f"the {name} role")
            for name in ROLE_SCOPES
        }
        self.resource_server = self.user_pool.add_resource_server(
            "ResourceServer",
            identifier=RESOURCE_SERVER,
            user_pool_resource_server_name="Agent Memory Service",
            scopes=list(self.scopes.values()),
        )
        self.agent_client = self.user_pool.add_client(
            "AgentClient",
            user_pool_client_name=f"agent-memory-{config.environment_name}-agents",
            generate_secret=True,
            auth_flows=cognito.AuthFlow(),  # no user sign-in flows: client credentials only
            o_auth=cognito.OAuthSettings(
                flows=cognito.OAuthFlows(client_credentials=True),
                scopes=[
                    cognito.OAuthScope.resource_server(self.resource_server, self.scopes[name])
                    for name in AGENT_CLIENT_SCOPES
                ],
            ),
            access_token_validity=Duration.hours(1),
            prevent_user_existence_errors=True,
            enable_token_revocation=True,
        )
        self.domain = self.user_pool.add_domain(
            "TokenDomain",
            cognito_domain=cognito.CognitoDomainOptions(
                domain_prefix=config.cognito_domain_prefix or f"agent-memory-{config.environment_name}"
            ),
        )
        self.issuer = self.user_pool.user_pool_provider_url
        region = Stack.of(self).region
        self.jwks_url = (
            f"https://cognito-idp.{region}.amazonaws.com/{self.user_pool.user_pool_id}/.well-known/jwks.json"
        )
        self.token_url = f"{self.domain.base_url()}/oauth2/token"


def authorizer_environment(
    config: DeploymentConfig, cognito_identity: CognitoIdentity | None
) -> dict[str, str]:
    """The authorizer's identity settings (MEMORY_JWT_*): Cognito's shape when the pool is on, the
    context's external IdP otherwise, nothing (HS256 with the secret) when neither is set."""
    if cognito_identity is not None:
        return {
            "MEMORY_JWT_ISSUER": cognito_identity.issuer,
            "MEMORY_JWT_JWKS_URL": cognito_identity.jwks_url,
            # The pool's agent client, and any client an operator added (jwtAudience).
            "MEMORY_JWT_AUDIENCE": ",".join(
                [cognito_identity.agent_client.user_pool_client_id, *_listed(config.jwt_audience)]
            ),
            "MEMORY_JWT_AUDIENCE_CLAIM": "client_id",
            "MEMORY_JWT_REQUIRED_CLAIMS": '{"token_use": "access"}',
            "MEMORY_JWT_ROLES_CLAIM": "scope",
            "MEMORY_JWT_ROLE_PREFIX": f"{RESOURCE_SERVER}/",
            "MEMORY_JWT_TENANT_ID": config.jwt_tenant_id,
            "MEMORY_JWT_DEFAULT_CLEARANCE": config.jwt_default_clearance,
        }
    if not config.jwt_jwks_url:
        return {}
    environment = {
        "MEMORY_JWT_ISSUER": config.jwt_issuer,
        "MEMORY_JWT_JWKS_URL": config.jwt_jwks_url,
        "MEMORY_JWT_AUDIENCE": config.jwt_audience,
        "MEMORY_JWT_AUDIENCE_CLAIM": config.jwt_audience_claim,
        "MEMORY_JWT_TENANT_CLAIM": config.jwt_tenant_claim,
        "MEMORY_JWT_ROLES_CLAIM": config.jwt_roles_claim,
        "MEMORY_JWT_ROLE_PREFIX": config.jwt_role_prefix,
        "MEMORY_JWT_CLEARANCE_CLAIM": config.jwt_clearance_claim,
        "MEMORY_JWT_DEFAULT_CLEARANCE": config.jwt_default_clearance,
    }
    optional = {
        "MEMORY_JWT_TENANT_ID": config.jwt_tenant_id,
        "MEMORY_JWT_ROLE_MAP": config.jwt_role_map,
        "MEMORY_JWT_REQUIRED_CLAIMS": config.jwt_required_claims,
    }
    return {k: v for k, v in (environment | optional).items() if v}


def _listed(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]
