"""One Lambda per FUNCTIONS row, configured from its spec, with least privilege."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cfn_template import refs_in

from agent_memory.functions_spec import FUNCTIONS, FunctionSpec

pytestmark = pytest.mark.infra

REPO = Path(__file__).resolve().parents[2]
# Lambdas that are not rows of FUNCTIONS: the migrations custom-resource handler and
# the CDK provider framework that drives it.
# Handlers of the CDK's own custom resources: the migration provider and the console's BucketDeployment.
HELPER_HANDLERS = {"handler.on_event", "framework.onEvent", "index.handler"}
POWERTOOLS_ENV = {
    "POWERTOOLS_SERVICE_NAME": "agent-memory",
    "POWERTOOLS_METRICS_NAMESPACE": "AgentMemory",
    "POWERTOOLS_LOG_LEVEL": "INFO",
    "MEMORY_ENVIRONMENT": "aws",
}
# Actions that have no resource-level permissions: AWS documents Resource "*" for them.
WILDCARD_ONLY_ACTIONS = {
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
    "cloudwatch:PutMetricData",
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
    # Step Functions' vended log delivery to CloudWatch Logs.
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
}


def function_for(synthesized: Any, spec: FunctionSpec) -> tuple[str, dict[str, Any]]:
    matches = [
        (k, v)
        for k, v in synthesized.resources("AWS::Lambda::Function").items()
        if v["Properties"]["Handler"] == spec.lambda_handler
    ]
    assert len(matches) == 1, f"{spec.name}: expected one function with handler {spec.lambda_handler}"
    return matches[0]


def policy_statements(synthesized: Any, role_logical_id: str) -> list[dict[str, Any]]:
    return [
        statement
        for policy in synthesized.resources("AWS::IAM::Policy").values()
        if role_logical_id in refs_in(policy["Properties"]["Roles"])
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_one_lambda_per_function_row_plus_the_migration_helpers(synthesized: Any) -> None:
    # Given the synthesized stack, when its functions are counted by handler
    handlers = [f["Properties"]["Handler"] for f in synthesized.resources("AWS::Lambda::Function").values()]
    # Then every FUNCTIONS row has exactly one, and the only others are the migration helpers
    assert sorted(h for h in handlers if h not in HELPER_HANDLERS) == sorted(
        s.lambda_handler for s in FUNCTIONS
    )
    assert len(handlers) == len(FUNCTIONS) + len(HELPER_HANDLERS)


@pytest.mark.parametrize("spec", FUNCTIONS, ids=lambda s: s.name)
def test_every_function_handler_exists_on_disk(spec: FunctionSpec) -> None:
    # The code asset is functions/; Lambda imports <name>.handler from it.
    assert (REPO / spec.handler_file).is_file(), f"missing {spec.handler_file}"


@pytest.mark.parametrize("spec", FUNCTIONS, ids=lambda s: s.name)
def test_function_follows_its_spec(synthesized: Any, spec: FunctionSpec) -> None:
    _, function = function_for(synthesized, spec)
    props = function["Properties"]
    assert props["Runtime"] == "python3.13"
    assert props["MemorySize"] == spec.memory_mb
    assert props["Timeout"] == spec.timeout_s
    assert props["TracingConfig"] == {"Mode": "Active"}
    assert len(props["Layers"]) == 1
    env = props["Environment"]["Variables"]
    assert POWERTOOLS_ENV.items() <= env.items()
    if "database" in spec.permissions:
        assert {
            "MEMORY_DATABASE_SECRET_ARN",
            "MEMORY_DATABASE_HOST",
            "MEMORY_DATABASE_NAME",
            "MEMORY_EMBEDDER",
            "MEMORY_EMBEDDING_DIM",
        } <= env.keys()
        assert "VpcConfig" in props, "functions that reach the database run in the VPC"
        # They reach it through RDS Proxy: a named prepared statement would pin the connection.
        assert env["MEMORY_DATABASE_PREPARED_STATEMENTS"] == "false"
    else:
        assert "VpcConfig" not in props
    expected_env = {
        "jwt_secret": "MEMORY_JWT_SECRET_ARN",
        "openai_secret": "MEMORY_OPENAI_API_KEY_SECRET_ARN",
        "extraction_queue_send": "MEMORY_EXTRACTION_QUEUE_URL",
        "transcripts_bucket": "MEMORY_TRANSCRIPTS_BUCKET",
        "erasure_state_machine_start": "MEMORY_ERASURE_STATE_MACHINE_ARN",
        "deletion_registry": "MEMORY_DELETION_REGISTRY_BUCKET",
    }
    for permission, variable in expected_env.items():
        assert (variable in env) == (permission in spec.permissions), f"{spec.name}: {variable}"


def test_the_functions_prepared_statements_setting_reaches_the_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the variable as the stack writes it
    from agent_memory.config import Settings

    monkeypatch.setenv("MEMORY_DATABASE_PREPARED_STATEMENTS", "false")
    # Then the service reads it as off (a misspelt name would leave the default, on)
    assert Settings().database_prepared_statements is False
    monkeypatch.delenv("MEMORY_DATABASE_PREPARED_STATEMENTS")
    assert Settings().database_prepared_statements is True


def test_tracing_is_active_on_every_function(synthesized: Any) -> None:
    for logical_id, function in synthesized.resources("AWS::Lambda::Function").items():
        assert function["Properties"].get("TracingConfig") == {"Mode": "Active"}, logical_id


@pytest.mark.parametrize("spec", FUNCTIONS, ids=lambda s: s.name)
def test_function_role_reaches_only_what_its_permissions_name(synthesized: Any, spec: FunctionSpec) -> None:
    _, function = function_for(synthesized, spec)
    role_id = next(iter(refs_in(function["Properties"]["Role"])))
    statements = policy_statements(synthesized, role_id)
    actions = {
        a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    resources = {r for s in statements for r in refs_in(s["Resource"])}
    reaches = {
        "database": any(a == "secretsmanager:GetSecretValue" for a in actions),
        "extraction_queue_send": "sqs:SendMessage" in actions,
        "transcripts_bucket": "s3:PutObject" in actions and any("Transcripts" in r for r in resources),
        "deletion_registry": any("DeletionRegistryBucket" in r for r in resources),
        "erasure_state_machine_start": "states:StartExecution" in actions,
    }
    for permission, granted in reaches.items():
        if permission == "database":  # the application role's login, and never the owner's
            secrets = {r for s in statements for r in refs_in(s["Resource"])}
            granted = granted and any("DatabaseAppSecret" in r for r in secrets)
            assert not any("DatabaseClusterSecret" in r for r in secrets), spec.name
        assert granted == (permission in spec.permissions), f"{spec.name}: {permission}"
    assert not any(a.startswith(("dynamodb:", "iam:", "sts:")) for a in actions)


def _granted_by_the_cdk_library(policy_id: str) -> set[str]:
    """The console's BucketDeployment handler gets the invalidation actions on every distribution
    from the CDK library itself (acknowledged, with its reason, in infra/constructs/console.py)."""
    if policy_id.startswith("CustomCDKBucketDeployment"):
        return {"cloudfront:CreateInvalidation", "cloudfront:GetInvalidation"}
    return set()


def test_no_wildcard_resource_for_actions_on_known_resources(synthesized: Any) -> None:
    offenders = []
    for logical_id, policy in synthesized.resources("AWS::IAM::Policy").items():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            resources = (
                statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            )
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            if "*" in resources:
                allowed = WILDCARD_ONLY_ACTIONS | _granted_by_the_cdk_library(logical_id)
                offenders += [f"{logical_id}: {a}" for a in actions if a not in allowed]
            assert "*" not in actions and not any(a.endswith(":*") for a in actions), logical_id
    assert offenders == []


def test_functions_log_only_to_their_own_log_group(synthesized: Any) -> None:
    # No AWSLambdaBasicExecutionRole on the service functions: each writes to its own group.
    for spec in FUNCTIONS:
        _, function = function_for(synthesized, spec)
        role_id = next(iter(refs_in(function["Properties"]["Role"])))
        role = synthesized.raw["Resources"][role_id]
        assert "ManagedPolicyArns" not in role["Properties"], spec.name
        log_statements = [
            s for s in policy_statements(synthesized, role_id) if "logs:PutLogEvents" in s["Action"]
        ]
        assert refs_in([s["Resource"] for s in log_statements]) == refs_in(
            function["Properties"]["LoggingConfig"]
        )


def test_the_core_layer_and_every_function_that_loads_it_run_the_runtime_it_is_built_for(
    synthesized: Any,
) -> None:
    from infra import layer

    # Given the runtime the layer's wheels are resolved for
    runtime = f"python{layer.PYTHON_VERSION}"
    # When the stack's core layer and the functions that load it are read
    layer_id = synthesized.stack.get_logical_id(synthesized.stack.layer.node.default_child)
    core_layer = synthesized.resources("AWS::Lambda::LayerVersion")[layer_id]
    loading = [
        f["Properties"]
        for f in synthesized.resources("AWS::Lambda::Function").values()
        if layer_id in refs_in(f["Properties"].get("Layers", []))
    ]
    # Then the layer declares that runtime, and every function with it (the FUNCTIONS rows and the
    # migrations handler) runs it
    assert core_layer["Properties"]["CompatibleRuntimes"] == [runtime]
    assert len(loading) == len(FUNCTIONS) + 1
    assert {props["Runtime"] for props in loading} == {runtime}
