"""Aurora, RDS Proxy, secrets, the extraction queue and the schedules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Match
from cfn_template import refs_in

from agent_memory.functions_spec import FUNCTIONS

pytestmark = pytest.mark.infra


def only(synthesized: Any, type_: str) -> tuple[str, dict[str, Any]]:
    found = synthesized.resources(type_)
    assert len(found) == 1, f"expected one {type_}, found {len(found)}"
    return next(iter(found.items()))


def function_id(synthesized: Any, trigger: str, name: str | None = None) -> str:
    spec = next(s for s in FUNCTIONS if s.trigger == trigger and name in (None, s.name))
    return next(
        k
        for k, v in synthesized.resources("AWS::Lambda::Function").items()
        if v["Properties"]["Handler"] == spec.lambda_handler
    )


def test_aurora_is_serverless_v2_postgres_encrypted_with_the_customer_key(synthesized: Any) -> None:
    config = synthesized.stack.config
    _, cluster = only(synthesized, "AWS::RDS::DBCluster")
    props = cluster["Properties"]
    assert props["Engine"] == "aurora-postgresql"
    major, minor = (int(x) for x in props["EngineVersion"].split(".")[:2])
    assert (major, minor) >= (16, 8) or major >= 17, "pgvector 0.8 needs Aurora PostgreSQL 16.8+/17.4+"
    assert props["StorageEncrypted"] is True
    key_id = next(iter(refs_in(props["KmsKeyId"])))
    assert synthesized.raw["Resources"][key_id]["Type"] == "AWS::KMS::Key"
    assert synthesized.raw["Resources"][key_id]["Properties"]["EnableKeyRotation"] is True
    assert props["ServerlessV2ScalingConfiguration"]["MinCapacity"] == config.aurora_min_capacity
    assert props["ServerlessV2ScalingConfiguration"]["MaxCapacity"] == config.aurora_max_capacity
    synthesized.template.has_resource_properties("AWS::RDS::DBInstance", {"DBInstanceClass": "db.serverless"})


def test_aurora_lives_in_isolated_subnets(synthesized: Any) -> None:
    _, group = only(synthesized, "AWS::RDS::DBSubnetGroup")
    subnet_ids = refs_in(group["Properties"]["SubnetIds"])
    for subnet_id in subnet_ids:
        tags = {t["Key"]: t["Value"] for t in synthesized.raw["Resources"][subnet_id]["Properties"]["Tags"]}
        assert tags["aws-cdk:subnet-type"] == "Isolated"
    assert len(subnet_ids) == synthesized.stack.config.max_azs


def test_credentials_live_in_rotated_secrets_encrypted_with_the_key(synthesized: Any) -> None:
    secrets = synthesized.resources("AWS::SecretsManager::Secret")
    database_secrets = {
        json.loads(s["Properties"]["GenerateSecretString"]["SecretStringTemplate"])["username"]: s
        for s in secrets.values()
        if "GenerateSecretString" in s["Properties"]
        and "username" in s["Properties"]["GenerateSecretString"].get("SecretStringTemplate", "")
    }
    # the owner's (migrations, its rotation) and the application role's (the functions' login)
    assert set(database_secrets) == {"memory_admin", "memory_app"}
    for secret in database_secrets.values():
        assert "KmsKeyId" in secret["Properties"]
    schedules = synthesized.resources("AWS::SecretsManager::RotationSchedule")
    rotated = {next(iter(refs_in(s["Properties"]["SecretId"]))) for s in schedules.values()}
    attachments = synthesized.resources("AWS::SecretsManager::SecretTargetAttachment")
    assert rotated == set(attachments) and len(attachments) == 2
    days = synthesized.stack.config.secret_rotation_days
    for schedule in schedules.values():
        assert schedule["Properties"]["RotationRules"]["ScheduleExpression"] == f"rate({days} days)"


def app_secret_attachment(synthesized: Any) -> str:
    secrets = synthesized.resources("AWS::SecretsManager::Secret")
    app = next(
        k
        for k, s in secrets.items()
        if '"memory_app"' in s["Properties"].get("GenerateSecretString", {}).get("SecretStringTemplate", "")
    )
    return next(
        k
        for k, a in synthesized.resources("AWS::SecretsManager::SecretTargetAttachment").items()
        if refs_in(a["Properties"]["SecretId"]) == {app}
    )


def test_functions_log_in_as_the_application_role_through_the_proxy_never_as_the_owner(
    synthesized: Any,
) -> None:
    app = app_secret_attachment(synthesized)
    _, proxy = only(synthesized, "AWS::RDS::DBProxy")
    assert app in {next(iter(refs_in(a["SecretArn"]))) for a in proxy["Properties"]["Auth"]}
    for function in synthesized.resources("AWS::Lambda::Function").values():
        env = function["Properties"].get("Environment", {}).get("Variables", {})
        if "MEMORY_DATABASE_SECRET_ARN" in env:
            assert refs_in(env["MEMORY_DATABASE_SECRET_ARN"]) == {app}
    # the migrations set that role's password from its secret
    _, migrations = only(synthesized, "Custom::MemoryMigrations")
    assert refs_in(migrations["Properties"]["AppSecretArn"]) == {app}


def test_functions_reach_the_database_through_rds_proxy_with_tls(synthesized: Any) -> None:
    proxy_id, proxy = only(synthesized, "AWS::RDS::DBProxy")
    assert proxy["Properties"]["EngineFamily"] == "POSTGRESQL"
    assert proxy["Properties"]["RequireTLS"] is True
    for function in synthesized.resources("AWS::Lambda::Function").values():
        env = function["Properties"].get("Environment", {}).get("Variables", {})
        if "MEMORY_DATABASE_HOST" in env:
            assert refs_in(env["MEMORY_DATABASE_HOST"]) == {proxy_id}


def test_functions_that_use_the_database_are_updated_only_after_the_migrations(synthesized: Any) -> None:
    # Otherwise a deploy may serve new SQL against the old schema until the custom resource runs
    migrations_id, _ = only(synthesized, "Custom::MemoryMigrations")
    database_functions = 0
    for function in synthesized.resources("AWS::Lambda::Function").values():
        env = function["Properties"].get("Environment", {}).get("Variables", {})
        if "MEMORY_DATABASE_HOST" in env:
            database_functions += 1
            assert migrations_id in function.get("DependsOn", []), function["Properties"]["Handler"]
    assert database_functions >= 5


def test_migrations_run_as_a_custom_resource_with_the_embedding_settings(synthesized: Any) -> None:
    config = synthesized.stack.config
    synthesized.template.has_resource_properties(
        "Custom::MemoryMigrations",
        {
            "EmbeddingDim": str(config.embedding_dim),
            "EmbeddingModel": f"openai:{config.openai_embedding_model}",
            "MigrationsFingerprint": Match.string_like_regexp("^[0-9a-f]{16}$"),
        },
    )


def test_extraction_queue_redrives_to_the_dlq(synthesized: Any) -> None:
    config = synthesized.stack.config
    queues = synthesized.resources("AWS::SQS::Queue")
    main = [(k, q) for k, q in queues.items() if "RedrivePolicy" in q["Properties"]]
    assert len(main) == 1 and len(queues) == 2
    _, queue = main[0]
    redrive = queue["Properties"]["RedrivePolicy"]
    assert redrive["maxReceiveCount"] == config.extraction_max_receive_count
    dlq_id = next(iter(refs_in(redrive["deadLetterTargetArn"])))
    assert dlq_id in queues
    for q in queues.values():
        assert "KmsMasterKeyId" in q["Properties"]
    # Visibility timeout >= 6 x the worker's timeout (AWS guidance for Lambda event sources).
    worker = next(s for s in FUNCTIONS if s.trigger == "sqs")
    assert queue["Properties"]["VisibilityTimeout"] >= 6 * worker.timeout_s


def test_the_outbox_sweep_resends_only_after_the_queues_visibility_timeout(synthesized: Any) -> None:
    from agent_memory.config import Settings

    # Given the extraction queue as deployed, and the sweep's resend age as the functions run with it
    queues = synthesized.resources("AWS::SQS::Queue")
    (queue,) = [q for q in queues.values() if "RedrivePolicy" in q["Properties"]]
    visibility = queue["Properties"]["VisibilityTimeout"]
    # Then a session is queued again only once its message, still invisible to the others while a
    # worker holds it, could have come back on its own: never two extractions of it in flight
    assert Settings().extraction_stuck_after_s > visibility


def test_extraction_worker_reports_partial_batch_failures(synthesized: Any) -> None:
    _, mapping = only(synthesized, "AWS::Lambda::EventSourceMapping")
    props = mapping["Properties"]
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert refs_in(props["FunctionName"]) == {function_id(synthesized, "sqs")}
    assert props["BatchSize"] == synthesized.stack.config.extraction_batch_size


def rule_targets(synthesized: Any) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """Each EventBridge rule's schedule and targets, by its one target function's logical id."""
    out = {}
    for rule in synthesized.resources("AWS::Events::Rule").values():
        targets = rule["Properties"]["Targets"]
        (function,) = {next(iter(refs_in(t["Arn"]))) for t in targets}
        out[function] = (rule["Properties"]["ScheduleExpression"], targets)
    return out


def test_every_scheduled_function_has_a_rule_of_its_own(synthesized: Any) -> None:
    scheduled = {function_id(synthesized, "schedule", s.name) for s in FUNCTIONS if s.trigger == "schedule"}
    assert set(rule_targets(synthesized)) == scheduled
    assert len(synthesized.resources("AWS::Events::Rule")) == len(scheduled)


def test_nightly_schedule_invokes_the_purge(synthesized: Any) -> None:
    expression, targets = rule_targets(synthesized)[function_id(synthesized, "schedule", "purge")]
    assert expression == synthesized.stack.config.purge_schedule
    assert len(targets) == 1


def test_the_outbox_relay_runs_every_minute_without_retries(synthesized: Any) -> None:
    relay = function_id(synthesized, "schedule", "outbox_relay")
    expression, targets = rule_targets(synthesized)[relay]
    assert expression == synthesized.stack.config.outbox_relay_schedule == "rate(1 minute)"
    # a missed run is the next minute's work: no retries that would pile runs up
    assert [t["RetryPolicy"]["MaximumRetryAttempts"] for t in targets] == [0]


def test_transcripts_bucket_is_private_encrypted_and_unversioned(synthesized: Any) -> None:
    buckets = synthesized.resources("AWS::S3::Bucket")
    transcripts = [
        b
        for k, b in buckets.items()
        if "LoggingConfiguration" in b["Properties"] and k.startswith("PipelineTranscripts")
    ]
    assert len(transcripts) == 1
    props = transcripts[0]["Properties"]
    rule = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    assert "VersioningConfiguration" not in props, "an erasure must not leave noncurrent versions behind"
    assert props["PublicAccessBlockConfiguration"]["RestrictPublicBuckets"] is True


def test_the_deletion_registry_bucket_keeps_every_entry_under_object_lock(synthesized: Any) -> None:
    # Given the stack, when its deletion registry bucket is read
    config = synthesized.stack.config
    (props,) = [
        b["Properties"]
        for k, b in synthesized.resources("AWS::S3::Bucket").items()
        if k.startswith("DeletionRegistry")
    ]
    # Then it is versioned with object lock: no entry is overwritten or deleted for the retention
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert props["ObjectLockEnabled"] is True
    retention = props["ObjectLockConfiguration"]["Rule"]["DefaultRetention"]
    assert retention == {
        "Mode": config.deletion_registry_lock_mode,
        "Days": config.deletion_registry_retention_days,
    }
    assert retention["Days"] > config.backup_retention_days, "entries must outlive the backups they correct"
    assert props["PublicAccessBlockConfiguration"]["RestrictPublicBuckets"] is True
    assert "LoggingConfiguration" in props
    # ... and no function may delete an entry
    for policy in synthesized.resources("AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if any("DeletionRegistryBucket" in r for r in refs_in(statement["Resource"])):
                actions = (
                    statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                )
                assert not any(
                    a.startswith(("s3:Delete", "s3:PutObjectRetention", "s3:Bypass")) for a in actions
                )


def test_aurora_keeps_automated_backups_for_point_in_time_recovery(synthesized: Any) -> None:
    # Given the stack: Aurora's automated backups are its point-in-time recovery window
    _, cluster = only(synthesized, "AWS::RDS::DBCluster")
    assert cluster["Properties"]["BackupRetentionPeriod"] == synthesized.stack.config.backup_retention_days
    assert cluster["Properties"]["BackupRetentionPeriod"] >= 1


def test_zero_minimum_capacity_turns_on_auto_pause() -> None:
    # A small stack of its own: the network and the database with min capacity 0.
    import aws_cdk as cdk
    from aws_cdk.assertions import Template
    from infra.config import DeploymentConfig
    from infra.constructs.database import Database
    from infra.constructs.network import Network

    config = DeploymentConfig.from_mapping({"auroraMinCapacity": 0, "auroraAutoPauseMinutes": 15})
    stack = cdk.Stack(cdk.App(), "DatabaseOnly")
    Database(stack, "Database", config=config, network=Network(stack, "Network", config=config))
    Template.from_stack(stack).has_resource_properties(
        "AWS::RDS::DBCluster",
        {
            "ServerlessV2ScalingConfiguration": {
                "MinCapacity": 0,
                "MaxCapacity": 8,
                "SecondsUntilAutoPause": 900,
            },
        },
    )
