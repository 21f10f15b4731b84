"""Seeded generator of the extractor's training set (`train.jsonl`).

    python benchmarks/extraction/generate.py            # writes benchmarks/extraction/train.jsonl
    python benchmarks/extraction/generate.py --seed 7 --out /tmp/train.jsonl

Templates x slot values x paraphrase operators, by domain (crm = customer
success, support, wealth advisory). Every statement carries its gold label
(type, category, slot, decision, reason); statements are packed into short
transcripts (1-3 statements a turn) in the format of `labelled_transcripts.jsonl`,
so every scorer reads the three files the same way.

The held-out set (`heldout.jsonl`) is made by a different program
(`generate_heldout.py`) with templates and operators written separately; do
not share phrasing between the two files.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DOMAINS = ("crm", "support", "wealth")

# --------------------------------------------------------------------------- slot values by domain

NAMES = [
    "Mark Feldman",
    "Priya Raman",
    "Tomasz Nowak",
    "Aiko Tanaka",
    "Lena Hoffmann",
    "Carlos Mendes",
    "Grace Okafor",
    "Oliver Brandt",
    "Sofia Russo",
    "Hamid Karimi",
    "Julia Schmidt",
    "Noah Bennett",
    "Emeka Obi",
    "Hannah Lee",
    "Rafael Ortiz",
    "Ingrid Larsen",
    "Dev Patel",
    "Chloe Martin",
]
FIRST = ["Dana", "Sam", "Alex", "Jordan", "Rita", "Ken", "Maya", "Luis", "Anna", "Theo", "Iris", "Ben"]
VALUES: dict[str, dict[str, list[str]]] = {
    "*": {
        "name": NAMES,
        "first": FIRST,
        "channel": ["email", "Slack", "a phone call", "text message", "the portal", "WhatsApp", "Teams chat"],
        "other_channel": ["phone calls", "voicemail", "letters", "the chat widget", "long email threads"],
        "time": [
            "mornings",
            "afternoons",
            "after 2pm",
            "before 10am",
            "Tuesday mornings",
            "lunchtime",
            "late afternoons",
            "Central time business hours",
        ],
        "cadence": ["weekly", "monthly", "every two weeks", "quarterly", "once a month", "fortnightly"],
        "language": ["Spanish", "German", "French", "Portuguese", "Italian", "Dutch", "Japanese"],
        "tone": ["plain language", "short and to the point", "no jargon", "a formal tone", "no emojis"],
        "meeting": [
            "video calls",
            "in-person meetings",
            "30-minute calls",
            "phone rather than video",
            "on-site visits",
        ],
        "report": [
            "a PDF",
            "a one-page summary",
            "a spreadsheet",
            "bullet points",
            "a slide deck",
            "a written summary",
        ],
        "pct": ["10%", "12%", "15%", "20%", "8%", "25%"],
        "money": ["$40", "$2,500", "$18", "€30", "£1,200", "$95"],
        "years": ["two", "three", "five"],
        "day": ["Friday", "Monday", "Thursday", "tomorrow", "end of the week", "next Tuesday"],
        "city": ["Toronto", "Berlin", "Austin", "Lisbon", "Manchester", "Singapore", "Denver"],
        "country": ["Canada", "the EU", "Germany", "Australia", "the UK", "Switzerland"],
        "mailbox": [
            "our finance mailbox",
            "the accounts payable inbox",
            "billing@ our domain",
            "the shared finance inbox",
        ],
        "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
        "weather": ["rain", "snow", "heat", "wind"],
    },
    "crm": {
        "tool": [
            "Salesforce",
            "HubSpot",
            "Snowflake",
            "Okta",
            "Azure AD",
            "BigQuery",
            "Marketo",
            "AWS",
            "Redshift",
            "Zendesk",
            "Jira",
            "NetSuite",
        ],
        "crm_tool": ["Salesforce", "HubSpot", "Dynamics 365", "Pipedrive"],
        "idp": ["Okta", "Azure AD", "OneLogin", "Ping Identity", "JumpCloud"],
        "dwh": ["Snowflake", "BigQuery", "Redshift", "Databricks"],
        "cloud": ["AWS", "Azure", "Google Cloud", "our own data centre"],
        "email_tool": ["Marketo", "Braze", "Mailchimp", "SendGrid"],
        "integ": ["Jira", "NetSuite", "Zapier", "ServiceNow", "Workday", "Slack alerts"],
        "role": ["VP of Operations", "CFO", "Head of Procurement", "COO", "Director of IT"],
        "thing": [
            "the dashboards",
            "the routing module",
            "the onboarding",
            "the reporting suite",
            "the API",
            "the renewal process",
        ],
        "event": [
            "the rollout to the EMEA team",
            "the data migration",
            "the SSO cutover",
            "our QBR",
            "the pilot with the sales team",
        ],
        "problem": [
            "the nightly sync",
            "the Salesforce connector",
            "the usage report",
            "SSO login",
            "the webhook to Jira",
        ],
        "industry": [
            "a logistics company",
            "a regional hospital network",
            "a fintech startup",
            "a manufacturer",
            "a non-profit",
            "a retailer",
        ],
        "headcount": ["about 1,200 employees", "roughly 300 staff", "4,000 people", "850 employees"],
        "fy": ["March", "June", "September", "January"],
        "sor_plan": ["the Enterprise plan", "the Growth tier", "the Business plan"],
        "seats": ["250 seats", "1,000 licences", "80 seats"],
    },
    "support": {
        "tool": ["Windows 11", "an iPhone", "a MacBook", "Chrome", "Outlook", "Gmail", "an Android phone"],
        "crm_tool": ["Zendesk", "Freshdesk", "HubSpot"],
        "idp": ["Google sign-in", "Azure AD", "Okta"],
        "dwh": ["BigQuery", "a Postgres database", "Snowflake"],
        "cloud": ["AWS", "Azure", "Google Cloud"],
        "email_tool": ["Outlook", "Gmail", "Exchange Online"],
        "integ": ["Shopify", "Stripe", "QuickBooks", "Xero", "Zapier"],
        "role": ["office manager", "IT admin", "owner", "practice manager", "finance lead"],
        "thing": [
            "the mobile app",
            "the printer driver",
            "the checkout page",
            "the router",
            "the invoice export",
            "the new update",
        ],
        "event": [
            "the firmware update",
            "the replacement device",
            "the refund",
            "the account transfer",
            "the password reset",
        ],
        "problem": ["the app", "the printer", "my login", "the payment page", "the sync", "two-factor codes"],
        "industry": ["a small dental practice", "a family-run bakery", "a law firm", "a café chain"],
        "headcount": ["12 staff", "about 40 employees", "6 people"],
        "fy": ["April", "December", "July"],
        "sor_plan": ["the Premium plan", "the Basic tier", "the Family plan"],
        "seats": ["5 seats", "20 licences", "3 seats"],
    },
    "wealth": {
        "tool": ["the client portal", "paper statements", "the mobile app"],
        "crm_tool": ["Salesforce", "Redtail"],
        "idp": ["the bank's login", "Okta"],
        "dwh": ["a spreadsheet", "Snowflake"],
        "cloud": ["AWS", "Azure"],
        "email_tool": ["Gmail", "Outlook"],
        "integ": ["QuickBooks", "Xero", "the tax software"],
        "role": ["accountant", "tax adviser", "lawyer", "daughter", "business partner"],
        "thing": [
            "the portfolio",
            "the quarterly statements",
            "the rebalancing",
            "the bond ladder",
            "the ESG fund",
            "the pension transfer",
        ],
        "event": [
            "the pension transfer",
            "the house sale",
            "the trust paperwork",
            "the rollover",
            "the annual review",
        ],
        "problem": ["the portal login", "the transfer", "my statement", "the direct debit"],
        "industry": ["a retired teacher", "a surgeon", "a small business owner", "an engineer"],
        "headcount": ["two kids", "three grandchildren", "a son at university"],
        "fy": ["April", "December"],
        "sor_plan": ["the premium advisory tier", "the managed account plan"],
        "seats": ["two accounts", "three accounts"],
    },
}

# --------------------------------------------------------------------------- templates by label
# Each label: (speaker, type, category, slot, decision, reason, templates by domain ("*" = every domain)).
L = dict[str, Any]


def _lab(
    speaker: str,
    typ: str | None,
    slot: str | None,
    decision: str,
    reason: str | None,
    templates: dict[str, list[str]],
    category: str | None = None,
) -> L:
    if category is None and typ is not None:
        if typ in ("fact",) and slot:
            category = {
                "contract": "CONTRACT_COMMERCIAL",
                "stakeholder": "STAKEHOLDER",
                "tech": "TECHNICAL_ENVIRONMENT",
                "profile": "ACCOUNT_PROFILE",
            }[slot.split(".")[0]]
        elif typ == "preference":
            category = "PREFERENCE"
        else:
            category = typ.upper()
    return {
        "speaker": speaker,
        "type": typ,
        "category": category,
        "slot": slot,
        "decision": decision,
        "reason": reason,
        "templates": templates,
    }


def pref(slot: str, t: dict[str, list[str]]) -> L:
    return _lab("customer", "preference", f"preference.{slot}", "admitted", None, t)


def fact(slot: str, t: dict[str, list[str]]) -> L:
    return _lab("customer", "fact", slot, "admitted", None, t)


def comm(slot: str, speaker: str, t: dict[str, list[str]]) -> L:
    return _lab(
        speaker, "fact", f"contract.{slot}", "pending_approval", "commercial_requires_human_approval", t
    )


def none(reason: str, speaker: str, t: dict[str, list[str]], slot: str | None = None) -> L:
    return _lab(speaker, None, slot, "not_stored", reason, t)


LABELS: list[L] = [
    pref(
        "contact_channel",
        {
            "*": [
                "Please use {channel} for anything routine going forward.",
                "I'd rather you reached me by {channel} than {other_channel}.",
                "From now on, {channel} works much better for me.",
                "We prefer {channel}; {other_channel} tend to get lost here.",
                "Could you stop with {other_channel} and just use {channel} from here on?",
                "For future updates, {channel} is the best way to reach me.",
                "No more {other_channel}, please, {channel} is easier for us.",
                "Going forward send billing questions to {mailbox} instead of me.",
                "Please route invoices and billing queries to {mailbox} from now on.",
                "Honestly {channel} is the only thing I reliably check, so use that in future.",
            ]
        },
    ),
    pref(
        "contact_time",
        {
            "*": [
                "I'm easiest to reach {time}, so please call then in future.",
                "Please keep calls to {time} going forward.",
                "{time} work best for me generally.",
                "We'd prefer meetings in the {time} from now on.",
                "Try me {time}, that's when I'm free most weeks.",
                "In general avoid Fridays; {time} are better for us.",
            ]
        },
    ),
    pref(
        "cadence",
        {
            "*": [
                "A {cadence} check-in is plenty for us.",
                "Let's keep the reviews {cadence} from now on.",
                "We'd like updates {cadence} rather than every few days.",
                "Going forward a {cadence} summary is all I need.",
                "Please make the status calls {cadence}.",
            ],
            "wealth": ["I'd like to review the portfolio {cadence} going forward."],
        },
    ),
    pref(
        "language",
        {
            "*": [
                "Please write to me in {language} from now on.",
                "I'd prefer the calls in {language} if you can.",
                "Our team reads {language} more comfortably, so please use {language} in future.",
                "Could future documents come in {language}?",
            ]
        },
    ),
    pref(
        "tone",
        {
            "*": [
                "Please keep it {tone} when you write to us.",
                "I prefer {tone}, the cheerful marketing voice puts people off here.",
                "Going forward, {tone} please.",
                "Our execs like {tone}, so keep the updates that way.",
            ]
        },
    ),
    pref(
        "meeting_format",
        {
            "*": [
                "We prefer {meeting} going forward.",
                "{meeting} work better for us than long workshops.",
                "Please set up {meeting} rather than big group sessions in future.",
                "I'd rather do {meeting} from now on.",
            ]
        },
    ),
    pref(
        "report_format",
        {
            "*": [
                "Please send the reports as {report} from now on.",
                "I'd prefer {report} rather than a dashboard link.",
                "Our board reads {report}, so please use that format going forward.",
                "In future {report} is the format that works for us.",
            ]
        },
    ),
    # ---- stakeholder facts
    fact(
        "stakeholder.decision_maker",
        {
            "*": [
                "{name} signs off on all purchases now.",
                "Any spend over the limit needs approval from {name}, our {role}.",
                "{name} has final say on buying decisions since the reorg.",
                "Purchases on our side are now approved by {name}.",
                "It's {name} who owns the budget for this now.",
                "The person who approves contracts here is {name} these days.",
                "Since the reorg, {name} makes the final call on renewals.",
            ],
            "wealth": ["My {role}, {name}, makes the final decisions on the trust."],
        },
    ),
    fact(
        "stakeholder.executive_sponsor",
        {
            "*": [
                "{name} has taken over as our executive sponsor.",
                "Our exec sponsor is now {name}, the {role}.",
                "{name} is the executive sponsor for the project from this quarter.",
            ]
        },
    ),
    fact(
        "stakeholder.billing_contact",
        {
            "*": [
                "Invoices should go to {name} in accounts payable.",
                "{name} handles all our invoicing now.",
                "Our billing contact is {name} from this month.",
                "Send the invoices to {name}, she runs accounts payable.",
            ]
        },
    ),
    fact(
        "stakeholder.technical_contact",
        {
            "*": [
                "{name} is our technical contact for anything integration-related.",
                "For anything technical, talk to {name}, our platform lead.",
                "{name} is the go-to person on the IT side.",
            ],
            "wealth": ["For anything about taxes, my {role} {name} is the person to talk to."],
        },
    ),
    fact(
        "stakeholder.primary_contact",
        {
            "*": [
                "I'm still your main point of contact day to day.",
                "{name} will be your primary contact while I'm on leave.",
                "Please treat {name} as the main contact for the account from now on.",
            ]
        },
    ),
    # ---- technical environment
    fact(
        "tech.crm_platform",
        {
            "*": [
                "We moved our CRM to {crm_tool} last quarter.",
                "Our sales team lives in {crm_tool}.",
                "We run {crm_tool} as our CRM now.",
            ]
        },
    ),
    fact(
        "tech.identity_provider",
        {
            "*": [
                "We use {idp} for single sign-on.",
                "Everyone logs in through {idp} now.",
                "Our identity provider is {idp}.",
            ]
        },
    ),
    fact(
        "tech.data_warehouse",
        {
            "*": [
                "{dwh} is the only warehouse we run now.",
                "All our reporting data sits in {dwh}.",
                "We finished moving the warehouse to {dwh}.",
            ]
        },
    ),
    fact(
        "tech.cloud_provider",
        {
            "*": [
                "We're hosted on {cloud}.",
                "Everything runs in {cloud} these days.",
                "Our workloads live on {cloud}.",
            ]
        },
    ),
    fact(
        "tech.email_platform",
        {
            "*": [
                "Our marketing email goes out through {email_tool}.",
                "We use {email_tool} for email.",
            ]
        },
    ),
    fact(
        "tech.integration",
        {
            "*": [
                "The tickets sync into {integ} every night.",
                "We connected it to {integ} last month and use that daily.",
                "Orders flow from {integ} into your system.",
            ]
        },
    ),
    # ---- account profile (compliance, residency, industry...)
    fact(
        "profile.industry",
        {
            "*": ["We're {industry}.", "For context, we are {industry}."],
            "wealth": ["I'm {industry}, for what it's worth."],
        },
    ),
    fact("profile.headquarters", {"*": ["Our head office is in {city}.", "We're headquartered in {city}."]}),
    fact(
        "profile.fiscal_year_end",
        {"*": ["Our financial year ends in {fy}.", "Fiscal year closes in {fy} for us."]},
    ),
    fact(
        "profile.employee_count",
        {
            "crm": ["We have {headcount} across the group.", "Headcount is {headcount} now."],
            "support": ["We're {headcount} in total."],
        },
    ),
    fact(
        "profile.data_residency",
        {
            "*": [
                "Our data has to stay in {country}.",
                "Legal requires that customer data is stored in {country} only.",
                "Compliance says nothing can be hosted outside {country}.",
                "We're bound by regulation to keep records inside {country}.",
                "All our data must remain in {country} under our contract with the regulator.",
            ]
        },
    ),
    fact(
        "profile.risk_tolerance",
        {
            "wealth": [
                "I'm a cautious investor, I can't afford to lose much.",
                "I'm comfortable with a fair bit of volatility.",
                "I'd call myself a moderate risk investor.",
                "Big swings make me lose sleep, so keep the risk low.",
            ]
        },
    ),
    fact(
        "profile.investment_horizon",
        {
            "wealth": [
                "I won't touch this money for at least {years} decades.",
                "This is long-term money, I'm investing it for the next twenty years.",
                "We won't need the savings for fifteen years or so.",
            ]
        },
    ),
    fact(
        "profile.retirement_age",
        {
            "wealth": [
                "I plan to retire at 62.",
                "My wife and I want to stop working at 60.",
                "Retirement for me is at 65, that's fixed.",
            ]
        },
    ),
    fact(
        "profile.income_needs",
        {
            "wealth": [
                "We need about $4,000 a month from the portfolio.",
                "I'll need an income of around $50,000 a year once I stop working.",
                "Our monthly income needs are roughly $3,500.",
            ]
        },
    ),
    fact(
        "profile.dependants",
        {
            "wealth": [
                "We have two kids, both under ten.",
                "I support my mother, she lives with us.",
                "Our daughter starts university next autumn.",
            ]
        },
    ),
    # ---- commercial (customer or agent): pending approval
    comm(
        "discount",
        "customer",
        {
            "*": [
                "We'd need {pct} off to renew this year.",
                "Could you do a better price if we sign for {years} years?",
                "If we commit to a longer term, can you knock something off the per-seat price?",
                "We'd sign a longer contract if you can drop the price.",
                "Is there a loyalty discount for customers like us?",
                "We want a {pct} discount on the renewal.",
                "Our procurement team is asking for a price cut in return for a multi-year deal.",
            ]
        },
    ),
    comm(
        "discount",
        "agent",
        {
            "*": [
                "We can offer a {pct} discount on the renewal.",
                "I can give you a service credit for the downtime.",
                "As discussed, we'll take {pct} off the first year.",
            ]
        },
    ),
    comm(
        "pricing",
        "agent",
        {
            "*": [
                "The add-on lists at {money} per user per month.",
                "The fee for that is {money} a year.",
                "Pricing for the premium support tier is {money} a month.",
            ],
            "wealth": ["Our advisory fee would be 0.8% of assets."],
        },
    ),
    comm(
        "pricing",
        "customer",
        {
            "*": [
                "Can you quote us for the analytics add-on?",
                "We were told the fee would be {money}, not more.",
            ]
        },
    ),
    comm(
        "payment_terms",
        "customer",
        {
            "*": [
                "We need net 60 payment terms this time.",
                "Could we pay quarterly instead of upfront?",
                "Our finance team can only do net 45 on invoices.",
            ]
        },
    ),
    comm(
        "sla",
        "customer",
        {
            "crm": [
                "We need a 2-hour response time for sev 1 issues in the contract.",
                "We'd want a 99.95% uptime commitment written in.",
            ],
            "support": ["We need a guaranteed 4-hour response for outages."],
        },
    ),
    comm(
        "renewal_terms",
        "customer",
        {
            "*": [
                "We want a cap on price increases at renewal.",
                "Please take the auto-renewal out of the contract.",
                "We'd like a {pct} cap on next year's increase.",
            ]
        },
    ),
    comm(
        "seat_price",
        "agent",
        {"crm": ["Extra seats would be {money} per seat.", "I can do {money} a seat for the new team."]},
    ),
    # ---- episodes, resolutions, sentiment (customer)
    _lab(
        "customer",
        "episode",
        None,
        "admitted",
        None,
        {
            "*": [
                "{problem} has been failing since {weekday}.",
                "We finished {event} last week and it went smoothly.",
                "I was charged twice for the same month.",
                "{problem} stopped working after the update.",
                "We had {event} done on {weekday}.",
                "My login keeps failing with an error.",
                "{problem} broke again this morning.",
            ]
        },
    ),
    _lab(
        "customer",
        "resolution",
        None,
        "admitted",
        None,
        {
            "*": [
                "That worked, {problem} is back to normal now.",
                "Confirmed, it's fixed and everything syncs again.",
                "Yes, I can log in again now, that sorted it.",
                "It's working fine now after the reset.",
            ]
        },
    ),
    _lab(
        "customer",
        "sentiment",
        None,
        "admitted",
        None,
        {
            "*": [
                "Honestly, {thing} is the best part of the product.",
                "We're a bit frustrated with {thing}.",
                "We might expand to another team next year.",
                "We're thinking about adding {thing} at some point.",
                "I love how simple {thing} is.",
                "{thing} feels clunky to our people.",
                "Maybe we'll look at {thing} after the busy season.",
            ]
        },
    ),
    # ---- agent: commitments and observations
    _lab(
        "agent",
        "commitment",
        None,
        "admitted",
        None,
        {
            "*": [
                "I'll send the summary by {day}.",
                "I'll follow up with {name} on {day}.",
                "Let me chase the engineering team and get back to you by {day}.",
                "I'll book a call with your team for {day}.",
                "We'll have the fix deployed by {day}.",
                "I will confirm the new contact details by {day}.",
            ]
        },
    ),
    _lab(
        "agent",
        "observation",
        None,
        "quarantined",
        "agent_inference",
        {
            "*": [
                "It sounds like the ops team is your strongest champion.",
                "My sense is that budget is the real blocker.",
                "You seem fairly risk-averse.",
                "I suspect the cache is the cause.",
                "It seems like {name} is the real decision maker.",
            ]
        },
    ),
    # ---- not stored
    none(
        "small_talk",
        "customer",
        {
            "*": [
                "The {weather} here has been unreal this week.",
                "Long week, but we got through it.",
                "How was your weekend?",
                "I just got back from {city}.",
                "Sorry, my dog is barking in the background.",
                "We're all looking forward to the holidays.",
                "Traffic was awful this morning.",
                "Ha, that's funny.",
                "My coffee went cold while I was on hold.",
                "Hope you had a good break.",
            ]
        },
    ),
    none(
        "small_talk",
        "agent",
        {
            "*": [
                "How was the trip to {city}?",
                "Hope the week is treating you well.",
                "Great to see you again.",
                "I hear the {weather} has been rough over there.",
            ]
        },
    ),
    none(
        "greeting",
        "customer",
        {"*": ["Hi {first}.", "Hello there.", "Good morning!", "Hey {first}, thanks for picking up."]},
    ),
    none(
        "greeting",
        "agent",
        {
            "*": [
                "Hi {first}, thanks for joining.",
                "Good afternoon, thanks for calling.",
                "Hello {first}, good to talk again.",
            ]
        },
    ),
    none(
        "thanks",
        "customer",
        {
            "*": [
                "Thanks, that's helpful.",
                "Thank you so much.",
                "Cheers, appreciated.",
                "Great, thanks for sorting that.",
            ]
        },
    ),
    none(
        "acknowledgement",
        "customer",
        {"*": ["Okay.", "Sure, sounds good.", "Got it.", "Yes, that's right.", "Fine by me."]},
    ),
    none(
        "venting",
        "customer",
        {
            "*": [
                "I'm having a terrible day.",
                "Nothing is going right this week.",
                "My kid has been sick all week, so I'm exhausted.",
            ]
        },
    ),
    none(
        "customer_question",
        "customer",
        {
            "*": [
                "What does the new plan include?",
                "Can you check that for me?",
                "How long will that take?",
                "Is there a way to export this?",
            ]
        },
    ),
    none(
        "agent_question",
        "agent",
        {
            "*": [
                "Do you prefer email or Slack?",
                "What time suits you best?",
                "Who should I send the invoice to?",
                "Is anything else broken?",
            ]
        },
    ),
    none(
        "pleasantry",
        "agent",
        {
            "*": [
                "Happy to help.",
                "Glad to hear it.",
                "Sorry about the hassle.",
                "Anything else I can do for you today?",
            ]
        },
    ),
    none(
        "one_off_request",
        "customer",
        {
            "*": [
                "Send me the quote when you have it.",
                "Call me back this afternoon.",
                "Can you email me the slides from today?",
            ]
        },
    ),
    none(
        "no_explicit_preference",
        "customer",
        {"*": ["Whatever's easiest for you.", "Either is fine.", "I don't mind, up to you."]},
    ),
    none(
        "uncertain_statement",
        "customer",
        {
            "*": [
                "I think we're on {dwh}, but please double-check.",
                "Not sure who signs off now, maybe {name}?",
            ]
        },
    ),
    none(
        "owned_by_system_of_record",
        "customer",
        {"*": ["We're on {sor_plan}.", "We have {seats} at the moment."]},
        slot=None,
    ),
    none(
        "agent_claim_unverified",
        "agent",
        {
            "*": [
                "I've issued the refund.",
                "I've reset your password.",
                "I've lifted the suspension on the account.",
            ]
        },
    ),
    none("procedural", "agent", {"*": ["Let me check that.", "One moment while I look.", "Bear with me."]}),
]


# ---- more breadth: the phrasings people actually use (added as whole families, not per sentence)
LABELS += [
    pref(
        "contact_channel",
        {
            "*": [
                "Please, no more {other_channel}, written messages suit us much better.",
                "Email me rather than ringing, I am in meetings all day.",
                "Best to message me on {channel}, I never pick up unknown numbers.",
                "Anything about invoices should go to {mailbox}, not to me personally.",
                "Could you copy {mailbox} on billing topics instead of writing to me?",
            ]
        },
    ),
    pref(
        "report_format",
        {
            "*": [
                "Keep the reports to five bullet points, max.",
                "Send me {report} each time, not a link to a dashboard.",
            ]
        },
    ),
    pref(
        "tone",
        {
            "*": [
                "Drop the exclamation marks and just tell us what's broken.",
                "Be blunt with me, I don't need the sugar-coating.",
            ]
        },
    ),
    pref("cadence", {"*": ["Checking in {cadence} is about right for us, more is too much."]}),
    fact(
        "stakeholder.decision_maker",
        {
            "*": [
                "{name}, our {role}, owns the budget for this and will make the call.",
                "New purchases need a sign-off from {name} now that procurement moved under finance.",
                "We changed things so that {name} approves every contract on our side.",
            ]
        },
    ),
    fact(
        "stakeholder.primary_contact",
        {"*": ["{name} is taking over day-to-day contact with you from next month."]},
    ),
    fact(
        "profile.data_residency",
        {
            "*": [
                "Our contracts say the data must be hosted in {country}.",
                "We can't have anything stored outside {country}, it's a compliance rule.",
                "The regulator requires us to keep client records in {country}.",
            ]
        },
    ),
    fact("tech.data_warehouse", {"*": ["We were on Redshift but we finished moving to {dwh} in June."]}),
    fact(
        "tech.integration",
        {"*": ["{integ} is connected to our CRM through a nightly job our contractor built."]},
    ),
    _lab(
        "customer",
        "episode",
        None,
        "admitted",
        None,
        {
            "*": [
                "Redshift was switched off last month.",
                "The holiday campaign went live on the new setup last week.",
                "We completed the merger in {fy}, so the entity name changed.",
                "Our invoices were syncing with the wrong tax codes for two weeks.",
                "{name} approved the rollout budget in yesterday's meeting.",
                "The export has been missing rows since {weekday}.",
                "None of the notifications arrived over the weekend.",
                "The engineer came out on {weekday} and replaced the unit.",
                "We onboarded the {city} office last month.",
            ]
        },
    ),
    _lab(
        "customer",
        "resolution",
        None,
        "admitted",
        None,
        {
            "*": [
                "Corrected it and reprinted, the new document shows the right number.",
                "The re-sync finished and all the skipped records are there now.",
                "Great, the notifications are coming through again.",
                "That did the trick, {problem} works again.",
            ]
        },
    ),
    _lab(
        "customer",
        "sentiment",
        None,
        "admitted",
        None,
        {
            "*": [
                "If the renewal number goes up, I honestly don't know if I can defend it.",
                "We might need another team on the platform next year, nothing decided.",
                "If we ever open a second brand we'd probably want a separate setup for it.",
                "Honestly, the weekly emails are too long and nobody reads them.",
                "The team really likes {thing}, it saves them hours.",
                "We may bring the {city} office on later in the year, but that's not decided.",
                "{thing} has been a bit of a disappointment so far.",
            ]
        },
    ),
    _lab(
        "agent",
        "commitment",
        None,
        "admitted",
        None,
        {
            "*": [
                "I'll brief our account team on {name} today.",
                "I'll copy {name} on the quote when it goes out.",
                "I'll send {name} the setup guide today.",
                "I'll set a reminder so you get an email before it expires.",
                "I'll check with finance and confirm their answer by {day}.",
                "I'll email the renewal paperwork to procurement by {day}.",
                "Got it, I'll update the contact on our side today.",
                "I'm going to raise this with product and come back to you by {day}.",
                "We will send the written incident report by {day}.",
            ]
        },
    ),
    _lab(
        "agent",
        "observation",
        None,
        "quarantined",
        "agent_inference",
        {
            "*": [
                "I have a feeling the renewal is at risk.",
                "It sounds like {name} is the one to convince.",
                "My guess is the team hasn't adopted {thing} yet.",
                "You'd probably be more comfortable with a lower-risk mix.",
            ]
        },
    ),
    none(
        "agent_question",
        "agent",
        {
            "*": [
                "Is the {idp} tenant managed by your team or by corporate IT?",
                "Who should own the technical sign-off on your side?",
                "Is there anything else bothering the team about the product?",
                "Would you also like a weekly call with the team?",
                "When did you first notice the problem?",
                "Can you tell me which browser you're using?",
                "Shall I email it to you?",
                "How many people use {thing} today?",
            ]
        },
    ),
    none(
        "policy_explanation",
        "agent",
        {
            "*": [
                "Discounts can only change through a signed amendment, so nothing changes today.",
                "For security reasons we can't change that over chat.",
                "Refunds usually take five to seven business days to appear.",
                "The standard contract renews every twelve months.",
                "Our SLA covers the production environment only.",
            ]
        },
    ),
    none(
        "agent_restatement",
        "agent",
        {
            "*": [
                "Yes, you're on {sor_plan} with {seats}.",
                "I can see the ticket is still open on our side.",
                "The root cause was a failed certificate rotation on our side.",
                "Thank you for letting us know about the change.",
                "Done, you'll see {name} on the next invoice.",
                "That's a big change for the team.",
            ]
        },
    ),
    none(
        "pleasantry",
        "agent",
        {
            "*": [
                "Congratulations on the launch!",
                "Have a great weekend.",
                "Thanks for your patience with this.",
                "No problem at all.",
            ]
        },
    ),
    none(
        "small_talk",
        "customer",
        {
            "*": [
                "Let's start with the incident in September.",
                "Attached are the usage numbers you asked for.",
                "Early May works.",
                "I'm in the car, so excuse the noise.",
                "We just moved offices and everything is still in boxes.",
                "My manager is on holiday until {weekday}.",
                "It's been a crazy quarter.",
                "I'll have a look and let you know.",
                "Sorry for the slow reply.",
                "Give me a second to find it.",
                "We had our team offsite in {city} last week, it was fun.",
                "The kids are off school this week.",
            ]
        },
    ),
    none(
        "customer_question",
        "customer",
        {
            "*": [
                "Where can I find the invoice history?",
                "Does the new version support {tool}?",
                "Why did the price change on the last bill?",
                "Who do I talk to about the API limits?",
            ]
        },
    ),
    none(
        "context_only",
        "customer",
        {"*": ["What I told you last time is out of date.", "Actually, hold on, let me check that first."]},
    ),
]


# ---- negotiation in everyday words: a commercial request rarely names a percentage
LABELS += [
    comm(
        "discount",
        "customer",
        {
            "*": [
                "Is there any flexibility on the price if we add another team?",
                "We'd commit to {years} years if you can sharpen the rate.",
                "Can you match the quote we got from a competitor?",
                "Throw in a couple of free months and we'll sign.",
                "Could you waive the setup fee for us?",
                "We need the number to come down before procurement will approve it.",
                "What's the best price you can do for a longer contract?",
                "If the cost dropped a little, we would expand to the whole company.",
            ]
        },
    ),
    comm(
        "payment_terms",
        "customer",
        {
            "*": [
                "Could we spread the payments over the year instead of one invoice?",
                "We can't pay upfront, can we pay monthly?",
                "Our policy is to pay invoices sixty days after receipt.",
            ]
        },
    ),
    comm(
        "renewal_terms",
        "customer",
        {
            "*": [
                "We'd like the renewal price locked for {years} years.",
                "Can we get out of the contract early if it doesn't work out?",
            ]
        },
    ),
    comm(
        "pricing",
        "customer",
        {
            "*": [
                "How much would it cost to add the {thing}?",
                "What would the fee be for a second workspace?",
            ]
        },
    ),
    comm(
        "discount",
        "agent",
        {
            "*": [
                "If you sign this quarter I can waive the onboarding fee.",
                "I could do two free months on a {years}-year deal.",
                "We can hold last year's price if you renew before {day}.",
            ]
        },
    ),
    pref(
        "contact_channel",
        {
            "*": [
                "The shared inbox is where {first} wants invoices and reminders from now on.",
                "Written updates work better for me than calls.",
            ]
        },
    ),
    pref("cadence", {"*": ["Every few weeks is plenty, we don't need more contact than that."]}),
    fact(
        "profile.data_residency",
        {
            "*": [
                "Our security team won't let any of it be processed outside {country}.",
                "Because of our certification, the data has to stay in {country}.",
            ]
        },
    ),
    fact(
        "stakeholder.decision_maker",
        {
            "*": [
                "Nothing gets bought here without {name} saying yes.",
                "Approval for new tools sits with {name} now.",
            ]
        },
    ),
    none(
        "small_talk",
        "customer",
        {
            "*": [
                "We're slammed with the year-end close.",
                "The game last night was great.",
                "I've got another meeting at three, so I'll be quick.",
                "It's been raining all week here.",
                "Our office dog had puppies.",
            ]
        },
    ),
]

# --------------------------------------------------------------------------- paraphrase operators

OPENERS = [
    "Also, ",
    "Oh, and ",
    "One more thing: ",
    "By the way, ",
    "Just so you know, ",
    "FYI, ",
    "Quick note: ",
    "Right, so ",
    "Anyway, ",
]
HEDGES_PREF = ["Ideally ", "If possible, ", "Honestly, ", "To be clear, "]
TAILS = [", if that's okay", ", thanks", " if you can", ", that would help a lot"]


def _typo(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    i = rng.randrange(len(words))
    w = words[i]
    if len(w) > 4 and w.isalpha():
        j = rng.randrange(1, len(w) - 2)
        op = rng.choice(("swap", "drop", "double"))
        if op == "swap":
            w = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
        elif op == "drop":
            w = w[:j] + w[j + 1 :]
        else:
            w = w[:j] + w[j] + w[j:]
        words[i] = w
    return " ".join(words)


def _lower_start(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != "I " and not text.startswith("I'") else text


def paraphrase(text: str, label: L, rng: random.Random) -> str:
    """Apply 0-3 operators: an opener, a hedge or a tail, typos, lower case, a missing full stop."""
    if label["type"] is not None and rng.random() < 0.25:
        text = rng.choice(OPENERS) + _lower_start(text)
    if label["type"] == "preference" and rng.random() < 0.2:
        text = rng.choice(HEDGES_PREF) + _lower_start(text)
    if label["type"] in ("preference", "fact") and rng.random() < 0.15 and text.endswith("."):
        text = text[:-1] + rng.choice(TAILS) + "."
    for _ in range(2):
        if rng.random() < 0.15:
            text = _typo(text, rng)
    if rng.random() < 0.1:
        text = text.lower()
    return text


def _fill(template: str, domain: str, rng: random.Random) -> str:
    out = template
    while "{" in out:
        start = out.index("{")
        end = out.index("}", start)
        key = out[start + 1 : end]
        pool = VALUES.get(domain, {}).get(key) or VALUES["*"][key]
        value = rng.choice(pool)
        # the same slot twice in one template takes the same value
        out = out.replace("{" + key + "}", value)
    return out[:1].upper() + out[1:]


def statements(domain: str, rng: random.Random, per_label: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for label in LABELS:
        templates = label["templates"].get("*", []) + label["templates"].get(domain, [])
        if not templates:
            continue
        for _ in range(per_label):
            text = paraphrase(_fill(rng.choice(templates), domain, rng), label, rng)
            out.append({"text": text, "label": label})
    return out


def _label_record(turn: int, quote: str, label: L) -> dict[str, Any]:
    stored = label["decision"] != "not_stored"
    return {
        "turn": turn,
        "quote": quote,
        "outcome": "stored" if stored else "not_stored",
        "type": label["type"],
        "category": label["category"],
        "slot": label["slot"],
        "decision": label["decision"],
        "reason": label["reason"],
        "contains_identifier": False,
    }


def _once_per_session(label: L) -> str | None:
    """A slot is stated once per session (a second statement would supersede the first), and a
    session has one resolution: the key that must not repeat, if any."""
    if label["type"] in ("fact", "preference") and label["decision"] == "admitted":
        return str(label["slot"])
    if label["type"] == "resolution":
        return "resolution"
    return None


def transcripts(domain: str, rng: random.Random, per_label: int, prefix: str) -> list[dict[str, Any]]:
    """Pack the domain's statements into transcripts of 4-10 turns, 1-3 statements a turn."""
    pool = statements(domain, rng, per_label)
    rng.shuffle(pool)
    by_speaker: dict[str, list[dict[str, Any]]] = {"customer": [], "agent": []}
    for s in pool:
        by_speaker[s["label"]["speaker"]].append(s)
    out: list[dict[str, Any]] = []
    n = 0
    channels = ["chat", "email", "phone", "meeting"]
    while by_speaker["customer"] or by_speaker["agent"]:
        n += 1
        turns: list[dict[str, Any]] = []
        labels: list[dict[str, Any]] = []
        speaker = rng.choice(("agent", "customer"))
        used: set[str] = set()
        for _ in range(rng.randint(4, 10)):
            queue = by_speaker[speaker] or by_speaker["agent" if speaker == "customer" else "customer"]
            if not queue:
                break
            take = []
            for _ in range(min(len(queue), rng.choice((1, 1, 2, 3)))):
                item = queue.pop()
                key = _once_per_session(item["label"])
                said = "said:" + " ".join(re.findall(r"\w+", item["text"].casefold()))
                if (key is not None and key in used) or said in used:
                    # Later, in another session: here it would be superseded or a repeat.
                    queue.insert(0, item)
                    continue
                used.add(said)
                if key is not None:
                    used.add(key)
                take.append(item)
            if not take:
                break
            pairs: list[tuple[dict[str, Any], str]] = []
            for item in take:
                t = item["text"].strip()
                if t[-1] not in ".!?":
                    t += "."
                if all(t != seen for _, seen in pairs):  # a quote occurs once in its turn
                    pairs.append((item, t))
            who = take[0]["label"]["speaker"]
            turn_index = len(turns)
            turns.append({"speaker": who, "text": " ".join(t for _, t in pairs)})
            for item, t in pairs:
                labels.append(_label_record(turn_index, t, item["label"]))
            speaker = "agent" if who == "customer" else "customer"
        if turns:
            out.append(
                {
                    "id": f"{prefix}{domain}-{n:04d}",
                    "domain": domain,
                    "channel": rng.choice(channels),
                    "turns": turns,
                    "labels": labels,
                }
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--per-label", type=int, default=30)
    parser.add_argument("--out", default=str(HERE / "train.jsonl"))
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)  # noqa: S311 - reproducible data, not a secret
    rows = [r for d in DOMAINS for r in transcripts(d, rng, args.per_label, "gen-")]
    with open(args.out, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    n = sum(len(r["labels"]) for r in rows)
    print(json.dumps({"transcripts": len(rows), "statements": n, "out": args.out}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
