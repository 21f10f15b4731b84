"""The write gateway on the real database: every admission rule, idempotency,
concurrency, and the property that a slot never has two active versions."""

import itertools
import threading
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.domain.enums import Decision, Role, Status
from agent_memory.domain.errors import Conflict, InvalidRequest, UnauthorizedMutation
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.services.write_gateway import WriteGateway

pytestmark = pytest.mark.integration

AGENT = Principal(sub="agent-1", tenant_id="gw", roles=frozenset({Role.AGENT}))
INTEGRATION = Principal(sub="crm-sync", tenant_id="gw", roles=frozenset({Role.INTEGRATION}))
T0 = datetime(2026, 9, 1, tzinfo=UTC)


def w(subject: str, **kw) -> MemoryWrite:
    base = {
        "subject_id": subject,
        "type": "fact",
        "category": "STAKEHOLDER",
        "slot": "stakeholder.primary_contact",
        "content": "Dana Ortiz is the primary contact",
        "source": {"kind": "customer_confirmed"},
    }
    base.update(kw)
    return MemoryWrite.model_validate(base)


def count_active(container, tenant: str, subject: str, slot: str) -> int:
    with container.db.tenant_transaction(tenant) as conn:
        return conn.execute(
            "SELECT count(*) AS n FROM memory_records WHERE subject_id = %s AND slot = %s AND status = 'active'",
            (subject, slot),
        ).fetchone()["n"]


def test_given_an_agent_asserting_system_of_record_when_writing_then_403_and_nothing_written(container):
    with pytest.raises(UnauthorizedMutation):
        container.gateway.write(AGENT, w("S-auth", source={"kind": "system_of_record"}))
    with container.db.tenant_transaction("gw") as conn:
        assert (
            conn.execute("SELECT count(*) AS n FROM memory_records WHERE subject_id = 'S-auth'").fetchone()[
                "n"
            ]
            == 0
        )


@pytest.mark.parametrize("via", ["write", "write_many"])
@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"content": "Dana Ortiz\x00 is the primary contact"}, "content"),
        ({"value": {"seats": float("nan")}}, "value.seats"),  # JSON-mode dumping would turn it into null
    ],
)
def test_given_an_unstorable_candidate_from_any_caller_when_written_then_refused_by_field_and_nothing_written(
    container, via, change, field
):
    # Given a candidate (from the extraction worker or the CLI, not only HTTP) holding a NUL or NaN
    bad = w("S-nul", **change)
    # When it reaches the gateway
    with pytest.raises(InvalidRequest) as refused:
        if via == "write":
            container.gateway.write(INTEGRATION, bad)
        else:
            container.gateway.write_many(INTEGRATION, [bad])
    # Then it is refused naming the field, and nothing reached the database
    assert refused.value.field == field
    with container.db.tenant_transaction("gw") as conn:
        assert (
            conn.execute("SELECT count(*) AS n FROM memory_records WHERE subject_id = 'S-nul'").fetchone()[
                "n"
            ]
            == 0
        )


def test_given_a_card_number_when_written_then_neither_content_nor_events_hold_it(container):
    r = container.gateway.write(
        AGENT,
        w(
            "S-mask",
            type="episode",
            category=None,
            slot=None,
            content="Refund went to card 4111 1111 1111 1111 yesterday",
        ),
    )
    assert r.decision is Decision.ADMITTED
    with container.db.tenant_transaction("gw") as conn:
        row = conn.execute(
            "SELECT content, flags, sensitivity FROM memory_records WHERE id = %s", (r.memory.id,)
        ).fetchone()
        events = conn.execute(
            "SELECT payload::text AS p, reason FROM memory_events WHERE memory_id = %s", (r.memory.id,)
        ).fetchall()
    assert "4111" not in row["content"].replace("CARD-***-1111", "")
    assert "identifier_masked" in row["flags"] and row["sensitivity"] == "confidential"
    assert all("4111 1111" not in e["p"] and "Refund" not in e["p"] for e in events)


def test_given_the_same_content_twice_when_written_then_the_second_is_a_duplicate(container):
    first = container.gateway.write(
        AGENT, w("S-dup", type="episode", category=None, slot=None, content="Customer moved the QBR to March")
    )
    again = container.gateway.write(
        AGENT,
        w("S-dup", type="episode", category=None, slot=None, content="customer moved the QBR to March."),
    )
    assert again.decision is Decision.DUPLICATE and again.memory.id == first.memory.id


def test_given_an_idempotency_key_when_replayed_then_same_answer_and_no_second_record(container):
    req = w(
        "S-idem",
        idempotency_key="crm:CTR-1:v1",
        source={"kind": "system_of_record"},
        category="CONTRACT_COMMERCIAL",
        slot="contract.seat_price",
        content="$42 per seat per month",
    )
    first = container.gateway.write(INTEGRATION, req)
    replay = container.gateway.write(INTEGRATION, req)
    assert replay.replayed and replay.memory.id == first.memory.id and replay.decision == first.decision
    with pytest.raises(Conflict):
        container.gateway.write(INTEGRATION, req.model_copy(update={"content": "$40 per seat per month"}))


def test_given_a_tombstoned_hash_when_written_then_rejected_with_an_event(container):
    from agent_memory.domain.hashing import content_hash

    h = content_hash("S-tomb", "episode", None, "Customer shared their home address")
    with container.db.tenant_transaction("gw") as conn:
        conn.execute(
            "INSERT INTO tombstones (tenant_id, subject_id, content_hash) VALUES ('gw', 'S-tomb', %s)", (h,)
        )
    r = container.gateway.write(
        AGENT,
        w("S-tomb", type="episode", category=None, slot=None, content="Customer shared their home address"),
    )
    assert r.decision is Decision.REJECTED and "tombstoned" in r.reasons and r.memory is None
    with container.db.tenant_transaction("gw") as conn:
        assert (
            conn.execute("SELECT count(*) AS n FROM memory_records WHERE subject_id = 'S-tomb'").fetchone()[
                "n"
            ]
            == 0
        )
        event = conn.execute(
            "SELECT reason, payload FROM memory_events WHERE subject_id = 'S-tomb'"
        ).fetchone()
    assert event["reason"] == "tombstoned" and event["payload"]["content_hash"] == h


def test_given_the_embedder_fails_when_writing_then_the_record_is_kept_and_flagged(container):
    class Broken:
        name, dimension = "broken", 384

        def embed(self, texts):
            raise RuntimeError("embedding endpoint down")

    gateway = WriteGateway(container.store, Broken(), container.policies)
    r = gateway.write(
        AGENT, w("S-emb", type="episode", category=None, slot=None, content="Asked for SOC 2 report")
    )
    assert r.decision is Decision.ADMITTED and "embedding_pending" in r.memory.flags
    with container.db.tenant_transaction("gw") as conn:
        row = conn.execute(
            "SELECT embedding IS NULL AS missing, content_tsv @@ plainto_tsquery('english', 'SOC report')"
            " AS found FROM memory_records WHERE id = %s",
            (r.memory.id,),
        ).fetchone()
    assert row["missing"] and row["found"]  # keyword retrieval still finds it

    # When the embedder is back, the nightly job (and the local server's upkeep) indexes it
    assert container.lifecycle.reindex_pending("gw") >= 1
    with container.store.tenant("gw") as s:
        healed = s.get_record(r.memory.id)
    assert "embedding_pending" not in healed.flags and healed.embedding_model == container.embedder.name
    with container.db.tenant_transaction("gw") as conn:
        assert conn.execute(
            "SELECT embedding IS NOT NULL AS v FROM memory_records WHERE id = %s", (r.memory.id,)
        ).fetchone()["v"]
    assert container.lifecycle.reindex_pending("gw") == 0


def test_given_a_sor_fact_then_a_customer_claim_then_the_claim_is_contested_and_sor_stays(container):
    sor = container.gateway.write(
        INTEGRATION, w("S-2890", source={"kind": "system_of_record"}, effective_at=T0)
    )
    claim = container.gateway.write(
        AGENT,
        w(
            "S-2890",
            content="Lee Park is now the primary contact",
            source={"kind": "customer_claim"},
            effective_at=T0 + timedelta(days=9),
        ),
    )
    assert claim.decision is Decision.CONTESTED
    with container.store.tenant("gw") as s:
        assert s.active_for_slot("S-2890", "stakeholder.primary_contact").id == sor.memory.id


def test_given_threads_writing_one_slot_when_done_then_exactly_one_active_version(container):
    barrier = threading.Barrier(8)
    errors: list[Exception] = []

    def writer(i: int) -> None:
        try:
            barrier.wait()
            container.gateway.write(
                AGENT,
                w(
                    "S-race",
                    content=f"Contact number {i} is the primary contact",
                    effective_at=T0 + timedelta(minutes=i),
                ),
            )
        except Exception as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert count_active(container, "gw", "S-race", "stakeholder.primary_contact") == 1


_subjects = itertools.count()
KINDS = ["system_of_record", "customer_confirmed", "confirmed_outcome", "customer_claim"]
RANK = {"system_of_record": 5, "customer_confirmed": 3, "confirmed_outcome": 2, "customer_claim": 1}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.sampled_from(KINDS), st.integers(0, 5), st.integers(0, 365)), min_size=1, max_size=8
    ),
    st.integers(),
)
def test_property_random_candidates_never_leave_two_actives_nor_let_lower_authority_win(container, steps, _):
    subject = f"S-prop-{next(_subjects)}"
    best_rank = -1
    for kind, variant, day in steps:
        principal = INTEGRATION if kind == "system_of_record" else AGENT
        container.gateway.write(
            principal,
            w(
                subject,
                content=f"Contact variant {variant}",
                source={"kind": kind},
                effective_at=T0 - timedelta(days=day),
            ),
        )
        best_rank = max(best_rank, RANK[kind])
        with container.store.tenant("gw") as s:
            active = s.active_for_slot(subject, "stakeholder.primary_contact")
        assert count_active(container, "gw", subject, "stakeholder.primary_contact") == 1
        # the active version always carries the highest authority seen so far
        assert RANK[active.authority.value] == best_rank
    with container.store.tenant("gw") as s:
        history = s.slot_history(subject, "stakeholder.primary_contact")
    for h in history:
        if h.status is Status.SUPERSEDED:
            successor = next(x for x in history if x.id == h.superseded_by_id)
            assert RANK[successor.authority.value] >= RANK[h.authority.value]


def test_given_a_batch_when_written_together_then_each_write_is_sanitized_and_classified_once_and_embedded(
    container, monkeypatch
):
    from agent_memory.services import batch_admission

    calls = []
    real = batch_admission.prepare

    def counting(request, policy, now):
        calls.append(request.content)
        return real(request, policy, now)

    monkeypatch.setattr(batch_admission, "prepare", counting)
    contents = [
        "Walked through the SSO setup with the admin.",
        "The invoice export failed for the EMEA entity.",
        "Asked for the quarterly roadmap deck.",
        "Paid with card 4111 1111 1111 1111 today.",
    ]
    batch = [w("S-many", type="episode", slot=None, category=None, content=c) for c in contents]
    results = container.gateway.write_many(AGENT, batch)
    assert [r.decision for r in results] == [Decision.ADMITTED] * 4
    assert len(calls) == 4  # once each, not once to embed and again to admit
    stored = results[3].memory
    assert "4111 1111 1111 1111" not in stored.content and "embedding_pending" not in stored.flags
