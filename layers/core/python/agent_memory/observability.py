"""Powertools logger, metrics and tracer, shared by every entry point.

Logs are structured key/value fields. Never log memory content or an unmasked
identifier: log ids, hashes, counts and reasons.
"""

from __future__ import annotations

import os
import sys
import warnings

from aws_lambda_powertools import Logger, Metrics, Tracer

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

logger = Logger(service=SERVICE, stream=sys.stderr)
metrics = Metrics(namespace=os.environ["POWERTOOLS_METRICS_NAMESPACE"], service=SERVICE)
tracer = Tracer(service=SERVICE)
