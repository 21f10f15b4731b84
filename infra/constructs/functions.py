"""One Lambda function per row of `agent_memory.functions_spec.FUNCTIONS`.

Every function gets its own role (nothing but what its spec's `permissions`
name), its own log group, X-Ray tracing, the shared layer and the same
Powertools settings. Permissions are applied in a second phase
(`apply_permissions`) because some of the resources they reach (the erasure
state machine) are built from the functions themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn

from agent_memory.functions_spec import FUNCTIONS, FunctionSpec, Permission
from constructs import Construct
from infra.config import DeploymentConfig
from infra.constructs.database import Database
from infra.constructs.deletion_registry import DeletionRegistryBucket
from infra.constructs.network import Network, vpc_access_statement

REPO = Path(__file__).resolve().parents[2]
FUNCTIONS_DIR = REPO / "functions"
SERVICE_NAME = "agent-memory"
METRICS_NAMESPACE = "AgentMemory"


def construct_id(spec: FunctionSpec) -> str:
    return "".join(part.capitalize() for part in spec.name.split("_"))


def needs_vpc(spec: FunctionSpec) -> bool:
    """Only functions that reach the database run in the VPC (the authorizer stays out: faster cold start)."""
    return "database" in spec.permissions


RETENTION_BY_DAYS = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
}


def log_retention(days: int) -> logs.RetentionDays:
    if days not in RETENTION_BY_DAYS:
        raise ValueError(f"logRetentionDays must be one of {sorted(RETENTION_BY_DAYS)}")
    return RETENTION_BY_DAYS[days]


@dataclass(frozen=True)
class PermissionTargets:
    """The resources the named permissions of FunctionSpec reach."""

    database: Database
    jwt_secret: secretsmanager.ISecret
    openai_secret: secretsmanager.ISecret
    extraction_queue: sqs.IQueue
    transcripts_bucket: s3.IBucket
    erasure_state_machine: sfn.IStateMachine
    deletion_registry: DeletionRegistryBucket
    deletion_registry_key: secretsmanager.ISecret


class ServiceFunctions(Construct):
    """Exposes `functions` (name -> Function), `specs` (name -> FunctionSpec) and `log_groups`."""

    def __init__(
        self,
        scope: Construct,
        construct_id_: str,
        *,
        config: DeploymentConfig,
        network: Network,
        layer: lambda_.ILayerVersion,
    ) -> None:
        super().__init__(scope, construct_id_)
        self.config = config
        self.network = network
        code = lambda_.Code.from_asset(str(FUNCTIONS_DIR), exclude=["**/__pycache__", "**/*.pyc"])
        self.functions: dict[str, lambda_.Function] = {}
        self.specs: dict[str, FunctionSpec] = {}
        self.log_groups: dict[str, logs.LogGroup] = {}
        for spec in FUNCTIONS:
            self.specs[spec.name] = spec
            self.functions[spec.name] = self._function(spec, code, layer)

    def _function(
        self, spec: FunctionSpec, code: lambda_.Code, layer: lambda_.ILayerVersion
    ) -> lambda_.Function:
        cid = construct_id(spec)
        log_group = logs.LogGroup(
            self,
            f"{cid}Logs",
            retention=log_retention(self.config.log_retention_days),
            removal_policy=RemovalPolicy.DESTROY,
        )
        # A role of its own: no AWSLambdaBasicExecutionRole (which may write to any log group).
        role = iam.Role(
            self,
            f"{cid}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"Agent Memory {spec.name} function",
        )
        log_group.grant_write(role)
        environment = {
            "POWERTOOLS_SERVICE_NAME": SERVICE_NAME,
            "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
            "POWERTOOLS_LOG_LEVEL": self.config.powertools_log_level,
            "MEMORY_ENVIRONMENT": "aws",
            "MEMORY_FUNCTIONS_DIR": "/var/task",
        }
        if "database" in spec.permissions:
            # Every function that builds the container also builds the embedder.
            environment |= {
                "MEMORY_EMBEDDER": self.config.embedder,
                "MEMORY_EMBEDDING_DIM": str(self.config.embedding_dim),
                "MEMORY_OPENAI_EMBEDDING_MODEL": self.config.openai_embedding_model,
                # The migrations custom resource owns the schema; cold starts must not run DDL.
                "MEMORY_MIGRATE_ON_START": "false",
                # One request at a time per Lambda environment: a tiny pool is enough.
                "MEMORY_POOL_MIN_SIZE": "1",
                "MEMORY_POOL_MAX_SIZE": "2",
                # Through RDS Proxy: a named prepared statement would pin the connection to one
                # database connection for the container's life, and the proxy could not share it.
                "MEMORY_DATABASE_PREPARED_STATEMENTS": "false",
                # The extraction worker marks a session failed on the queue's last delivery.
                "MEMORY_MAX_RECEIVE_COUNT": str(self.config.extraction_max_receive_count),
                "MEMORY_TRANSCRIPT_TTL_DAYS": str(self.config.transcript_ttl_days),
            }
            if self.config.openai_base_url:
                environment["MEMORY_OPENAI_BASE_URL"] = self.config.openai_base_url
        environment |= spec.extra_env
        vpc_props: dict[str, object] = {}
        if needs_vpc(spec):
            role.add_to_policy(vpc_access_statement())
            vpc_props = {
                "vpc": self.network.vpc,
                "vpc_subnets": self.network.function_subnets,
                "security_groups": [self.network.functions_security_group],
            }
        function = lambda_.Function(
            self,
            cid,
            description=spec.description[:256],
            runtime=lambda_.Runtime.PYTHON_3_13,
            architecture=lambda_.Architecture.X86_64,
            handler=spec.lambda_handler,
            code=code,
            layers=[layer],
            memory_size=spec.memory_mb,
            timeout=Duration.seconds(spec.timeout_s),
            tracing=lambda_.Tracing.ACTIVE,
            role=role,
            log_group=log_group,
            environment=environment,
            **vpc_props,  # type: ignore[arg-type]
        )
        self.log_groups[spec.name] = log_group
        return function

    def by_trigger(self, trigger: str) -> list[tuple[FunctionSpec, lambda_.Function]]:
        return [(spec, self.functions[spec.name]) for spec in FUNCTIONS if spec.trigger == trigger]

    def single(self, trigger: str) -> tuple[FunctionSpec, lambda_.Function]:
        found = self.by_trigger(trigger)
        if len(found) != 1:
            raise ValueError(f"expected exactly one {trigger!r} function in FUNCTIONS, found {len(found)}")
        return found[0]

    def apply_permissions(self, targets: PermissionTargets) -> None:
        """Grant each function exactly what its spec's permissions name (and the env vars to find it)."""
        grants = permission_grants(targets)
        for spec in FUNCTIONS:
            function = self.functions[spec.name]
            for permission in spec.permissions:
                if permission not in grants:
                    raise ValueError(f"{spec.name}: no grant for permission {permission!r}")
                grants[permission](function)


def permission_grants(t: PermissionTargets) -> dict[Permission, Callable[[lambda_.Function], None]]:
    def database(fn: lambda_.Function) -> None:
        t.database.app_secret.grant_read(fn)  # the application role's login, never the owner's
        t.database.allow_from(fn, "memory functions to RDS Proxy")
        fn.add_environment("MEMORY_DATABASE_SECRET_ARN", t.database.app_secret.secret_arn)
        fn.add_environment("MEMORY_DATABASE_HOST", t.database.proxy.endpoint)
        fn.add_environment("MEMORY_DATABASE_PORT", str(t.database.port))
        fn.add_environment("MEMORY_DATABASE_NAME", t.database.database_name)

    def jwt_secret(fn: lambda_.Function) -> None:
        t.jwt_secret.grant_read(fn)
        fn.add_environment("MEMORY_JWT_SECRET_ARN", t.jwt_secret.secret_arn)

    def openai_secret(fn: lambda_.Function) -> None:
        t.openai_secret.grant_read(fn)
        fn.add_environment("MEMORY_OPENAI_API_KEY_SECRET_ARN", t.openai_secret.secret_arn)

    def extraction_queue_send(fn: lambda_.Function) -> None:
        t.extraction_queue.grant_send_messages(fn)
        fn.add_environment("MEMORY_EXTRACTION_QUEUE_URL", t.extraction_queue.queue_url)

    def transcripts_bucket(fn: lambda_.Function) -> None:
        # Read, write and delete (erasure purges objects) on the transcripts bucket only.
        t.transcripts_bucket.grant_read_write(fn)
        t.transcripts_bucket.grant_delete(fn)
        fn.add_environment("MEMORY_TRANSCRIPTS_BUCKET", t.transcripts_bucket.bucket_name)

    def erasure_state_machine_start(fn: lambda_.Function) -> None:
        t.erasure_state_machine.grant_start_execution(fn)
        fn.add_environment("MEMORY_ERASURE_STATE_MACHINE_ARN", t.erasure_state_machine.state_machine_arn)

    def deletion_registry(fn: lambda_.Function) -> None:
        # Append and read only: object lock keeps every entry, and no function may delete one.
        t.deletion_registry.grant_append_and_read(fn)
        t.deletion_registry_key.grant_read(fn)
        fn.add_environment("MEMORY_DELETION_REGISTRY_BUCKET", t.deletion_registry.bucket.bucket_name)
        fn.add_environment("MEMORY_DELETION_REGISTRY_KEY_SECRET_ARN", t.deletion_registry_key.secret_arn)

    return {
        "database": database,
        "jwt_secret": jwt_secret,
        "openai_secret": openai_secret,
        "extraction_queue_send": extraction_queue_send,
        "transcripts_bucket": transcripts_bucket,
        "erasure_state_machine_start": erasure_state_machine_start,
        "deletion_registry": deletion_registry,
    }
