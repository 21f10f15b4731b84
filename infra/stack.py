"""The Agent Memory stack: composes the constructs and wires each function of
FUNCTIONS to its trigger."""

from __future__ import annotations

from collections.abc import Callable

from aws_cdk import CfnOutput, Stack, Tags
from aws_cdk import aws_lambda as lambda_

from agent_memory.functions_spec import FUNCTIONS, Trigger
from constructs import Construct
from infra import layer as layer_builder
from infra.config import DeploymentConfig
from infra.constructs.api import Api
from infra.constructs.console import Console
from infra.constructs.database import Database, DatabaseMigrations
from infra.constructs.deletion_registry import DeletionRegistryBucket
from infra.constructs.erasure import ErasureWorkflow
from infra.constructs.functions import PermissionTargets, ServiceFunctions
from infra.constructs.identity import CognitoIdentity, authorizer_environment
from infra.constructs.lifecycle import Lifecycle, OutboxRelaySchedule
from infra.constructs.monitoring import Monitoring
from infra.constructs.network import Network
from infra.constructs.pipeline import Pipeline
from infra.constructs.secrets import AppSecrets


def embedding_model_name(config: DeploymentConfig) -> str:
    """The name the core's embedder reports (stored beside the vector dimension)."""
    if config.embedder == "openai":
        return f"openai:{config.openai_embedding_model}"
    return config.embedder


class MemoryStack(Stack):
    def __init__(
        self, scope: Construct, construct_id: str, *, config: DeploymentConfig, **kwargs: object
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        self.config = config
        # RDS Proxy target groups take no tags (CloudFormation schema).
        untaggable = ["AWS::RDS::DBProxyTargetGroup"]
        Tags.of(self).add("service", "agent-memory", exclude_resource_types=untaggable)
        Tags.of(self).add("environment", config.environment_name, exclude_resource_types=untaggable)

        self.layer = lambda_.LayerVersion(
            self,
            "CoreLayer",
            description=f"agent_memory core package and runtime dependencies ({config.layer})",
            code=lambda_.Code.from_asset(
                str(layer_builder.asset_dir(config.layer)), exclude=["**/__pycache__", "**/*.pyc"]
            ),
            compatible_runtimes=[lambda_.Runtime.PYTHON_3_13],
            compatible_architectures=[lambda_.Architecture.X86_64],
        )
        self.network = Network(self, "Network", config=config)
        self.database = Database(self, "Database", config=config, network=self.network)
        self.secrets = AppSecrets(self, "Secrets")
        self.functions = ServiceFunctions(
            self,
            "Functions",
            config=config,
            network=self.network,
            layer=self.layer,
        )
        worker_spec, _ = self.functions.single("sqs")
        self.pipeline = Pipeline(
            self, "Pipeline", config=config, worker_timeout=self.functions.functions[worker_spec.name].timeout
        )  # type: ignore[arg-type]
        self.deletion_registry = DeletionRegistryBucket(
            self, "DeletionRegistry", config=config, access_logs_bucket=self.pipeline.access_logs_bucket
        )
        _, step_function = self.functions.single("stepfunctions")
        self.erasure = ErasureWorkflow(self, "Erasure", config=config, step_function=step_function)
        self.functions.apply_permissions(
            PermissionTargets(
                database=self.database,
                jwt_secret=self.secrets.jwt_secret,
                openai_secret=self.secrets.openai_secret,
                extraction_queue=self.pipeline.queue,
                transcripts_bucket=self.pipeline.transcripts_bucket,
                erasure_state_machine=self.erasure.state_machine,
                deletion_registry=self.deletion_registry,
                deletion_registry_key=self.secrets.deletion_registry_key,
            )
        )
        self._wire_triggers()
        self._wire_identity()
        self.migrations = DatabaseMigrations(
            self,
            "Migrations",
            config=config,
            network=self.network,
            database=self.database,
            layer=self.layer,
            embedding_model=embedding_model_name(config),
        )
        # New code never serves before its migration: on a deploy CloudFormation may otherwise
        # update a function first, and its SQL would meet the old schema (0011 moved the
        # retrieval query into a function the old schema does not have).
        for spec in FUNCTIONS:
            if "database" in spec.permissions:
                self.functions.functions[spec.name].node.add_dependency(self.migrations.resource)
        self.monitoring = Monitoring(
            self,
            "Monitoring",
            config=config,
            functions=dict(self.functions.functions),
            dead_letter_queue=self.pipeline.dead_letter_queue,
            erasure_state_machine=self.erasure.state_machine,
            database_proxy=self.database.proxy,
        )
        # The review console: static files behind CloudFront, /v1/* on the same origin.
        self.console = Console(self, "Console", config=config, rest_api=self.api.rest_api)
        CfnOutput(self, "ApiUrl", value=self.api.rest_api.url)
        CfnOutput(self, "ConsoleUrl", value=self.console.url)
        CfnOutput(self, "DatabaseSecretArn", value=self.database.secret.secret_arn)
        CfnOutput(self, "AppDatabaseSecretArn", value=self.database.app_secret.secret_arn)
        CfnOutput(self, "DatabaseProxyEndpoint", value=self.database.proxy.endpoint)
        CfnOutput(self, "JwtSecretArn", value=self.secrets.jwt_secret.secret_arn)
        CfnOutput(self, "OpenAiSecretArn", value=self.secrets.openai_secret.secret_arn)
        CfnOutput(self, "ErasureStateMachineArn", value=self.erasure.state_machine.state_machine_arn)
        CfnOutput(self, "MigrationsFunctionName", value=self.migrations.function.function_name)
        CfnOutput(self, "DeletionRegistryBucketName", value=self.deletion_registry.bucket.bucket_name)
        CfnOutput(
            self,
            "DeletionReplayFunctionName",
            value=self.functions.functions["deletion_replay"].function_name,
        )

    def _wire_identity(self) -> None:
        """The authorizer's token settings: the Cognito pool's, an external IdP's, or none (HS256)."""
        self.identity = (
            CognitoIdentity(self, "Identity", config=self.config) if self.config.cognito_user_pool else None
        )
        _, authorizer = self.functions.single("authorizer")
        for name, value in authorizer_environment(self.config, self.identity).items():
            authorizer.add_environment(name, value)
        if self.identity is not None:
            CfnOutput(self, "UserPoolId", value=self.identity.user_pool.user_pool_id)
            CfnOutput(self, "AgentClientId", value=self.identity.agent_client.user_pool_client_id)
            CfnOutput(self, "TokenUrl", value=self.identity.token_url)

    def _wire_triggers(self) -> None:
        """Each trigger kind of FUNCTIONS has exactly one wiring; an unknown kind fails the synth."""
        _, authorizer = self.functions.single("authorizer")

        def api() -> None:
            self.api = Api(
                self,
                "Api",
                config=self.config,
                handlers=self.functions.by_trigger("api"),
                authorizer_function=authorizer,
            )

        def sqs() -> None:
            for _, function in self.functions.by_trigger("sqs"):
                self.pipeline.connect_worker(function)

        def schedule() -> None:
            """Each scheduled function has its own rule: the nightly purge, the per-minute relay."""
            scheduled = dict((spec.name, fn) for spec, fn in self.functions.by_trigger("schedule"))
            unknown = set(scheduled) - {"purge", "outbox_relay"}
            if unknown:
                raise ValueError(f"scheduled functions without a schedule: {sorted(unknown)}")
            self.lifecycle = Lifecycle(
                self,
                "Lifecycle",
                config=self.config,
                purge_functions=[scheduled["purge"]],
            )
            self.outbox_relay = OutboxRelaySchedule(
                self, "OutboxRelay", config=self.config, relay_function=scheduled["outbox_relay"]
            )

        def wired_elsewhere() -> None:
            """stepfunctions: tasks of the erasure workflow; authorizer: part of the API; invoke:
            run by an operator (docs/operations.md)."""

        wiring: dict[Trigger, Callable[[], None]] = {
            "api": api,
            "sqs": sqs,
            "schedule": schedule,
            "stepfunctions": wired_elsewhere,
            "authorizer": wired_elsewhere,
            "invoke": wired_elsewhere,
        }
        for trigger in dict.fromkeys(spec.trigger for spec in FUNCTIONS):
            if trigger not in wiring:
                raise ValueError(f"FUNCTIONS uses trigger {trigger!r}, which the stack does not wire")
            wiring[trigger]()
