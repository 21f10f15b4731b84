"""The review console in AWS: its static files in a private bucket, served by CloudFront with the
same Content-Security-Policy as `memory serve`, and the API's `/v1/*` behind the same domain.

Why CloudFront in front of S3 and the API, rather than the API's own stage: the console calls
`/v1` on its own origin, so its policy stays `connect-src 'self'` and the API needs no CORS; the
static files are cached at the edge instead of invoking a Lambda per asset; and the security
headers are set once by a response headers policy for every file. Serving the files from the
API's stage would need an S3 proxy integration with its own role per route and give up none of
that complexity.

The page's sign-in configuration (`console/config.json`: the tenant's IdP endpoints and client id,
or none) is written into the bucket with the files, and the policy's `connect-src` names the
IdP's token endpoint, the one other origin the page calls.
"""

from __future__ import annotations

import json

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3_deployment

from agent_memory.api.jwks import ClaimMapping
from agent_memory.console.site import (
    CONFIG_PATH,
    PREFIX,
    STATIC_DIR,
    ConsoleSignIn,
    claim_names,
    content_security_policy,
)
from constructs import Construct
from infra.acknowledgments import ack, logical_id
from infra.config import DeploymentConfig

# /console and /console/ are the page; everything else is a file or the API. A viewer-request
# CloudFront Function (no inline script reaches the page: this runs at the edge).
INDEX_REWRITE = f"""function handler(event) {{
  var request = event.request;
  if (request.uri === "{PREFIX}") {{
    return {{ statusCode: 308, statusDescription: "Permanent Redirect",
             headers: {{ location: {{ value: "{PREFIX}/" }} }} }};
  }}
  if (request.uri === "{PREFIX}/") {{ request.uri = "{PREFIX}/index.html"; }}
  return request;
}}"""


def _external_claim_names(config: DeploymentConfig) -> dict[str, object] | None:
    """The tenant IdP's claim mapping as the authorizer applies it, for the page to show the
    screens the API allows (the Cognito pool is for machine clients: no console users there)."""
    if not config.jwt_jwks_url:
        return None
    return claim_names(
        ClaimMapping(
            tenant=config.jwt_tenant_claim,
            tenant_id=config.jwt_tenant_id or None,
            roles=config.jwt_roles_claim,
            role_prefix=config.jwt_role_prefix,
            role_map=json.loads(config.jwt_role_map) if config.jwt_role_map else {},
            clearance=config.jwt_clearance_claim,
            default_clearance=config.jwt_default_clearance,
        )
    )


class Console(Construct):
    """Exposes `bucket`, `distribution`, `headers` (the response headers policy), `url`,
    `sign_in` and `content_security_policy`."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: DeploymentConfig, rest_api: apigw.RestApi
    ) -> None:
        super().__init__(scope, construct_id)
        self.sign_in = ConsoleSignIn(
            authorization_endpoint=config.console_oidc_authorization_endpoint or None,
            token_endpoint=config.console_oidc_token_endpoint or None,
            client_id=config.console_oidc_client_id or None,
            scopes=config.console_oidc_scopes or "openid",
            issuer=config.console_oidc_issuer or config.jwt_issuer or None,
            redirect_uri=config.console_oidc_redirect_uri or None,
            claims=_external_claim_names(config),
        )
        self.content_security_policy = content_security_policy(self.sign_in.connect_origins())
        self.bucket = s3.Bucket(
            self,
            "Files",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=True,  # a bad deploy of the page can be rolled back file by file
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.headers = cloudfront.ResponseHeadersPolicy(
            self,
            "Headers",
            comment="Review console: strict CSP, no framing, no sniffing, no referrer",
            security_headers_behavior=cloudfront.ResponseSecurityHeadersBehavior(
                content_security_policy=cloudfront.ResponseHeadersContentSecurityPolicy(
                    content_security_policy=self.content_security_policy, override=True
                ),
                content_type_options=cloudfront.ResponseHeadersContentTypeOptions(override=True),
                frame_options=cloudfront.ResponseHeadersFrameOptions(
                    frame_option=cloudfront.HeadersFrameOption.DENY, override=True
                ),
                referrer_policy=cloudfront.ResponseHeadersReferrerPolicy(
                    referrer_policy=cloudfront.HeadersReferrerPolicy.NO_REFERRER, override=True
                ),
                strict_transport_security=cloudfront.ResponseHeadersStrictTransportSecurity(
                    access_control_max_age=Duration.days(365), include_subdomains=True, override=True
                ),
            ),
            custom_headers_behavior=cloudfront.ResponseCustomHeadersBehavior(
                custom_headers=[
                    cloudfront.ResponseCustomHeader(
                        header="Cross-Origin-Opener-Policy", value="same-origin", override=True
                    )
                ]
            ),
        )
        rewrite = cloudfront.Function(
            self,
            "IndexRewrite",
            code=cloudfront.FunctionCode.from_inline(INDEX_REWRITE),
            runtime=cloudfront.FunctionRuntime.JS_2_0,
            comment="The console's index page at /console/",
        )
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment=f"Agent Memory review console ({config.environment_name})",
            default_behavior=cloudfront.BehaviorOptions(
                origin=origins.S3BucketOrigin.with_origin_access_control(self.bucket),
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                allowed_methods=cloudfront.AllowedMethods.ALLOW_GET_HEAD,
                cache_policy=cloudfront.CachePolicy.CACHING_OPTIMIZED,
                response_headers_policy=self.headers,
                function_associations=[
                    cloudfront.FunctionAssociation(
                        function=rewrite, event_type=cloudfront.FunctionEventType.VIEWER_REQUEST
                    )
                ],
            ),
            additional_behaviors={
                # The API on the console's own origin: never cached, every header but Host passed
                # (Authorization included), every method.
                "/v1/*": cloudfront.BehaviorOptions(
                    origin=origins.RestApiOrigin(rest_api),
                    viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
                    allowed_methods=cloudfront.AllowedMethods.ALLOW_ALL,
                    cache_policy=cloudfront.CachePolicy.CACHING_DISABLED,
                    origin_request_policy=cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
                    response_headers_policy=self.headers,
                )
            },
            minimum_protocol_version=cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
            http_version=cloudfront.HttpVersion.HTTP2_AND_3,
            price_class=cloudfront.PriceClass.PRICE_CLASS_100,
        )
        self.url = f"https://{self.distribution.distribution_domain_name}{PREFIX}/"
        self.deployment = s3_deployment.BucketDeployment(
            self,
            "Deploy",
            sources=[
                s3_deployment.Source.asset(str(STATIC_DIR)),
                s3_deployment.Source.json_data(CONFIG_PATH[len(PREFIX) + 1 :], self._page_config()),
            ],
            destination_bucket=self.bucket,
            destination_key_prefix=PREFIX.lstrip("/") + "/",
            distribution=self.distribution,
            distribution_paths=[f"{PREFIX}/*"],
            memory_limit=256,
        )
        self._trace_deployment_handler()
        self._acknowledge()

    def _page_config(self) -> dict[str, object]:
        """The page's config.json, as `memory serve` answers it; the redirect URI is the
        console's own URL unless one is configured (register it at the IdP)."""
        document = self.sign_in.document()
        if document["oidc"] is not None and "redirect_uri" not in document["oidc"]:
            document["oidc"]["redirect_uri"] = self.url
        return document

    def _deployment_handlers(self) -> list[lambda_.Function]:
        """The deployment's singleton handler, which the CDK library puts at stack level."""
        return [
            child
            for child in Stack.of(self).node.children
            if child.node.id.startswith("Custom::CDKBucketDeployment") and isinstance(child, lambda_.Function)
        ]

    def _trace_deployment_handler(self) -> None:
        """Active tracing on the deployment's handler too, as on every function of the stack
        (BucketDeployment has no setting for it)."""
        for handler in self._deployment_handlers():
            cfn = handler.node.default_child
            assert isinstance(cfn, lambda_.CfnFunction)
            cfn.add_property_override("TracingConfig", {"Mode": "Active"})
            handler.add_to_role_policy(
                iam.PolicyStatement(
                    actions=["xray:PutTraceSegments", "xray:PutTelemetryRecords"], resources=["*"]
                )
            )

    def _acknowledge(self) -> None:
        ack(
            self.bucket,
            "S1",
            "The console bucket holds the console's own static files, written only by the "
            "deployment; reads are CloudFront's (its standard logs can be enabled per environment).",
        )
        ack(
            self.distribution,
            "CFR1",
            "The console is for the tenant's staff wherever they work; no geographic restriction.",
        )
        ack(
            self.distribution,
            "CFR2",
            "No WAF web ACL by default (fixed monthly cost), as for the API; the API behind "
            "/v1/* keeps its authorizer, throttling and validation. Attach one per environment.",
        )
        ack(
            self.distribution,
            "CFR3",
            "Access logging needs a log bucket with ACLs; the API's own access logs record every "
            "/v1 call, and the console's files are public-by-design static assets.",
        )
        ack(
            self.distribution,
            "CFR4",
            "The default *.cloudfront.net certificate allows only CloudFront's default policy; "
            "TLSv1.2_2021 applies once an environment attaches its own domain and certificate.",
        )
        stack = Stack.of(self)
        for child in self._deployment_handlers():
            ack(child, "L1", "The BucketDeployment handler's runtime is chosen by the CDK library.")
            ack(
                child,
                "IAM4",
                "CDK's BucketDeployment handler uses AWSLambdaBasicExecutionRole for its logs.",
                "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
            )
            for finding, reason in self._deployment_wildcards(stack).items():
                ack(child, "IAM5", reason, finding)

    def _deployment_wildcards(self, stack: Stack) -> dict[str, str]:
        """The BucketDeployment handler's wildcard grants, each named (a new one still fails)."""
        scoped = "CDK's BucketDeployment grant ({}) is scoped to the asset bucket and the console bucket."
        findings = {
            f"Action::{action}": scoped.format(action)
            for action in ("s3:GetObject*", "s3:GetBucket*", "s3:List*", "s3:DeleteObject*", "s3:Abort*")
        }
        findings[f"Resource::<{logical_id(stack, self.bucket)}.Arn>/*"] = (
            "The deployment writes and prunes the console's objects: object actions must name keys."
        )
        findings[
            "Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*"
        ] = "The deployment reads its asset from the CDK bootstrap bucket's objects."
        findings["Resource::*"] = (
            "cloudfront:CreateInvalidation and GetInvalidation, which the deployment calls to refresh "
            "the console after each deploy, have no resource-level permissions in CDK's grant."
        )
        return findings
