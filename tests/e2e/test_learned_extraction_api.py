"""Session close with the learned extractor (MEMORY_EXTRACTOR=learned): the four kinds of statement
the rules missed, in wording that is in none of the training files, come out right, and small talk
does not."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
TURNS = [
    {"speaker": "agent", "text": "Thanks for making time today, how have things been?"},
    {"speaker": "customer", "text": "The hockey game last night was a real nail-biter."},
    {
        "speaker": "customer",
        "text": "These days Ravi Chandran in procurement has to approve anything we buy.",
    },
    {
        "speaker": "customer",
        "text": "If we agreed to a three-year term, could you bring the price down for us?",
    },
    {
        "speaker": "customer",
        "text": "From here on, billing questions should go to our finance mailbox rather than to me.",
    },
    {"speaker": "customer", "text": "Our auditors are adamant that none of the data ever leaves Canada."},
]


@pytest.fixture(scope="module")
def container(serve_container: Callable[..., AbstractContextManager[Any]]) -> Iterator[Any]:
    with serve_container(extractor="learned") as c:
        yield c


@pytest.fixture(scope="module")
def poller(local_aws: Any) -> QueuePoller:
    return QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1")


def test_the_wording_is_not_in_the_training_data() -> None:
    # Given every statement of the training and held-out files
    quotes: set[str] = set()
    for name in ("train.jsonl", "labelled_transcripts.jsonl", "heldout.jsonl"):
        for line in (REPO / "benchmarks" / "extraction" / name).read_text(encoding="utf-8").splitlines():
            quotes |= {lab["quote"].casefold() for lab in json.loads(line)["labels"]}
    # Then none of this session's sentences is among them
    assert not {t["text"].casefold() for t in TURNS} & quotes


def test_a_closed_session_yields_the_four_kinds_and_no_small_talk(
    api: Any, container: Any, poller: Any
) -> None:
    token = api.token("learned", "agent-1", ["agent"], clearance="confidential")
    # Given a session closed through the API
    body = {
        "subject_id": "CUST-L1",
        "channel": "meeting",
        "occurred_at": "2026-10-02T15:00:00Z",
        "turns": TURNS,
    }
    r = api.post("/v1/sessions/sess-learned/close", body, token=token)
    assert r.status == 202
    # When the extraction worker runs
    poller.drain()
    assert api.get("/v1/sessions/sess-learned", token=token).body["status"] == "processed"
    assert container.extraction.extractor.name == "learned"

    def memories(status: str) -> list[dict[str, Any]]:
        path = f"/v1/subjects/CUST-L1/memories?status={status}&limit=200"
        return list(api.get(path, token=token).body["memories"])

    active, pending = memories("active"), memories("pending_approval")
    # Then the approver is a stakeholder fact
    assert any(m["category"] == "STAKEHOLDER" and "Ravi Chandran" in m["content"] for m in active)
    # And the longer term for a lower price waits for approval, never an active fact
    assert any(m["category"] == "CONTRACT_COMMERCIAL" and "three-year" in m["content"] for m in pending)
    assert not any(m["category"] == "CONTRACT_COMMERCIAL" for m in active)
    # And billing questions to the finance mailbox is a preference
    assert any(m["type"] == "preference" and "finance mailbox" in m["content"] for m in active)
    # And the data staying in Canada is an account fact
    assert any(m["category"] == "ACCOUNT_PROFILE" and "Canada" in m["content"] for m in active)
    # And the small talk is nowhere
    everything = " ".join(m["content"].lower() for m in active + pending)
    assert "hockey" not in everything and "how have things been" not in everything
