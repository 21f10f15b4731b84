"""Application secrets that are not the database's: the JWT signing key the
authorizer verifies with, the OpenAI-compatible API key of the embedder, and the
key the deletion registry digests subject ids with."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_secretsmanager as secretsmanager

from constructs import Construct


class AppSecrets(Construct):
    """Exposes `jwt_secret`, `openai_secret` and `deletion_registry_key` (plain-string secrets)."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.jwt_secret = secretsmanager.Secret(
            self,
            "JwtSigningKey",
            description="Agent Memory: HS256 key the API authorizer verifies bearer tokens with",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=64, exclude_punctuation=True, include_space=False
            ),
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.openai_secret = secretsmanager.Secret(
            self,
            "OpenAiApiKey",
            description="Agent Memory: API key of the OpenAI-compatible embeddings endpoint "
            "(a random placeholder until an operator puts the real key)",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=32, exclude_punctuation=True, include_space=False
            ),
            removal_policy=RemovalPolicy.RETAIN,
        )
        # HMAC key of the subject digests in the deletion registry: never rotated (a new key
        # would leave every earlier entry naming no subject the replay can find).
        self.deletion_registry_key = secretsmanager.Secret(
            self,
            "DeletionRegistryKey",
            description="Agent Memory: key of the subject digests in the deletion registry (never rotate)",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=64, exclude_punctuation=True, include_space=False
            ),
            removal_policy=RemovalPolicy.RETAIN,
        )
