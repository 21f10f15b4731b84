"""A handler's cold import loads what it serves and no more (`memory bench coldstart` measures it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_memory.observability import UntracedProvider, tracer

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"


def loaded_after_import(function: str, modules: list[str]) -> dict[str, bool]:
    """Which of `modules` a fresh interpreter holds once it imported the function's handler."""
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(FUNCTIONS / function)!r})\n"
        "import handler\n"
        f"print(json.dumps({{m: m in sys.modules for m in {modules!r}}}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_LAMBDA_")}
    env["POWERTOOLS_TRACE_DISABLED"] = "true"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True, timeout=120
    )
    return json.loads(done.stdout)


@pytest.mark.process  # a fresh interpreter
def test_given_tracing_off_when_the_health_handler_is_imported_then_xray_openapi_and_jwt_stay_unloaded():
    # When a fresh process imports the health handler where nothing is traced
    loaded = loaded_after_import("health", ["aws_xray_sdk.core", "agent_memory.api.openapi", "jwt"])
    # Then neither the X-Ray SDK, nor the OpenAPI document's models, nor the JWT library was loaded
    assert loaded == {"aws_xray_sdk.core": False, "agent_memory.api.openapi": False, "jwt": False}


@pytest.mark.process  # a fresh interpreter
def test_given_no_secret_arn_when_the_authorizer_is_imported_then_boto3_stays_unloaded():
    # When a fresh process imports the authorizer
    loaded = loaded_after_import("authorizer", ["boto3", "aws_xray_sdk.core"])
    # Then Secrets Manager's client library waits for the path that reads the secret
    assert loaded == {"boto3": False, "aws_xray_sdk.core": False}


def test_given_tracing_off_when_a_traced_handler_runs_then_it_returns_and_raises_as_undecorated():
    # Given the shared tracer, untraced here, decorating two handlers
    assert isinstance(tracer.provider, UntracedProvider)

    @tracer.capture_lambda_handler
    def answers(event: dict, context: object) -> dict:
        return {"echo": event["x"]}

    @tracer.capture_lambda_handler
    def fails(event: dict, context: object) -> dict:
        raise ValueError("boom")

    # When they run, Then the result and the exception pass through unchanged
    assert answers({"x": 1}, None) == {"echo": 1}
    with pytest.raises(ValueError, match="boom"):
        fails({}, None)


@pytest.mark.process  # a fresh interpreter
def test_given_a_traced_lambda_function_when_observability_loads_then_the_tracer_records_to_xray():
    # Given the environment of a Lambda function with tracing on (the stack's active tracing)
    env = {k: v for k, v in os.environ.items() if not k.startswith("POWERTOOLS_")}
    env.update({"AWS_LAMBDA_FUNCTION_NAME": "memory-health", "LAMBDA_TASK_ROOT": "/var/task"})
    script = (
        "from agent_memory.observability import tracer\n"
        "print(tracer.disabled, type(tracer.provider).__module__)\n"
    )
    # When a fresh process loads the shared tracer
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True, timeout=120
    )
    # Then it is enabled and its provider is the X-Ray recorder, as before
    disabled, provider_module = done.stdout.split()
    assert disabled == "False"
    assert provider_module.startswith("aws_xray_sdk")
