"""Held-out set for the extractor (`heldout.jsonl`), made by a different process than `train.jsonl`.

    python benchmarks/extraction/generate_heldout.py

Written separately from `generate.py` and sharing none of its templates, value
lists or operators: each label has a handful of hand-phrased sentences
(indirect, hedged, reported speech, long multi-clause), and the operators are
different ones (spoken-style fillers, expanded contractions, British
spellings, run-on joins, a dropped article). Use it only to measure; never
train on it.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# (domain, speaker, type, slot, decision, reason, sentences)
CATEGORY = {
    "contract": "CONTRACT_COMMERCIAL",
    "stakeholder": "STAKEHOLDER",
    "tech": "TECHNICAL_ENVIRONMENT",
    "profile": "ACCOUNT_PROFILE",
}

PEOPLE = ["Beatriz Alves", "Kofi Mensah", "Yuki Sato", "Marta Kowalska", "Pieter de Vries", "Amara Singh"]

S: list[tuple[str, str, str | None, str | None, str, str | None, list[str]]] = [
    (
        "*",
        "customer",
        "preference",
        "preference.contact_channel",
        "admitted",
        None,
        [
            "Drop me a line by email rather than ringing, that is what suits me best.",
            "Texting is what I actually see, so stick to texts with me please.",
            "Could the team message us on Slack instead of emailing, as a rule?",
            "Our finance people would like billing things to land in their shared inbox, not with me.",
            "Voice calls are hard for me, written messages are what I want from you.",
        ],
    ),
    (
        "*",
        "customer",
        "preference",
        "preference.contact_time",
        "admitted",
        None,
        [
            "I am only really free before nine, so that is the time to try me.",
            "Late in the day is better for us, anything after four.",
            "Please avoid calling during school pick-up, mid-mornings are ideal.",
        ],
    ),
    (
        "*",
        "customer",
        "preference",
        "preference.cadence",
        "admitted",
        None,
        [
            "Once every quarter is enough contact from your side, honestly.",
            "A short note each month would be the right rhythm for us.",
            "We'd rather hear from you every other week than daily.",
        ],
    ),
    (
        "*",
        "customer",
        "preference",
        "preference.language",
        "admitted",
        None,
        [
            "My English is fine but I am more at ease reading things in Polish.",
            "The warehouse staff mostly speak Portuguese, so send their guides in Portuguese.",
        ],
    ),
    (
        "*",
        "customer",
        "preference",
        "preference.report_format",
        "admitted",
        None,
        [
            "A printable summary beats any dashboard for our board members.",
            "Just give me the numbers in a CSV, I will do the rest myself.",
        ],
    ),
    (
        "*",
        "customer",
        "preference",
        "preference.tone",
        "admitted",
        None,
        [
            "Skip the sales talk with me, just give it to me straight.",
        ],
    ),
    (
        "*",
        "customer",
        "preference",
        "preference.meeting_format",
        "admitted",
        None,
        [
            "Face-to-face sessions suit our leadership far more than screens do.",
        ],
    ),
    (
        "*",
        "customer",
        "fact",
        "stakeholder.decision_maker",
        "admitted",
        None,
        [
            "Going forward any purchase has to get the nod from Kofi Mensah, he runs procurement now.",
            "The green light on new spend comes from our new finance director, Yuki Sato.",
            "Buying decisions moved up to the board, and Marta Kowalska chairs that.",
        ],
    ),
    (
        "*",
        "customer",
        "fact",
        "stakeholder.billing_contact",
        "admitted",
        None,
        [
            "Beatriz Alves took over accounts payable, so the bills are hers now.",
        ],
    ),
    (
        "*",
        "customer",
        "fact",
        "stakeholder.technical_contact",
        "admitted",
        None,
        [
            "Pieter de Vries looks after the integration work on our end.",
        ],
    ),
    (
        "*",
        "customer",
        "fact",
        "stakeholder.executive_sponsor",
        "admitted",
        None,
        [
            "At the leadership level the project is now championed by Amara Singh.",
        ],
    ),
    (
        "*",
        "customer",
        "fact",
        "profile.data_residency",
        "admitted",
        None,
        [
            "Our regulator will not allow the records to be kept anywhere but Ireland.",
            "The privacy office made it clear that nothing may be processed outside Switzerland.",
            "Everything we send you has to live on servers in Japan, that is non-negotiable.",
        ],
    ),
    (
        "crm",
        "customer",
        "fact",
        "tech.data_warehouse",
        "admitted",
        None,
        [
            "These days the analytics team queries everything out of Databricks.",
        ],
    ),
    (
        "crm",
        "customer",
        "fact",
        "tech.identity_provider",
        "admitted",
        None,
        [
            "Staff sign in with their Entra ID accounts, we retired the old directory.",
        ],
    ),
    (
        "support",
        "customer",
        "fact",
        "tech.integration",
        "admitted",
        None,
        [
            "The shop pushes every order across to Xero overnight.",
        ],
    ),
    (
        "wealth",
        "customer",
        "fact",
        "profile.risk_tolerance",
        "admitted",
        None,
        [
            "Seeing the value drop by a fifth would really upset me, so go gently.",
            "I am happy to ride out the ups and downs for better growth.",
        ],
    ),
    (
        "wealth",
        "customer",
        "fact",
        "profile.retirement_age",
        "admitted",
        None,
        [
            "The plan is for me to finish work when I turn sixty-three.",
        ],
    ),
    (
        "wealth",
        "customer",
        "fact",
        "profile.income_needs",
        "admitted",
        None,
        [
            "To live comfortably we would have to draw around two thousand a month.",
        ],
    ),
    (
        "wealth",
        "customer",
        "fact",
        "profile.dependants",
        "admitted",
        None,
        [
            "My father moved in with us last year and I cover his care.",
        ],
    ),
    (
        "*",
        "customer",
        "fact",
        "contract.discount",
        "pending_approval",
        "commercial_requires_human_approval",
        [
            "We would happily tie ourselves in for three years if the rate came down.",
            "Our CFO will only sign if there is some movement on price.",
            "Knock a bit off and we will commit to the bigger package.",
        ],
    ),
    (
        "*",
        "customer",
        "fact",
        "contract.payment_terms",
        "pending_approval",
        "commercial_requires_human_approval",
        [
            "Paying the whole year upfront is not possible for us, we need to split it into instalments.",
        ],
    ),
    (
        "*",
        "agent",
        "fact",
        "contract.discount",
        "pending_approval",
        "commercial_requires_human_approval",
        [
            "I could take 18% off if you sign before the quarter closes.",
        ],
    ),
    (
        "*",
        "agent",
        "fact",
        "contract.pricing",
        "pending_approval",
        "commercial_requires_human_approval",
        [
            "That tier would come to $1,100 a month for your volume.",
        ],
    ),
    (
        "*",
        "customer",
        "episode",
        None,
        "admitted",
        None,
        [
            "Since the weekend none of the exports have come through.",
            "The courier left the replacement unit at the wrong address.",
            "Our onboarding of the Berlin office wrapped up on time.",
        ],
    ),
    (
        "*",
        "customer",
        "resolution",
        None,
        "admitted",
        None,
        [
            "Right, that did it, the exports are arriving again.",
        ],
    ),
    (
        "*",
        "customer",
        "sentiment",
        None,
        "admitted",
        None,
        [
            "The new screens are a real improvement, people are pleased.",
            "We may well open a second site if next year goes well.",
            "It has been a bit of a slog getting people to use the tool.",
        ],
    ),
    (
        "*",
        "agent",
        "commitment",
        None,
        "admitted",
        None,
        [
            "I will get the revised contract over to you before Wednesday.",
            "Leave it with me, you will have an answer from our engineers by Monday.",
            "I am going to set up the training session for next week.",
        ],
    ),
    (
        "*",
        "agent",
        "observation",
        None,
        "quarantined",
        "agent_inference",
        [
            "I get the impression the finance team is holding this up.",
            "You come across as quite cautious about change.",
        ],
    ),
    (
        "*",
        "customer",
        None,
        None,
        "not_stored",
        "small_talk",
        [
            "We finally had some sunshine here, which was nice.",
            "I had to walk in today because the trains were cancelled.",
            "My team won the quiz at the pub last night.",
            "It is chaos here with the school holidays.",
            "Did you catch the match at the weekend?",
            "The new coffee machine in our office is a big hit.",
            "Apologies, I am eating lunch at my desk.",
            "It has been one of those weeks.",
        ],
    ),
    (
        "*",
        "agent",
        None,
        None,
        "not_stored",
        "small_talk",
        [
            "Lovely to catch up again.",
            "I hope the move went smoothly for you all.",
        ],
    ),
    (
        "*",
        "customer",
        None,
        None,
        "not_stored",
        "thanks",
        [
            "Much appreciated, that helps a lot.",
            "Brilliant, thank you.",
        ],
    ),
    (
        "*",
        "customer",
        None,
        None,
        "not_stored",
        "acknowledgement",
        [
            "Right, understood.",
            "Yep, makes sense.",
        ],
    ),
    (
        "*",
        "customer",
        None,
        None,
        "not_stored",
        "customer_question",
        [
            "Where would I find the audit log?",
        ],
    ),
    (
        "*",
        "agent",
        None,
        None,
        "not_stored",
        "agent_question",
        [
            "Would a Tuesday work for the session?",
        ],
    ),
    (
        "*",
        "customer",
        None,
        None,
        "not_stored",
        "one_off_request",
        [
            "Could you resend today's invoice to me?",
        ],
    ),
]

# --------------------------------------------------------------------------- operators (not those of generate.py)

FILLERS = ["So basically ", "Um, ", "Look, ", "Well, ", "To be honest with you, "]
BRITISH = {"organization": "organisation", "color": "colour", "center": "centre", "program": "programme"}
CONTRACTIONS = {
    "I am ": "I'm ",
    "we would ": "we'd ",
    "It has ": "It's ",
    "I will ": "I'll ",
    "do not ": "don't ",
}


def _operate(text: str, rng: random.Random) -> str:
    r = rng.random()
    if r < 0.2:
        text = rng.choice(FILLERS) + text[:1].lower() + text[1:]
    elif r < 0.35:
        for a, b in CONTRACTIONS.items():
            text = text.replace(a, b)
    elif r < 0.45:
        text = text.lower().rstrip(".")  # voice-to-text style
    elif r < 0.55:
        for a, b in BRITISH.items():
            text = text.replace(a, b)
        text = text.replace(" the ", " ", 1)
    return text


def build(seed: int, copies: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)  # noqa: S311 - reproducible data, not a secret
    items: list[dict[str, Any]] = []
    for domain in ("crm", "support", "wealth"):
        for dom, speaker, typ, slot, decision, reason, sentences in S:
            if dom not in ("*", domain):
                continue
            for sentence in sentences:
                for _ in range(copies):
                    category = (
                        CATEGORY[slot.split(".")[0]]
                        if typ == "fact" and slot
                        else ("PREFERENCE" if typ == "preference" else (typ.upper() if typ else None))
                    )
                    items.append(
                        {
                            "domain": domain,
                            "speaker": speaker,
                            "text": _operate(sentence, rng),
                            "label": {
                                "type": typ,
                                "category": category,
                                "slot": slot,
                                "decision": decision,
                                "reason": reason,
                            },
                        }
                    )
    rows: list[dict[str, Any]] = []
    for domain in ("crm", "support", "wealth"):
        pool = [i for i in items if i["domain"] == domain]
        rng.shuffle(pool)
        for n in range(0, len(pool), 6):
            chunk = pool[n : n + 6]
            turns: list[dict[str, str]] = []
            labels: list[dict[str, Any]] = []
            for item in chunk:
                text = item["text"] if item["text"][-1] in ".!?" else item["text"] + "."
                if (
                    turns
                    and turns[-1]["speaker"] == item["speaker"]
                    and rng.random() < 0.5
                    and (text not in turns[-1]["text"])
                ):
                    turns[-1]["text"] += " " + text  # a longer, multi-statement turn
                else:
                    turns.append({"speaker": item["speaker"], "text": text})
                lab = item["label"]
                labels.append(
                    {
                        "turn": len(turns) - 1,
                        "quote": text,
                        "outcome": "not_stored" if lab["decision"] == "not_stored" else "stored",
                        **lab,
                        "contains_identifier": False,
                    }
                )
            rows.append(
                {
                    "id": f"held-{domain}-{n // 6:03d}",
                    "domain": domain,
                    "channel": "chat",
                    "turns": turns,
                    "labels": labels,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2021)
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--out", default=str(HERE / "heldout.jsonl"))
    args = parser.parse_args(argv)
    rows = build(args.seed, args.copies)
    with open(args.out, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(json.dumps({"transcripts": len(rows), "statements": sum(len(r["labels"]) for r in rows)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
