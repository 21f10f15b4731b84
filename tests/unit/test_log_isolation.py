"""Log lines of requests answered at once on threads each name their own request."""

from __future__ import annotations

import io
import json
import logging
import threading
from dataclasses import dataclass

from agent_memory.observability import logger


@dataclass
class FakeContext:  # the Lambda context's shape: pure data
    function_name: str
    aws_request_id: str
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:000000000000:function:x"


def test_two_invocations_at_once_log_their_own_request_ids():
    # Given a handler decorated as every function's is, logging before and after the other thread ran
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    logger.addHandler(handler)
    barrier = threading.Barrier(2, timeout=10)

    @logger.inject_lambda_context(clear_state=True)
    def lambda_handler(event, context):
        logger.warning("first", extra={"mine": event["id"]})
        barrier.wait()
        barrier.wait()
        logger.warning("second", extra={"mine": event["id"]})

    # When two invocations overlap on two threads
    try:
        threads = [
            threading.Thread(target=lambda_handler, args=({"id": name}, FakeContext(name, f"req-{name}")))
            for name in ("a", "b")
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=20)
    finally:
        logger.removeHandler(handler)
    # Then every line carries the request id and function name of its own invocation
    lines = [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]
    assert len(lines) == 4
    for line in lines:
        assert line["function_request_id"] == f"req-{line['mine']}", line
        assert line["function_name"] == line["mine"], line


def test_a_key_a_request_appends_is_gone_for_the_next_invocation():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    logger.addHandler(handler)

    @logger.inject_lambda_context(clear_state=True)
    def lambda_handler(event, context):
        if event.get("append"):
            logger.append_keys(customer_hint="x")
        logger.warning("line")

    try:
        lambda_handler({"append": True}, FakeContext("f", "req-1"))
        lambda_handler({}, FakeContext("f", "req-2"))
    finally:
        logger.removeHandler(handler)
    first, second = (json.loads(line) for line in stream.getvalue().splitlines() if line.strip())
    assert first["customer_hint"] == "x" and "customer_hint" not in second
    assert first["service"] == second["service"]


def test_outside_lambda_a_line_carries_no_lambda_only_fields(monkeypatch):
    # Given a handler decorated as every function's is, run outside Lambda (`memory serve`)
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    logger.addHandler(handler)

    @logger.inject_lambda_context(clear_state=True)
    def lambda_handler(event, context):
        logger.warning("line")

    # When it logs
    try:
        lambda_handler({}, FakeContext("retrieve", "req-1"))
    finally:
        logger.removeHandler(handler)
    line = json.loads(stream.getvalue().splitlines()[0])
    # Then the line names its function and request, without the made-up ARN, memory size or cold start
    assert (line["function_name"], line["function_request_id"]) == ("retrieve", "req-1")
    assert {"function_arn", "function_memory_size", "cold_start"} & set(line) == set()


def test_in_lambda_a_line_keeps_the_lambda_fields(monkeypatch):
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "retrieve")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    logger.addHandler(handler)

    @logger.inject_lambda_context(clear_state=True)
    def lambda_handler(event, context):
        logger.warning("line")

    try:
        lambda_handler({}, FakeContext("retrieve", "req-1"))
    finally:
        logger.removeHandler(handler)
    line = json.loads(stream.getvalue().splitlines()[0])
    assert {"function_arn", "function_memory_size", "cold_start"} <= set(line)
