"""Which role may call which route: the function table's `roles` (the source of the role table in
docs/api.md and of each OpenAPI operation's "Roles:" line) is what the service enforces. Every
route is called with a token of each role alone: a listed role is never refused for its role
(403), an unlisted one always is."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.api.openapi import merged_openapi
from agent_memory.domain.enums import Role
from agent_memory.functions_spec import FUNCTIONS, Route, role_table_markdown

pytestmark = pytest.mark.e2e

TENANT = "roles-probe"
PATH_VALUES = {
    "memory_id": "mem_probe0000000000000000",
    "subject_id": "ACC-PROBE",
    "session_id": "sess-probe",
    "erasure_id": "era_probe",
    "key": "order_number",
}
# Bodies that pass validation, so that only the role can refuse them.
BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/v1/memories"): {
        "subject_id": "ACC-PROBE",
        "type": "preference",
        "slot": "preference.language",
        "content": "Prefers French.",
        "source": {"kind": "customer_claim"},
    },
    ("POST", "/v1/memories/{memory_id}/close"): {"outcome": "done"},
    ("DELETE", "/v1/memories/{memory_id}"): {"reason": "customer_request"},
    ("POST", "/v1/memories/{memory_id}/approve"): {"note": "checked", "evidence_ref": "DOC-20261002-118"},
    ("POST", "/v1/memories/{memory_id}/reject"): {"note": "wrong"},
    ("POST", "/v1/memories/{memory_id}/reinstate"): {"note": "back"},
    ("PUT", "/v1/policy"): {"profile": "crm"},
    ("POST", "/v1/retrieve"): {"subject_id": "ACC-PROBE", "query": "language"},
    ("POST", "/v1/resolutions/search"): {"query": "login fails"},
    ("POST", "/v1/sessions/{session_id}/close"): {
        "subject_id": "ACC-PROBE",
        "occurred_at": "2026-10-02T15:00:00Z",
        "turns": [{"speaker": "customer", "text": "Hello."}],
    },
    ("PUT", "/v1/sessions/{session_id}/working/{key}"): {"subject_id": "ACC-PROBE", "value": "ORD-1"},
    ("POST", "/v1/subjects/{subject_id}/erasure"): {
        "reason": "gdpr_article_17",
        "request_reference": "DSR-1",
    },
    ("POST", "/v1/subjects/{subject_id}/legal-hold"): {"hold": True, "reason": "litigation"},
    ("POST", "/v1/memories/{memory_id}/legal-hold"): {"hold": True, "reason": "litigation"},
}

API_ROUTES = [(spec, route) for spec in FUNCTIONS if spec.trigger == "api" for route in spec.routes]


def call(api, route: Route, role: str) -> int:
    path = route.path
    for name, value in PATH_VALUES.items():
        path = path.replace("{" + name + "}", value)
    token = api.token(TENANT, f"{role}-probe", [role], clearance="restricted")
    body = BODIES.get((route.method, route.path))
    return api.request(route.method, path, body, token=token).status


def test_every_route_names_its_roles_and_only_those_roles_pass(api):
    # Given every authenticated route of the function table with the roles it names
    observed: dict[str, list[str]] = {}
    for _, route in API_ROUTES:
        if not route.auth:
            assert route.roles == (), route.path
            continue
        assert route.roles, f"{route.method} {route.path} names no role"
        # When each role alone calls it
        statuses = {role.value: call(api, route, role.value) for role in Role}
        # Then the listed roles are not refused for their role, and every other role is
        passed = sorted(role for role, status in statuses.items() if status != 403)
        observed[f"{route.method} {route.path}"] = passed
        assert all(status < 500 for status in statuses.values()), (route.path, statuses)
    expected = {f"{r.method} {r.path}": sorted(r.roles) for _, r in API_ROUTES if r.auth}
    assert observed == expected


def test_the_api_docs_role_table_is_the_generated_one():
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    start = docs.index("<!-- roles-per-route: generated")
    end = docs.index("<!-- /roles-per-route -->")
    section = docs[docs.index("\n", start) + 1 : end]
    # Then docs/api.md holds the table the function table generates, as it is
    assert section.strip() == role_table_markdown().strip()


def test_each_openapi_operation_says_which_roles_may_call_it():
    document = merged_openapi()
    for _, route in API_ROUTES:
        operation = document["paths"][route.path][route.method.lower()]
        if route.auth:
            assert f"Roles: {', '.join(route.roles)}" in operation["description"], route.path
        else:
            assert "Roles: none (no token)" in operation["description"], route.path
