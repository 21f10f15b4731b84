"""The extraction worker when SQS delivers one session-close message twice at the same time."""

from typing import Any

import pytest

from agent_memory.domain.enums import Authority, MemoryType, Role
from agent_memory.domain.extraction import CandidateMemory, ExtractionResult, SourceSpan, Speaker
from agent_memory.domain.records import Principal
from agent_memory.services.extraction import ExtractionWorker, _field_name
from agent_memory.services.sessions import CloseSessionRequest

pytestmark = pytest.mark.integration

TENANT = "t-dup"
MESSAGE = {"tenant_id": TENANT, "session_id": "s-dup"}


class SecondDeliveryWhileExtracting:
    """An extractor during whose first run the same message is delivered again, and finishes."""

    name, version = "stub", "1"

    def __init__(self) -> None:
        self.worker: ExtractionWorker | None = None
        self.inner: dict[str, Any] | None = None

    def extract(self, transcript: Any) -> ExtractionResult:
        if self.inner is None and self.worker is not None:
            self.inner = {}  # the nested delivery must not nest again
            self.inner = self.worker.process(MESSAGE, receive_count=2)
        no_slot = CandidateMemory(
            type=MemoryType.PREFERENCE,
            slot=None,  # refused by the gateway: a preference needs a slot
            content="Prefers email",
            span=SourceSpan(turn=0, start=0, end=5),
            speaker=Speaker.CUSTOMER,
            source_kind=Authority.CUSTOMER_CONFIRMED,
            confidence=0.9,
            confidence_basis="stated",
            extractor="stub",
            extractor_version="1",
        )
        episode = no_slot.model_copy(
            update={"type": MemoryType.EPISODE, "content": "Customer asked to be emailed the renewal quote"}
        )
        return ExtractionResult(candidates=[no_slot, episode])


def test_two_deliveries_at_once_record_the_outcome_and_its_audit_events_once(container):
    # Given a closed session
    agent = Principal(sub="a", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
    request = {
        "subject_id": "CUST-DUP",
        "occurred_at": "2026-10-02T00:00:00Z",
        "turns": [{"speaker": "customer", "text": "Hello there, please email me."}],
    }
    container.sessions.close(agent, "s-dup", CloseSessionRequest.model_validate(request))
    extractor = SecondDeliveryWhileExtracting()
    worker = ExtractionWorker(
        container.store, container.objects, extractor, container.gateway, max_receive_count=3
    )
    extractor.worker = worker
    # When a second delivery runs, and finishes, while the first is still extracting
    outer = worker.process(MESSAGE, receive_count=1)
    # Then one of them records the outcome, the other sees it done
    assert extractor.inner is not None and extractor.inner["status"] == "processed"
    assert outer == {"status": "processed", "skipped": True}
    # And the refused candidate is audited once, the episode written once
    with container.store.tenant(TENANT) as s:
        events = s.audit_events(subject_id="CUST-DUP", memory_id=None, since=None, after_seq=None, limit=100)
    assert [e.payload for e in events if e.reason == "malformed_candidate"] == [
        {"session_id": "s-dup", "candidate": 0, "field": "slot"}
    ]
    assert len([e for e in events if e.event_type == "memory_created"]) == 1


@pytest.mark.parametrize(
    ("refused", "recorded"),
    [
        ("slot", "slot"),
        ("source.span", "source.span"),
        ("value", "value"),
        ("value.customer's card 4111", "value"),  # a key of the value is the candidate's own text
        ("value[3]", "value"),
        ("x" * 300, "x" * 100),
    ],
)
def test_the_refusing_field_is_recorded_without_the_candidates_own_keys(refused, recorded):
    assert _field_name(refused) == recorded
