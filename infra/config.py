"""Deployment parameters, read once from CDK context (cdk.json, then `-c key=value`).

Every knob of the stack is here with its default, so docs/deploy.md and the
tests can name them; the constructs receive a validated `DeploymentConfig`
and never read context themselves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from constructs import Node

LayerMode = Literal["full", "placeholder"]


def _knob(default: Any, description: str) -> Any:
    """A context parameter: its default and what it does (docs/configuration.md lists them)."""
    return field(default=default, metadata={"description": description})


@dataclass(frozen=True)
class DeploymentConfig:
    # Naming and the shared layer.
    environment_name: str = _knob(
        "dev", "stack name suffix, API stage name and Aurora cluster identifier (agent-memory-<name>)"
    )
    layer: LayerMode = field(
        default="full",
        metadata={
            "description": '"full": the real layer; "placeholder": the core package only (tests; not deployable)'
        },
    )
    # Network: NAT gateways give the in-VPC functions egress (OpenAI, SQS, Step Functions...).
    max_azs: int = _knob(2, "availability zones the VPC spreads over")
    nat_gateways: int = _knob(
        1,
        "NAT gateways giving the in-VPC functions egress; 0 puts them in isolated subnets with interface endpoints",
    )
    # Aurora PostgreSQL Serverless v2. min 0 lets the writer auto-pause when idle.
    aurora_min_capacity: float = _knob(0.5, "least Aurora Serverless v2 ACUs; 0 enables auto-pause")
    aurora_max_capacity: float = _knob(8.0, "most Aurora Serverless v2 ACUs")
    aurora_auto_pause_minutes: int = _knob(
        30, "idle minutes before the writer pauses (only with aurora_min_capacity 0)"
    )
    aurora_readers: int = _knob(0, "Serverless v2 readers (they scale with the writer)")
    database_name: str = _knob("memory", "database created in the cluster")
    deletion_protection: bool = _knob(True, "Aurora deletion protection")
    backup_retention_days: int = _knob(7, "days automated backups are kept")
    secret_rotation_days: int = _knob(30, "rotation period of the database secret")
    # The deletion registry a restore replays (S3, object lock): each entry is kept at least this
    # long, longer than any backup or snapshot it must correct; GOVERNANCE or COMPLIANCE.
    deletion_registry_retention_days: int = _knob(
        400, "days each deletion-registry entry is locked (longer than any backup it must correct)"
    )
    deletion_registry_lock_mode: Literal["GOVERNANCE", "COMPLIANCE"] = _knob(
        "GOVERNANCE", "object lock mode of the deletion registry bucket"
    )
    # Embeddings (production embeds through an OpenAI-compatible API).
    embedder: Literal["openai", "local-minilm-onnx"] = _knob(
        "openai", "embedder of every database function (MEMORY_EMBEDDER)"
    )
    embedding_dim: int = _knob(1536, "vector dimension of every database function (MEMORY_EMBEDDING_DIM)")
    openai_embedding_model: str = _knob(
        "text-embedding-3-small", "embedding model name (MEMORY_OPENAI_EMBEDDING_MODEL)"
    )
    openai_base_url: str = _knob(
        "", "OpenAI-compatible embeddings API (MEMORY_OPENAI_BASE_URL; empty: OpenAI's)"
    )
    # Extraction pipeline.
    extraction_max_receive_count: int = _knob(
        3,
        "deliveries of a session-close message before the dead-letter queue (also MEMORY_MAX_RECEIVE_COUNT)",
    )
    extraction_batch_size: int = _knob(10, "SQS event source batch size of the extract function")
    extraction_max_concurrency: int = _knob(10, "most concurrent extract invocations")
    # Transcripts are purged by the lifecycle run after this many days (bucket expiry is the backstop).
    transcript_ttl_days: int = _knob(
        7,
        "transcripts purge age (MEMORY_TRANSCRIPT_TTL_DAYS); the bucket expires objects a day later as a backstop",
    )
    # Lifecycle: nightly purge (EventBridge cron, UTC).
    purge_schedule: str = _knob("cron(15 3 * * ? *)", "nightly purge schedule (EventBridge cron, UTC)")
    # The outbox relay sweep (EventBridge rate). It reaches the database on every run, so with
    # auroraMinCapacity 0 the writer never auto-pauses while this runs more often than the pause.
    outbox_relay_schedule: str = _knob(
        "rate(1 minute)", "outbox relay sweep schedule (EventBridge rate); each run reaches the database"
    )
    # Erasure verification loop: rounds of verify + wait before the workflow fails.
    erasure_verify_rounds: int = _knob(
        6, "verification rounds (verify, wait, verify again) before an erasure fails"
    )
    erasure_verify_wait_seconds: int = _knob(300, "seconds between erasure verification rounds")
    # API.
    api_throttle_rate_limit: float = _knob(100.0, "stage-wide API throttling, requests per second")
    api_throttle_burst_limit: int = _knob(200, "stage-wide API throttling burst")
    # Identity: the authorizer verifies the HS256 secret's tokens unless a JWKS is configured.
    # cognitoUserPool creates a user pool for machine clients (client credentials) and wires it;
    # otherwise jwtIssuer + jwtJwksUrl + jwtAudience name the tenant's own IdP (docs/deploy.md).
    cognito_user_pool: bool = _knob(
        False, "create a Cognito user pool for agents' client credentials, wired to the authorizer"
    )
    cognito_domain_prefix: str = _knob(
        "", "the Cognito hosted token endpoint's prefix (empty: agent-memory-<env>)"
    )
    jwt_issuer: str = _knob(
        "", "the tenant's own IdP: expected token issuer (with jwt_jwks_url and jwt_audience)"
    )
    jwt_jwks_url: str = _knob("", "the tenant's own IdP: its JWKS URL (https)")
    jwt_audience: str = _knob(
        "", "accepted audiences, comma-separated; with the Cognito pool: more app client ids"
    )
    jwt_audience_claim: str = _knob(
        "aud", 'the claim the audience is read from ("aud", or "client_id" for Cognito access tokens)'
    )
    jwt_required_claims: str = _knob(
        "", 'claims that must hold exactly these values, a JSON object such as {"token_use": "access"}'
    )
    jwt_tenant_id: str = _knob("", "the tenant of tokens that name none (required with the Cognito pool)")
    jwt_tenant_claim: str = _knob("tenant_id", "claim of the caller's tenant")
    jwt_roles_claim: str = _knob("roles", "claim of the caller's roles")
    jwt_role_prefix: str = _knob("", "only role values with this prefix are roles here")
    jwt_role_map: str = _knob("", "the IdP's role names mapped to this service's roles, a JSON object")
    jwt_clearance_claim: str = _knob("clearance", "claim of the caller's clearance")
    jwt_default_clearance: str = _knob("internal", "clearance of a token that names none")
    # The review console's user sign-in at the tenant's IdP (OIDC authorization code with PKCE):
    # the three together or none (then the console takes a pasted token). The issuer checked in
    # the ID token defaults to jwtIssuer; the redirect URI to the console's own URL.
    console_oidc_authorization_endpoint: str = _knob(
        "",
        "the review console's sign-in: the IdP's authorization endpoint (https; with the token endpoint and client id)",
    )
    console_oidc_token_endpoint: str = _knob(
        "", "the review console's sign-in: the IdP's token endpoint (https)"
    )
    console_oidc_client_id: str = _knob("", "the review console's sign-in: its client id")
    console_oidc_scopes: str = _knob("openid", "the review console's sign-in: scopes asked for")
    console_oidc_issuer: str = _knob(
        "", "the review console's sign-in: the ID token's issuer (empty: jwt_issuer)"
    )
    console_oidc_redirect_uri: str = _knob(
        "", "the review console's sign-in: redirect URI (https; empty: the console's own URL)"
    )
    # Observability.
    log_retention_days: int = _knob(30, "function log retention in days")
    powertools_log_level: str = _knob("INFO", "POWERTOOLS_LOG_LEVEL of every function")
    retrieval_p95_budget_ms: int = _knob(
        150, "threshold of the retrieval latency alarm (the function's duration, cold starts included)"
    )
    # The policy preset whose per-stage retrieval budgets (latency_budget_ms) the stage alarms use.
    latency_budget_preset: str = _knob(
        "crm", "the policy preset whose per-stage retrieval budgets (latency_budget_ms) the stage alarms use"
    )
    alarm_email: str = _knob("", "an e-mail address subscribed to the alarm topic (empty: none)")

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
