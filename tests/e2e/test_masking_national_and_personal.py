"""Cards under other labels, national ids beyond the US and UK, and the personal identifier classes
a tenant masks or keeps, through the API: in a memory's content and in its source reference."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

SIN = "130 692 544"
STEUER_ID = "36514705928"


def write(api, token, subject: str, content: str, reference: str):
    return api.post(
        "/v1/memories",
        {
            "subject_id": subject,
            "type": "episode",
            "content": content,
            "source": {"kind": "confirmed_outcome", "reference": reference},
        },
        token=token,
    )


def test_a_card_after_another_label_and_national_ids_are_masked_in_content_and_reference(api):
    agent = api.token("maskn", "agent-1", ["agent"], clearance="restricted")
    # Given a write whose content and source reference carry a card after an order label, a SIN,
    # a Steuer-ID, an e-mail address and a phone number
    reply = write(
        api,
        agent,
        "MASKN-1",
        f"Order 4111 1111 1111 1111 is my visa card; SIN {SIN}, Steuer-ID {STEUER_ID}, "
        "mail dana@acme.example, call +44 20 7946 0958.",
        "ref 4111111111111111",
    )
    # When it is stored
    assert reply.status == 201, reply.body
    memory = api.get(f"/v1/memories/{reply.body['memory']['id']}", token=agent).body
    # Then none of them can be read back, in the content or in the reference
    shown = memory["content"] + memory["source"]["reference"]
    for raw in ("4111 1111 1111", "41111111111", SIN, STEUER_ID, "dana@acme.example", "7946 0958"):
        assert raw not in shown
    assert memory["source"]["reference"] == "ref CARD-***-1111"
    assert "EMAIL-***-" in memory["content"] and "PHONE-***-0958" in memory["content"]


def test_a_tenant_that_keeps_e_mail_addresses_keeps_them_in_content_and_still_masks_cards(api):
    admin = api.token("maskk", "admin-1", ["admin"])
    agent = api.token("maskk", "agent-1", ["agent"], clearance="restricted")
    # Given a tenant whose policy keeps e-mail addresses
    changed = api.put(
        "/v1/policy",
        {"profile": "crm", "overrides": {"personal_identifiers": {"email": "keep"}}},
        token=admin,
    )
    assert changed.status == 200, changed.body
    assert changed.body["effective"]["personal_identifiers"]["email"] == "keep"
    # When a memory names an e-mail address, a phone number and a card
    reply = write(
        api,
        agent,
        "MASKK-1",
        "Send renewals to dana@acme.example, phone +44 20 7946 0958, card 4111 1111 1111 1111",
        "T-1",
    )
    assert reply.status == 201, reply.body
    content = api.get(f"/v1/memories/{reply.body['memory']['id']}", token=agent).body["content"]
    # Then the address stays, the phone (still masked by the policy) and the card do not
    assert "dana@acme.example" in content
    assert "7946 0958" not in content and "CARD-***-1111" in content


def test_a_masked_e_mail_address_leaves_the_memory_as_sensitive_as_asked_and_a_card_raises_it(api):
    agent = api.token("masks", "agent-1", ["agent"], clearance="restricted")
    # Given one memory naming an e-mail address and one naming a card, both written as internal
    contact = write(api, agent, "MASKS-1", "Renewal paperwork goes to dana@acme.example.", "T-2")
    card = write(api, agent, "MASKS-1", "Customer read out card 4111 1111 1111 1111 on the call.", "T-3")
    assert contact.status == 201 and card.status == 201, (contact.body, card.body)
    # Then the address is masked without raising the memory's sensitivity; the card raises it
    assert "EMAIL-***-" in contact.body["memory"]["content"]
    assert contact.body["memory"]["sensitivity"] == "internal"
    assert card.body["memory"]["sensitivity"] == "confidential"
