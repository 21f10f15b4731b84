"""Every request sees its own event, principal and path arguments, whatever else the process is
serving at the same moment (the local server answers on threads; one router object per handler)."""

from __future__ import annotations

import json
import threading
from typing import Any

from agent_memory.api.http import create_app, current_principal, json_response


def _event(tenant: str, path_arg: str) -> dict[str, Any]:
    return {
        "resource": "/v1/echo/{thing}",
        "path": f"/v1/echo/{path_arg}",
        "httpMethod": "GET",
        "headers": {},
        "multiValueHeaders": {},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": {"thing": path_arg},
        "stageVariables": None,
        "requestContext": {
            "resourcePath": "/v1/echo/{thing}",
            "httpMethod": "GET",
            "path": f"/v1/echo/{path_arg}",
            "stage": "local",
            "requestId": f"req-{tenant}",
            "identity": {"sourceIp": "127.0.0.1"},
            "authorizer": {"sub": "s", "tenant_id": tenant, "roles": "agent", "clearance": "internal"},
        },
        "body": None,
        "isBase64Encoded": False,
    }


def test_two_requests_in_flight_at_once_each_keep_their_own_principal_and_path() -> None:
    # Given one router, and a route that reads the caller before and after the other request
    # has been resolved on another thread
    app = create_app()
    both_inside = threading.Barrier(2, timeout=10)

    @app.get("/v1/echo/<thing>")
    def echo(thing: str) -> Any:
        before = current_principal(app).tenant_id
        both_inside.wait()  # the other thread has now set its own event
        both_inside.wait()
        after = current_principal(app).tenant_id
        return json_response(
            200,
            {
                "before": before,
                "after": after,
                "thing": thing,
                "request_id": app.current_event.request_context.request_id,
            },
        )

    results: dict[str, Any] = {}

    def call(tenant: str) -> None:
        out = app.resolve(_event(tenant, f"arg-{tenant}"), None)
        results[tenant] = json.loads(out["body"])

    # When tenant A's and tenant B's requests are inside the handler at the same time
    threads = [threading.Thread(target=call, args=(t,)) for t in ("tenant-a", "tenant-b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)

    # Then each request saw only its own tenant, path argument and request id
    for tenant in ("tenant-a", "tenant-b"):
        assert results[tenant] == {
            "before": tenant,
            "after": tenant,
            "thing": f"arg-{tenant}",
            "request_id": f"req-{tenant}",
        }


def test_an_error_body_carries_its_own_request_id_under_concurrency() -> None:
    # Given a route that fails validation-free with a domain error after both requests arrived
    from agent_memory.domain.errors import NotFound

    app = create_app()
    both_inside = threading.Barrier(2, timeout=10)

    @app.get("/v1/echo/<thing>")
    def echo(thing: str) -> Any:
        both_inside.wait()
        raise NotFound(f"no {thing}")

    results: dict[str, Any] = {}

    def call(tenant: str) -> None:
        results[tenant] = json.loads(app.resolve(_event(tenant, tenant), None)["body"])

    # When two requests fail at the same time
    threads = [threading.Thread(target=call, args=(t,)) for t in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)

    # Then each error names its own request
    assert results["a"]["error"]["request_id"] == "req-a"
    assert results["b"]["error"]["request_id"] == "req-b"
