"""The extraction pipeline: transcripts bucket, extraction queue with its DLQ,
and the event source mapping that feeds the extraction worker."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs

from agent_memory.functions_spec import VISIBILITY_TIMEOUT_FACTOR
from constructs import Construct
from infra.config import DeploymentConfig


class Pipeline(Construct):
    """Exposes `key`, `transcripts_bucket`, `access_logs_bucket`, `queue` and `dead_letter_queue`."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: DeploymentConfig, worker_timeout: Duration
    ) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self.key = kms.Key(
            self,
            "Key",
            description="Agent Memory: transcripts and extraction queue messages",
            enable_key_rotation=True,
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.access_logs_bucket = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,  # access logging cannot write to SSE-KMS targets
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(90))],
            removal_policy=RemovalPolicy.RETAIN,
        )
        # Not versioned on purpose: an erasure must remove the transcript, not leave
        # a noncurrent version behind.
        self.transcripts_bucket = s3.Bucket(
            self,
            "Transcripts",
            encryption=s3.BucketEncryption.KMS,
            encryption_key=self.key,
            bucket_key_enabled=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=self.access_logs_bucket,
            server_access_logs_prefix="transcripts/",
            lifecycle_rules=[
                s3.LifecycleRule(abort_incomplete_multipart_upload_after=Duration.days(1)),
                # The nightly purge deletes transcripts after transcriptTtlDays; this is the backstop.
                s3.LifecycleRule(expiration=Duration.days(config.transcript_ttl_days + 1)),
            ],
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.dead_letter_queue = sqs.Queue(
            self,
            "ExtractionDlq",
            encryption=sqs.QueueEncryption.KMS,
            encryption_master_key=self.key,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        self.queue = sqs.Queue(
            self,
            "ExtractionQueue",
            encryption=sqs.QueueEncryption.KMS,
            encryption_master_key=self.key,
            data_key_reuse=Duration.hours(1),
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(worker_timeout.to_seconds() * VISIBILITY_TIMEOUT_FACTOR),
            retention_period=Duration.days(4),
            dead_letter_queue=sqs.DeadLetterQueue(
                max_receive_count=config.extraction_max_receive_count, queue=self.dead_letter_queue
            ),
        )

    def connect_worker(self, worker: lambda_.IFunction) -> sources.SqsEventSource:
        """Feed the extraction worker; it reports per-message failures (partial batch response)."""
        source = sources.SqsEventSource(
            self.queue,
            batch_size=self.config.extraction_batch_size,
            report_batch_item_failures=True,
            max_concurrency=max(2, self.config.extraction_max_concurrency),
        )
        worker.add_event_source(source)
        return source
