"""The write side through the HTTP API: INC-2890 end to end, roles, tenants, bad input."""

import pytest

pytestmark = pytest.mark.e2e

SOR_FACT = {
    "subject_id": "ACC-CORP-4812",
    "type": "fact",
    "category": "CONTRACT_COMMERCIAL",
    "slot": "contract.seat_price",
    "content": "Enterprise license renewed for 500 seats at $42/seat/month.",
    "value": {"seats": 500, "price_per_seat_month": 42, "currency": "USD"},
    "source": {"kind": "system_of_record", "system": "crm", "reference": "CTR-118"},
    "effective_at": "2026-09-01T00:00:00Z",
    "confidence": 1.0,
    "idempotency_key": "crm:CTR-118:v3",
}
DISCOUNT_CLAIM = {
    "subject_id": "ACC-CORP-4812",
    "type": "fact",
    "category": "CONTRACT_COMMERCIAL",
    "slot": "contract.seat_price",
    "content": "In the QBR the customer said we agreed to $35/seat/month with a 20% discount.",
    "source": {"kind": "customer_claim", "system": "meeting", "reference": "qbr-2026-10"},
    "effective_at": "2026-10-02T15:00:00Z",
    "confidence": 0.6,
}


@pytest.fixture(scope="module")
def tokens(api):
    return {
        "integration": api.token("acme", "crm-sync", ["integration"]),
        "agent": api.token("acme", "agent-7", ["agent"], clearance="confidential"),
        "reviewer": api.token("acme", "rev-1", ["reviewer"], clearance="confidential"),
        # the commercial claim is confidential: an auditor below that sees its id as unknown
        "auditor": api.token("acme", "aud-1", ["auditor"], clearance="confidential"),
        "other_tenant_agent": api.token("globex", "agent-x", ["agent"], clearance="restricted"),
    }


def test_inc_2890_sor_fact_then_discount_claim_then_approval_with_evidence(api, tokens):
    # Given a system-of-record contract fact
    sor = api.post("/v1/memories", SOR_FACT, token=tokens["integration"])
    assert sor.status == 201 and sor.body["decision"] == "admitted"
    sor_id = sor.body["memory"]["id"]

    # When a conversational discount claim arrives, it does not supersede the contract
    claim = api.post("/v1/memories", DISCOUNT_CLAIM, token=tokens["agent"])
    assert claim.status == 201 and claim.body["decision"] == "pending_approval"
    assert claim.body["superseded"] == []
    claim_id = claim.body["memory"]["id"]
    active = api.get("/v1/subjects/ACC-CORP-4812/memories?status=active&type=fact", token=tokens["agent"])
    assert [m["id"] for m in active.body["memories"]] == [sor_id]

    # And it waits in the review queue next to the record it would supersede
    queue = api.get("/v1/review", token=tokens["reviewer"])
    item = next(i for i in queue.body["items"] if i["memory"]["id"] == claim_id)
    assert item["active"]["id"] == sor_id

    # When a reviewer approves without evidence, it is refused and nothing changes
    no_evidence = api.post(f"/v1/memories/{claim_id}/approve", {"note": "ok"}, token=tokens["reviewer"])
    assert no_evidence.status == 422 and no_evidence.body["error"]["field"] == "evidence_ref"

    # Then with evidence it supersedes the contract fact, and the chain shows both versions
    approved = api.post(
        f"/v1/memories/{claim_id}/approve",
        {"note": "signed amendment", "evidence_ref": "signed-contract-2026-118"},
        token=tokens["reviewer"],
    )
    assert approved.status == 200
    assert approved.body["memory"]["status"] == "active"
    assert approved.body["memory"]["authority"] == "human_verified"
    assert approved.body["memory"]["evidence_ref"] == "signed-contract-2026-118"
    assert approved.body["superseded"] == [sor_id]
    detail = api.get(f"/v1/memories/{claim_id}", token=tokens["agent"])
    assert [(h["id"], h["status"]) for h in detail.body["history"]] == [
        (sor_id, "superseded"),
        (claim_id, "active"),
    ]
    assert detail.body["version"] == 2 and detail.body["supersedes_id"] == sor_id

    # And the audit trail records it, and its hash chain verifies
    audit = api.get(f"/v1/audit?memory_id={claim_id}", token=tokens["auditor"])
    types = [e["event_type"] for e in audit.body["events"]]
    assert "memory_candidate_created" in types and "memory_approved" in types
    assert all("content" not in e["payload"] for e in audit.body["events"])


def test_given_a_replayed_idempotency_key_then_200_and_the_same_memory(api, tokens):
    body = {**SOR_FACT, "subject_id": "ACC-IDEM", "idempotency_key": "crm:CTR-7:v1"}
    first = api.post("/v1/memories", body, token=tokens["integration"])
    again = api.post("/v1/memories", body, token=tokens["integration"])
    assert (first.status, again.status) == (201, 200)
    assert again.body["memory"]["id"] == first.body["memory"]["id"]


@pytest.mark.parametrize(
    ("role", "path", "body"),
    [
        ("agent", "/v1/memories/{id}/approve", {"evidence_ref": "x"}),
        ("auditor", "/v1/memories/{id}/reject", {}),
        ("reviewer", "/v1/memories", None),
    ],
)
def test_given_a_wrong_role_when_mutating_then_403_and_nothing_changes(api, tokens, role, path, body):
    pending = api.post(
        "/v1/memories", {**DISCOUNT_CLAIM, "subject_id": f"ACC-ROLE-{role}"}, token=tokens["agent"]
    )
    mid = pending.body["memory"]["id"]
    token = api.token("acme", f"{role}-1", [role])
    payload = body if body is not None else {**DISCOUNT_CLAIM, "subject_id": f"ACC-ROLE2-{role}"}
    reply = api.post(path.format(id=mid), payload, token=token)
    assert reply.status == 403 and reply.body["error"]["code"] == "unauthorized_memory_mutation"
    after = api.get(f"/v1/memories/{mid}", token=tokens["reviewer"])
    assert after.body["status"] == "pending_approval"
    listing = api.get(
        f"/v1/subjects/ACC-ROLE2-{role}/memories?status=pending_approval", token=tokens["agent"]
    )
    assert listing.body["memories"] == []


def test_given_an_agent_asserting_system_of_record_then_403(api, tokens):
    reply = api.post(
        "/v1/memories", {**SOR_FACT, "subject_id": "ACC-SOR", "idempotency_key": None}, token=tokens["agent"]
    )
    assert reply.status == 403 and reply.body["error"]["code"] == "unauthorized_memory_mutation"


def test_given_another_tenants_memory_id_then_404(api, tokens):
    mine = api.post(
        "/v1/memories",
        {**SOR_FACT, "subject_id": "ACC-TEN", "idempotency_key": "k-ten"},
        token=tokens["integration"],
    )
    reply = api.get(f"/v1/memories/{mine.body['memory']['id']}", token=tokens["other_tenant_agent"])
    assert reply.status == 404 and reply.body["error"]["code"] == "not_found"
    listing = api.get("/v1/subjects/ACC-TEN/memories", token=tokens["other_tenant_agent"])
    assert listing.status == 200 and listing.body["memories"] == []


def test_given_a_memory_above_the_callers_clearance_then_it_looks_absent(api, tokens):
    mine = api.post(
        "/v1/memories",
        {**SOR_FACT, "subject_id": "ACC-CLR", "idempotency_key": "k-clr"},
        token=tokens["integration"],
    )
    low = api.token("acme", "agent-low", ["agent"])  # clearance internal; the fact is confidential
    assert api.get(f"/v1/memories/{mine.body['memory']['id']}", token=low).status == 404


@pytest.mark.parametrize(
    ("raw", "field", "status"),
    [
        (b"{not json", "body", 422),
        (
            b'{"subject_id": "A", "type": "fact", "category": "STAKEHOLDER", "slot": "stakeholder.primary_contact",'
            b' "content": 42, "source": {"kind": "customer_confirmed"}}',
            "content",
            422,
        ),
        (
            b'{"subject_id": "A", "type": "rumour", "content": "x", "source": {"kind": "customer_confirmed"}}',
            "type",
            422,
        ),
        (
            b'{"subject_id": "A", "type": "episode", "content": "x", "source": {"kind": "gossip"}}',
            "source.kind",
            422,
        ),
        (
            b'{"subject_id": "A", "type": "episode", "slot": "episode.one", "content": "x",'
            b' "source": {"kind": "customer_confirmed"}}',
            "slot",
            422,
        ),
        (
            b'{"subject_id": "A", "type": "episode", "content": "' + b"x" * 5000 + b'",'
            b' "source": {"kind": "customer_confirmed"}}',
            "content",
            413,
        ),
        (
            b'{"subject_id": "A", "type": "episode", "content": "x", "source": {"kind": "customer_confirmed"},'
            b' "surprise": 1}',
            "surprise",
            422,
        ),
    ],
)
def test_given_bad_input_then_a_4xx_naming_the_field_and_nothing_written(api, tokens, raw, field, status):
    reply = api.request("POST", "/v1/memories", raw=raw, token=tokens["agent"])
    assert reply.status == status, reply.body
    assert reply.body["error"]["field"] == field
    assert api.get("/v1/subjects/A/memories", token=tokens["agent"]).body["memories"] == []


def test_given_no_token_or_a_bad_one_then_401(api):
    assert api.post("/v1/memories", SOR_FACT).status == 401
    assert api.post("/v1/memories", SOR_FACT, token="not.a.jwt").status == 401
    expired = api.request("GET", "/v1/review", headers={"Authorization": "Bearer " + _expired(api)})
    assert expired.status == 401 and expired.body["error"]["code"] == "unauthenticated"


def _expired(api) -> str:
    from datetime import timedelta

    from agent_memory.api.identity import issue_token

    return issue_token(api.secret, tenant_id="acme", sub="u", roles=["reviewer"], ttl=timedelta(seconds=-5))


def test_given_an_unknown_subject_then_an_empty_page(api, tokens):
    reply = api.get("/v1/subjects/NOBODY/memories", token=tokens["agent"])
    assert reply.status == 200 and reply.body == {"subject_id": "NOBODY", "memories": [], "next_cursor": None}


def test_paging_walks_every_memory_once_newest_first(api, tokens):
    for i in range(7):
        api.post(
            "/v1/memories",
            {
                "subject_id": "ACC-PAGE",
                "type": "episode",
                "content": f"Call number {i} happened",
                "source": {"kind": "customer_confirmed"},
            },
            token=tokens["agent"],
        )
    seen, cursor = [], None
    while True:
        page = api.get(
            "/v1/subjects/ACC-PAGE/memories?limit=3" + (f"&cursor={cursor}" if cursor else ""),
            token=tokens["agent"],
        )
        seen += [m["content"] for m in page.body["memories"]]
        cursor = page.body["next_cursor"]
        if not cursor:
            break
    assert seen == [f"Call number {i} happened" for i in reversed(range(7))]


def test_reinstating_a_superseded_version_is_a_new_supersession(api, tokens):
    base = {
        "subject_id": "ACC-RB",
        "type": "fact",
        "category": "STAKEHOLDER",
        "slot": "stakeholder.primary_contact",
        "source": {"kind": "system_of_record", "system": "crm"},
    }
    v1 = api.post(
        "/v1/memories",
        {**base, "content": "Dana is the primary contact", "effective_at": "2026-01-01T00:00:00Z"},
        token=tokens["integration"],
    )
    v2 = api.post(
        "/v1/memories",
        {**base, "content": "Lee is the primary contact", "effective_at": "2026-02-01T00:00:00Z"},
        token=tokens["integration"],
    )
    assert v2.body["superseded"] == [v1.body["memory"]["id"]]
    back = api.post(
        f"/v1/memories/{v1.body['memory']['id']}/reinstate", {"note": "sync error"}, token=tokens["reviewer"]
    )
    assert back.status == 200 and back.body["superseded"] == [v2.body["memory"]["id"]]
    assert (
        back.body["memory"]["content"] == "Dana is the primary contact"
        and back.body["memory"]["version"] == 3
    )
    assert (
        api.get(f"/v1/memories/{v1.body['memory']['id']}", token=tokens["agent"]).body["status"]
        == "superseded"
    )


def test_health_openapi_and_docs_need_no_token(api):
    health = api.get("/v1/health")
    assert (
        health.status == 200
        and health.body["database"] == "ok"
        and health.body["embedder"] == "local-minilm-onnx"
    )
    spec = api.get("/v1/openapi.json")
    assert {"/v1/memories", "/v1/retrieve", "/v1/review", "/v1/audit"} <= set(spec.body["paths"])
    docs = api.get("/v1/docs")
    assert docs.status == 200 and "swagger-ui" in docs.body


def test_the_audit_chain_verifies_after_all_of_the_above(container, tokens):
    report = container.reads.verify_audit("acme")
    assert report.ok and report.events > 10


def test_the_docs_page_carries_a_content_security_policy_and_refuses_framing(api):
    # When the Swagger UI page is fetched
    docs = api.get("/v1/docs")
    # Then it allows only its own inline script (by hash) and this origin, is never framed, and
    # its type is not sniffed
    policy = docs.headers["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["connect-src"] == "'self'"
    assert all(source.startswith("'sha256-") for source in directives["script-src"].split())
    assert "unsafe-eval" not in policy and "http" not in policy
    assert docs.headers["X-Frame-Options"] == "DENY"
    assert docs.headers["X-Content-Type-Options"] == "nosniff"
    assert "validatorUrl: null" in docs.body  # no call to the public validator
