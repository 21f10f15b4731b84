"""The REST API: every route of FUNCTIONS, its authorizer, validation, throttling and errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cfn_template import api_paths, joined_string, refs_in

from agent_memory.functions_spec import FUNCTIONS

pytestmark = pytest.mark.infra


def methods_by_route(synthesized: Any) -> dict[tuple[str, str], dict[str, Any]]:
    paths = api_paths(synthesized.raw)
    routes = {}
    for method in synthesized.resources("AWS::ApiGateway::Method").values():
        props = method["Properties"]
        resource = props["ResourceId"]
        path = paths[resource["Ref"]] if "Ref" in resource else "/"
        routes[(props["HttpMethod"], path)] = props
    return routes


def test_every_route_of_functions_is_a_method_on_its_function(synthesized: Any) -> None:
    routes = methods_by_route(synthesized)
    expected = {(r.method, r.path) for s in FUNCTIONS for r in s.routes}
    assert set(routes) == expected
    functions = synthesized.resources("AWS::Lambda::Function")
    for spec in FUNCTIONS:
        function_id = next(
            k for k, v in functions.items() if v["Properties"]["Handler"] == spec.lambda_handler
        )
        for route in spec.routes:
            integration = routes[(route.method, route.path)]["Integration"]
            assert integration["Type"] == "AWS_PROXY"
            assert function_id in refs_in(integration["Uri"]), f"{route.method} {route.path} -> {spec.name}"


def test_authorized_routes_use_the_token_authorizer_and_public_ones_none(synthesized: Any) -> None:
    routes = methods_by_route(synthesized)
    authorizers = synthesized.resources("AWS::ApiGateway::Authorizer")
    assert len(authorizers) == 1
    authorizer_id = next(iter(authorizers))
    for spec in FUNCTIONS:
        for route in spec.routes:
            props = routes[(route.method, route.path)]
            if route.auth:
                assert props["AuthorizationType"] == "CUSTOM"
                assert refs_in(props["AuthorizerId"]) == {authorizer_id}
            else:
                assert props["AuthorizationType"] == "NONE"
                assert "AuthorizerId" not in props


def test_authorizer_is_the_token_function_reading_the_jwt_secret(synthesized: Any) -> None:
    (authorizer,) = synthesized.resources("AWS::ApiGateway::Authorizer").values()
    props = authorizer["Properties"]
    assert props["Type"] == "TOKEN"
    assert props["IdentitySource"] == "method.request.header.Authorization"
    # The handler's policy names one method ARN: a cached policy would refuse the token's other routes.
    assert props["AuthorizerResultTtlInSeconds"] == 0
    spec = next(s for s in FUNCTIONS if s.trigger == "authorizer")
    functions = synthesized.resources("AWS::Lambda::Function")
    function_id = next(k for k, v in functions.items() if v["Properties"]["Handler"] == spec.lambda_handler)
    assert function_id in refs_in(props["AuthorizerUri"])
    assert "MEMORY_JWT_SECRET_ARN" in functions[function_id]["Properties"]["Environment"]["Variables"]


def test_requests_are_validated(synthesized: Any) -> None:
    (validator,) = synthesized.resources("AWS::ApiGateway::RequestValidator").values()
    assert validator["Properties"]["ValidateRequestBody"] is True
    assert validator["Properties"]["ValidateRequestParameters"] is True
    for (method, path), props in methods_by_route(synthesized).items():
        assert "RequestValidatorId" in props, f"{method} {path}"
        for name in [part[1:-1] for part in path.split("/") if part.startswith("{")]:
            assert props["RequestParameters"][f"method.request.path.{name}"] is True
        if method == "POST":
            assert "application/json" in props["RequestModels"]


def test_stage_throttles_traces_and_writes_access_logs(synthesized: Any) -> None:
    config = synthesized.stack.config
    (stage,) = synthesized.resources("AWS::ApiGateway::Stage").values()
    props = stage["Properties"]
    assert props["TracingEnabled"] is True
    assert "DestinationArn" in props["AccessLogSetting"]
    assert json.loads(props["AccessLogSetting"]["Format"])["requestId"] == "$context.requestId"
    (settings,) = props["MethodSettings"]
    assert settings["ThrottlingRateLimit"] == config.api_throttle_rate_limit
    assert settings["ThrottlingBurstLimit"] == config.api_throttle_burst_limit
    assert settings["DataTraceEnabled"] is False, "request bodies carry memory content"


@pytest.mark.parametrize(
    ("response_type", "status", "code"),
    [
        ("UNAUTHORIZED", "401", "unauthenticated"),
        ("ACCESS_DENIED", "403", "forbidden"),
        ("THROTTLED", "429", "rate_limited"),
        ("BAD_REQUEST_BODY", "400", "invalid_request"),
    ],
)
def test_gateway_errors_have_the_api_error_shape(
    synthesized: Any, response_type: str, status: str, code: str
) -> None:
    responses = {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in synthesized.resources("AWS::ApiGateway::GatewayResponse").values()
    }
    props = responses[response_type]
    assert props["StatusCode"] == status
    body = json.loads(joined_string(props["ResponseTemplates"]["application/json"]))
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    assert body["error"]["request_id"] == "$context.requestId"
