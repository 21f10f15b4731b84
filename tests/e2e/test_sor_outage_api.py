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
