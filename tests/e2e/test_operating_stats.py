"""The seeds' operating metrics (`memory stats`) over a tenant's real traffic on the embedded
database: storage, rejections by reason, denials, retrieval stage timings, erasure time and the
lifecycle lag, per tenant, never another tenant's figures and never content."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from agent_memory.services.stats import format_table, tenant_stats

pytestmark = pytest.mark.e2e

TENANT = "stats-a"
OTHER = "stats-b"


def fact(subject: str, slot: str, content: str, kind: str = "system_of_record") -> dict:
    return {
        "subject_id": subject,
        "type": "fact",
        "category": "ACCOUNT_PROFILE",
        "slot": slot,
        "content": content,
        "source": {"kind": kind, "system": "crm", "reference": f"R-{slot}"},
    }


def test_operating_stats_count_a_tenants_traffic_and_nothing_else(api, container, database_url):
    agent = api.token(TENANT, "agent-1", ["agent"])
    sync = api.token(TENANT, "crm-sync", ["integration"])
    dpo = api.token(TENANT, "dpo-1", ["privacy_officer"])
    # Given a tenant that writes two facts, has one write refused for low confidence, retrieves,
    # is denied a route its role lacks, and erases a subject
    since = datetime.now(UTC) - timedelta(minutes=1)
    assert (
        api.post("/v1/memories", fact("S-1", "account.region", "Hosted in Frankfurt."), token=sync).status
        == 201
    )
    assert (
        api.post("/v1/memories", fact("S-2", "account.owner", "Dana owns the account."), token=sync).status
        == 201
    )
    low = {
        **fact("S-1", "account.region_note", "Region note from the sync."),
        "confidence": 0.05,
    }
    refused = api.post("/v1/memories", low, token=sync).body
    assert refused["decision"] == "rejected", refused
    for _ in range(3):
        assert (
            api.post(
                "/v1/retrieve", {"subject_id": "S-1", "query": "where is it hosted?"}, token=agent
            ).status
            == 200
        )
    assert api.get("/v1/audit", token=agent).status == 403
    erasure = api.post("/v1/subjects/S-2/erasure", {"reason": "gdpr_article_17"}, token=dpo)
    assert erasure.status == 202, erasure.body
    for _ in range(60):
        if api.get(f"/v1/erasures/{erasure.body['erasure_id']}", token=dpo).body["status"] != "running":
            break
        time.sleep(0.5)
    # and a record past its expiry that the purge has not reached yet
    with psycopg.connect(database_url) as conn:
        conn.execute(
            "UPDATE memory_records SET expires_at = now() - interval '2 hours'"
            " WHERE tenant_id = %s AND subject_id = 'S-1' AND slot = 'account.region'",
            (TENANT,),
        )
    # and another tenant with traffic of its own
    other = api.token(OTHER, "crm-sync", ["integration"])
    assert (
        api.post("/v1/memories", fact("S-1", "account.region", "Hosted in Ohio."), token=other).status == 201
    )

    # When the tenant's figures are read
    stats = tenant_stats(container.store, TENANT, since)

    # Then they count its traffic
    assert stats["storage"]["live_memories"] == 1 and stats["storage"]["live_bytes"] == len(
        "Hosted in Frankfurt."
    )
    assert stats["rejections_by_reason"] and stats["rejection_rate"] == pytest.approx(1 / 3, abs=0.01)
    assert stats["denials"] >= 1
    assert stats["cost_drivers"]["retrievals"] == 3 and stats["cost_drivers"]["erasures"] == 1
    latency = stats["retrieval_latency_ms"]
    assert {"db", "rank", "before_audit"} <= set(latency) and latency["db"]["n"] == 3
    assert latency["before_audit"]["p95"] >= latency["db"]["p50"] > 0
    assert stats["deletion"]["verified"] == 1 and stats["deletion"]["median_seconds"] is not None
    assert stats["records_past_expiry"] == 1 and stats["lifecycle_lag_seconds"] >= 7000
    # And none of the other tenant's, and no content or subject anywhere in them
    assert tenant_stats(container.store, OTHER, since)["storage"]["live_memories"] == 1
    text = json.dumps(stats) + format_table([stats], since)
    assert "Frankfurt" not in text and "S-1" not in text and "Dana" not in text
    assert "stale rate" in format_table([stats], since)


def test_the_nightly_run_publishes_each_tenants_figures_as_metrics(container, capsys, monkeypatch, api):
    # Given metrics switched on and a tenant with a memory
    from agent_memory.functions_spec import by_name, load_handler_module
    from agent_memory.local.lambda_context import LocalLambdaContext

    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    sync = api.token("stats-gauges", "crm-sync", ["integration"])
    assert (
        api.post("/v1/memories", fact("G-1", "account.region", "Hosted in Dublin."), token=sync).status == 201
    )
    capsys.readouterr()
    # When the nightly run's handler runs
    handler = load_handler_module(by_name("purge")).lambda_handler
    handler({"detail": {}}, LocalLambdaContext(function_name="purge"))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    # Then each tenant's figures are one metric document with the tenant as a dimension
    ours = [d for d in lines if d.get("tenant_id") == "stats-gauges"]
    assert len(ours) == 1, lines
    doc = ours[0]
    assert [sorted(d) for d in doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"]] == [
        ["service", "tenant_id"]
    ]
    value = {k: (v[0] if isinstance(v, list) else v) for k, v in doc.items() if k != "_aws"}
    assert value["LiveMemories"] == 1.0 and value["LiveBytes"] == float(len("Hosted in Dublin."))
    assert "Dublin" not in json.dumps(lines) and "G-1" not in json.dumps(lines)
