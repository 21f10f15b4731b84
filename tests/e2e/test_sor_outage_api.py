"""During a system-of-record outage, retrieval stops waiting for it: after a few failures in a row
the circuit opens, retrievals answer from memory at once and say so, and the system of record is
not asked again until the cooldown ends."""

import pytest
from pytest_httpserver import HTTPServer

pytestmark = pytest.mark.e2e
T = "sor-down"


@pytest.fixture(scope="module")
def sor_server():
    srv = HTTPServer(host="127.0.0.1", port=0)
    srv.start()
    yield srv
    srv.clear()
    srv.stop()


@pytest.fixture(scope="module")
def container(serve_container, sor_server):
    with serve_container(
        sor_url=sor_server.url_for(""),
        sor_cache_seconds=0,
        sor_breaker_failures=2,
        sor_breaker_cooldown_s=600,
    ) as c:
        yield c


def test_an_outage_opens_the_circuit_and_retrieval_still_answers_from_memory(api, sor_server):
    integ = api.token(T, "crm", ["integration"])
    agent = api.token(T, "agent", ["agent"])
    # Given a memory whose slot the system of record owns, and a system of record that is down
    r = api.post(
        "/v1/memories",
        {
            "subject_id": "S-1",
            "type": "fact",
            "category": "ACCOUNT_PROFILE",
            "slot": "account.plan_tier",
            "content": "Plan tier is Enterprise.",
            "value": {"plan_tier": "enterprise"},
            "source": {"kind": "system_of_record", "system": "crm"},
        },
        token=integ,
    )
    assert r.status in (200, 201), r.body
    sor_server.expect_request(f"/tenants/{T}/accounts/S-1").respond_with_data("down", status=503)
    sor_server.expect_request(f"/tenants/{T}/tickets/TK-1").respond_with_data("down", status=503)
    # When the agent retrieves five times, with a ticket
    replies = [
        api.post(
            "/v1/retrieve", {"subject_id": "S-1", "query": "plan tier?", "ticket_id": "TK-1"}, token=agent
        )
        for _ in range(5)
    ]
    # Then every retrieval answered from memory and said the live values could not be read
    for rep in replies:
        assert rep.status == 200, rep.body
        assert rep.body["live_unavailable"] is True and rep.body["ticket_unavailable"] is True
        assert "could not be checked" in rep.body["context"]
        assert "Plan tier is Enterprise." in rep.body["context"]
    # And the system of record was asked only until the circuit opened: two failures in a row
    # (the account and the ticket of the first retrieval), then nothing
    assert len(sor_server.log) == 2


def test_a_retrieval_without_the_system_of_record_is_a_metric_an_operator_can_alarm_on(
    container, sor_server, capsys, monkeypatch, emitted_metrics
):
    import json
    from pathlib import Path

    from agent_memory.functions_spec import by_name, load_handler_module
    from agent_memory.local.lambda_context import LocalLambdaContext
    from agent_memory.observability import SOR_UNAVAILABLE_METRIC

    # Given metrics switched on and the retrieval sample, which asks for a ticket
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    event = json.loads(
        (Path(__file__).resolve().parents[2] / "events/retrieve/renewal_question.json").read_text()
    )
    capsys.readouterr()
    # When it runs through the retrieve handler while the system of record answers no request
    # (its circuit is open, or it has no route for this tenant)
    reply = load_handler_module(by_name("retrieve")).lambda_handler(
        event, LocalLambdaContext(function_name="retrieve")
    )
    # Then it answers, and says in a metric that it could not read the system of record
    assert reply["statusCode"] == 200 and json.loads(reply["body"])["ticket_unavailable"] is True
    names = emitted_metrics(capsys.readouterr().out)
    assert SOR_UNAVAILABLE_METRIC in names
