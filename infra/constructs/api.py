"""The REST API: every route of FUNCTIONS, the Lambda TOKEN authorizer, request
validation, throttling, access logs and error-shaped gateway responses."""

from __future__ import annotations

import json

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs

from agent_memory.functions_spec import FunctionSpec, Route
from constructs import Construct
from infra.config import DeploymentConfig

# API Gateway rejects malformed headers itself, without invoking the authorizer.
BEARER_JWT = r"^Bearer [-0-9A-Za-z_=]+\.[-0-9A-Za-z_=]+\.[-0-9A-Za-z_=]*$"

# (response type, status override or None to keep API Gateway's, error code, message): docs/api.md errors.
GATEWAY_ERRORS: tuple[tuple[apigw.ResponseType, str | None, str, str], ...] = (
    (apigw.ResponseType.UNAUTHORIZED, "401", "unauthenticated", "missing or invalid bearer token"),
    (apigw.ResponseType.ACCESS_DENIED, "403", "forbidden", "the token does not allow this request"),
    (
        apigw.ResponseType.AUTHORIZER_CONFIGURATION_ERROR,
        "503",
        "unavailable",
        "the authorizer is unavailable",
    ),
    (apigw.ResponseType.AUTHORIZER_FAILURE, "503", "unavailable", "the authorizer is unavailable"),
    # API Gateway answers unknown routes with "Missing Authentication Token" (403).
    (apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN, "404", "not_found", "no such route"),
    (apigw.ResponseType.BAD_REQUEST_BODY, "400", "invalid_request", "the request body must be a JSON object"),
    (
        apigw.ResponseType.BAD_REQUEST_PARAMETERS,
        "400",
        "invalid_request",
        "missing or invalid request parameters",
    ),
    (apigw.ResponseType.REQUEST_TOO_LARGE, "413", "payload_too_large", "the request body is too large"),
    (apigw.ResponseType.THROTTLED, "429", "rate_limited", "too many requests; retry with backoff"),
    (apigw.ResponseType.QUOTA_EXCEEDED, "429", "rate_limited", "request quota exceeded"),
    (apigw.ResponseType.INTEGRATION_TIMEOUT, "504", "unavailable", "the service did not answer in time"),
    (apigw.ResponseType.DEFAULT_4_XX, None, "invalid_request", "the request was refused"),
    (apigw.ResponseType.DEFAULT_5_XX, None, "unavailable", "the service is unavailable"),
)


# An authorizer that cannot verify (the IdP's keys unreachable) is a 503: clients retry after this.
RETRY_AFTER = {"503": {"Retry-After": "'5'"}}


def error_template(code: str, message: str) -> str:
    """An error body as docs/api.md defines it; `$context.requestId` is filled in by API Gateway."""
    body = json.dumps({"error": {"code": code, "message": message, "request_id": "__REQUEST_ID__"}})
    return body.replace("__REQUEST_ID__", "$context.requestId")


def path_parameters(route: Route) -> dict[str, bool]:
    return {f"method.request.path.{name}": True for name in route.pattern.groupindex}


class Api(Construct):
    """Exposes `rest_api`, `stage`, `authorizer`, `access_logs`; `methods`, `route_auth` by (method, path)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        handlers: list[tuple[FunctionSpec, lambda_.IFunction]],
        authorizer_function: lambda_.IFunction,
    ) -> None:
        super().__init__(scope, construct_id)
        self.access_logs = logs.LogGroup(
            self, "AccessLogs", retention=logs.RetentionDays.ONE_YEAR, removal_policy=RemovalPolicy.RETAIN
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=f"agent-memory-{config.environment_name}",
            description="Agent Memory Service HTTP API (docs: GET /v1/docs)",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            cloud_watch_role=True,
            deploy_options=apigw.StageOptions(
                stage_name=config.environment_name,
                tracing_enabled=True,
                throttling_rate_limit=config.api_throttle_rate_limit,
                throttling_burst_limit=config.api_throttle_burst_limit,
                logging_level=apigw.MethodLoggingLevel.ERROR,
                # Bodies carry memory content: never log them.
                data_trace_enabled=False,
                metrics_enabled=False,
                access_log_destination=apigw.LogGroupLogDestination(self.access_logs),
                access_log_format=apigw.AccessLogFormat.custom(
                    json.dumps(
                        {
                            "requestId": "$context.requestId",
                            "extendedRequestId": "$context.extendedRequestId",
                            "requestTime": "$context.requestTimeEpoch",
                            "httpMethod": "$context.httpMethod",
                            "resourcePath": "$context.resourcePath",
                            "status": "$context.status",
                            "responseLength": "$context.responseLength",
                            "latencyMs": "$context.responseLatency",
                            "integrationLatencyMs": "$context.integration.latency",
                            "sourceIp": "$context.identity.sourceIp",
                            "tenantId": "$context.authorizer.tenant_id",
                            "principal": "$context.authorizer.principalId",
                            "authorizerError": "$context.authorizer.error",
                            "errorType": "$context.error.responseType",
                            "xrayTraceId": "$context.xrayTraceId",
                        }
                    )
                ),
            ),
        )
        self.stage = self.rest_api.deployment_stage
        # Caching is off: the authorizer returns a policy for the one method ARN it was asked
        # about, and a cached policy would then refuse the token's other routes.
        self.authorizer = apigw.TokenAuthorizer(
            self,
            "Authorizer",
            handler=authorizer_function,
            identity_source=apigw.IdentitySource.header("Authorization"),
            validation_regex=BEARER_JWT,
            results_cache_ttl=Duration.seconds(0),
        )
        self.validator = apigw.RequestValidator(
            self,
            "Validator",
            rest_api=self.rest_api,
            validate_request_body=True,
            validate_request_parameters=True,
        )
        self.json_object = self.rest_api.add_model(
            "JsonObject",
            content_type="application/json",
            model_name="JsonObject",
            schema=apigw.JsonSchema(schema=apigw.JsonSchemaVersion.DRAFT4, type=apigw.JsonSchemaType.OBJECT),
        )
        for response_type, status, code, message in GATEWAY_ERRORS:
            self.rest_api.add_gateway_response(
                f"Error{response_type.response_type}",
                type=response_type,
                status_code=status,
                templates={"application/json": error_template(code, message)},
                response_headers={"Cache-Control": "'no-store'"} | RETRY_AFTER.get(status or "", {}),
            )
        self.methods: dict[tuple[str, str], apigw.Method] = {}
        self.route_auth: dict[tuple[str, str], bool] = {}
        for spec, function in handlers:
            integration = apigw.LambdaIntegration(function, proxy=True, allow_test_invoke=False)
            for route in spec.routes:
                self.methods[(route.method, route.path)] = self._method(route, integration)
                self.route_auth[(route.method, route.path)] = route.auth

    def _method(self, route: Route, integration: apigw.LambdaIntegration) -> apigw.Method:
        resource = self.rest_api.root.resource_for_path(route.path)
        options: dict[str, object] = {
            "request_validator": self.validator,
            "request_parameters": path_parameters(route) or None,
        }
        if route.method in ("POST", "PUT", "PATCH"):
            options["request_models"] = {"application/json": self.json_object}
        if route.auth:
            options |= {"authorizer": self.authorizer, "authorization_type": apigw.AuthorizationType.CUSTOM}
        else:
            options["authorization_type"] = apigw.AuthorizationType.NONE
        return resource.add_method(route.method, integration, **options)  # type: ignore[arg-type]
