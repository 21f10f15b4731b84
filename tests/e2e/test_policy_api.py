"""The tenant's policy through the HTTP API: its admin reads and changes it within the rules no
tenant may relax; every change is audited and takes effect on the next write."""

from datetime import datetime, timedelta

import pytest

from agent_memory.api.identity import issue_token

pytestmark = pytest.mark.e2e
TENANT = "polco"


@pytest.fixture(scope="module")
def tokens(api):
    return {
        "admin": api.token(TENANT, "admin-1", ["admin"]),
        "agent": api.token(TENANT, "agent-1", ["agent"]),
        "auditor": api.token(TENANT, "aud-1", ["auditor"]),
        "other_admin": api.token("polco-other", "admin-x", ["admin"]),
    }


def policy_events(api, tokens):
    events = api.get("/v1/audit?limit=1000", token=tokens["auditor"]).body["events"]
    return [e for e in events if e["event_type"] == "policy_changed"]


def test_an_admin_changes_the_preset_and_a_ttl_and_the_next_write_follows_it(api, tokens):
    # Given the deployment default
    before = api.get("/v1/policy", token=tokens["admin"])
    assert before.status == 200
    assert (before.body["profile"], before.body["source"]) == ("crm", "deployment_default")
    assert "benchmark" not in before.body["presets"]

    # When the admin picks wealth and shortens episodes to 30 days
    changed = api.put(
        "/v1/policy", {"profile": "wealth", "overrides": {"ttl_days": {"episode": 30}}}, token=tokens["admin"]
    )

    # Then the other types keep the preset's TTLs, and the change is stored and audited
    assert changed.status == 200, changed.body
    ttl = changed.body["effective"]["ttl_days"]
    assert (ttl["episode"], ttl["observation"], ttl["sentiment"], ttl["fact"]) == (30, 30, 180, None)
    assert changed.body["effective"]["retrieval_max_tokens"] == 2048
    assert (changed.body["profile"], changed.body["source"]) == ("wealth", "tenant")
    [event] = policy_events(api, tokens)
    assert event["actor"] == "admin-1" and event["payload"]["previous_profile"] is None
    assert event["payload"]["overrides"] == {"ttl_days": {"episode": 30}}

    # And the next episode written expires 30 days after its effective date
    written = api.post(
        "/v1/memories",
        {
            "subject_id": "C-1",
            "type": "episode",
            "content": "Walked the client through the rebalancing proposal.",
            "source": {"kind": "confirmed_outcome"},
            "effective_at": "2026-11-01T10:00:00+00:00",
        },
        token=tokens["agent"],
    )
    memory = written.body["memory"]
    assert datetime.fromisoformat(memory["expires_at"]) - datetime.fromisoformat(
        memory["effective_at"]
    ) == timedelta(days=30)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"profile": "benchmark"}, "profile"),
        ({"profile": "no-such-preset"}, "profile"),
        ({"profile": "crm", "overrides": {"max_ttl_days": {"sentiment": 365}}}, "overrides.max_ttl_days"),
        (
            {"profile": "crm", "overrides": {"approval_required_categories": []}},
            "overrides.approval_required_categories",
        ),
        (
            {"profile": "wealth", "overrides": {"retrieval_max_tokens": 9000}},
            "overrides.retrieval_max_tokens",
        ),
        ({"profile": "crm", "overrides": {"ttl_days": {"episode": 0}}}, "overrides.ttl_days.episode"),
        ({"profile": "crm", "overrides": {"archive_window_days": -1}}, "overrides.archive_window_days"),
        ({"profile": "crm", "overrides": {"retrieval_top_k": 500}}, "overrides.retrieval_top_k"),
        ({"profile": "crm", "overrides": {"no_such_field": 1}}, "overrides.no_such_field"),
        ({"profile": "crm", "overrides": {"name": "benchmark"}}, "overrides.name"),
        (
            {"profile": "crm", "overrides": {"category_sensitivity": {"CONTRACT_COMMERCIAL": "public"}}},
            "overrides.category_sensitivity",
        ),
        (
            {"profile": "wealth", "overrides": {"category_sensitivity": {"ACCOUNT_PROFILE": None}}},
            "overrides.category_sensitivity",
        ),
        ({"profile": "crm", "overrides": {"max_ttl_days": {"sentiment": None}}}, "overrides.max_ttl_days"),
        ({"profile": "crm", "overrides": []}, "overrides"),
        (
            {"profile": "wealth", "overrides": {"restrict_sensitive_details": False}},
            "overrides.restrict_sensitive_details",
        ),
        (
            {"profile": "crm", "overrides": {"sensitive_retention_days": 365}},
            "overrides.sensitive_retention_days",
        ),
    ],
)
def test_a_change_that_relaxes_a_hard_rule_or_is_malformed_is_refused_and_changes_nothing(
    api, tokens, change, field
):
    before = api.get("/v1/policy", token=tokens["admin"]).body
    audited = len(policy_events(api, tokens))
    reply = api.put("/v1/policy", change, token=tokens["admin"])
    assert reply.status == 422 and reply.body["error"]["field"] == field, reply.body
    assert api.get("/v1/policy", token=tokens["admin"]).body == before
    assert len(policy_events(api, tokens)) == audited


def test_only_the_tenants_admin_reads_or_changes_its_policy(api, tokens):
    for role in ("agent", "auditor"):
        assert api.get("/v1/policy", token=tokens[role]).status == 403
        refused = api.put("/v1/policy", {"profile": "support"}, token=tokens[role])
        assert refused.status == 403 and refused.body["error"]["code"] == "unauthorized_memory_mutation"
    # another tenant's admin sees its own tenant, untouched by the changes above
    other = api.get("/v1/policy", token=tokens["other_admin"])
    assert other.status == 200 and other.body["tenant_id"] == "polco-other"
    assert other.body["source"] == "deployment_default"
    # and the admin role reads no memory content
    assert api.get("/v1/subjects/C-1/memories", token=tokens["admin"]).status == 403


def test_a_null_in_a_mapping_removes_that_key_only(api, tokens):
    # a tenant whose system of record has no SLA field, and whose observations go sooner
    changed = api.put(
        "/v1/policy",
        {
            "profile": "support",
            "overrides": {"sor_slot_fields": {"contract.sla": None}, "ttl_days": {"observation": 14}},
        },
        token=tokens["admin"],
    )
    assert changed.status == 200, changed.body
    effective = changed.body["effective"]
    assert effective["sor_slot_fields"] == {"account.plan_tier": "plan_tier", "account.seats": "seats"}
    assert effective["ttl_days"]["observation"] == 14 and effective["ttl_days"]["episode"] == 90


def test_an_override_may_not_lift_a_types_ttl(api, tokens):
    # Given the support preset, where observations (inferences) live 30 days
    # When an admin makes them never expire (null is a value in ttl_days)
    reply = api.put(
        "/v1/policy",
        {"profile": "support", "overrides": {"ttl_days": {"observation": None}}},
        token=tokens["admin"],
    )
    # Then it is refused naming the field: an override only shortens retention
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == "overrides.ttl_days"


def test_a_stored_policy_that_a_later_bound_refuses_serves_its_preset_instead_of_failing(api, container):
    # Given overrides stored before a bound existed (written straight to the table)
    with container.store.tenant("polco-legacy") as s:
        s.set_tenant_policy("wealth", {"retrieval_top_k": 500, "ttl_days": {"episode": 7}})
    # When the tenant's policy is resolved, it is the preset, not an error
    policy = container.policies.for_tenant("polco-legacy")
    assert policy.name == "wealth" and policy.retrieval_top_k == 5 and policy.ttl_for("episode") == 90
    # And its admin sees what is stored, what is served, and that the overrides were refused
    shown = api.get("/v1/policy", token=api.token("polco-legacy", "admin-l", ["admin"]))
    assert shown.status == 200 and shown.body["overrides_refused"] is True
    assert (
        shown.body["overrides"]["retrieval_top_k"] == 500 and shown.body["effective"]["retrieval_top_k"] == 5
    )


def test_an_admin_token_bound_to_subjects_cannot_change_the_tenants_policy_and_is_audited(api, tokens):
    # Given an admin token bound to one subject (it reaches only that subject)
    bound = issue_token(api.secret, tenant_id=TENANT, sub="admin-bound", roles=["admin"], subjects=["C-1"])
    before = api.get("/v1/policy", token=tokens["admin"]).body
    # When it tries to change the tenant-wide policy
    reply = api.put("/v1/policy", {"profile": "support"}, token=bound)
    # Then 403 says why, the policy is unchanged, and the refusal is in the tenant's audit chain
    assert reply.status == 403 and reply.body["error"]["code"] == "unauthorized_memory_mutation", reply.body
    assert "bound to subjects" in reply.body["error"]["message"]
    assert api.get("/v1/policy", token=tokens["admin"]).body == before
    events = api.get("/v1/audit?limit=1000", token=tokens["auditor"]).body["events"]
    denied = [
        e for e in events if e["event_type"] == "memory_authorization_denied" and e["actor"] == "admin-bound"
    ]
    assert denied and denied[0]["payload"]["route"] == "PUT /v1/policy"
