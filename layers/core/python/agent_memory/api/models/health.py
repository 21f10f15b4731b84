"""Health, and the OpenAPI document itself."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from agent_memory.api.models.common import ResponseModel


class Health(ResponseModel):
    """200 when the database answers; 503 (with Retry-After) and `degraded` when it does not."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"status": "ok", "database": "ok", "embedder": "local-minilm-onnx", "version": "0.1.0"}
            ]
        }
    )

    status: Literal["ok", "degraded"]
    database: Literal["ok", "unavailable", "error"]
    embedder: str
    version: str


class OpenApiDocument(ResponseModel):
    """This document: OpenAPI 3.1."""

    model_config = ConfigDict(extra="allow")

    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]
    components: dict[str, Any]
    security: list[dict[str, Any]] = Field(default_factory=list)
    tags: list[dict[str, Any]] = Field(default_factory=list)
