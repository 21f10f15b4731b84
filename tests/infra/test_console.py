"""The review console's deployment: private bucket, CloudFront with the console's policy header,
the API on the same origin, the package's static files as the deployed asset, and the page's
sign-in configuration (the tenant's IdP, or none) written beside them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match

from agent_memory.console.site import CONTENT_SECURITY_POLICY, STATIC_DIR
from conftest import TEST_CONTEXT, Synthesized, _violations

pytestmark = pytest.mark.infra


def _distribution(synthesized: Any) -> dict[str, Any]:
    (dist,) = synthesized.resources("AWS::CloudFront::Distribution").values()
    return dist["Properties"]["DistributionConfig"]


def test_the_console_bucket_is_private_and_encrypted(synthesized: Any) -> None:
    bucket_id = synthesized.stack.get_logical_id(synthesized.stack.console.bucket.node.default_child)
    bucket = synthesized.raw["Resources"][bucket_id]["Properties"]
    assert bucket["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0][
        "ServerSideEncryptionByDefault"
    ] == {"SSEAlgorithm": "AES256"}
    synthesized.template.resource_count_is("AWS::CloudFront::OriginAccessControl", 1)


def test_every_console_response_gets_the_same_policy_as_the_local_server(synthesized: Any) -> None:
    synthesized.template.has_resource_properties(
        "AWS::CloudFront::ResponseHeadersPolicy",
        {
            "ResponseHeadersPolicyConfig": Match.object_like(
                {
                    "SecurityHeadersConfig": Match.object_like(
                        {
                            "ContentSecurityPolicy": {
                                "ContentSecurityPolicy": CONTENT_SECURITY_POLICY,
                                "Override": True,
                            },
                            "FrameOptions": {"FrameOption": "DENY", "Override": True},
                            "ContentTypeOptions": {"Override": True},
                        }
                    )
                }
            )
        },
    )
    config = _distribution(synthesized)
    behaviors = [config["DefaultCacheBehavior"], *config["CacheBehaviors"]]
    assert all("ResponseHeadersPolicyId" in b for b in behaviors)
    assert all(b["ViewerProtocolPolicy"] in ("redirect-to-https", "https-only") for b in behaviors)


def test_the_api_is_served_on_the_console_origin_uncached_with_the_token(synthesized: Any) -> None:
    config = _distribution(synthesized)
    (api,) = [b for b in config["CacheBehaviors"] if b["PathPattern"] == "/v1/*"]
    assert set(api["AllowedMethods"]) >= {"GET", "POST", "PUT", "DELETE"}
    assert api["CachePolicyId"] == "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"  # CachingDisabled
    assert api["OriginRequestPolicyId"] == "b689b0a8-53d0-40ab-baf2-68738e2966ac"  # AllViewerExceptHostHeader
    origin = next(o for o in config["Origins"] if o["Id"] == api["TargetOriginId"])
    assert "execute-api" in str(origin["DomainName"])
    # the API's stage: "/" + the stage segment of the API's URL
    path = origin["OriginPath"]["Fn::Join"][1]
    assert path[0] == "/" and path[1]["Fn::Select"][0] == 3


def test_the_deployed_files_are_the_packages_static_folder(synthesized: Any) -> None:
    (deployment,) = synthesized.resources("Custom::CDKBucketDeployment").values()
    assert deployment["Properties"]["DestinationBucketKeyPrefix"] == "console/"
    assert deployment["Properties"]["DistributionPaths"] == ["/console/*"]
    assets = [p for p in synthesized.outdir.iterdir() if p.is_dir() and (p / "index.html").is_file()]
    assert assets, "the console's files are not an asset of the cloud assembly"
    shipped = {p.relative_to(assets[0]).as_posix() for p in assets[0].rglob("*") if p.is_file()}
    expected = {p.relative_to(STATIC_DIR).as_posix() for p in STATIC_DIR.rglob("*") if p.is_file()}
    assert shipped == expected


def test_the_stack_outputs_the_console_url(synthesized: Any) -> None:
    assert "ConsoleUrl" in synthesized.raw["Outputs"]


# ---- the page's sign-in configuration ----

IDP = "https://login.example.com/acme"
OIDC_CONTEXT = {
    **TEST_CONTEXT,
    "jwtIssuer": IDP,
    "jwtJwksUrl": f"{IDP}/keys",
    "jwtAudience": "agent-memory-api",
    "consoleOidcAuthorizationEndpoint": f"{IDP}/oauth2/authorize",
    "consoleOidcTokenEndpoint": "https://tokens.example.com/acme/oauth2/token",
    "consoleOidcClientId": "review-console",
    "consoleOidcScopes": "openid profile",
    "jwtRolesClaim": "groups",
    "jwtRoleMap": json.dumps({"Memory Reviewers": "reviewer"}),
}


@pytest.fixture(scope="module")
def with_sign_in(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    from aws_cdk.assertions import Template
    from infra.app import build_app

    outdir = tmp_path_factory.mktemp("cdk.out.console-oidc")
    app, stack = build_app(OIDC_CONTEXT, outdir=str(outdir))
    try:
        assembly = app.synth()
    except RuntimeError as exc:  # cdk-nag findings surface as a failed validation
        pytest.fail(f"synth failed: {exc}\n" + "\n".join(_violations(outdir / "validation-report.json")))
    path = Path(assembly.directory) / stack.template_file
    raw = json.loads(path.read_text())
    return Synthesized(
        stack=stack, template=Template.from_json(raw), raw=raw, template_path=path, outdir=outdir
    )


def _deployed_config(synthesized: Synthesized) -> tuple[dict[str, Any], dict[str, Any]]:
    """The config.json the deployment writes, and the deployment's properties."""
    (deployment,) = synthesized.resources("Custom::CDKBucketDeployment").values()
    files = [p for p in synthesized.outdir.glob("asset.*/config.json") if p.is_file()]
    assert len(files) == 1, files
    # A deploy-time value is a marker the deployment replaces with its JSON text (quotes included)
    text = re.sub(r"<<marker:0xbaba:(\d+)>>", r'"<deploy-time value \1>"', files[0].read_text())
    return json.loads(text), deployment["Properties"]


def _policy(synthesized: Synthesized) -> str:
    (policy,) = synthesized.resources("AWS::CloudFront::ResponseHeadersPolicy").values()
    config = policy["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
    return str(config["ContentSecurityPolicy"]["ContentSecurityPolicy"])


def test_without_an_idp_the_page_is_told_there_is_none(synthesized: Any) -> None:
    # Given the stack without console sign-in settings
    # Then config.json says so (the page offers a pasted token) and the policy calls only itself
    document, deployment = _deployed_config(synthesized)
    assert document.get("oidc") is None  # the CDK writes {} for {"oidc": null}: the page reads both
    assert "claims" not in document  # HS256 tokens carry the service's own claim names
    assert len(deployment["SourceObjectKeys"]) == 2  # the files and the configuration
    assert _policy(synthesized) == CONTENT_SECURITY_POLICY


def test_the_deployment_writes_the_idps_sign_in_for_the_page(with_sign_in: Synthesized) -> None:
    # Given the tenant's IdP for the console's users
    # Then config.json names its endpoints, the client, the scopes and the issuer
    document, deployment = _deployed_config(with_sign_in)
    oidc = document["oidc"]
    assert {k: oidc[k] for k in ("authorization_endpoint", "token_endpoint", "client_id", "scopes")} == {
        "authorization_endpoint": f"{IDP}/oauth2/authorize",
        "token_endpoint": "https://tokens.example.com/acme/oauth2/token",
        "client_id": "review-console",
        "scopes": "openid profile",
    }
    assert oidc["issuer"] == IDP  # the ID token's iss, jwtIssuer unless set apart
    # And the claims as the authorizer maps them, for the page to show the screens it allows
    assert document["claims"]["roles"] == "groups"
    assert document["claims"]["role_map"] == {"Memory Reviewers": "reviewer"}
    # And the redirect URI is the console's own URL, filled in at deploy time from the distribution
    assert oidc["redirect_uri"] == "<deploy-time value 0>"
    (markers,) = [m for m in deployment["SourceMarkers"] if m]
    dist_id = with_sign_in.stack.get_logical_id(with_sign_in.stack.console.distribution.node.default_child)
    assert markers == {
        "<<marker:0xbaba:0>>": {
            "Fn::Join": ["", ['"https://', {"Fn::GetAtt": [dist_id, "DomainName"]}, '/console/"']]
        }
    }


def test_the_policy_lets_the_page_call_exactly_the_token_endpoint(with_sign_in: Synthesized) -> None:
    policy = dict(p.strip().split(" ", 1) for p in _policy(with_sign_in).split(";"))
    assert policy["connect-src"] == "'self' https://tokens.example.com"
    assert "*" not in _policy(with_sign_in)
    assert policy["script-src"] == "'self'" and policy["form-action"] == "'none'"


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"consoleOidcClientId": "review-console"}, "together"),
        (
            {
                "consoleOidcAuthorizationEndpoint": "http://login.example.com/authorize",
                "consoleOidcTokenEndpoint": "https://login.example.com/token",
                "consoleOidcClientId": "c",
            },
            "must be https",
        ),
    ],
)
def test_an_incomplete_or_plain_http_sign_in_is_refused(context: dict[str, Any], message: str) -> None:
    from infra.config import DeploymentConfig

    with pytest.raises(ValueError, match=message):
        DeploymentConfig.from_mapping(context)
