"""Deployment parameters, read once from CDK context (cdk.json, then `-c key=value`).

Every knob of the stack is here with its default, so docs/deploy.md and the
tests can name them; the constructs receive a validated `DeploymentConfig`
and never read context themselves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, Literal

from constructs import Node

LayerMode = Literal["full", "placeholder"]


@dataclass(frozen=True)
class DeploymentConfig:
    # Naming and the shared layer.
    environment_name: str = "dev"
    layer: LayerMode = "full"
    # Network: NAT gateways give the in-VPC functions egress (OpenAI, SQS, Step Functions...).
    max_azs: int = 2
    nat_gateways: int = 1
    # Aurora PostgreSQL Serverless v2. min 0 lets the writer auto-pause when idle.
    aurora_min_capacity: float = 0.5
    aurora_max_capacity: float = 8.0
    aurora_auto_pause_minutes: int = 30
    aurora_readers: int = 0
    database_name: str = "memory"
    deletion_protection: bool = True
    backup_retention_days: int = 7
    # The deletion registry a restore replays (S3, object lock): each entry is kept at least this
    # long, longer than any backup or snapshot it must correct; GOVERNANCE or COMPLIANCE.
    deletion_registry_retention_days: int = 400
    deletion_registry_lock_mode: Literal["GOVERNANCE", "COMPLIANCE"] = "GOVERNANCE"
    secret_rotation_days: int = 30
    # Embeddings (production embeds through an OpenAI-compatible API).
    embedder: Literal["openai", "local-minilm-onnx"] = "openai"
    embedding_dim: int = 1536
    openai_embedding_model: str = "text-embedding-3-small"
    openai_base_url: str = ""
    # Extraction pipeline.
    extraction_max_receive_count: int = 3
    extraction_batch_size: int = 10
    extraction_max_concurrency: int = 10
    # Transcripts are purged by the lifecycle run after this many days (bucket expiry is the backstop).
    transcript_ttl_days: int = 7
    # Lifecycle: nightly purge (EventBridge cron, UTC).
    purge_schedule: str = "cron(15 3 * * ? *)"
    # The outbox relay sweep (EventBridge rate). It reaches the database on every run, so with
    # auroraMinCapacity 0 the writer never auto-pauses while this runs more often than the pause.
    outbox_relay_schedule: str = "rate(1 minute)"
    # Erasure verification loop: rounds of verify + wait before the workflow fails.
    erasure_verify_rounds: int = 6
    erasure_verify_wait_seconds: int = 300
    # API.
    api_throttle_rate_limit: float = 100.0
    api_throttle_burst_limit: int = 200
    # Identity: the authorizer verifies the HS256 secret's tokens unless a JWKS is configured.
    # cognitoUserPool creates a user pool for machine clients (client credentials) and wires it;
    # otherwise jwtIssuer + jwtJwksUrl + jwtAudience name the tenant's own IdP (docs/deploy.md).
    cognito_user_pool: bool = False
    cognito_domain_prefix: str = ""  # the hosted token endpoint's prefix (default agent-memory-<env>)
    jwt_issuer: str = ""
    jwt_jwks_url: str = ""
    jwt_audience: str = ""  # comma-separated; with the Cognito pool: more app client ids
    jwt_audience_claim: str = "aud"
    jwt_required_claims: str = ""  # JSON object, e.g. {"token_use": "access"}
    jwt_tenant_id: str = ""  # one IdP, one tenant (required with the Cognito pool)
    jwt_tenant_claim: str = "tenant_id"
    jwt_roles_claim: str = "roles"
    jwt_role_prefix: str = ""
    jwt_role_map: str = ""  # JSON object: the IdP's role names -> this service's roles
    jwt_clearance_claim: str = "clearance"
    jwt_default_clearance: str = "internal"
    # The review console's user sign-in at the tenant's IdP (OIDC authorization code with PKCE):
    # the three together or none (then the console takes a pasted token). The issuer checked in
    # the ID token defaults to jwtIssuer; the redirect URI to the console's own URL.
    console_oidc_authorization_endpoint: str = ""
    console_oidc_token_endpoint: str = ""
    console_oidc_client_id: str = ""
    console_oidc_scopes: str = "openid"
    console_oidc_issuer: str = ""
    console_oidc_redirect_uri: str = ""
    # Observability.
    log_retention_days: int = 30
    powertools_log_level: str = "INFO"
    retrieval_p95_budget_ms: int = 150
    # The policy preset whose per-stage retrieval budgets (latency_budget_ms) the stage alarms use.
    latency_budget_preset: str = "crm"
    alarm_email: str = ""

    @classmethod
    def context_keys(cls) -> dict[str, str]:
        """Python field name -> camelCase context key."""
        return {f.name: _camel(f.name) for f in fields(cls)}

    @classmethod
    def from_node(cls, node: Node) -> DeploymentConfig:
        return cls.from_mapping({key: node.try_get_context(key) for key in cls.context_keys().values()})

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> DeploymentConfig:
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            raw = values.get(_camel(f.name))
            if raw is None:
                continue
            kwargs[f.name] = _coerce(raw, f.default)
        config = cls(**kwargs)
        config.validate()
        return config

    def validate(self) -> None:
        if self.layer not in ("full", "placeholder"):
            raise ValueError("context layer must be 'full' or 'placeholder'")
        if not 0 <= self.aurora_min_capacity <= self.aurora_max_capacity <= 256:
            raise ValueError("need 0 <= auroraMinCapacity <= auroraMaxCapacity <= 256")
        if self.aurora_max_capacity < 1:
            raise ValueError("auroraMaxCapacity must be at least 1 ACU")
        if not 5 <= self.aurora_auto_pause_minutes <= 1440:
            raise ValueError("auroraAutoPauseMinutes must be within 5..1440")
        if not 1 <= self.extraction_max_receive_count <= 20:
            raise ValueError("extractionMaxReceiveCount must be within 1..20 (the core's max_receive_count)")
        if not 1 <= self.transcript_ttl_days <= 30:
            raise ValueError("transcriptTtlDays must be within 1..30")
        if not 1 <= self.extraction_batch_size <= 10:
            raise ValueError("extractionBatchSize must be within 1..10 (no batching window is configured)")
        if not 1 <= self.backup_retention_days <= 35:
            raise ValueError("backupRetentionDays must be within 1..35 (Aurora's automated backups)")
        if self.deletion_registry_retention_days <= self.backup_retention_days:
            raise ValueError("deletionRegistryRetentionDays must exceed backupRetentionDays")
        if self.deletion_registry_lock_mode not in ("GOVERNANCE", "COMPLIANCE"):
            raise ValueError("deletionRegistryLockMode must be GOVERNANCE or COMPLIANCE")
        if self.erasure_verify_rounds < 1:
            raise ValueError("erasureVerifyRounds must be at least 1")
        if self.embedder == "openai" and self.embedding_dim < 1:
            raise ValueError("embeddingDim must be positive")
        self._validate_identity()
        self._validate_console_sign_in()

    def _validate_console_sign_in(self) -> None:
        console = (
            self.console_oidc_authorization_endpoint,
            self.console_oidc_token_endpoint,
            self.console_oidc_client_id,
        )
        if any(console) and not all(console):
            raise ValueError(
                "the console's sign-in needs consoleOidcAuthorizationEndpoint, "
                "consoleOidcTokenEndpoint and consoleOidcClientId together"
            )
        for name in (
            "console_oidc_authorization_endpoint",
            "console_oidc_token_endpoint",
            "console_oidc_redirect_uri",
        ):
            value = getattr(self, name)
            if value and not value.startswith("https://"):
                raise ValueError(f"{_camel(name)} must be https")

    def _validate_identity(self) -> None:
        external = (self.jwt_issuer, self.jwt_jwks_url, self.jwt_audience)
        if self.cognito_user_pool and (self.jwt_issuer or self.jwt_jwks_url):
            raise ValueError("cognitoUserPool and jwtIssuer/jwtJwksUrl are alternatives: pick one")
        if self.cognito_user_pool and not self.jwt_tenant_id:
            raise ValueError(
                "cognitoUserPool needs jwtTenantId: the tenant whose agents the pool's clients are"
            )
        if not self.cognito_user_pool and any(external) and not all(external):
            raise ValueError("an external IdP needs jwtIssuer, jwtJwksUrl and jwtAudience together")
        if self.jwt_jwks_url and not self.jwt_jwks_url.startswith("https://"):
            raise ValueError("jwtJwksUrl must be https")
        for name in ("jwt_required_claims", "jwt_role_map"):
            raw = getattr(self, name)
            if raw and not isinstance(json.loads(raw), dict):
                raise ValueError(f"{_camel(name)} must be a JSON object")
        if self.jwt_default_clearance not in ("public", "internal", "confidential", "restricted"):
            raise ValueError("jwtDefaultClearance must be public, internal, confidential or restricted")

    @property
    def jwks_identity(self) -> bool:
        """The authorizer verifies an IdP's tokens (Cognito's or the tenant's own)."""
        return self.cognito_user_pool or bool(self.jwt_jwks_url)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _coerce(raw: Any, default: Any) -> Any:
    """Context from `-c key=value` arrives as strings; cdk.json gives JSON types."""
    if isinstance(default, bool):
        if isinstance(raw, str):
            return raw.strip().lower() in ("1", "true", "yes", "on")
        return bool(raw)
    if isinstance(default, int) and not isinstance(default, bool):
        return int(float(raw)) if isinstance(raw, str) else int(raw)
    if isinstance(default, float):
        return float(raw)
    if isinstance(raw, str):
        return raw
    return json.dumps(raw) if isinstance(raw, dict | list) else str(raw)
