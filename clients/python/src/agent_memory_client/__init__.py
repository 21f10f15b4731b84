"""A typed Python client for the Agent Memory Service: `MemoryClient` (sync) and
`AsyncMemoryClient` (asyncio), one method per HTTP route, errors as `MemoryApiError` subclasses."""

from agent_memory_client import models
from agent_memory_client._core import NO_RETRIES, ROUTES, RetryPolicy, Route
from agent_memory_client.async_client import AsyncMemoryClient
from agent_memory_client.client import MemoryClient
from agent_memory_client.errors import (
    Conflict,
    ErasureWaitTimeout,
    Forbidden,
    InvalidRequest,
    MemoryApiError,
    MemoryClientError,
    MemoryTransportError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    SessionWaitTimeout,
    Unauthenticated,
    Unavailable,
    UnsupportedMediaType,
)
from agent_memory_client.models import CloseSessionRequest, MemoryWrite, RetrieveRequest, Source, Turn

__version__ = "0.1.0"

__all__ = [
    "NO_RETRIES",
    "ROUTES",
    "AsyncMemoryClient",
    "CloseSessionRequest",
    "Conflict",
    "ErasureWaitTimeout",
    "Forbidden",
    "InvalidRequest",
    "MemoryApiError",
    "MemoryClient",
    "MemoryClientError",
    "MemoryTransportError",
    "MemoryWrite",
    "NotFound",
    "PayloadTooLarge",
    "RateLimited",
    "RetrieveRequest",
    "RetryPolicy",
    "Route",
    "ServerError",
    "SessionWaitTimeout",
    "Source",
    "Turn",
    "Unauthenticated",
    "Unavailable",
    "UnsupportedMediaType",
    "models",
]
