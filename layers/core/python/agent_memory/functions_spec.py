"""One table of the service's Lambda functions.

It drives the CDK stack (one function each, with its trigger, memory, timeout
and permissions) and the local `memory serve` front (which handler answers
which route), so the two cannot drift apart.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Literal

# "invoke": no trigger of its own, invoked by an operator (the deletion replay after a restore).
Trigger = Literal["api", "sqs", "schedule", "stepfunctions", "authorizer", "invoke"]
# Permissions are named by what they reach; the stack maps each to grant calls.
Permission = Literal[
    "database",
    "jwt_secret",
    "openai_secret",
    "extraction_queue_send",
    "transcripts_bucket",
    "erasure_state_machine_start",
    "deletion_registry",
]


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # API Gateway style: /v1/memories/{memory_id}
    auth: bool = True
    # The roles that may call it (a token with none of them gets 403); the source of the role table
    # in docs/api.md and of each OpenAPI operation's "Roles:" line, proven against the service.
    roles: tuple[str, ...] = ()

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.path) + "$")


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    description: str
    trigger: Trigger
    routes: tuple[Route, ...] = ()
    memory_mb: int = 512
    timeout_s: int = 15
    permissions: tuple[Permission, ...] = ("database",)
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def handler_file(self) -> str:
        return f"functions/{self.name}/handler.py"

    @property
    def lambda_handler(self) -> str:
        return f"{self.name}.handler.lambda_handler"


FUNCTIONS: tuple[FunctionSpec, ...] = (
    FunctionSpec(
        name="memories",
        description="Write gateway, memory reads, closing commitments",
        trigger="api",
        routes=(
            Route("POST", "/v1/memories", roles=("agent", "integration")),
            Route("POST", "/v1/memories/{memory_id}/close", roles=("agent", "integration")),
            Route("POST", "/v1/memories/{memory_id}/revalidate", roles=("agent", "integration")),
            Route("GET", "/v1/memories/{memory_id}", roles=("agent", "reviewer")),
            Route("DELETE", "/v1/memories/{memory_id}", roles=("agent", "privacy_officer")),
            Route("GET", "/v1/subjects/{subject_id}/memories", roles=("agent", "reviewer")),
        ),
        # A content-only note is classified by the learned extractor (the embedder it shares, and
        # its head): the extract function's memory size.
        memory_mb=1024,
        # A deletion on request is recorded in the deletion registry before it commits.
        permissions=("database", "openai_secret", "deletion_registry"),
    ),
    FunctionSpec(
        name="review",
        description="Review queue, approve, reject, reinstate",
        trigger="api",
        routes=(
            Route("GET", "/v1/review", roles=("reviewer",)),
            Route("POST", "/v1/memories/{memory_id}/approve", roles=("reviewer",)),
            Route("POST", "/v1/memories/{memory_id}/reject", roles=("reviewer",)),
            Route("POST", "/v1/memories/{memory_id}/reinstate", roles=("reviewer",)),
        ),
    ),
    FunctionSpec(
        name="policy",
        description="The tenant's policy profile: read and change it (admin), every change audited",
        trigger="api",
        routes=(Route("GET", "/v1/policy", roles=("admin",)), Route("PUT", "/v1/policy", roles=("admin",))),
        memory_mb=256,
    ),
    FunctionSpec(
        name="audit",
        description="Audit events (ids, reasons, hash chain; never content)",
        trigger="api",
        routes=(Route("GET", "/v1/audit", roles=("auditor",)),),
    ),
    FunctionSpec(
        name="health",
        description="Health, OpenAPI document and Swagger UI",
        trigger="api",
        routes=(
            Route("GET", "/v1/health", auth=False),
            Route("GET", "/v1/openapi.json", auth=False),
            Route("GET", "/v1/docs", auth=False),
        ),
        memory_mb=256,
    ),
    FunctionSpec(
        name="retrieve",
        description="Retrieval broker: authorized, fresh, budgeted context for the next agent turn",
        trigger="api",
        routes=(
            Route("POST", "/v1/retrieve", roles=("agent",)),
            Route("POST", "/v1/resolutions/search", roles=("agent",)),
        ),
        memory_mb=1024,
        timeout_s=10,
        permissions=("database", "openai_secret"),
    ),
    FunctionSpec(
        name="session_close",
        description="Accepts a closed session's transcript and queues it for extraction",
        trigger="api",
        routes=(
            Route("POST", "/v1/sessions/{session_id}/close", roles=("agent",)),
            Route("GET", "/v1/sessions/{session_id}", roles=("agent",)),
            Route("GET", "/v1/sessions/{session_id}/extraction", roles=("agent", "reviewer")),
        ),
        permissions=("database", "extraction_queue_send", "transcripts_bucket"),
    ),
    FunctionSpec(
        # Its own function, not session_close's: a hot path on every turn that needs the database
        # only (no queue, no transcripts bucket), a small memory size and a short timeout.
        name="working",
        description="Working memory: an open session's short-lived values (hard TTL, masked, screened)",
        trigger="api",
        routes=(
            Route("PUT", "/v1/sessions/{session_id}/working/{key}", roles=("agent",)),
            Route("GET", "/v1/sessions/{session_id}/working", roles=("agent",)),
            Route("DELETE", "/v1/sessions/{session_id}/working/{key}", roles=("agent",)),
        ),
        memory_mb=256,
        timeout_s=10,
    ),
    FunctionSpec(
        name="extract",
        description="Extraction worker: SQS batch of closed sessions -> candidates -> write gateway",
        trigger="sqs",
        memory_mb=1024,
        timeout_s=120,
        permissions=("database", "openai_secret", "transcripts_bucket"),
    ),
    FunctionSpec(
        name="erasure",
        description="Starts a subject erasure, reports its steps and receipt; legal holds",
        trigger="api",
        routes=(
            Route("POST", "/v1/subjects/{subject_id}/erasure", roles=("privacy_officer",)),
            Route("GET", "/v1/erasures/{erasure_id}", roles=("privacy_officer",)),
            Route("POST", "/v1/subjects/{subject_id}/legal-hold", roles=("privacy_officer",)),
            Route("POST", "/v1/memories/{memory_id}/legal-hold", roles=("privacy_officer",)),
            Route("GET", "/v1/subjects/{subject_id}/export", roles=("privacy_officer",)),
        ),
        permissions=("database", "erasure_state_machine_start"),
    ),
    FunctionSpec(
        name="erasure_step",
        description="Runs one named erasure step (a Step Functions task)",
        trigger="stepfunctions",
        timeout_s=300,
        # The first step records the erasure in the deletion registry.
        permissions=("database", "transcripts_bucket", "deletion_registry"),
    ),
    FunctionSpec(
        name="purge",
        description="Nightly TTL purge, archival, hard delete and consolidation",
        trigger="schedule",
        memory_mb=1024,
        timeout_s=900,
        permissions=("database",),
    ),
    FunctionSpec(
        name="deletion_replay",
        description="After a restore: replays the deletion registry's erasures and deletions (invoked by an operator)",
        trigger="invoke",
        memory_mb=1024,
        timeout_s=900,
        permissions=("database", "transcripts_bucket", "deletion_registry"),
    ),
    FunctionSpec(
        name="outbox_relay",
        description="Every minute: sends pending extraction messages, queues stuck sessions again",
        trigger="schedule",
        memory_mb=512,
        timeout_s=55,  # done before the next minute's run
        permissions=("database", "extraction_queue_send"),
    ),
    FunctionSpec(
        name="authorizer",
        description="Validates bearer tokens and passes tenant, roles, sub and clearance",
        trigger="authorizer",
        memory_mb=256,
        timeout_s=5,
        permissions=("jwt_secret",),
    ),
)


def role_table_markdown() -> str:
    """The role-per-route table of docs/api.md, generated from the function table."""
    lines = ["| route | roles |", "|---|---|"]
    for spec in FUNCTIONS:
        for route in spec.routes:
            roles = ", ".join(route.roles) if route.auth else "none (no token)"
            lines.append(f"| `{route.method} {route.path}` | {roles} |")
    return "\n".join(lines) + "\n"


def by_name(name: str) -> FunctionSpec:
    for spec in FUNCTIONS:
        if spec.name == name:
            return spec
    raise KeyError(f"unknown function {name!r}; known: {[f.name for f in FUNCTIONS]}")


# AWS guidance for SQS event sources: a queue's visibility timeout at least 6 times its worker's
# timeout. The extraction queue's (infra/constructs/pipeline.py) and the outbox sweep's resend age
# (`Settings.extraction_stuck_after_s`) both follow from the extract function's timeout here.
VISIBILITY_TIMEOUT_FACTOR = 6
EXTRACTION_VISIBILITY_TIMEOUT_S = by_name("extract").timeout_s * VISIBILITY_TIMEOUT_FACTOR
# The sweep queues a session again only after its message could have come back on its own: past
# the visibility timeout, with a minute to spare, so one session never has two extractions in flight.
EXTRACTION_RESEND_AFTER_S = EXTRACTION_VISIBILITY_TIMEOUT_S + 60


def match_route(method: str, path: str) -> tuple[FunctionSpec, Route, dict[str, str]] | None:
    for spec in FUNCTIONS:
        for route in spec.routes:
            if route.method == method:
                m = route.pattern.match(path)
                if m:
                    return spec, route, m.groupdict()
    return None


def functions_dir() -> Path:
    """Where the handler folders live: the repository locally, the code asset in Lambda."""
    configured = os.environ.get("MEMORY_FUNCTIONS_DIR")
    if configured:
        return Path(configured)
    repo = Path(__file__).resolve().parents[4] / "functions"
    return repo if repo.is_dir() else Path("/var/task")


def load_handler_module(spec: FunctionSpec) -> ModuleType:
    """Import functions/<name>/handler.py once, under a stable module name."""
    module_name = f"memory_function_{spec.name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    path = functions_dir() / spec.name / "handler.py"
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise FileNotFoundError(path)
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    try:
        loader_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module
