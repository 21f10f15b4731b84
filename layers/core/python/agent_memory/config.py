"""Deployment settings, validated once at start (pydantic-settings, from the environment)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agent_memory.functions_spec import EXTRACTION_RESEND_AFTER_S, EXTRACTION_VISIBILITY_TIMEOUT_S


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMORY_", extra="ignore", populate_by_name=True)

    # Storage. Without DATABASE_URL the embedded PostgreSQL runs in data_dir.
    database_url: str | None = Field(default=None, validation_alias="DATABASE_URL")
    data_dir: Path = Field(default=Path(".memory-data"))
    app_role: str = "memory_app"
    # In AWS: the connection is built at cold start from a Secrets Manager secret (rotated),
    # through the RDS Proxy endpoint; migrations run once per deploy, not per cold start.
    database_secret_arn: str | None = None
    database_host: str | None = None
    database_port: int = 5432
    database_name: str | None = None
    database_sslmode: str = "require"
    migrate_on_start: bool = True
    pool_min_size: int = Field(default=1, ge=0)
    pool_max_size: int = Field(default=8, ge=1)
    # Named server-side prepared statements (psycopg prepares a statement on its 5th run) let the
    # read path reuse one plan. Behind RDS Proxy they pin each client connection to one database
    # connection, which ends multiplexing: the stack turns them off there (docs/operations.md).
    database_prepared_statements: bool = True
    # Outage bounds (docs/operations.md): past them a request answers 503 with Retry-After instead
    # of waiting. How long a request waits for a pooled connection; for a new connection (libpq's
    # connect_timeout, whole seconds, 2 at least); for a statement (the server's statement_timeout;
    # the client gives a silent server 2 s more) and for a lock (lock_timeout).
    database_pool_timeout_s: float = Field(default=3.0, gt=0, le=60)
    database_connect_timeout_s: int = Field(default=3, ge=2, le=60)
    database_statement_timeout_s: float = Field(default=10.0, gt=0, le=600)
    database_lock_timeout_s: float = Field(default=5.0, gt=0, le=600)
    # In an API request: the server's statement and lock timeout; the client waits 0.5 s more for
    # a pooled connection or an answer, so every route answers within 3 s of a hung database.
    database_request_timeout_s: float = Field(default=2.0, gt=0, le=60)

    # HTTP front (local) and identity.
    port: int = Field(default=8080, validation_alias="PORT", ge=0, le=65535)
    host: str = "127.0.0.1"
    jwt_secret: SecretStr | None = None
    # In AWS: the Secrets Manager secret the authorizer reads the signing secret from.
    jwt_secret_arn: str | None = None
    # Production identity (docs/deploy.md): with a JWKS URL, bearer tokens are RS256/ES256 from the
    # configured issuer, checked against its published keys, and no HS256 token is accepted.
    jwt_jwks_url: str | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None  # comma-separated: any of them is accepted
    # The claim the audience is read from: "aud", or "client_id" for Cognito access tokens.
    jwt_audience_claim: str = "aud"
    jwt_algorithms: str = "RS256,ES256"
    # Claims that must hold exactly these values, e.g. {"token_use": "access"} for Cognito.
    jwt_required_claims: dict[str, str] = Field(default_factory=dict)
    jwt_leeway_s: float = Field(default=30.0, ge=0, le=300)
    # The issuer's keys: cached this long, fetched again at most this often for an unknown key id
    # (a key rotation), and never waited on longer than the timeout (then 503).
    jwt_jwks_cache_s: float = Field(default=300.0, gt=0, le=86_400)
    jwt_jwks_refetch_s: float = Field(default=30.0, ge=0, le=3600)
    jwt_jwks_timeout_s: float = Field(default=2.0, gt=0, le=30)
    # Where the caller's identity is in the issuer's claims: a claim name, or a dotted path into
    # nested claims (a name with dots, such as a namespaced URL claim, is tried whole first).
    jwt_sub_claim: str = "sub"
    jwt_tenant_claim: str = "tenant_id"
    jwt_tenant_id: str | None = None  # one issuer, one tenant: used when the token names none
    jwt_roles_claim: str = "roles"  # a list, or a space-separated string such as "scope"
    jwt_role_prefix: str = ""  # only values with this prefix are roles here (others ignored)
    jwt_role_map: dict[str, str] = Field(default_factory=dict)  # the issuer's names -> roles
    jwt_clearance_claim: str = "clearance"
    jwt_default_clearance: Literal["public", "internal", "confidential", "restricted"] = "internal"
    jwt_subjects_claim: str = "subjects"
    # The review console's sign-in at the tenant's IdP (OIDC authorization code with PKCE), served
    # to the page as /console/config.json; without these the console offers only a pasted token.
    console_oidc_authorization_endpoint: str | None = None
    console_oidc_token_endpoint: str | None = None
    console_oidc_client_id: str | None = None
    console_oidc_scopes: str = "openid"
    console_oidc_issuer: str | None = None  # the ID token's iss (default: jwt_issuer)
    console_oidc_redirect_uri: str | None = None  # default: the console page itself
    max_body_bytes: int = 2_097_152  # transport limit of the local front; each route enforces its own

    # Embeddings: the dimension is checked against the database at start.
    embedder: Literal["local-minilm-onnx", "openai"] = "local-minilm-onnx"
    embedding_dim: int = Field(default=384, ge=1, le=16000)
    embedder_threads: int = Field(default=1, ge=1, le=64)  # onnxruntime intra-op threads (local embedder)
    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    openai_api_key_secret_arn: str | None = None
    openai_embedding_model: str = "text-embedding-3-small"
    openai_timeout_s: float = 10.0

    # System of record: HTTP when a URL is set, else the local table (`memory sor set`).
    sor_url: str | None = None
    sor_token: SecretStr | None = None
    sor_timeout_s: float = Field(default=0.5, gt=0, le=10)
    sor_cache_seconds: float = Field(default=60.0, ge=0, le=300)
    # After this many outages in a row, stop asking for sor_breaker_cooldown_s (then one trial).
    sor_breaker_failures: int = Field(default=5, ge=1, le=1000)
    sor_breaker_cooldown_s: float = Field(default=30.0, gt=0, le=600)

    # AWS resources (locally: moto, started by `memory serve`, reached through aws_endpoint_url).
    aws_region: str = Field(default="us-east-1", validation_alias="AWS_REGION")
    aws_endpoint_url: str | None = None
    extraction_queue_url: str | None = None
    transcripts_bucket: str | None = None
    transcript_ttl_days: int = Field(default=7, ge=1, le=30)
    # After each purge batch, pause this many times the batch's duration: the nightly purge yields
    # the database to the read path (0 = full speed; 1, the default = at most half the time purging:
    # a nightly job has hours, the read path has milliseconds).
    purge_pause_ratio: float = Field(default=1.0, ge=0.0, le=10.0)
    max_receive_count: int = Field(default=3, ge=1, le=20)
    # The outbox relay sweep (services/outbox.py): a session-close message still unsent this long
    # after its commit is sent by the sweep; a session queued or processing with no change for
    # extraction_stuck_after_s is queued again. That must exceed the extraction queue's visibility
    # timeout (functions_spec: 6 x the extract function's timeout), or the sweep would send a
    # second message while the first is still in flight: two extractions of one session.
    outbox_relay_after_s: float = Field(default=5.0, ge=0, le=3600)
    # Delivered messages are deleted by the sweep this long after their send (once their session
    # has finished): the outbox holds what is in flight, not the history of every close.
    outbox_retention_s: float = Field(default=86_400.0, ge=60, le=90 * 86_400)
    extraction_stuck_after_s: float = Field(
        default=EXTRACTION_RESEND_AFTER_S, gt=EXTRACTION_VISIBILITY_TIMEOUT_S, le=86_400
    )
    # Session-close extractor: "learned" (the default: a trained head over MiniLM sentence vectors,
    # offline; docs/extraction.md), "rules" (patterns only) or "llm" (an OpenAI-compatible endpoint).
    extractor: Literal["rules", "learned", "llm"] = "learned"
    # The learned extractor skips a statement whose calibrated confidence is below this.
    extractor_min_confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_model: str = "gpt-4o-mini"
    llm_timeout_s: float = Field(default=20.0, gt=0, le=120)
    llm_max_retries: int = Field(default=2, ge=0, le=5)

    erasure_state_machine_arn: str | None = None
    # The deletion registry a restore replays (services/deletion_replay.py), outside the database:
    # in AWS an S3 bucket with object lock, its subject digests keyed by a Secrets Manager secret;
    # locally a file in the data folder (beside the PostgreSQL folder, not in it) and its key.
    deletion_registry_bucket: str | None = None
    deletion_registry_key_secret_arn: str | None = None

    default_policy: str = "crm"
    environment: Literal["local", "aws"] = "local"

    @model_validator(mode="after")
    def _openai_dim(self) -> Settings:
        if (
            self.embedder == "openai"
            and self.embedding_dim == 384
            and "3-small" in self.openai_embedding_model
        ):
            # text-embedding-3-small is 1536-d unless shortened; make the default match the model.
            self.embedding_dim = 1536
        return self

    @property
    def resolved_data_dir(self) -> Path:
        return self.data_dir.expanduser().resolve()
