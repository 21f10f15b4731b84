"""The fact slots the rules recognise: stakeholders with their role, technical environment and
account profile (with data residency and compliance constraints), each a pattern per slot."""

from __future__ import annotations

import re

from agent_memory.adapters.extractors.lexicons import (
    _rx,
)

_STAKEHOLDER_SLOTS: list[tuple[str, re.Pattern[str]]] = [
    ("stakeholder.executive_sponsor", _rx(r"\b(executive sponsor|exec sponsor|sponsor for)\b")),
    (
        "stakeholder.decision_maker",
        _rx(
            r"\b(signs? off (on )?(all|any|the)|will sign off|final (purchasing |buying )?(decisions?|say)"
            r"|budget holder|owns? the budget|holds? the budget|makes? the (final )?(call|decision)"
            r"|decision[- ]maker"
            r"|approves? (all|any) (purchases|contracts|spend)|(handles?|makes?"
            r"|takes?) (all )?(the )?(\w+ )?decisions)\b"
        ),
    ),
    (
        "stakeholder.billing_contact",
        _rx(
            r"\b(billing contact|invoices? (should |must |can )?(go|goes|be sent) to|send (the "
            r"|all )?invoices? to"
            r"|handles? (all )?(of )?(our )?(the )?invoic\w+|accounts payable|ap team)\b"
        ),
    ),
    (
        "stakeholder.technical_contact",
        _rx(
            r"\b(technical contact|person to talk to|go-to person|point person|anything technical"
            r"|(systems?|solutions?|cloud|data|platform|security) (architect|engineer|lead)|it (lead|manager"
            r"|director)"
            r"|\bcto\b)"
        ),
    ),
    (
        "stakeholder.primary_contact",
        _rx(
            r"\b(primary contact|main (point of )?contact|day-to-day (contact|questions)|point of contact"
            r"|main contact|first point of contact)\b"
        ),
    ),
]
_TECH_SLOTS: list[tuple[str, re.Pattern[str]]] = [
    (
        "tech.integration",
        _rx(
            r"\b((slack|teams) (for )?alerts|alerts (to|in|on) (slack|teams)|syncs? (to|with|into)"
            r"|loads? (it )?into"
            r"|connected (to|through)|integration with|\w+ flow)\b"
        ),
    ),
    (
        "tech.identity_provider",
        _rx(
            r"\b(okta|azure ad|entra( id)?|ping identity|onelogin|auth0|jumpcloud|adfs|idp|identity provider"
            r"|sso)\b"
        ),
    ),
    (
        "tech.data_warehouse",
        _rx(
            r"\b(snowflake|redshift|bigquery|databricks|synapse|teradata|data warehouse|the warehouse"
            r"|our warehouse"
            r"|only warehouse)\b"
        ),
    ),
    ("tech.crm_platform", _rx(r"\b(salesforce|hubspot|dynamics 365|pipedrive|zoho crm|sugarcrm|our crm)\b")),
    (
        "tech.email_platform",
        _rx(
            r"\b(marketo|mailchimp|sendgrid|braze|klaviyo|postlane|email tool|email platform|marketing email"
            r"|outlook|gmail|exchange online)\b"
        ),
    ),
    (
        "tech.integration",
        _rx(
            r"\b(jira|xero|quickbooks|netsuite|celigo|zapier|servicenow|zendesk|workday|sap|shopify|stripe)\b"
        ),
    ),
    (
        "tech.cloud_provider",
        _rx(
            r"\b(aws|amazon web services|azure|google cloud|gcp|oracle cloud|ibm cloud|data cent(re|er)"
            r"|on-prem\w*"
            r"|eu-(west|central|north)-\d|us-(east|west)-\d)\b"
        ),
    ),
]
_TECH_STATE = _rx(
    r"\b(use|uses|using|utilisons|utilizamos|nutzen|run|runs|running|on|is|are|moved|switched|migrated|moving"
    r"|syncs?|loads?|connected|goes out|host|hosted|live on)\b"
)
_TECH_PAST_ONLY = _rx(r"\b(was|were|used to|previously|formerly|back then)\b")
_TECH_PRESENT = _rx(r"\b(now|moved|switched|migrated|moving|is|are|use|uses|using|run|runs|still)\b")
_MIGRATION = _rx(r"\b(moved|moving|migrated|migrating|switched|switching|finished moving)\b.*\bto\b")
_REMOVAL = _rx(r"\b(switched off|turned off|decommissioned|shut down|retired)\b")
_CURRENT_STATE = _rx(
    r"\b(is|are) (now )?(our|the) (only|main|new)\b|\bis now\b|\bonly \w+( \w+)? we\b|\bwe (now )?use\b"
)
_PROFILE_SLOTS: list[tuple[str, re.Pattern[str]]] = [
    ("profile.fiscal_year_end", _rx(r"\b(fiscal|financial) year\b")),
    ("profile.headquarters", _rx(r"\b(headquarters|hq|head office|headquartered)\b")),
    (
        "profile.employee_count",
        _rx(r"\b(headcount is|\d[\d,]* (staff|employees|people|ftes?|workers|team members)|employ \d)"),
    ),
    ("profile.retirement_age", _rx(r"\bretir(e|ing|ement)\b.*\b(at|by|age)\s*\d{2}\b|\b\d{2}\b.*\bretire")),
    (
        "profile.risk_tolerance",
        _rx(
            r"\b(risk (tolerance|appetite|profile)|(cautious|conservative|moderate|balanced|aggressive"
            r"|adventurous)"
            r" (investor|approach|risk|portfolio|profile)|comfortable with (some |a lot of |little )?risk"
            r"|can'?t afford to lose|(don'?t|do not) want to lose|high[- ]risk|low[- ]risk"
            r"|i'?d (call|put|describe|consider) myself (at |as )?(an? )?(\w+ )?(cautious|conservative"
            r"|moderate|balanced"
            r"|aggressive|adventurous|risk-averse)|(fine|comfortable|ok|okay|happy) with (some "
            r"|a (fair )?bit of |more "
            r"|a lot of |little )?(risk|volatility|swings|ups and downs))\b"
        ),
    ),
    (
        "profile.dependants",
        _rx(
            r"\b(dependants?|dependents?|was born|were born|(we|i) have (an? |one |two |three |four |\d )"
            r"(kids?|children|child|sons?|daughters?|grandchildren)|(our|my) (\w+ )?(kids|children|sons?"
            r"|daughters?)"
            r" (is|are) \d|(two|three|four|\d) (kids|children) (are|aged)|support (my|our) (mother|father"
            r"|parents)"
            r"|(new|a) baby|twins|(our|my) (son|daughter|kids?|children|child)( \w+)? (starts?|is starting"
            r"|turns?"
            r"|will turn|goes to|is going to) (college|school|university|kindergarten|\d+))\b"
        ),
    ),
    (
        "profile.investment_horizon",
        _rx(
            r"\b(investment horizon|time horizon|won'?t (need|touch|use) (it|the money|this money|that money)"
            r"|(invest\w*|leave it|keep it|hold it|tie it up) for (at least )?(the next )?(\d+|five|ten"
            r"|fifteen|twenty"
            r"|thirty) years|over the next \d+ years|long[- ]term (investor|money|pot|savings))\b"
        ),
    ),
    (
        "profile.income_needs",
        _rx(
            r"\b(income of|need (about |around )?[$€£]?\d[\d,]* (a|per) (month|year)|(monthly|annual) income"
            r"|draw (down )?[$€£]?\d|live on [$€£]?\d|income needs?"
            r"|[$€£]\s?\d[\d,]*k? (a|per) (month|year)\b.*\b(from|out of) (my|our|the) (portfolio|savings"
            r"|investments"
            r"|pension|account))\b"
        ),
    ),
    (
        "profile.industry",
        _rx(
            r"\b(we'?re|we are|i'?m|i am) (an?|the) ([\w-]+ ){0,4}(hospital|clinic|health\w*|university"
            r"|college|school"
            r"|bank|insurer|insurance carrier|carrier|manufacturer|retailer|pharmacy|logistics|law firm"
            r"|agency|non-?profit"
            r"|charity|fintech|utility|airline|hotel|restaurant|distributor|wholesaler|consultancy|publisher"
            r"|broadcaster|telecom|network|chain|practice|firm|brewery|winery|farm|studio|startup)\b"
        ),
    ),
]
_PERSON = re.compile(r"\b([A-Z][a-zà-ÿ'\u2019-]+(?: [A-Z][a-zà-ÿ'\u2019-]+)+)\b")
