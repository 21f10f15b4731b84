"""cdk-nag AwsSolutions acknowledgments, each with the reason it is acceptable.

cdk-nag v3 takes suppressions through CDK's `Validations.of(scope).acknowledge`
(the v2 `NagSuppressions` API is gone). Every acknowledgment is attached to
the narrowest construct that raises it and, for rules that report several
findings (IAM4, IAM5), names the exact finding: a new wildcard or managed
policy elsewhere still fails the synth.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from infra.acknowledgments import ack, logical_id

if TYPE_CHECKING:
    from infra.stack import MemoryStack

# Actions without resource-level permissions (AWS documents Resource "*" for them).
XRAY_REASON = (
    "X-Ray tracing (xray:PutTraceSegments, xray:PutTelemetryRecords) has no resource-level "
    "permissions; AWS documents Resource '*'."
)
ENI_REASON = (
    "A VPC-attached Lambda needs the EC2 network-interface actions, which AWS documents with "
    "Resource '*' (ec2:DescribeNetworkInterfaces has no resource-level permissions)."
)
S3_GRANT_REASON = (
    "CDK's bucket grant uses action families ({action}) scoped to the transcripts bucket and "
    "its objects only."
)
KMS_GRANT_REASON = (
    "CDK's key grant uses action families ({action}) scoped to the pipeline key only, which "
    "encrypts the transcripts bucket and the extraction queues."
)
S3_ACTION_FAMILIES = ("s3:GetObject*", "s3:GetBucket*", "s3:List*", "s3:DeleteObject*", "s3:Abort*")
KMS_ACTION_FAMILIES = ("kms:ReEncrypt*", "kms:GenerateDataKey*")


def add_suppressions(stack: MemoryStack) -> None:
    """Every acknowledgment of the stack's findings (`infra.app.build_app` applies them once the
    stack is built; a construct that acknowledges its own findings does so with `ack`)."""
    _functions(stack)
    _data(stack)
    _api(stack)
    _identity(stack)


def _functions(stack: MemoryStack) -> None:
    runtime_reason = (
        "Python 3.13 is the project's runtime (pyproject requires-python <3.14) and the layer is "
        "built for it; moving runtimes is a project decision."
    )
    bucket_objects = f"Resource::<{logical_id(stack, stack.pipeline.transcripts_bucket)}.Arn>/*"
    for name, function in stack.functions.functions.items():
        spec = stack.functions.specs[name]
        ack(function, "L1", runtime_reason)
        assert function.role is not None
        ack(function.role, "IAM5", f"{XRAY_REASON} {ENI_REASON}", "Resource::*")
        if {"transcripts_bucket", "extraction_queue_send"} & set(spec.permissions):
            # Both the bucket and the queue are encrypted with the pipeline key.
            for action in KMS_ACTION_FAMILIES:
                ack(function.role, "IAM5", KMS_GRANT_REASON.format(action=action), f"Action::{action}")
        if "transcripts_bucket" in spec.permissions:
            for action in S3_ACTION_FAMILIES:
                ack(function.role, "IAM5", S3_GRANT_REASON.format(action=action), f"Action::{action}")
            ack(
                function.role,
                "IAM5",
                "Object-level S3 actions must name objects: the wildcard covers the keys "
                "of the transcripts bucket only.",
                bucket_objects,
            )

    registry_objects = f"Resource::<{logical_id(stack, stack.deletion_registry.bucket)}.Arn>/entries/*"
    for name, function in stack.functions.functions.items():
        if "deletion_registry" in stack.functions.specs[name].permissions:
            assert function.role is not None
            ack(
                function.role,
                "IAM5",
                "Object-level S3 actions must name objects: the wildcard covers the entries of the "
                "deletion registry bucket only (read and put; object lock forbids overwrites).",
                registry_objects,
            )

    step = stack.erasure.state_machine
    ack(
        step.role,
        "IAM5",
        "Step Functions logging uses the CloudWatch Logs vended-delivery actions "
        "(logs:*LogDelivery*, PutResourcePolicy, Describe*), which AWS documents with Resource "
        f"'*'. {XRAY_REASON}",
        "Resource::*",
    )
    step_fn = stack.functions.functions["erasure_step"]
    ack(
        step.role,
        "IAM5",
        "Step Functions may invoke the erasure_step function and its versions/aliases "
        "(the function ARN with ':*'), nothing else.",
        f"Resource::<{logical_id(stack, step_fn)}.Arn>:*",
    )

    migrations = stack.migrations
    ack(migrations.function, "L1", runtime_reason)
    assert migrations.function.role is not None
    ack(migrations.function.role, "IAM5", f"{XRAY_REASON} {ENI_REASON}", "Resource::*")
    framework = migrations.provider.node.find_child("framework-onEvent")
    ack(framework, "L1", "The custom-resource provider framework's Node.js runtime is chosen by aws-cdk-lib.")
    ack(
        framework,
        "IAM4",
        "The provider framework (aws-cdk-lib) logs through AWSLambdaBasicExecutionRole; "
        "it handles only the migrations custom resource.",
        "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
    )
    ack(framework, "IAM5", XRAY_REASON, "Resource::*")
    ack(
        framework,
        "IAM5",
        "The provider framework may invoke the migrations function and its versions "
        "(the function ARN with ':*'), nothing else.",
        f"Resource::<{logical_id(stack, migrations.function)}.Arn>:*",
    )


def _data(stack: MemoryStack) -> None:
    ack(
        stack.database.cluster,
        "RDS11",
        "The default PostgreSQL port: the cluster accepts connections only "
        "from the proxy and the migrations function inside isolated subnets; "
        "a custom port adds no security.",
    )
    if not stack.config.deletion_protection:
        ack(
            stack.database.cluster,
            "RDS10",
            "Deletion protection is a parameter (deletionProtection, on by "
            "default); this disposable environment turned it off.",
        )
    for secret in (stack.secrets.jwt_secret, stack.secrets.openai_secret):
        ack(
            secret,
            "SMG4",
            "Not rotatable by a Lambda: a new JWT key invalidates every issued token and the "
            "OpenAI key is issued by the provider; docs/deploy.md has the manual procedure.",
        )
    ack(
        stack.secrets.deletion_registry_key,
        "SMG4",
        "The key of the deletion registry's subject digests must not change: a rotated key "
        "would leave every earlier entry naming a subject the restore replay cannot find.",
    )
    ack(
        stack.pipeline.access_logs_bucket,
        "S1",
        "This is the server-access-log bucket; logging it into itself would loop.",
    )
    ack(stack.pipeline.dead_letter_queue, "SQS3", "This queue is the extraction dead-letter queue.")


def _api(stack: MemoryStack) -> None:
    api = stack.api
    ack(
        api.rest_api,
        "APIG3",
        "No WAF web ACL by default (fixed monthly cost); throttling, the token "
        "authorizer and request validation protect the API. Attach one per environment.",
    )
    ack(
        api.rest_api,
        "IAM4",
        "API Gateway's account-level logging role uses AWS's managed "
        "AmazonAPIGatewayPushToCloudWatchLogs policy, the documented setup.",
        "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs",
    )
    for (method, path), api_method in api.methods.items():
        ack(
            api_method,
            "COG4",
            "Tokens are checked by a Lambda TOKEN authorizer (docs/api.md): HS256 with the "
            "deployment's secret, or an IdP's JWKS (the optional Cognito pool's included), with "
            "claims mapped to tenant, roles and clearance, which a Cognito authorizer cannot do.",
        )
        if not api.route_auth[(method, path)]:
            ack(
                api_method,
                "APIG4",
                f"{method} {path} is public by design (auth=False in FUNCTIONS): health, "
                "OpenAPI document and Swagger UI.",
            )


def _identity(stack: MemoryStack) -> None:
    if stack.identity is None:
        return
    ack(
        stack.identity.user_pool,
        "COG8",
        "The Plus feature plan buys threat protection for user sign-ins (compromised "
        "credentials, adaptive authentication); this pool's callers are machine clients using "
        "the client-credentials grant, which it does not evaluate. Essentials is enough.",
    )
