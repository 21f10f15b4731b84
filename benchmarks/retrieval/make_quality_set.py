"""Write `quality.jsonl`: the small fixed retrieval-quality set that `make eval` gates on.

    .venv/bin/python benchmarks/retrieval/make_quality_set.py

The file has the LongMemEval layout, so `memory bench longmemeval --data` reads it too. Each
question is one subject: its haystack is three dated sessions of customer turns, the turn that
answers the question among turns about the same customer's other business. A knowledge-update
question has the old value in an earlier session and the new one in a later session; the newer
must rank above the older. Everything is written here by hand; the draw of distractors is seeded,
so the same script writes the same file.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).with_name("quality.jsonl")
DATES = ("2025/02/03 (Mon) 10:00", "2025/04/14 (Mon) 15:30", "2025/06/23 (Mon) 09:15")
QUESTION_DATE = "2025/07/01 (Tue) 12:00"

# Turns about a customer's other business: the haystack around each answer.
DISTRACTORS = [
    "We run our data warehouse on Snowflake and load it nightly.",
    "Our fiscal year ends on the last day of March.",
    "The Lisbon office opened in January with twelve people.",
    "Please send the quarterly report as a PDF, not a slide deck.",
    "Our single sign-on goes through Okta for every employee.",
    "The onboarding sessions for the sales team went well last week.",
    "We are hiring two more support engineers this spring.",
    "I'd like the monthly check-in moved to Thursday mornings.",
    "Our retirement savings are split between two pension pots.",
    "The export to CSV failed twice during the migration weekend.",
    "The marketing team uses Mailchimp for the newsletter.",
    "My daughter starts university in September.",
    "We host everything on Google Cloud in the Frankfurt region.",
    "The dashboard loads slowly when the date filter spans a year.",
    "Our board meets every second Tuesday of the quarter.",
    "I prefer calls after four in the afternoon, my mornings are packed.",
    "We replaced the old ticketing tool with Zendesk last year.",
    "The team in Manila works on the night shift for our US customers.",
    "I'm planning to sell the holiday flat within two years.",
    "The mobile app crashed when uploading photos larger than 10 MB.",
    "We sponsor a local football club and use your tool for their rota.",
    "Our auditors visit every November.",
    "The API rate limit was hit during the Black Friday campaign.",
    "Our head office is in Rotterdam.",
]

# (question id, type, question, [(session index, answer turn)], [(session index, older value turn)])
QUESTIONS: list[tuple[str, str, str, list[tuple[int, str]], list[tuple[int, str]]]] = [
    (
        "rq-approver",
        "single-session-user",
        "Who approves purchases on the customer's side?",
        [(1, "Any purchase now needs sign-off from Amara Diallo, our head of procurement.")],
        [],
    ),
    (
        "rq-residency",
        "single-session-user",
        "Where must the customer's data be stored?",
        [(2, "Our regulator requires that all customer records stay inside Canada.")],
        [],
    ),
    (
        "rq-billing-route",
        "single-session-user",
        "Where should billing questions be sent?",
        [(1, "Please route anything about invoices to our finance mailbox, not to me.")],
        [],
    ),
    (
        "rq-crm",
        "single-session-user",
        "Which CRM platform does the customer use?",
        [(0, "Our sales reps live in HubSpot; it is the CRM for the whole company.")],
        [],
    ),
    (
        "rq-language",
        "single-session-user",
        "What language does the customer want to be contacted in?",
        [(2, "Could you write to me in Spanish from now on? It is easier for me.")],
        [],
    ),
    (
        "rq-risk",
        "single-session-user",
        "What is the client's risk tolerance for investments?",
        [(0, "I am comfortable with moderate risk as long as the income stays steady.")],
        [],
    ),
    (
        "rq-sso-outage",
        "single-session-user",
        "What went wrong with logging in?",
        [(1, "Nobody could log in on Monday because the SAML certificate had expired.")],
        [],
    ),
    (
        "rq-dependants",
        "single-session-user",
        "How many children does the client support?",
        [(2, "We have three kids, and the youngest is still at primary school.")],
        [],
    ),
    (
        "rq-sponsor",
        "single-session-user",
        "Who is the executive sponsor of the project?",
        [(0, "Our COO, Lena Fischer, is sponsoring the rollout at board level.")],
        [],
    ),
    (
        "rq-warehouse-issue",
        "single-session-user",
        "Which integration keeps timing out?",
        [(2, "The Salesforce sync times out every night around two in the morning.")],
        [],
    ),
    (
        "rq-contact-ku",
        "knowledge-update",
        "Who is the customer's main contact now?",
        [(2, "Since June, Priya Raman is our main point of contact for everything.")],
        [(0, "Tom Becker is our main point of contact for the account.")],
    ),
    (
        "rq-cadence-ku",
        "knowledge-update",
        "How often does the customer want status updates?",
        [(2, "Let's switch the status updates to every two weeks instead of weekly.")],
        [(0, "We would like a status update every week, on Fridays.")],
    ),
    (
        "rq-cloud-ku",
        "knowledge-update",
        "Which cloud provider does the customer run on?",
        [(1, "We finished moving from AWS to Azure last month, so Azure is our cloud now.")],
        [(0, "All of our workloads run on AWS in Dublin.")],
    ),
    (
        "rq-horizon-ku",
        "knowledge-update",
        "What is the client's investment horizon?",
        [(2, "We now think fifteen years is the right horizon, not ten.")],
        [(1, "We are investing with a ten-year horizon in mind.")],
    ),
]


def question(index: int, spec: tuple[str, str, str, list[tuple[int, str]], list[tuple[int, str]]]) -> dict:
    qid, qtype, text, answers, older = spec
    rng = random.Random(index)  # noqa: S311 - a reproducible draw, not a secret
    pool = rng.sample(DISTRACTORS, 15)
    sessions: list[list[dict[str, object]]] = [[], [], []]
    for n, turn in enumerate(pool):
        sessions[n % 3].append({"role": "user", "content": turn})
    for where, turn in older:
        sessions[where].insert(1, {"role": "user", "content": turn, "has_answer": True})
    for where, turn in answers:
        sessions[where].insert(2, {"role": "user", "content": turn, "has_answer": True})
    gold = sorted({f"{qid}-s{where}" for where, _ in answers + older})
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": text,
        "question_date": QUESTION_DATE,
        "answer": answers[0][1],
        "haystack_session_ids": [f"{qid}-s{i}" for i in range(3)],
        "haystack_dates": list(DATES),
        "haystack_sessions": sessions,
        "answer_session_ids": gold,
    }


def main() -> None:
    lines = [json.dumps(question(i, spec)) for i, spec in enumerate(QUESTIONS)]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{OUT.name}: {len(lines)} questions")


if __name__ == "__main__":
    main()
