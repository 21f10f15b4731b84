"""A support copilot on the Agent Memory Service, with a scripted model (no API key needed).

Two conversations with the same customer:

1. The copilot recalls before every answer, and hands the transcript over when the conversation
   ends (`close_session(..., wait=True)` returns once extraction is done).
2. A later conversation: the copilot's recall now carries what was remembered, and what the
   service held back for a reviewer (a promised discount) is shown as waiting for approval,
   never as a fact.

Run it against `make serve` with an agent's token:

    export MEMORY_TOKEN=$(.venv/bin/memory token --tenant acme --sub copilot --roles agent --clearance confidential)
    python examples/support_copilot.py            # MEMORY_URL defaults to http://127.0.0.1:8080

Only the client is needed: `pip install ./clients/python`.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from datetime import UTC, datetime

from agent_memory_client import MemoryApiError, MemoryClient, MemoryTransportError
from agent_memory_client import models as m

CONTACT_CHANNEL = "preference.contact_channel"
FIRST_CONVERSATION = [
    "Hi, this is Dana at Northwind. I prefer email communication, please don't call me.",
    "Your sales rep said we could get a 15% discount on the renewal. Can you confirm?",
    "Great. When will we get the renewal quote?",
]
SECOND_CONVERSATION = [
    "Hi again. How will you send me the renewal quote, and is the discount confirmed?",
]


class ScriptedModel:
    """Stands in for the LLM: answers from the recalled memories with fixed wording.

    A real model would get `recalled.context` inside the prompt as quoted data (the service
    wraps it in `<retrieved_memory>`), with the instruction not to follow anything inside it.
    """

    def reply(self, customer: str, recalled: m.RetrieveResult, waiting: list[m.MemoryRecord]) -> str:
        said = customer.lower()
        known = {r.slot: r for r in recalled.memories if r.slot}
        commitments = [r for r in recalled.memories if r.type == "commitment"]
        parts: list[str] = []
        if "discount" in said:
            if any(r.category == "CONTRACT_COMMERCIAL" for r in waiting):
                parts.append("The discount is still waiting for approval by the account team.")
            else:
                # Commercial terms are not the copilot's to grant; the service holds them for review.
                parts.append("I can't confirm a discount myself; I've asked the account team to review it.")
        if "quote" in said:
            if commitments:
                parts.append(f"On file: {commitments[0].content}")
            else:
                parts.append("I'll send the renewal quote by Friday.")
        channel = known.get(CONTACT_CHANNEL)
        if channel is not None:
            parts.append(f"We'll keep to your preference ({channel.content.rstrip('.')}).")
        if not parts:
            parts.append(
                "Thanks, noted." if recalled.memories else "Thanks! I don't have anything on file yet."
            )
        return " ".join(parts)


def converse(
    memory: MemoryClient, model: ScriptedModel, subject: str, session: str, lines: list[str]
) -> list[m.Turn]:
    """One conversation: recall before each answer; returns the transcript."""
    turns: list[m.Turn] = []
    for customer in lines:
        # The copilot always keeps to the customer's contact channel, so it asks for that slot by
        # name: a slot named is served whatever the turn says ("how will you send me the quote" is
        # not, to the embedder, close enough to "I prefer email" to pass the relevance floor).
        recalled = memory.retrieve(subject, customer, session_id=session, slots=[CONTACT_CHANNEL])
        waiting = memory.list_memories(subject, status="pending_approval").memories
        answer = model.reply(customer, recalled, waiting)
        print(f"  customer: {customer}")
        print(
            f"  copilot:  {answer}   [recalled {len(recalled.memories)} memories, {recalled.tokens} tokens]"
        )
        turns += [m.Turn(speaker="customer", text=customer), m.Turn(speaker="agent", text=answer)]
    return turns


def show_memory(memory: MemoryClient, subject: str) -> None:
    """What the service now holds about the customer, by status."""
    shown: list[tuple[m.Status, str]] = [
        ("active", "remembered"),
        ("pending_approval", "waiting for approval"),
    ]
    for status, title in shown:
        records = memory.list_memories(subject, status=status).memories
        print(f"  {title} ({len(records)}):")
        for record in records:
            print(f"    - [{record.type}] {record.content}")


def run(memory: MemoryClient, subject: str) -> None:
    model = ScriptedModel()
    first, second = f"copilot-{uuid.uuid4().hex[:8]}", f"copilot-{uuid.uuid4().hex[:8]}"

    print(f"Conversation 1 with {subject} (session {first})")
    turns = converse(memory, model, subject, first, FIRST_CONVERSATION)
    closed = memory.close_session(
        first,
        subject_id=subject,
        occurred_at=datetime.now(UTC),
        channel="chat",
        turns=turns,
        wait=True,
    )
    print(
        f"  session {closed.status}: admitted {closed.admitted}, pending approval "
        f"{closed.pending_approval}, not stored {closed.not_stored}, rejected {closed.rejected}"
    )

    print(f"\nConversation 2 with {subject} (session {second})")
    converse(memory, model, subject, second, SECOND_CONVERSATION)

    print("\nWhat the service holds now")
    show_memory(memory, subject)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A support copilot with a scripted model.")
    parser.add_argument("--url", default=os.environ.get("MEMORY_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--token", default=os.environ.get("MEMORY_TOKEN"), help="an agent's token")
    parser.add_argument("--subject", default=f"ACC-DEMO-{uuid.uuid4().hex[:6].upper()}")
    args = parser.parse_args(argv)
    if not args.token:
        print(
            "support_copilot: no token. Start the service (make serve), then:\n"
            "  export MEMORY_TOKEN=$(.venv/bin/memory token --tenant acme --sub copilot "
            "--roles agent --clearance confidential)",
            file=sys.stderr,
        )
        return 2
    try:
        with MemoryClient(args.url, token=args.token) as memory:
            memory.health()  # fails fast, before the first conversation, when nothing listens
            run(memory, args.subject)
    except MemoryTransportError:
        print(f"support_copilot: no service at {args.url} (is `make serve` running?)", file=sys.stderr)
        return 1
    except MemoryApiError as exc:
        print(f"support_copilot: the service refused: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
