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
    database_url: str | None = Field(
        default=None,
        validation_alias="DATABASE_URL",
        description="PostgreSQL connection URL; without it (and without database_host) the embedded PostgreSQL runs in data_dir",
    )
    data_dir: Path = Field(
        default=Path(".memory-data"), description="where the embedded PostgreSQL and local state live"
    )
    app_role: str = Field(
        default="memory_app",
        description="the database role the service's queries run as (row-level security applies to it)",
    )
    # In AWS: the connection is built at cold start from a Secrets Manager secret (rotated),
    # through the RDS Proxy endpoint; migrations run once per deploy, not per cold start.
    database_secret_arn: str | None = Field(
        default=None,
        description="in AWS: the Secrets Manager secret (rotated) the connection's credentials are read from at cold start",
    )
    database_host: str | None = Field(
        default=None, description="in AWS: the database host (the RDS Proxy endpoint)"
    )
    database_port: int = Field(default=5432, description="the database port, with database_host")
    database_name: str | None = Field(default=None, description="the database name, with database_host")
    database_sslmode: str = Field(
        default="require", description="libpq sslmode of a connection built from database_host"
    )
    migrate_on_start: bool = Field(
        default=True,
        description="apply the migrations when the service starts (off in AWS: migrations run once per deploy)",
    )
    pool_min_size: int = Field(default=1, ge=0, description="connections the pool keeps open")
    pool_max_size: int = Field(default=8, ge=1, description="most connections the pool opens")
    # Named server-side prepared statements (psycopg prepares a statement on its 5th run) let the
    # read path reuse one plan. Behind RDS Proxy they pin each client connection to one database
    # connection, which ends multiplexing: the stack turns them off there (docs/operations.md).
    database_prepared_statements: bool = Field(
        default=True,
        description="let psycopg prepare statements server-side (off behind RDS Proxy, where they pin connections)",
    )
    # Outage bounds (docs/operations.md): past them a request answers 503 with Retry-After instead
    # of waiting. How long a request waits for a pooled connection; for a new connection (libpq's
    # connect_timeout, whole seconds, 2 at least); for a statement (the server's statement_timeout;
    # the client gives a silent server 2 s more) and for a lock (lock_timeout).
    database_pool_timeout_s: float = Field(
        default=3.0,
        gt=0,
        le=60,
        description="seconds a request waits for a pooled connection before answering 503",
    )
    database_connect_timeout_s: int = Field(
        default=3, ge=2, le=60, description="seconds to open a new connection (libpq connect_timeout)"
    )
    database_statement_timeout_s: float = Field(
        default=10.0,
        gt=0,
        le=600,
        description="the server's statement_timeout outside API requests, in seconds",
    )
    database_lock_timeout_s: float = Field(
        default=5.0, gt=0, le=600, description="the server's lock_timeout outside API requests, in seconds"
    )
    # In an API request: the server's statement and lock timeout; the client waits 0.5 s more for
    # a pooled connection or an answer, so every route answers within 3 s of a hung database.
    database_request_timeout_s: float = Field(
        default=2.0, gt=0, le=60, description="statement and lock timeout inside an API request, in seconds"
    )

    # HTTP front (local) and identity.
    port: int = Field(
        default=8080,
        validation_alias="PORT",
        ge=0,
        le=65535,
        description="port of the local HTTP front (memory serve)",
    )
    host: str = Field(default="127.0.0.1", description="interface the local HTTP front binds to")
    jwt_secret: SecretStr | None = Field(
        default=None, description="HS256 signing secret of development and test tokens"
    )
    # In AWS: the Secrets Manager secret the authorizer reads the signing secret from.
    jwt_secret_arn: str | None = Field(
        default=None,
        description="in AWS: the Secrets Manager secret the authorizer reads the HS256 secret from",
    )
    # Production identity (docs/deploy.md): with a JWKS URL, bearer tokens are RS256/ES256 from the
    # configured issuer, checked against its published keys, and no HS256 token is accepted.
    jwt_jwks_url: str | None = Field(
        default=None,
        description="the issuer's JWKS URL: bearer tokens are then RS256/ES256 from jwt_issuer, and no HS256 token is accepted",
    )
    jwt_issuer: str | None = Field(
        default=None, description="the expected iss of tokens verified against jwt_jwks_url"
    )
    jwt_audience: str | None = Field(
        default=None, description="accepted audiences, comma-separated (any of them)"
    )
    # The claim the audience is read from: "aud", or "client_id" for Cognito access tokens.
    jwt_audience_claim: str = Field(
        default="aud",
        description='the claim the audience is read from: "aud", or "client_id" for Cognito access tokens',
    )
    jwt_algorithms: str = Field(
        default="RS256,ES256", description="accepted signature algorithms of JWKS tokens, comma-separated"
    )
    # Claims that must hold exactly these values, e.g. {"token_use": "access"} for Cognito.
    jwt_required_claims: dict[str, str] = Field(
        default_factory=dict,
        description='claims that must hold exactly these values (JSON object), e.g. {"token_use": "access"}',
    )
    jwt_leeway_s: float = Field(
        default=30.0,
        ge=0,
        le=300,
        description="clock skew allowed when checking exp, nbf and iat, in seconds",
    )
    # The issuer's keys: cached this long, fetched again at most this often for an unknown key id
    # (a key rotation), and never waited on longer than the timeout (then 503).
    jwt_jwks_cache_s: float = Field(
        default=300.0, gt=0, le=86_400, description="seconds the issuer's keys are cached"
    )
    jwt_jwks_refetch_s: float = Field(
        default=30.0,
        ge=0,
        le=3600,
        description="least seconds between fetches of the keys for an unknown key id (a rotation)",
    )
    jwt_jwks_timeout_s: float = Field(
        default=2.0, gt=0, le=30, description="seconds a JWKS fetch may take before the request answers 503"
    )
    # Where the caller's identity is in the issuer's claims: a claim name, or a dotted path into
    # nested claims (a name with dots, such as a namespaced URL claim, is tried whole first).
    jwt_sub_claim: str = Field(default="sub", description="claim (or dotted path) of the caller's identity")
    jwt_tenant_claim: str = Field(
        default="tenant_id", description="claim (or dotted path) of the caller's tenant"
    )
    jwt_tenant_id: str | None = Field(
        default=None, description="the tenant of tokens that name none (one issuer, one tenant)"
    )
    jwt_roles_claim: str = Field(
        default="roles", description='claim of the roles: a list, or a space-separated string such as "scope"'
    )
    jwt_role_prefix: str = Field(
        default="", description="only role values with this prefix are roles here (the prefix is removed)"
    )
    jwt_role_map: dict[str, str] = Field(
        default_factory=dict,
        description="the issuer's role names mapped to this service's roles (JSON object)",
    )
    jwt_clearance_claim: str = Field(
        default="clearance", description="claim of the caller's sensitivity clearance"
    )
    jwt_default_clearance: Literal["public", "internal", "confidential", "restricted"] = Field(
        default="internal", description="clearance of a token that names none"
    )
    jwt_subjects_claim: str = Field(
        default="subjects", description="claim of the subjects a token is bound to (absent: not bound)"
    )
    # The review console's sign-in at the tenant's IdP (OIDC authorization code with PKCE), served
    # to the page as /console/config.json; without these the console offers only a pasted token.
    console_oidc_authorization_endpoint: str | None = Field(
        default=None,
        description="the review console's sign-in: the IdP's authorization endpoint (OIDC code flow with PKCE)",
    )
    console_oidc_token_endpoint: str | None = Field(
        default=None, description="the review console's sign-in: the IdP's token endpoint"
    )
    console_oidc_client_id: str | None = Field(
        default=None, description="the review console's sign-in: its client id at the IdP"
    )
    console_oidc_scopes: str = Field(
        default="openid", description="the review console's sign-in: scopes asked for"
    )
    console_oidc_issuer: str | None = Field(
        default=None, description="the review console's sign-in: the ID token's iss (default: jwt_issuer)"
    )
    console_oidc_redirect_uri: str | None = Field(
        default=None,
        description="the review console's sign-in: redirect URI (default: the console page itself)",
    )
    max_body_bytes: int = Field(
        default=2_097_152,
        description="largest request body the local front accepts; each route enforces its own limit too",
    )

    # Embeddings: the dimension is checked against the database at start.
    embedder: Literal["local-minilm-onnx", "openai"] = Field(
        default="local-minilm-onnx",
        description="the embedding model: the bundled MiniLM (ONNX, offline) or an OpenAI-compatible API",
    )
    embedding_dim: int = Field(
        default=384,
        ge=1,
        le=16000,
        description="vector dimension, checked against the database at start (1536 by default for text-embedding-3-small)",
    )
    embedder_threads: int = Field(
        default=1, ge=1, le=64, description="onnxruntime intra-op threads of the local embedder"
    )
    openai_base_url: str | None = Field(
        default=None, description="base URL of the OpenAI-compatible embeddings API (default: OpenAI's)"
    )
    openai_api_key: SecretStr | None = Field(default=None, description="API key of the embeddings API")
    openai_api_key_secret_arn: str | None = Field(
        default=None, description="in AWS: the Secrets Manager secret holding openai_api_key"
    )
    openai_embedding_model: str = Field(
        default="text-embedding-3-small", description="embedding model name at the OpenAI-compatible API"
    )
    openai_timeout_s: float = Field(default=10.0, description="seconds an embeddings request may take")

    # System of record: HTTP when a URL is set, else the local table (`memory sor set`).
    sor_url: str | None = Field(
        default=None,
        description="the system of record's HTTP endpoint for live values; without it, the local table (memory sor set)",
    )
    sor_token: SecretStr | None = Field(default=None, description="bearer token sent to sor_url")
    sor_timeout_s: float = Field(
        default=0.5, gt=0, le=10, description="seconds a live-value request may take"
    )
    sor_cache_seconds: float = Field(default=60.0, ge=0, le=300, description="seconds a live value is cached")
    # After this many outages in a row, stop asking for sor_breaker_cooldown_s (then one trial).
    sor_breaker_failures: int = Field(
        default=5,
        ge=1,
        le=1000,
        description="outages in a row after which the system of record is not asked for sor_breaker_cooldown_s",
    )
    sor_breaker_cooldown_s: float = Field(
        default=30.0, gt=0, le=600, description="seconds the breaker stays open before one trial request"
    )

    # AWS resources (locally: moto, started by `memory serve`, reached through aws_endpoint_url).
    aws_region: str = Field(
        default="us-east-1",
        validation_alias="AWS_REGION",
        description="AWS region of the queue, bucket and state machine",
    )
    aws_endpoint_url: str | None = Field(
        default=None, description="AWS endpoint override (locally: the moto server memory serve starts)"
    )
    extraction_queue_url: str | None = Field(
        default=None, description="SQS queue of session-close extraction messages"
    )
    transcripts_bucket: str | None = Field(default=None, description="S3 bucket of session transcripts")
    transcript_ttl_days: int = Field(
        default=7, ge=1, le=30, description="days a transcript is kept before the lifecycle run purges it"
    )
    # After each purge batch, pause this many times the batch's duration: the nightly purge yields
    # the database to the read path (0 = full speed; 1, the default = at most half the time purging:
    # a nightly job has hours, the read path has milliseconds).
    purge_pause_ratio: float = Field(
        default=1.0,
        ge=0.0,
        le=10.0,
        description="after each purge batch, pause this many times the batch's duration (0: full speed)",
    )
    max_receive_count: int = Field(
        default=3,
        ge=1,
        le=20,
        description="deliveries of an extraction message before it goes to the dead-letter queue",
    )
    # The outbox relay sweep (services/outbox.py): a session-close message still unsent this long
    # after its commit is sent by the sweep; a session queued or processing with no change for
    # extraction_stuck_after_s is queued again. That must exceed the extraction queue's visibility
    # timeout (functions_spec: 6 x the extract function's timeout), or the sweep would send a
    # second message while the first is still in flight: two extractions of one session.
    outbox_relay_after_s: float = Field(
        default=5.0,
        ge=0,
        le=3600,
        description="seconds after its commit an unsent session-close message is sent by the relay sweep",
    )
    # Delivered messages are deleted by the sweep this long after their send (once their session
    # has finished): the outbox holds what is in flight, not the history of every close.
    outbox_retention_s: float = Field(
        default=86_400.0,
        ge=60,
        le=90 * 86_400,
        description="seconds a delivered outbox message is kept after its send",
    )
    extraction_stuck_after_s: float = Field(
        default=EXTRACTION_RESEND_AFTER_S,
        gt=EXTRACTION_VISIBILITY_TIMEOUT_S,
        le=86_400,
        description="seconds without change after which a queued or processing session is queued again (more than the queue's visibility timeout)",
    )
    # Session-close extractor: "learned" (the default: a trained head over MiniLM sentence vectors,
    # offline; docs/extraction.md), "rules" (patterns only) or "llm" (an OpenAI-compatible endpoint).
    extractor: Literal["rules", "learned", "llm"] = Field(
        default="learned",
        description='session-close extractor: "learned" (a trained head over sentence vectors, offline), "rules" (patterns only) or "llm" (an OpenAI-compatible endpoint)',
    )
    # The learned extractor skips a statement whose calibrated confidence is below this.
    extractor_min_confidence: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="the learned extractor skips a statement whose calibrated confidence is below this",
    )
    llm_base_url: str | None = Field(
        default=None, description="base URL of the LLM extractor's OpenAI-compatible endpoint"
    )
    llm_api_key: SecretStr | None = Field(default=None, description="API key of the LLM extractor's endpoint")
    llm_model: str = Field(default="gpt-4o-mini", description="model name of the LLM extractor")
    llm_timeout_s: float = Field(
        default=20.0, gt=0, le=120, description="seconds one LLM extraction request may take"
    )
    llm_max_retries: int = Field(
        default=2,
        ge=0,
        le=5,
        description="retries of a timed-out LLM extraction request before the queue redelivers",
    )

    erasure_state_machine_arn: str | None = Field(
        default=None, description="in AWS: the Step Functions state machine an erasure request starts"
    )
    # The deletion registry a restore replays (services/deletion_replay.py), outside the database:
    # in AWS an S3 bucket with object lock, its subject digests keyed by a Secrets Manager secret;
    # locally a file in the data folder (beside the PostgreSQL folder, not in it) and its key.
    deletion_registry_bucket: str | None = Field(
        default=None,
        description="in AWS: the object-locked S3 bucket of the deletion registry a restore replays",
    )
    deletion_registry_key_secret_arn: str | None = Field(
        default=None, description="in AWS: the secret holding the key of the registry's subject digests"
    )

    screening_classifier: bool = Field(
        default=False,
        description="screen every memory with the learned multilingual injection classifier beside the "
        "patterns (more injections caught, more ordinary texts that mention instructions or links "
        "quarantined: docs/benchmarks.md)",
    )
    default_policy: str = Field(
        default="crm", description="policy preset of a tenant that has not chosen one (crm, support, wealth)"
    )
    environment: Literal["local", "aws"] = Field(
        default="local", description='"local" (memory serve) or "aws" (Lambda)'
    )

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
