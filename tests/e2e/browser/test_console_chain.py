"""The page's audit-chain check computes exactly the service's hash (domain.hashing.chain_hash over
domain.audit.event_hash_fields), run in the browser's own WebCrypto on payloads where JavaScript
and Python write JSON differently (1.0, 1e-07, astral-plane keys, control characters)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from agent_memory.domain.audit import event_hash_fields
from agent_memory.domain.hashing import GENESIS_HASH, chain_hash
from agent_memory.domain.records import AuditEvent

pytestmark = pytest.mark.e2e

HASH_IN_PAGE = """
const [text, done] = [arguments[0], arguments[arguments.length - 1]];
import("/console/js/chain.js")
  .then(async (chain) => {
    const event = chain.parseExact(text);
    done(await chain.eventHash(event.prev_hash, event));
  })
  .catch((error) => done("error: " + error));
"""

PAYLOADS = [
    {},
    {"score": 1.0, "tiny": 1e-07, "big": 1e16, "huge": 1.5e300, "n": 3, "neg": -0.5, "zero": 0.0},
    {
        "text": 'ünï “q” \n\t\u001f\u007f <b>&amp;</b> \\ "',
        "nested": {"b": [1, 2.5, None, True, False], "a": "x"},
    },
    {"\U0001f600": 1, "\uff01": 2, "é": 3, "Z": 4, "a": 5, "": 6},
    {"superseded": ["mem_1", "mem_2"], "evidence_ref": None, "note_present": True},
]
TIMES = [
    datetime(2026, 12, 1, 20, 50, 57, 123456, tzinfo=UTC),
    datetime(2026, 12, 1, 20, 50, 57, tzinfo=UTC),
    datetime(2026, 12, 1, 22, 50, 57, 5, tzinfo=timezone(timedelta(hours=2))),
]


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("created_at", TIMES)
def test_the_page_computes_the_services_hash(console, payload, created_at):
    event = AuditEvent(
        tenant_id="chain-t",
        seq=7,
        id="evt_01",
        event_type="memory_approved",
        memory_id="mem_9",
        subject_id="ACC-1",
        actor="rev-1",
        reason="reviewer_approved",
        payload=payload,
        created_at=created_at,
        prev_hash=GENESIS_HASH,
        hash="",
    )
    expected = chain_hash(GENESIS_HASH, event_hash_fields(event))
    # As the API sends it: the event's JSON view, written by Python's json module
    text = json.dumps(event.model_dump(mode="json"), ensure_ascii=False)
    if not console.driver.current_url.startswith(console.base):
        console.driver.get(f"{console.base}/console/")
    assert console.driver.execute_async_script(HASH_IN_PAGE, text) == expected
