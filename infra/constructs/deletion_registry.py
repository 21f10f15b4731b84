"""The deletion registry's bucket: what was erased or deleted, kept outside Aurora so that a
restored cluster can be corrected before it serves (the product requirements: "restores replay the tombstone
registry before serving traffic"). Versioned with object lock: an entry, once written, can be
neither overwritten nor deleted for the retention. It holds ids and keyed digests only."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3

from constructs import Construct
from infra.config import DeploymentConfig

ENTRIES_PREFIX = "entries/"  # agent_memory.adapters.deletion_registry.S3_PREFIX


class DeletionRegistryBucket(Construct):
    """Exposes `bucket`; `grant_append_and_read(grantee)` gives what the registry adapter uses
    (list, read, put under entries/) and never a delete."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        access_logs_bucket: s3.IBucket,
    ) -> None:
        super().__init__(scope, construct_id)
        retention = Duration.days(config.deletion_registry_retention_days)
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            versioned=True,  # object lock requires it
            object_lock_enabled=True,
            object_lock_default_retention=(
                s3.ObjectLockRetention.compliance(retention)
                if config.deletion_registry_lock_mode == "COMPLIANCE"
                else s3.ObjectLockRetention.governance(retention)
            ),
            encryption=s3.BucketEncryption.S3_MANAGED,  # ids and keyed digests, no personal data
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=access_logs_bucket,
            server_access_logs_prefix="deletion-registry/",
            removal_policy=RemovalPolicy.RETAIN,
        )

    def grant_append_and_read(self, grantee: iam.IGrantable) -> None:
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:ListBucket"],
                resources=[self.bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{ENTRIES_PREFIX}*"]}},
            )
        )
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject", "s3:PutObject"],
                resources=[self.bucket.arn_for_objects(f"{ENTRIES_PREFIX}*")],
            )
        )
