"""The optional Cognito user pool (context `cognitoUserPool`): a resource server with a scope per
role, a client-credentials app client, and the authorizer's issuer, audience and JWKS settings
wired to them; cdk-nag clean. Without it the stack has no pool and the authorizer stays HS256;
an external IdP's settings reach the authorizer as the core reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cfn_template import joined_string, refs_in

from agent_memory.domain.enums import Role
from agent_memory.functions_spec import FUNCTIONS
from conftest import TEST_CONTEXT, Synthesized, _violations

pytestmark = pytest.mark.infra

COGNITO_CONTEXT = {**TEST_CONTEXT, "cognitoUserPool": True, "jwtTenantId": "acme"}


@pytest.fixture(scope="module")
def with_cognito(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    from aws_cdk.assertions import Template
    from infra.app import build_app

    outdir = tmp_path_factory.mktemp("cdk.out.cognito")
    app, stack = build_app(COGNITO_CONTEXT, outdir=str(outdir))
    try:
        assembly = app.synth()
    except RuntimeError as exc:  # cdk-nag findings surface as a failed validation
        pytest.fail(f"synth failed: {exc}\n" + "\n".join(_violations(outdir / "validation-report.json")))
    path = Path(assembly.directory) / stack.template_file
    raw = json.loads(path.read_text())
    return Synthesized(
        stack=stack, template=Template.from_json(raw), raw=raw, template_path=path, outdir=outdir
    )


def only(synthesized: Synthesized, type_: str) -> tuple[str, dict[str, Any]]:
    (found,) = synthesized.resources(type_).items()
    return found


def authorizer_environment(synthesized: Synthesized) -> dict[str, Any]:
    spec = next(s for s in FUNCTIONS if s.trigger == "authorizer")
    (function,) = [
        f
        for f in synthesized.resources("AWS::Lambda::Function").values()
        if f["Properties"]["Handler"] == spec.lambda_handler
    ]
    return dict(function["Properties"]["Environment"]["Variables"])


def test_the_pool_is_for_machine_clients_with_a_scope_per_role(with_cognito: Synthesized) -> None:
    _, pool = only(with_cognito, "AWS::Cognito::UserPool")
    assert pool["Properties"]["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
    assert pool["Properties"]["MfaConfiguration"] == "ON"
    _, server = only(with_cognito, "AWS::Cognito::UserPoolResourceServer")
    assert server["Properties"]["Identifier"] == "agent-memory"
    assert {s["ScopeName"] for s in server["Properties"]["Scopes"]} == {r.value for r in Role}


def test_the_app_client_uses_client_credentials_with_a_secret_and_the_agent_scope(
    with_cognito: Synthesized,
) -> None:
    _, client = only(with_cognito, "AWS::Cognito::UserPoolClient")
    props = client["Properties"]
    assert props["GenerateSecret"] is True
    assert props["AllowedOAuthFlows"] == ["client_credentials"]
    assert props["AllowedOAuthFlowsUserPoolClient"] is True
    server_id, _ = only(with_cognito, "AWS::Cognito::UserPoolResourceServer")
    (scope,) = props["AllowedOAuthScopes"]  # the resource server's agent scope, nothing more
    assert refs_in(scope) == {server_id} and joined_string(scope) == "__TOKEN__/agent"
    _, domain = only(with_cognito, "AWS::Cognito::UserPoolDomain")
    assert domain["Properties"]["Domain"] == "agent-memory-test"


def test_the_authorizer_verifies_the_pools_access_tokens(with_cognito: Synthesized) -> None:
    pool_id, _ = only(with_cognito, "AWS::Cognito::UserPool")
    client_id, _ = only(with_cognito, "AWS::Cognito::UserPoolClient")
    env = authorizer_environment(with_cognito)
    # The issuer is the pool's provider URL, the keys its JWKS, the audience the app client
    assert refs_in(env["MEMORY_JWT_ISSUER"]) == {pool_id}
    assert pool_id in refs_in(env["MEMORY_JWT_JWKS_URL"])
    assert joined_string(env["MEMORY_JWT_JWKS_URL"]).endswith("/.well-known/jwks.json")
    assert joined_string(env["MEMORY_JWT_JWKS_URL"]).startswith("https://cognito-idp.")
    assert refs_in(env["MEMORY_JWT_AUDIENCE"]) == {client_id}
    # And Cognito's token shape: audience in client_id, access tokens only, roles from scopes
    assert env["MEMORY_JWT_AUDIENCE_CLAIM"] == "client_id"
    assert json.loads(env["MEMORY_JWT_REQUIRED_CLAIMS"]) == {"token_use": "access"}
    assert (env["MEMORY_JWT_ROLES_CLAIM"], env["MEMORY_JWT_ROLE_PREFIX"]) == ("scope", "agent-memory/")
    assert env["MEMORY_JWT_TENANT_ID"] == "acme"


def test_the_stack_outputs_what_an_agent_needs_to_get_a_token(with_cognito: Synthesized) -> None:
    outputs = with_cognito.raw["Outputs"]
    assert {"UserPoolId", "AgentClientId", "TokenUrl"} <= set(outputs)
    assert joined_string(outputs["TokenUrl"]["Value"]).endswith("/oauth2/token")


def test_cdk_nag_reports_nothing_unacknowledged_with_the_pool(with_cognito: Synthesized) -> None:
    assert _violations(with_cognito.outdir / "validation-report.json") == []


def test_without_the_flag_there_is_no_pool_and_the_authorizer_uses_the_secret(
    synthesized: Synthesized,
) -> None:
    assert synthesized.resources("AWS::Cognito::UserPool") == {}
    env = authorizer_environment(synthesized)
    assert "MEMORY_JWT_SECRET_ARN" in env and "MEMORY_JWT_JWKS_URL" not in env


def test_an_authorizer_that_cannot_verify_answers_503_with_retry_after(synthesized: Synthesized) -> None:
    responses = {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in synthesized.resources("AWS::ApiGateway::GatewayResponse").values()
    }
    for kind in ("AUTHORIZER_FAILURE", "AUTHORIZER_CONFIGURATION_ERROR"):
        assert responses[kind]["StatusCode"] == "503"
        assert responses[kind]["ResponseParameters"]["gatewayresponse.header.Retry-After"] == "'5'"


def test_an_external_idps_context_reaches_the_authorizer_as_the_core_reads_it(monkeypatch) -> None:
    # Given Entra-style context for a tenant's own IdP
    from infra.config import DeploymentConfig
    from infra.constructs.identity import authorizer_environment as environment_for

    from agent_memory.api.jwks import JwksVerifier
    from agent_memory.api.verifiers import token_verifier
    from agent_memory.config import Settings

    config = DeploymentConfig.from_mapping(
        {
            "jwtIssuer": "https://login.microsoftonline.com/0000-tenant/v2.0",
            "jwtJwksUrl": "https://login.microsoftonline.com/0000-tenant/discovery/v2.0/keys",
            "jwtAudience": "api://agent-memory",
            "jwtTenantId": "acme",
            "jwtRoleMap": '{"Memory.Agent": "agent"}',
        }
    )
    # When the authorizer's environment is read by the core's settings
    for name, value in environment_for(config, None).items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    verifier = token_verifier(settings)
    # Then it is the JWKS verifier for that issuer, audience, tenant and role names
    assert isinstance(verifier, JwksVerifier)
    assert verifier.issuer == "https://login.microsoftonline.com/0000-tenant/v2.0"
    assert verifier.audiences == ["api://agent-memory"]
    assert verifier.mapping.tenant_id == "acme" and dict(verifier.mapping.role_map) == {
        "Memory.Agent": "agent"
    }


@pytest.mark.parametrize(
    ("context", "said"),
    [
        ({"cognitoUserPool": True}, "jwtTenantId"),
        ({"cognitoUserPool": True, "jwtTenantId": "a", "jwtIssuer": "https://x"}, "alternatives"),
        ({"jwtIssuer": "https://x"}, "together"),
        ({"jwtIssuer": "https://x", "jwtJwksUrl": "http://x/keys", "jwtAudience": "a"}, "https"),
        ({"jwtRoleMap": "[1]"}, "JSON object"),
    ],
)
def test_identity_context_mistakes_fail_the_synth_with_the_key_named(context, said) -> None:
    from infra.config import DeploymentConfig

    with pytest.raises(ValueError, match=said):
        DeploymentConfig.from_mapping(context)
