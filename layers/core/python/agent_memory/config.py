"""Deployment settings, validated once at start (pydantic-settings, from the environment)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMORY_", extra="ignore", populate_by_name=True)

    # Storage. Without DATABASE_URL the embedded PostgreSQL runs in data_dir.
    database_url: str | None = Field(default=None, validation_alias="DATABASE_URL")
    data_dir: Path = Field(default=Path(".memory-data"))
    app_role: str = "memory_app"
    pool_min_size: int = Field(default=1, ge=0)
    pool_max_size: int = Field(default=8, ge=1)

    # HTTP front (local) and identity.
    port: int = Field(default=8080, validation_alias="PORT", ge=0, le=65535)
    host: str = "127.0.0.1"
    jwt_secret: SecretStr | None = None
    max_body_bytes: int = 262_144

    # Embeddings: the dimension is checked against the database at start.
    embedder: Literal["local-minilm-onnx", "openai"] = "local-minilm-onnx"
    embedding_dim: int = Field(default=384, ge=1, le=16000)
    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    openai_embedding_model: str = "text-embedding-3-small"
    openai_timeout_s: float = 10.0

    default_policy: str = "crm"
    environment: Literal["local", "aws"] = "local"

    @model_validator(mode="after")
    def _openai_dim(self) -> Settings:
        if self.embedder == "openai" and self.embedding_dim == 384 and "3-small" in self.openai_embedding_model:
            # text-embedding-3-small is 1536-d unless shortened; make the default match the model.
            self.embedding_dim = 1536
        return self

    @property
    def resolved_data_dir(self) -> Path:
        return self.data_dir.expanduser().resolve()
