"""The review console's deployment: private bucket, CloudFront with the console's policy header,
the API on the same origin, and the package's static files as the deployed asset."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk.assertions import Match

from agent_memory.console.site import CONTENT_SECURITY_POLICY, STATIC_DIR

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
