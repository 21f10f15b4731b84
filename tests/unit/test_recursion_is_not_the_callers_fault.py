"""A recursion inside the service is the service's fault (500, logged and counted), never reported
to the caller as their body being "nested too deeply"; a body that really is nested that deep is."""

from __future__ import annotations

import json
from typing import Any

from agent_memory.api.http import create_app


def _event(body: str | None) -> dict[str, Any]:
    return {
        "resource": "/v1/loop",
        "path": "/v1/loop",
        "httpMethod": "POST",
        "headers": {"Content-Type": "application/json"},
        "multiValueHeaders": {},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": "/v1/loop",
            "httpMethod": "POST",
            "path": "/v1/loop",
            "stage": "local",
            "requestId": "req-1",
            "identity": {"sourceIp": "127.0.0.1"},
        },
        "body": body,
        "isBase64Encoded": False,
    }


def _app_that_recurses() -> Any:
    app = create_app()

    @app.post("/v1/loop")
    def loop() -> Any:
        def forever(n: int) -> int:
            return forever(n + 1)

        return forever(0)

    return app


def test_a_recursion_in_the_service_with_a_plain_body_is_a_500():
    # Given a route whose own code recurses without end, and an ordinary body
    app = _app_that_recurses()
    # When it is called
    reply = app.resolve(_event('{"subject_id": "S-1"}'), None)
    # Then the answer is the service's failure, not a refusal of the caller's body
    assert reply["statusCode"] == 500, reply
    assert "nested" not in json.loads(reply["body"])["error"]["message"]


def test_a_body_nested_thousands_deep_is_a_422_naming_the_body():
    # Given the same route and a body nested far deeper than any request
    app = _app_that_recurses()
    deep = "[" * 5000 + "]" * 5000
    # When it is called
    reply = app.resolve(_event(deep), None)
    # Then the caller is told their body is too deep
    body = json.loads(reply["body"])["error"]
    assert reply["statusCode"] == 422 and body["field"] == "body" and "nested too deeply" in body["message"]
