"""Powertools logger, metrics and tracer, shared by every entry point.

Logs are structured key/value fields. Never log memory content or an unmasked
identifier: log ids, hashes, counts and reasons.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import AsyncGenerator, Generator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.tracing.base import BaseProvider, BaseSegment

SERVICE = os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "agent-memory")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "AgentMemory")
os.environ.setdefault(
    "POWERTOOLS_TRACE_DISABLED", "true" if not os.environ.get("AWS_LAMBDA_FUNCTION_NAME") else "false"
)

# stderr: in Lambda both streams reach CloudWatch; locally stdout stays clean for JSON output.
# Handlers that emit no metric on a given call (health, a 4xx) are normal, not worth a warning per call.
warnings.filterwarnings("ignore", message="No application metrics to publish")

# A retrieval answered without the live values or ticket it needed (the system of record failed,
# or its circuit breaker is open): account facts went out unconfirmed. infra alarms on it.
SOR_UNAVAILABLE_METRIC = "SystemOfRecordUnavailable"
# Each retrieval stage's milliseconds (RetrievalStage_db, ..._total): infra alarms on the policy's
# per-stage budget.
RETRIEVAL_STAGE_METRIC_PREFIX = "RetrievalStage_"

# The Lambda context keys (function name, request id, cold start) that inject_lambda_context adds.
_CONTEXT_KEYS = frozenset({"function_name", "function_request_id", "function_arn", "function_memory_size"})
# Of those, the ones that mean something only in Lambda: outside it (`memory serve`, `memory
# invoke`) they would carry the local stand-in's made-up ARN, memory size and cold start.
_LAMBDA_ONLY_KEYS = frozenset({"function_arn", "function_memory_size", "cold_start"})


def _in_lambda() -> bool:
    return bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME"))


class RequestScopedLogger(Logger):
    """Powertools' logger with the Lambda context keys held per thread (context variables).

    `inject_lambda_context` writes the invocation's keys into the formatter every handler shares.
    Lambda runs one invocation per process, so that is safe there; `memory serve` answers on
    threads, and a log line of one request carried another request's function name and request
    id. Here those keys go to Powertools' thread-safe keys, so each line names its own request."""

    def structure_logs(
        self, append: bool = False, formatter_options: dict | None = None, **keys: object
    ) -> None:
        if _CONTEXT_KEYS & set(keys):
            # Mode 3 of Powertools' structure_logs, per thread: every key a request added goes to
            # the thread's own keys (append_keys below), so clearing those clears the request.
            self.thread_safe_clear_keys()
            if not _in_lambda():
                keys = {k: v for k, v in keys.items() if k not in _LAMBDA_ONLY_KEYS}
            self.thread_safe_append_keys(**keys)
            return
        super().structure_logs(append=append, formatter_options=formatter_options, **keys)

    def append_keys(self, **additional_keys: object) -> None:
        # Keys added while serving (a correlation id, anything a handler appends) belong to the
        # request being served, never to every thread's formatter.
        self.thread_safe_append_keys(**additional_keys)


class _UntracedSegment(BaseSegment):
    """What a disabled tracer records into: nothing."""

    def close(self, end_time: int | None = None) -> None:
        return None

    def add_subsegment(self, subsegment: Any) -> None:
        return None

    def remove_subsegment(self, subsegment: Any) -> None:
        return None

    def put_annotation(self, key: str, value: Any) -> None:
        return None

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        return None

    def add_exception(self, exception: BaseException, stack: Any, remote: bool = False) -> None:
        return None


class UntracedProvider(BaseProvider):
    """The tracer's provider where tracing is off (everywhere but a traced Lambda function).

    Powertools' Tracer builds its default provider, the X-Ray recorder, even when tracing is
    disabled, and importing it loads the X-Ray SDK's sampler and botocore: about a third of a
    second of every cold import (`memory bench coldstart`). Where nothing is traced, this
    provider stands in and the SDK is never loaded; the decorators behave as they do disabled."""

    @contextmanager
    def in_subsegment(self, name: str | None = None, **kwargs: Any) -> Generator[BaseSegment]:
        yield _UntracedSegment()

    @asynccontextmanager
    async def in_subsegment_async(
        self, name: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[BaseSegment]:
        yield _UntracedSegment()

    def put_annotation(self, key: str, value: Any) -> None:
        return None

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        return None

    def patch(self, modules: Sequence[str]) -> None:
        return None

    def patch_all(self) -> None:
        return None


def _tracer() -> Tracer:
    """X-Ray where Powertools would trace (a Lambda function with POWERTOOLS_TRACE_DISABLED false),
    the untraced provider everywhere else (Powertools' own test of whether tracing is off)."""
    if Tracer._is_tracer_disabled():
        return Tracer(service=SERVICE, disabled=True, provider=UntracedProvider())
    return Tracer(service=SERVICE)


logger = RequestScopedLogger(service=SERVICE, stream=sys.stderr)
metrics = Metrics(namespace=os.environ["POWERTOOLS_METRICS_NAMESPACE"], service=SERVICE)
tracer = _tracer()


def emit_tenant_gauges(tenant_id: str, values: Sequence[tuple[str, str, float]]) -> None:
    """One tenant's operating figures as metrics of their own (dimensions `service` and `tenant_id`),
    flushed at once: kept apart from the handler's metrics, which carry no tenant."""
    from aws_lambda_powertools.metrics import EphemeralMetrics

    if not values:
        return
    tenant_metrics = EphemeralMetrics(namespace=os.environ["POWERTOOLS_METRICS_NAMESPACE"], service=SERVICE)
    tenant_metrics.add_dimension(name="tenant_id", value=tenant_id)
    for name, unit, value in values:
        tenant_metrics.add_metric(name=name, unit=unit, value=value)
    tenant_metrics.flush_metrics()
