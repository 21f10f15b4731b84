"""Aurora PostgreSQL Serverless v2 behind RDS Proxy, its secret (rotated) and
customer-managed key, and the custom resource that applies the migrations."""

from __future__ import annotations

import hashlib
from pathlib import Path

from aws_cdk import CustomResource, Duration, RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_rds as rds
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import custom_resources as cr

from constructs import Construct
from infra.config import DeploymentConfig
from infra.constructs.network import Network, vpc_access_statement

# pgvector 0.8 (iterative index scans) ships with Aurora PostgreSQL 16.8 / 17.4 and later.
ENGINE_VERSION = rds.AuroraPostgresEngineVersion.VER_16_8
MASTER_USERNAME = "memory_admin"
APP_USERNAME = "memory_app"  # the non-owner role every query runs as (migrations create it)
SECRET_EXCLUDED_CHARACTERS = " %+~`#$&*()|[]{}:;<>?!'/@\"\\"
REPO = Path(__file__).resolve().parents[2]
MIGRATIONS_DIR = REPO / "layers" / "core" / "python" / "agent_memory" / "adapters" / "postgres" / "migrations"
REPEATABLE_SQL_DIR = MIGRATIONS_DIR.parent / "sql"  # function definitions every migrate applies again
MIGRATE_HANDLER_DIR = Path(__file__).resolve().parents[1] / "runtime" / "migrate"


class Database(Construct):
    """Exposes `key`, `cluster`, `secret` (the owner's), `app_secret` (the functions' login),
    `proxy`, `database_name` and `port`."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: DeploymentConfig, network: Network
    ) -> None:
        super().__init__(scope, construct_id)
        self.database_name = config.database_name
        self.port = 5432
        self.key = kms.Key(
            self,
            "Key",
            description="Agent Memory: Aurora storage, snapshots and the database secret",
            enable_key_rotation=True,
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.cluster_identifier = f"agent-memory-{config.environment_name}"
        # The exported PostgreSQL log, created here (with a retention) before the cluster
        # writes to it; `cloudwatch_logs_retention` would add a custom-resource Lambda instead.
        self.postgres_logs = logs.LogGroup(
            self,
            "PostgresLogs",
            log_group_name=f"/aws/rds/cluster/{self.cluster_identifier}/postgresql",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        auto_pause = {}
        if config.aurora_min_capacity == 0:
            auto_pause["serverless_v2_auto_pause_duration"] = Duration.minutes(
                config.aurora_auto_pause_minutes
            )
        self.cluster = rds.DatabaseCluster(
            self,
            "Cluster",
            engine=rds.DatabaseClusterEngine.aurora_postgres(version=ENGINE_VERSION),
            credentials=rds.Credentials.from_generated_secret(
                MASTER_USERNAME, encryption_key=self.key, exclude_characters=SECRET_EXCLUDED_CHARACTERS
            ),
            default_database_name=config.database_name,
            writer=rds.ClusterInstance.serverless_v2("Writer", enable_performance_insights=False),
            readers=[
                rds.ClusterInstance.serverless_v2(f"Reader{i + 1}", scale_with_writer=True)
                for i in range(config.aurora_readers)
            ],
            serverless_v2_min_capacity=config.aurora_min_capacity,
            serverless_v2_max_capacity=config.aurora_max_capacity,
            vpc=network.vpc,
            vpc_subnets=network.database_subnets,
            storage_encrypted=True,
            storage_encryption_key=self.key,
            iam_authentication=True,
            deletion_protection=config.deletion_protection,
            backup=rds.BackupProps(retention=Duration.days(config.backup_retention_days)),
            parameters={"rds.force_ssl": "1"},
            cluster_identifier=self.cluster_identifier,
            cloudwatch_logs_exports=["postgresql"],
            copy_tags_to_snapshot=True,
            port=self.port,
            removal_policy=RemovalPolicy.SNAPSHOT,
            **auto_pause,
        )
        self.cluster.node.add_dependency(self.postgres_logs)
        assert self.cluster.secret is not None
        self.secret = self.cluster.secret
        # Single-user rotation of the owner password; the rotation function runs in the
        # functions' subnets, which reach Secrets Manager (NAT or interface endpoint).
        self.rotation = self.cluster.add_rotation_single_user(
            automatically_after=Duration.days(config.secret_rotation_days),
            vpc_subnets=network.function_subnets,
        )
        # The functions' own login: the application role, which owns nothing and cannot bypass
        # row-level security. They never hold the owner's password, and their connections carry
        # no SET ROLE, so RDS Proxy can share them between clients instead of pinning each one.
        # The migrations custom resource sets this password on the role; single-user rotation
        # (the role changes its own password) keeps it.
        self.app_secret = rds.DatabaseSecret(
            self,
            "AppSecret",
            username=APP_USERNAME,
            encryption_key=self.key,
            exclude_characters=SECRET_EXCLUDED_CHARACTERS,
        ).attach(self.cluster)
        self.app_rotation = secretsmanager.SecretRotation(
            self,
            "AppSecretRotation",
            application=secretsmanager.SecretRotationApplication.POSTGRES_ROTATION_SINGLE_USER,
            secret=self.app_secret,
            target=self.cluster,
            vpc=network.vpc,
            vpc_subnets=network.function_subnets,
            automatically_after=Duration.days(config.secret_rotation_days),
        )
        self.proxy = self.cluster.add_proxy(
            "Proxy",
            secrets=[self.secret, self.app_secret],
            vpc=network.vpc,
            vpc_subnets=network.database_subnets,
            require_tls=True,
            debug_logging=False,
            idle_client_timeout=Duration.minutes(30),
        )
        self.cluster.connections.allow_from(self.proxy, ec2.Port.tcp(self.port), "RDS Proxy to Aurora")

    def allow_from(self, peer: ec2.IConnectable, description: str) -> None:
        """Functions reach the database through the proxy only."""
        self.proxy.connections.allow_from(peer, ec2.Port.tcp(self.port), description)


def migrations_fingerprint() -> str:
    """Changes when a migration file or a repeatable SQL file changes, so the custom resource runs
    again on deploy."""
    digest = hashlib.sha256()
    for path in [*sorted(MIGRATIONS_DIR.glob("*.sql")), *sorted(REPEATABLE_SQL_DIR.glob("*.sql"))]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class DatabaseMigrations(Construct):
    """Applies `agent_memory.adapters.postgres.database.migrate` on every deploy that changes
    the migrations or the embedding settings (a CloudFormation custom resource).

    It connects to the writer endpoint directly as the owner (not through the proxy):
    DDL and the advisory lock belong on one real session. Exposes `function` and `resource`.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        network: Network,
        database: Database,
        layer: lambda_.ILayerVersion,
        embedding_model: str,
    ) -> None:
        super().__init__(scope, construct_id)
        log_group = logs.LogGroup(
            self, "Logs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=RemovalPolicy.DESTROY
        )
        role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Agent Memory migrations custom resource",
        )
        log_group.grant_write(role)
        role.add_to_policy(vpc_access_statement())
        self.function = lambda_.Function(
            self,
            "Function",
            description="Applies the Agent Memory schema migrations (custom resource)",
            runtime=lambda_.Runtime.PYTHON_3_13,
            architecture=lambda_.Architecture.X86_64,
            handler="handler.on_event",
            code=lambda_.Code.from_asset(str(MIGRATE_HANDLER_DIR), exclude=["__pycache__", "*.pyc"]),
            layers=[layer],
            memory_size=512,
            timeout=Duration.minutes(5),
            tracing=lambda_.Tracing.ACTIVE,
            vpc=network.vpc,
            vpc_subnets=network.function_subnets,
            security_groups=[network.functions_security_group],
            log_group=log_group,
            role=role,
            environment={
                "POWERTOOLS_SERVICE_NAME": "agent-memory",
                "POWERTOOLS_METRICS_NAMESPACE": "AgentMemory",
                "POWERTOOLS_LOG_LEVEL": config.powertools_log_level,
            },
        )
        database.secret.grant_read(self.function)
        database.app_secret.grant_read(self.function)
        database.cluster.connections.allow_from(
            network.functions_security_group, ec2.Port.tcp(database.port), "migrations to the writer endpoint"
        )
        provider_logs = logs.LogGroup(
            self, "ProviderLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=RemovalPolicy.DESTROY
        )
        self.provider = cr.Provider(self, "Provider", on_event_handler=self.function, log_group=provider_logs)
        # Trace the provider framework too (every function of the stack has active tracing).
        framework = self.provider.node.find_child("framework-onEvent")
        assert isinstance(framework, lambda_.Function)
        framework_cfn = framework.node.default_child
        assert isinstance(framework_cfn, lambda_.CfnFunction)
        framework_cfn.add_property_override("TracingConfig.Mode", "Active")
        framework.add_to_role_policy(
            iam.PolicyStatement(
                actions=["xray:PutTraceSegments", "xray:PutTelemetryRecords"], resources=["*"]
            )
        )
        self.resource = CustomResource(
            self,
            "Resource",
            service_token=self.provider.service_token,
            resource_type="Custom::MemoryMigrations",
            properties={
                "SecretArn": database.secret.secret_arn,
                "AppSecretArn": database.app_secret.secret_arn,
                "Host": database.cluster.cluster_endpoint.hostname,
                "DatabaseName": database.database_name,
                "EmbeddingDim": str(config.embedding_dim),
                "EmbeddingModel": embedding_model,
                "MigrationsFingerprint": migrations_fingerprint(),
            },
        )
        # The writer must exist and its secret be attached before the first migration.
        self.resource.node.add_dependency(database.cluster)
