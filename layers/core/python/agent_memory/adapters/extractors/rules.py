"""The offline default extractor: deterministic rules over sentences, no network.

Session-close extraction (POLICY.md, "Types" and "Not stored") done with
patterns and small lexicons. It proposes; the write gateway decides. The rules
lean towards precision ("wrongly admitted memories are worse than missed
ones"): a statement becomes a candidate only when a specific pattern names
what it is, and everything else is skipped with a reason.

Pipeline per session:

1. Split every turn into sentences (blank-line blocks, then sentence ends),
   keeping the character span of each in its turn.
2. Classify each sentence by speaker, in a fixed order of rules:
   - anyone: instruction-like text -> flagged candidate (never acted on);
   - customer: thanks / venting / refusals -> skipped; plan tier, seats,
     ticket state -> skipped (`owned_by_system_of_record`); commercial terms ->
     CONTRACT_COMMERCIAL fact; standing preferences; hypotheticals and hedged
     plans -> sentiment; confirmed fixes -> resolution; problems and events ->
     episode; stakeholder / technical / profile facts; casual sentiment;
   - agent: questions skipped; commercial terms; own follow-ups -> commitment;
     hedged inferences about the customer -> observation; claims of actions
     taken -> skipped (`agent_claim_unverified`);
   - system: repeated output, lookups of system-of-record state and plain
     tool output skipped; confirmed fixes -> resolution; completed actions ->
     episode.
3. Session pass: within a slot the customer's last statement wins (earlier
   ones are `superseded_in_session`, or an episode when they report a move);
   exact repeats are dropped; one resolution per session.
4. One episode summary per session (at most 600 characters).

Authority (source_kind) of what it proposes:
- explicit customer statements (preferences, non-commercial facts, sentiment,
  episodes the customer reports): `customer_confirmed`;
- commercial mentions, from either side: `customer_claim` (an unverified
  statement about account state; the gateway holds CONTRACT_COMMERCIAL below
  `human_verified` for approval whatever the rank);
- outcomes a system turn carries or the customer confirms (resolutions,
  episodes from system turns): `confirmed_outcome`;
- the agent's own commitments and inferences: `agent_inference` (observations
  are quarantined; commitments are admitted as follow-ups).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agent_memory.domain.enums import Authority, FactCategory, MemoryType
from agent_memory.domain.extraction import (
    EPISODE_SUMMARY_MAX_CHARS,
    CandidateMemory,
    ExtractionResult,
    SkippedStatement,
    Speaker,
    Transcript,
)
from agent_memory.domain.records import SourceSpan
from agent_memory.domain.sanitize import SURROGATE, identifier_kinds, mask_identifiers, mask_value
from agent_memory.domain.screening import screen_for_instructions
from agent_memory.ports.embedder import Embedder

UNTRUSTED_INSTRUCTION = "untrusted_instruction"

# --------------------------------------------------------------------------- sentences

_BLOCK_SEP = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*\s+")
_ROLE_TAG_START = re.compile(r"\s+(?=(?:system|assistant|developer|user)\s*:\s)", re.IGNORECASE)
_ABBREVIATIONS = frozenset(
    {
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "st",
        "jr",
        "sr",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "approx",
        "no",
        "inc",
        "ltd",
        "co",
        "corp",
        "dept",
        "est",
        "fig",
        "min",
        "max",
        "p.m",
        "a.m",
    }
)


@dataclass(frozen=True)
class Sentence:
    turn: int
    start: int
    end: int
    text: str
    speaker: Speaker
    last_block: bool  # in the last blank-line block of a multi-block turn (email sign-off)


def split_sentences(turn_index: int, speaker: Speaker, text: str) -> list[Sentence]:
    """Sentences of one turn with their character spans in that turn's text."""
    blocks: list[tuple[int, int]] = []
    pos = 0
    for m in _BLOCK_SEP.finditer(text):
        blocks.append((pos, m.start()))
        pos = m.end()
    blocks.append((pos, len(text)))
    out: list[Sentence] = []
    multi = len([b for b in blocks if text[b[0] : b[1]].strip()]) > 1
    for bi, (b_start, b_end) in enumerate(blocks):
        cuts = [b_start]
        block = text[b_start:b_end]
        for m in _SENTENCE_END.finditer(block):
            word = re.search(r"([\w.]+)[.!?]+[\"'\u201d\u2019)\]]*\s+$", block[: m.end()])
            if word and word.group(1).lower().rstrip(".") in _ABBREVIATIONS and m.group(0).startswith("."):
                continue
            cuts.append(b_start + m.end())
        for m in _ROLE_TAG_START.finditer(block):
            cuts.append(b_start + m.end())
        cuts = [*sorted(set(cuts)), b_end]
        for s, e in itertools.pairwise(cuts):
            seg = text[s:e]
            lead = len(seg) - len(seg.lstrip())
            trail = len(seg) - len(seg.rstrip())
            if not seg.strip():
                continue
            s2, e2 = s + lead, e - trail
            out.append(Sentence(turn_index, s2, e2, text[s2:e2], speaker, multi and bi == len(blocks) - 1))
    return out


# --------------------------------------------------------------------------- lexicons

_I = re.IGNORECASE


def _rx(pattern: str, flags: int = _I) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# Instruction-like text beyond what the shared screening catches: markup role tags.
_EXTRA_INJECTION = _rx(
    r"</?\s*(admin|root|sudo|system|developer|assistant|instructions?|override)\s*>"
    r"|\b(you are now|you must now|new instructions?\s*:|disregard (the|your) (policy|rules))\b"
)

_THANKS = _rx(r"\b(thanks?|thank you|cheers|appreciated?|danke|merci|gracias|grazie|obrigad[oa]|ta)\b")
_VENTING = _rx(
    r"\b(terrible|awful|horrible|bad|long|rough|crazy) (day|week|morning|night)\b|\bno sleep\b|\bruined my\b"
    r"|\b(my|the) (kids?|son|daughter|husband|wife|partner)('s| has| is)? (been )?(sick|ill|unwell)\b"
    r"|\bnothing is going right\b|\bso (tired|exhausted|stressed)\b"
)
_DECLINED = _rx(r"\b(rather not (say|share|tell)|prefer not to (say|share)|i'?d prefer not\b|won'?t share)")
_NO_PREFERENCE = _rx(
    r"\b(whatever'?s? (easiest|works|is easiest)|either (is fine|works|way)|doesn'?t matter|don'?t mind"
    r"|up to you|no preference)\b"
)
_UNCERTAIN = _rx(
    r"\b(i think|i believe|i'?m not sure|not sure|double-check|if i remember|i guess|i suppose)\b"
)
_PAST_CONTEXT = _rx(
    r"\b(i|we) (told|said|mentioned)\b.*\b(out of date|wrong|no longer|not right|incorrect)\b"
    r"|\b(out of date|that was wrong|no longer true)\b"
)

# System-of-record territory: plan tier, seat counts, ticket status / priority, balances, lookups.
_SOR_PLAN = _rx(
    r"\b(plan tier|on (the )?[A-Z]?\w+ (plan|tier)\b|(plan|tier|subscription)\s*:|on (business|enterprise"
    r"|premium|"
    r"starter|team|growth|pro|basic|standard|professional|free)\b|account is (premium|enterprise|business|"
    r"gold|platinum|basic|standard|pro))"
)
_SOR_SEATS = _rx(r"\b\d[\d,]*\s+(seats|licen[cs]es)\b|\bseats?\s*:\s*\d")
_SOR_TICKET = _rx(
    r"\bticket\b.*\b(status|still|open|closed|pending|priority|worked on)\b|\bpriority\b"
    r"|\b(escalate|bump|raise)\b.*\b(P[0-4]|urgent|priority|high)\b|\bstatus\s*:"
)
_SOR_LOOKUP = _rx(r"\b(renewal date|balance|lookup)\s*:|\bcrm lookup\b|\baccount balance\b")
_BILLING_INCIDENT = _rx(
    r"\b((charged|billed|debited) (us |me )?(twice|two times|double|again)|double[- ](charged|billed)"
    r"|overcharged"
    r"|wrongly (charged|billed)|charged .* even though|refund (hasn'?t|has not|never) (arrived|come))\b"
)
_CORRECTION = _rx(r"^\W*(actually|no,|correction|sorry,? i meant|scratch that|on second thought|wait,)")
_HEDGE_MODAL = _rx(r"\b(might|maybe|perhaps|possibly|probably|could)\b|(?-i:\bmay\b)")

# Commercial terms (CONTRACT_COMMERCIAL).
_MONTHS = (
    r"(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sep(t(ember)?)?|oct(ober)?"
    r"|nov(ember)?|dec(ember)?)"
)
_NUM_WORD = r"(one|two|three|four|five|six|eight|ten|twelve|twenty|thirty|forty-eight|twenty-four)"
_TERM_STRONG = _rx(r"\d+(\.\d+)?\s?%|[$€£]\s?\d|\b\d[\d,.]*\s?(usd|eur|gbp|dollars|euros|pounds)\b")
_TERM_ANY = _rx(
    r"\d+(\.\d+)?\s?%|[$€£]\s?\d|\b\d[\d,.]*\s?(usd|eur|gbp|dollars|euros|pounds)\b|\bnet\s?\d+\b"
    rf"|\b(\d+|{_NUM_WORD})[- ]?(minutes?|hours?|business days?)\b"
    rf"|\b\d{{1,2}}(st|nd|rd|th)? {_MONTHS}\b|\b{_MONTHS} \d{{1,2}}\b|\buntil (the )?end of\b"
)
_COMMERCIAL_SLOTS: list[tuple[str, re.Pattern[str]]] = [
    (
        "contract.sla",
        _rx(
            r"\b(sla|uptime|response time|sev ?[1-4]|p[1-4] response|\d+-hour response"
            r"|(hour|minute) response|respond within|resolution time|availability)\b"
        ),
    ),
    (
        "contract.discount",
        _rx(
            r"\b(discount(ed|s)?|\d+\s?% off|off the (list|per-seat|seat)|service credit"
            r"|credit|rebate|loyalty)\b|%\s?off\b"
        ),
    ),
    ("contract.seat_price", _rx(r"\b(per seat|per-seat|/seat|seat price|a seat)\b")),
    (
        "contract.payment_terms",
        _rx(
            r"\b(net\s?\d+|payment terms|pay within|invoice terms|payment schedule"
            r"|paid (quarterly|annually|monthly) in advance)\b"
        ),
    ),
    (
        "contract.renewal_terms",
        _rx(
            r"\b(renew(al|als|s|ed|ing)?|auto-renew\w*|price increases?|cap on price"
            r"|\d+\s?% cap|contract term|notice period)\b"
        ),
    ),
    (
        "contract.pricing",
        _rx(
            r"\b(price[ds]?|pricing|lists? at|list price|per (user|month|year|licen[cs]e)"
            r"|fees?|quote[ds]?|costs? \$|priced|(on|of) assets|aum|basis points|bps|flat [$€£]?\d"
            r"|fee schedule|pay a flat)\b"
        ),
    ),
]

# Preferences (customer only, explicit, standing).
_PREF_MARKER = _rx(
    r"\b(prefer|preferably|rather than|instead of|i'?d rather|would rather|works? (much )?better"
    r"|(much )?easier"
    r" for (me|us)|better for (me|us)|please|pls|plz|from now on|going forward|in (the )?future|next time"
    r"|in general|always|never|no more|don'?t (phone|call|email|e-mail|text|message|ring)|keep (it|them|this"
    r"|the)"
    r"|let'?s keep|make it|(is|are) (right|good|plenty|best|ideal|enough)|(has|have|'s|'ve) asked for|wants"
    r"|likes"
    r"|i'?d like|we'?d like|not (my|to me|by)|künftig|bitte|à l'avenir|s'il vous plaît|por favor|en adelante"
    r"|de ahora en adelante|try (him|her|them|me))\b"
)
_ONE_OFF = _rx(
    r"\b(this (afternoon|morning|evening|time|once|week)|today|tonight|right now|for that|as well as me"
    r"|just this|for now)\b"
)
# A request to send one specific thing ("email me the quote") is a one-off, not a standing preference.
_ARTIFACT_REQUEST = _rx(
    r"\b(send|email|e-mail|forward|text|mail|post) (me |us |over )?(it|this|that|the (quote|invoice"
    r"|order form"
    r"|slides?|deck|file|link|form|document|contract|agenda|minutes|recording))\b"
    r"|\b(call|ring|phone|email|e-mail|text|message) (me|us) (back|when|once|if|as soon as|after)\b"
)
_STANDING = _rx(
    r"\b(going forward|from now on|in (the )?future|for future|always|never|rather than|instead of|prefer"
    r"|in general|for anything|künftig|à l'avenir)\b"
)
_PREF_SLOTS: list[tuple[str, re.Pattern[str]]] = [
    (
        "preference.language",
        _rx(
            r"\b(in|auf|en|em) (english|spanish|german|french|portuguese|italian|dutch|japanese|mandarin"
            r"|chinese"
            r"|arabic|polish|swedish|deutsch|englisch|français|francais|español|espanol|inglés|português)\b"
            r"|\bin (my|our) (native )?language\b"
        ),
    ),
    (
        "preference.report_format",
        _rx(
            r"\b(pdf|slides?|slide decks?|decks?|one-page|one page|bullet points?|bullets|written summary"
            r"|summaries"
            r"|summary|spreadsheet|excel|csv|dashboard link|executive summary|report format|charts?|reports"
            r"|statements"
            r"|printed (pack|copy|copies))\b"
        ),
    ),
    (
        "preference.meeting_format",
        _rx(
            r"\b(video calls?|video|in-person|in person|on-site|onsite|face[- ]to[- ]face|zoom|teams"
            r"|google meet"
            r"|webex|\d+ minutes|half an hour|\d+-minute)\b"
        ),
    ),
    (
        "preference.cadence",
        _rx(
            r"\b(weekly|monthly|fortnightly|biweekly|bi-weekly|quarterly|daily|every (two|three|four|\d+"
            r"|other)"
            r" (weeks?|months?|days?)|once a (week|month|quarter)|twice a (week|month))\b"
        ),
    ),
    (
        "preference.contact_time",
        _rx(
            r"\b(mornings?|afternoons?|evenings?|after \d{1,2}\s?(am|pm)?|before \d{1,2}\s?(am|pm)?"
            r"|\d{1,2}\s?(am|pm)"
            r"|(central|eastern|pacific|mountain|uk|cet|gmt|utc|local) time|time ?zone|weekdays?|lunchtime)\b"
        ),
    ),
    (
        "preference.contact_channel",
        _rx(
            r"\b(e-?mails?|emailing|slack|phone|phoned|calls?|calling|call me|text(s| messages?)?|texting|sms"
            r"|whatsapp|in-app|in app|post|paper (bills?|statements?|letters?)|letters?|mailbox|landline"
            r"|mobile"
            r"|voicemail|portal messages?|in writing)\b"
        ),
    ),
    (
        "preference.tone",
        _rx(
            r"\b(tone|formal|informal|exclamation( marks?)?|cheerleading|jargon|plain (english|language)"
            r"|to the point|straightforward|blunt|emojis?|sugar-?coat\w*|chatty|waffle)\b"
        ),
    ),
]

# Hypotheticals and hedged plans (customer sentiment, never a fact).
_HYPOTHETICAL = _rx(
    r"\b(might|maybe|perhaps|thinking (about|of)|considering|hoping to|if we ever|if budget allows"
    r"|probably|not decided|nothing is budgeted|depends on|we'?d like to|one day|at some point"
    r"|if (things|it|that|the \w+) (goes?|works?) |i'?ll (think about|consider)|we'?ll (think about|consider)"
    r"|whether it'?s worth|in (talks|discussions) with|or so\b"
    r"|(i|we)'?d like to \w+ .*\b(within|in|by|over) (the next )?(\w+ )?(years?|months?|quarters?))\b"
    r"|(?-i:\bmay\b)|^if\b"
)
# Casual sentiment about the vendor, the product or the relationship.
_SENTIMENT = _rx(
    r"\b(love|loves|loving|loved|hate|hates|fed up|frustrat\w+|disappoint\w+|annoy\w+|unhappy|happy with"
    r"|impressed"
    r"|thrilled|delighted|too (long|slow|expensive|complicated|many)|nobody reads|grumble|complain\w*"
    r"|keeps? asking|defend it|game[- ]changer|first (report|thing) .* open|honestly|to be honest"
    r"|struggl\w+|painful|clunky|confusing|slow|more than (i|we) pay|pricey|steep|expensive"
    r"|(is|are|has been|have been) (really |so |just )?(great|brilliant|amazing|fantastic|excellent|terrible"
    r"|awful"
    r"|useless))\b"
)

# Problems and events (episodes), confirmed fixes (resolutions).
_PROBLEM = _rx(
    r"\b(errors?|fail(s|ed|ing|ure)?|bounced|broken|stopped|not (arriving|working|syncing|loading|printing)"
    r"|can'?t (log|access|sync|print|connect)|cannot|unable|lost access|wrong|charged|double[- ]charged"
    r"|banned"
    r"|suspended|outage|down for|cracked|damaged|skipping|haven'?t (received|heard)|still haven'?t"
    r"|returning \d+"
    r"|\d{3} errors?|crash(ed|es|ing)?|bug|glitch|invalid|expired|n'arrive|ne fonctionne|marche pas"
    r"|funktioniert nicht|no funciona|escalation)\b"
)
_EVENT = _rx(
    r"\b(completed|finished|launched|went live|went (well|fine|smoothly)|rolled out|approved|rotated|migrated"
    r"|merged|acquired|signed|submitted|returned|bounced|switched off|turned off|decommissioned|shut down"
    r"|upgraded|downgraded|cancell?ed|went through|was (switched|moved|replaced)|closed|opened|hired|retired"
    r"|sold|bought|inherited|got married|divorced|relocated|was promoted|passed away)\b"
)
_RESOLVED_CUSTOMER = _rx(
    r"\b((it|that|everything|all) works|works (now|again|fine|for (me|us|them))|working (again|now|fine)"
    r"|fixed|resolved|stable|back to (normal|baseline|\d+)|all good|came through clean"
    r"|shows? (it as )?settled"
    r"|settled|shows the right|i can see the|logged (back )?in|(is|are) now in|all my \w+ (is|are) there"
    r"|arrived in|synced (fine|successfully)|went through fine|i'?m (back )?in now|(can|could) (log"
    r"|sign) in (now|again)"
    r"|i can see the)\b"
)
_RESOLVED_SYSTEM = _rx(
    r"\b(resolved|back to (normal|baseline)|synced successfully|restored|fixed|operational again|recovered"
    r"|cleared|reversed)\b"
)
_SYSTEM_ACTION = _rx(
    r"\b(approved|issued|created|updated|enabled|disabled|dispatched|authori[sz]ed|paid|returned|refunded"
    r"|cancell?ed|suspension|suspended|verified|scheduled|received|completed|activated|processed|reinstated"
    r"|replaced|credited|submitted|accepted|released|confirmed|executed|settled)\b"
)

# Facts (customer only).
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

# Agent statements.
_COMMITMENT = _rx(
    r"\b(i'?ll|i will|i'?m going to|i am going to|we'?ll|we will|let me (chase|follow up|get back|send"
    r"|find out"
    r"|set up|book|arrange)|i'?ll make sure|ich schicke|ich sende|ich werde|je vous (envoie|enverrai)"
    r"|je vais|je vous (appelle|rappelle|écris|envoie)|ich rufe sie|le (envío|enviaré|llamo)|te envío|voy a"
    r"|vou (enviar|mandar))\b|(,|\band)\s+will\s+\w+"
)
_NOT_COMMITMENT = _rx(
    r"\b(transfer(ring)? you|put you on hold|one moment|i'?ll be (honest|right back|quick)"
    r"|(we|i)'?ll (record|note|mark|put (you|that) down as) (\w+)$|we'?ll see|(i|we)'?ll (need|have to ask"
    r"|want)"
    r"|i will need)\b|^\W*\w+, (we|i)'?ll (record|note) \w+\W*$"
)
_OBSERVATION = _rx(
    r"\b(it sounds like|sounds like|my sense is|i get the (feeling|sense|impression)|i sense|my guess is"
    r"|i suspect"
    r"|most likely|(is|are) likely|probably|it seems|seems (like|to be)|i'?d guess|my read is|my hunch"
    r"|may be the right|appears to be|could be the cause|i'?d (say|put) (you|your|they|she|he)"
    r"|you (seem|sound|appear)|(she|he|they) (seems?|sounds?|appears?)|i have a feeling|i'?d bet"
    r"|i think you|you might be|make[s]? me think|feels like you|i'?d guess|i guess (you|your|they|she|he)"
    r"|you'?re (probably |fairly |quite |pretty |very |a bit |rather )?(conservative|cautious|aggressive"
    r"|risk-averse|nervous|relaxed|anxious|price-sensitive))\b"
)
_AGENT_CLAIM = _rx(
    r"\b(i'?ve|i have|we'?ve|we have) (just )?(issued|requested|sent|lifted|switched|updated|released"
    r"|identified"
    r"|raised|asked|added|applied|processed|refunded|reset|fixed|changed|cancelled|enabled|removed"
    r"|restored)\b"
    r"|^done\b"
)
_POLICY_EXPLANATION = _rx(
    r"\b(can only|can'?t|cannot|not able to|unable to|please don'?t|please avoid|have to be|must be"
    r"|for (your )?"
    r"security|always go back|only change)\b"
)

# Fallback skip reasons.
_GREETING = _rx(
    r"^(hi|hello|hey|hiya|dear|good (morning|afternoon|evening)|welcome|guten tag|bonjour|hola|buenos días"
    r"|thanks? (you )?for (calling|joining|having|reaching|walking)|thank you for calling)\b"
)
_SIGN_OFF = _rx(
    r"^(best|regards|kind regards|best regards|warm regards|cheers|thanks|many thanks|sincerely|yours"
    r"|mit freundlichen|cordialement|saludos|atentamente)\b"
)
_ACK = _rx(
    r"^(ok(ay)?|sure|yes|yeah|yep|no problem|got it|understood|noted|great|perfect|brilliant|lovely|fine"
    r"|sounds good|will do|of course|right|fair|helpful|good to know|done|uploaded|fantastic|probably|maybe"
    r"|possibly|we'?ll see|yay|absolutely|entendido|claro|d'accord|c'est fait|alles klar)\b"
)
_PLEASANTRY = _rx(
    r"\b(sorry|apologi[sz]e|apologies|glad|great to hear|love to hear|congratulations|have a (great|good"
    r"|nice)"
    r"|anything else|happy to help|no problem at all|totally fine|that'?s a big change|fantastic news)\b"
)
_REQUEST = _rx(r"\b(can you|could you|would you|please|i need|we need|i'?d like|we'?d like|i want|we want)\b")
_LEADING_SALUTATION = _rx(r"^(hi|hello|hey|dear)( [A-Z][\w'-]*)?,\s+(?=\S)")
_DUE = _rx(
    r"\b(by (the end of )?(next |this )?(\w+day|week|month|tomorrow|tonight|noon|\d{1,2}(st|nd|rd|th)? \w+"
    r"|\w+ \d{1,2})|within (the hour|an hour|\d+ (hours?|days?|weeks?)|two weeks|a week)|today|tomorrow"
    rf"|tonight|next (week|month|\w+day)|this (week|\w+day)|on the \d+(st|nd|rd|th)|\d{{1,2}} {_MONTHS})\b"
)


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def _first_slot(patterns: list[tuple[str, re.Pattern[str]]], text: str) -> tuple[str, str] | None:
    for slot, pattern in patterns:
        m = pattern.search(text)
        if m:
            return slot, m.group(0)
    return None


def _is_question(text: str) -> bool:
    return text.rstrip().endswith("?")


# --------------------------------------------------------------------------- proposals


@dataclass
class _Proposal:
    sentence: Sentence
    type: MemoryType
    source_kind: Authority
    confidence: float
    basis: str
    category: str | None = None
    slot: str | None = None
    value: dict[str, Any] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    migration: bool = False


@dataclass
class _Skip:
    sentence: Sentence
    reason: str


@dataclass
class _Session:
    problem_seen: bool = False
    resolution_seen: bool = False
    system_texts: set[str] = field(default_factory=set)
    last_commercial: tuple[int, str] | None = None  # (turn, slot) of the latest commercial mention
    last_fact: tuple[int, str, str] | None = None  # (turn, slot, category) of the customer's latest fact


def _is_instruction(item: _Proposal | _Skip) -> bool:
    return isinstance(item, _Proposal) and UNTRUSTED_INSTRUCTION in item.flags


def _merge_adjacent_instructions(items: list[_Proposal | _Skip], turn_text: str) -> list[_Proposal | _Skip]:
    """Consecutive instruction-like sentences of one turn are one injected block, kept as one item."""
    out: list[_Proposal | _Skip] = []
    for item in items:
        prev = out[-1] if out else None
        if prev is not None and _is_instruction(prev) and _is_instruction(item):
            assert isinstance(prev, _Proposal)
            first = prev.sentence
            end = item.sentence.end
            merged = Sentence(
                first.turn, first.start, end, turn_text[first.start : end], first.speaker, first.last_block
            )
            out[-1] = _Proposal(
                merged,
                prev.type,
                prev.source_kind,
                prev.confidence,
                prev.basis,
                value=dict(prev.value),
                flags=list(prev.flags),
            )
            continue
        out.append(item)
    return out


class RulesExtractor:
    """Deterministic, offline session-close extractor (patterns and lexicons, no network).

    `embedder` is optional: when given, candidates of the same type and slot
    whose contents are near-identical (cosine >= `duplicate_similarity`) are
    proposed once. Without it, only exact repeats (after normalising case and
    spacing) are dropped.
    """

    name = "rules"
    version = "1.0.0"

    def __init__(self, embedder: Embedder | None = None, *, duplicate_similarity: float = 0.95) -> None:
        self.embedder = embedder
        self.duplicate_similarity = duplicate_similarity

    # ------------------------------------------------------------------ public

    def extract(self, transcript: Transcript) -> ExtractionResult:
        session = _Session()
        decided: list[_Proposal | _Skip] = []
        for index, turn in enumerate(transcript.turns):
            in_turn: list[_Proposal | _Skip] = []
            for sentence in split_sentences(index, turn.speaker, turn.text):
                in_turn.extend(self._classify(sentence, session))
            decided.extend(_merge_adjacent_instructions(in_turn, turn.text))
        return self._result(transcript, decided)

    def _result(self, transcript: Transcript, decided: list[_Proposal | _Skip]) -> ExtractionResult:
        """The session pass, candidates and skips with their spans, de-duplication and the summary:
        the same for every extractor built on these rules, whatever decided each statement."""
        decided = self._session_pass(decided)
        candidates: list[CandidateMemory] = []
        skipped: list[SkippedStatement] = []
        for item in decided:
            span = SourceSpan(turn=item.sentence.turn, start=item.sentence.start, end=item.sentence.end)
            if isinstance(item, _Skip):
                skipped.append(SkippedStatement(span=span, reason=item.reason))
            else:
                candidates.append(self._candidate(item, span))
        candidates, dupes = self._dedupe(candidates)
        skipped.extend(dupes)
        skipped.sort(key=lambda s: (s.span.turn, s.span.start))
        summary = self._summary(transcript, candidates, decided)
        flags = sorted({f for c in candidates for f in c.flags})
        return ExtractionResult(candidates=candidates, skipped=skipped, summary=summary, flags=flags)

    # ------------------------------------------------------------------ classification

    def _classify(self, s: Sentence, session: _Session) -> list[_Proposal | _Skip]:
        text = s.text
        if screen_for_instructions(text).flagged or _EXTRA_INJECTION.search(text):
            signals = list(screen_for_instructions(text).signals) or ["markup_or_role_override"]
            return [
                _Proposal(
                    s,
                    MemoryType.EPISODE,
                    Authority.CUSTOMER_CLAIM if s.speaker is Speaker.CUSTOMER else Authority.AGENT_INFERENCE,
                    0.9,
                    "instruction-like text kept as inert data: " + ",".join(signals),
                    flags=[UNTRUSTED_INSTRUCTION],
                    value={"untrusted_instruction": True},
                )
            ]
        if s.speaker is Speaker.SYSTEM:
            return [self._system(s, session)]
        if s.speaker is Speaker.AGENT:
            return [self._agent(s, session)]
        result = self._customer(s, session)
        if (
            isinstance(result, _Proposal)
            and result.type is MemoryType.FACT
            and result.slot
            and result.category != FactCategory.CONTRACT_COMMERCIAL.value
        ):
            session.last_fact = (s.turn, result.slot, result.category or "")
        return [result]

    def _customer(self, s: Sentence, session: _Session) -> _Proposal | _Skip:
        text = s.text
        words = _words(text)
        question = _is_question(text)
        if s.last_block and ("\n" in text or (words <= 6 and not re.search(r"[.!?]$", text))):
            return _Skip(s, "sign_off")
        if _THANKS.search(text) and words <= 6:
            return _Skip(s, "thanks")
        if _VENTING.search(text):
            return _Skip(s, "venting")
        if _DECLINED.search(text):
            return _Skip(s, "declined_to_state")
        if _NO_PREFERENCE.search(text):
            return _Skip(s, "no_explicit_preference")
        has_identifier = bool(identifier_kinds(text))
        if _PROBLEM.search(text):
            session.problem_seen = True

        if not _HEDGE_MODAL.search(text) and (
            _SOR_PLAN.search(text)
            or _SOR_SEATS.search(text)
            or _SOR_TICKET.search(text)
            or _SOR_LOOKUP.search(text)
        ):
            return _Skip(s, "owned_by_system_of_record")

        if _BILLING_INCIDENT.search(text) and not question:
            return _Proposal(
                s,
                MemoryType.EPISODE,
                Authority.CUSTOMER_CONFIRMED,
                0.7,
                "customer reported a billing incident",
            )

        commercial = self._commercial(s, session, customer=True)
        if commercial is not None:
            return commercial

        if has_identifier:
            if _PROBLEM.search(text) and not question:
                return _Proposal(
                    s,
                    MemoryType.EPISODE,
                    Authority.CUSTOMER_CONFIRMED,
                    0.6,
                    "customer reported a problem (identifier masked)",
                )
            return _Skip(s, "sensitive_identifier_only")

        pref = self._preference(s)
        if pref is not None:
            return pref

        if words >= 4 and _HYPOTHETICAL.search(text) and not question:
            return _Proposal(
                s,
                MemoryType.SENTIMENT,
                Authority.CUSTOMER_CONFIRMED,
                0.6,
                "customer stated a hedged plan or hypothetical",
            )

        if (
            session.problem_seen
            and not session.resolution_seen
            and not question
            and not _PROBLEM.search(text)
            and _RESOLVED_CUSTOMER.search(text)
        ):
            session.resolution_seen = True
            return _Proposal(
                s,
                MemoryType.RESOLUTION,
                Authority.CONFIRMED_OUTCOME,
                0.8,
                "customer confirmed the fix works",
                value={"outcome_confirmed": True},
            )

        if not question and _PAST_CONTEXT.search(text):
            return _Skip(s, "context_only")

        if _PROBLEM.search(text) and not re.match(
            r"(?i)(is|are|can|could|does|do|did|will|would|what|why|how)\b", text
        ):
            return _Proposal(
                s, MemoryType.EPISODE, Authority.CUSTOMER_CONFIRMED, 0.7, "customer reported a problem"
            )
        if not question and _UNCERTAIN.search(text):
            return _Skip(s, "uncertain_statement")

        if not question:
            fact = self._fact(s)
            if fact is not None:
                return fact

        if (
            not question
            and session.last_fact is not None
            and s.turn - session.last_fact[0] <= 2
            and _CORRECTION.search(text)
            and re.search(r"\d", text)
        ):
            # "Actually, no, ... 67 is more realistic": a correction of the value just stated.
            _, slot, category = session.last_fact
            return _Proposal(
                s,
                MemoryType.FACT,
                Authority.CUSTOMER_CONFIRMED,
                0.7,
                "customer corrected the value they had just stated",
                category=category,
                slot=slot,
            )

        if not question and _EVENT.search(text) and words >= 4:
            return _Proposal(
                s,
                MemoryType.EPISODE,
                Authority.CUSTOMER_CONFIRMED,
                0.65,
                "customer reported an event of the account",
            )

        if not question and words >= 5 and _SENTIMENT.search(text):
            return _Proposal(
                s,
                MemoryType.SENTIMENT,
                Authority.CUSTOMER_CONFIRMED,
                0.55,
                "customer expressed casual sentiment",
            )

        return _Skip(s, self._fallback_reason(s, customer=True))

    def _agent(self, s: Sentence, session: _Session) -> _Proposal | _Skip:
        text = s.text
        words = _words(text)
        if (s.last_block and words <= 6 and not re.search(r"[.!?]$", text)) or (
            "\n" in text and _SIGN_OFF.search(text)
        ):
            return _Skip(s, "sign_off")
        if _PROBLEM.search(text):
            session.problem_seen = True
        if _is_question(text):
            return _Skip(s, "agent_question")
        if _THANKS.search(text) and words <= 5:
            return _Skip(s, "thanks")

        if _SOR_SEATS.search(text) or _SOR_PLAN.search(text):
            return _Skip(s, "owned_by_system_of_record")
        committed = bool(_COMMITMENT.search(text)) and not _NOT_COMMITMENT.search(text)
        if not (committed and not _TERM_STRONG.search(text)):
            commercial = self._commercial(s, session, customer=False)
            if commercial is not None:
                return commercial
        if committed:
            due = _DUE.search(text)
            return _Proposal(
                s,
                MemoryType.COMMITMENT,
                Authority.AGENT_INFERENCE,
                0.85,
                "agent stated commitment",
                value={"owner": "agent", "due": due.group(0) if due else None, "state": "open"},
            )
        if _OBSERVATION.search(text):
            return _Proposal(
                s,
                MemoryType.OBSERVATION,
                Authority.AGENT_INFERENCE,
                0.5,
                "agent inference about the customer (unverified)",
            )
        if _AGENT_CLAIM.search(text):
            return _Skip(s, "agent_claim_unverified")
        return _Skip(s, self._fallback_reason(s, customer=False))

    def _system(self, s: Sentence, session: _Session) -> _Proposal | _Skip:
        text = s.text
        key = re.sub(r"\s+", " ", text.strip().lower())
        if key in session.system_texts:
            return _Skip(s, "duplicate_tool_output")
        session.system_texts.add(key)
        if session.problem_seen and not session.resolution_seen and _RESOLVED_SYSTEM.search(text):
            session.resolution_seen = True
            return _Proposal(
                s,
                MemoryType.RESOLUTION,
                Authority.CONFIRMED_OUTCOME,
                0.9,
                "system turn verified the outcome",
                value={"outcome_confirmed": True},
            )
        if _PROBLEM.search(text) and not _SYSTEM_ACTION.search(text):
            session.problem_seen = True
        if (
            _SOR_PLAN.search(text)
            or _SOR_SEATS.search(text)
            or _SOR_TICKET.search(text)
            or _SOR_LOOKUP.search(text)
        ):
            return _Skip(s, "owned_by_system_of_record")
        if _SYSTEM_ACTION.search(text):
            return _Proposal(
                s,
                MemoryType.EPISODE,
                Authority.CONFIRMED_OUTCOME,
                0.85,
                "system turn recorded a completed action",
            )
        return _Skip(s, "transient_tool_output")

    # ------------------------------------------------------------------ specific rules

    def _commercial(self, s: Sentence, session: _Session, *, customer: bool) -> _Proposal | None:
        text = s.text
        slot_match = _first_slot(_COMMERCIAL_SLOTS, text)
        term = _TERM_ANY.search(text)
        if slot_match is None and term is not None and _TERM_STRONG.search(text) and session.last_commercial:
            # "We'd want 20%." right after a discount offer continues that negotiation.
            last_turn, last_slot = session.last_commercial
            if s.turn - last_turn <= 1 and _words(text) <= 12:
                slot_match = (last_slot, term.group(0))
        if slot_match is None or term is None:
            return None
        slot, cue = slot_match
        session.last_commercial = (s.turn, slot)
        who = "customer" if customer else "agent"
        return _Proposal(
            s,
            MemoryType.FACT,
            Authority.CUSTOMER_CLAIM,
            0.8,
            f"commercial term mentioned by the {who} in conversation; needs human approval",
            category=FactCategory.CONTRACT_COMMERCIAL.value,
            slot=slot,
            value={"terms": [m.group(0) for m in _TERM_ANY.finditer(text)], "cue": cue, "stated_by": who},
        )

    def _preference(self, s: Sentence) -> _Proposal | None:
        text = s.text
        standing = re.search(r"(?i)\b(going forward|from now on|in (the )?future|künftig|à l'avenir)\b", text)
        if _is_question(text) and not standing:
            return None
        if _ONE_OFF.search(text) and not standing:
            return None
        if _ARTIFACT_REQUEST.search(text) and not _STANDING.search(text):
            return None
        slot_match = _first_slot(_PREF_SLOTS, text)
        if slot_match is None:
            return None
        slot, cue = slot_match
        if slot != "preference.tone" and not _PREF_MARKER.search(text):
            return None
        return _Proposal(
            s,
            MemoryType.PREFERENCE,
            Authority.CUSTOMER_CONFIRMED,
            0.85,
            "explicit customer statement of a standing preference",
            category="PREFERENCE",
            slot=slot,
            value={"value": cue},
        )

    def _fact(self, s: Sentence) -> _Proposal | None:
        text = s.text
        stakeholder = _first_slot(_STAKEHOLDER_SLOTS, text)
        if stakeholder is not None:
            slot, cue = stakeholder
            person = _PERSON.search(text)
            if slot == "stakeholder.technical_contact" and not person and "me" not in text.lower().split():
                stakeholder = None
            else:
                return _Proposal(
                    s,
                    MemoryType.FACT,
                    Authority.CUSTOMER_CONFIRMED,
                    0.8,
                    "customer stated a stakeholder role explicitly",
                    category=FactCategory.STAKEHOLDER.value,
                    slot=slot,
                    value={"value": person.group(1) if person else "the speaker", "cue": cue},
                )
        profile = _first_slot(_PROFILE_SLOTS, text)
        if profile is not None:
            slot, cue = profile
            return _Proposal(
                s,
                MemoryType.FACT,
                Authority.CUSTOMER_CONFIRMED,
                0.75,
                "customer stated an account profile fact explicitly",
                category=FactCategory.ACCOUNT_PROFILE.value,
                slot=slot,
                value={"cue": cue},
            )
        tech = _first_slot(_TECH_SLOTS, text)
        if tech is not None and _TECH_PAST_ONLY.search(text) and not _TECH_PRESENT.search(text):
            tech = None
        if tech is not None and _TECH_STATE.search(text):
            slot, cue = tech
            if _REMOVAL.search(text) and not _CURRENT_STATE.search(text):
                return _Proposal(
                    s,
                    MemoryType.EPISODE,
                    Authority.CUSTOMER_CONFIRMED,
                    0.65,
                    "customer reported a change to their environment",
                )
            entity = self._target_entity(text, slot) or cue
            return _Proposal(
                s,
                MemoryType.FACT,
                Authority.CUSTOMER_CONFIRMED,
                0.8,
                "customer stated their technical environment explicitly",
                category=FactCategory.TECHNICAL_ENVIRONMENT.value,
                slot=slot,
                value={"value": entity},
                migration=bool(_MIGRATION.search(text)),
            )
        return None

    @staticmethod
    def _target_entity(text: str, slot: str) -> str | None:
        pattern = dict(_TECH_SLOTS)[slot]
        m = re.search(r"(?i)\bto\b(.*)", text)
        if _MIGRATION.search(text) and m:
            found = pattern.search(m.group(1))
            if found:
                return found.group(0)
        return None

    @staticmethod
    def _fallback_reason(s: Sentence, *, customer: bool) -> str:
        text = s.text
        words = _words(text)
        if _GREETING.search(text) or (words <= 3 and text.rstrip().endswith(",")):
            return "greeting"
        if _SIGN_OFF.search(text) and "\n" in text:
            return "sign_off"
        if _THANKS.search(text):
            return "thanks"
        if _is_question(text):
            return "customer_question" if customer else "agent_question"
        if words <= 4 and _ACK.search(text):
            return "acknowledgement"
        if not customer and _PLEASANTRY.search(text):
            return "pleasantry"
        if not customer and _POLICY_EXPLANATION.search(text):
            return "policy_explanation"
        if not customer:
            return "agent_statement_not_memorable"
        return "small_talk" if words <= 8 else "not_memorable"

    # ------------------------------------------------------------------ session pass

    @staticmethod
    def _session_pass(items: list[_Proposal | _Skip]) -> list[_Proposal | _Skip]:
        """Within a slot the customer's last statement wins; an earlier move becomes an episode."""
        last_index: dict[str, int] = {}
        for i, item in enumerate(items):
            if (
                isinstance(item, _Proposal)
                and item.slot
                and item.type in (MemoryType.FACT, MemoryType.PREFERENCE)
                and item.category != FactCategory.CONTRACT_COMMERCIAL.value
            ):
                last_index[item.slot] = i
        out: list[_Proposal | _Skip] = []
        for i, item in enumerate(items):
            if (
                isinstance(item, _Proposal)
                and item.slot in last_index
                and item.type in (MemoryType.FACT, MemoryType.PREFERENCE)
                and item.category != FactCategory.CONTRACT_COMMERCIAL.value
                and last_index[item.slot] != i
            ):
                if item.migration:
                    out.append(
                        _Proposal(
                            item.sentence,
                            MemoryType.EPISODE,
                            Authority.CUSTOMER_CONFIRMED,
                            0.65,
                            "customer reported a move; the current value is stated separately",
                        )
                    )
                else:
                    out.append(_Skip(item.sentence, "superseded_in_session"))
                continue
            out.append(item)
        return out

    def _dedupe(
        self, candidates: list[CandidateMemory]
    ) -> tuple[list[CandidateMemory], list[SkippedStatement]]:
        kept: list[CandidateMemory] = []
        skipped: list[SkippedStatement] = []
        seen: set[tuple[str, str | None, str]] = set()
        for c in candidates:
            key = (c.type.value, c.slot, re.sub(r"\W+", " ", c.content.casefold()).strip())
            if key in seen:
                skipped.append(SkippedStatement(span=c.span, reason="duplicate_statement"))
                continue
            seen.add(key)
            kept.append(c)
        if self.embedder is None or len(kept) < 2:
            return kept, skipped
        vectors = np.asarray(self.embedder.embed([c.content for c in kept]), dtype=np.float32)
        final: list[CandidateMemory] = []
        final_vectors: list[np.ndarray] = []
        for c, v in zip(kept, vectors, strict=True):
            twin = any(
                f.type == c.type
                and f.slot == c.slot
                and UNTRUSTED_INSTRUCTION not in c.flags
                and float(np.dot(fv, v)) >= self.duplicate_similarity
                for f, fv in zip(final, final_vectors, strict=True)
            )
            if twin:
                skipped.append(SkippedStatement(span=c.span, reason="duplicate_statement"))
                continue
            final.append(c)
            final_vectors.append(v)
        return final, skipped

    # ------------------------------------------------------------------ output

    def _candidate(self, p: _Proposal, span: SourceSpan) -> CandidateMemory:
        text = re.sub(r"\s+", " ", p.sentence.text).strip()
        if UNTRUSTED_INSTRUCTION not in p.flags and _words(text) > 6:
            text = _LEADING_SALUTATION.sub("", text, count=1)
            text = text[:1].upper() + text[1:]
        content = mask_identifiers(text).text
        value, _ = mask_value(p.value)
        return CandidateMemory(
            type=p.type,
            category=p.category or p.type.value.upper(),
            slot=p.slot,
            content=content,
            value={k: v for k, v in value.items() if v is not None},
            span=span,
            speaker=p.sentence.speaker,
            source_kind=p.source_kind,
            confidence=p.confidence,
            confidence_basis=p.basis,
            extractor=self.name,
            extractor_version=self.version,
            flags=list(p.flags),
        )

    @staticmethod
    def _first_request(decided: list[_Proposal | _Skip]) -> Sentence | None:
        """The customer's first request, for a session with no episode: never a commercial term, an
        instruction, a value the system of record owns, an identifier, or a pleasantry."""
        excluded_reasons = {
            "owned_by_system_of_record",
            "sensitive_identifier_only",
            "greeting",
            "thanks",
            "sign_off",
            "venting",
            "acknowledgement",
            "declined_to_state",
        }
        usable: list[Sentence] = []
        for item in decided:
            sentence = item.sentence
            if sentence.speaker is not Speaker.CUSTOMER or _words(sentence.text) < 4:
                continue
            if isinstance(item, _Skip) and item.reason in excluded_reasons:
                continue
            if isinstance(item, _Proposal) and (
                item.category == FactCategory.CONTRACT_COMMERCIAL.value or UNTRUSTED_INSTRUCTION in item.flags
            ):
                continue
            if SURROGATE.search(sentence.text) or _GREETING.search(sentence.text):
                continue
            usable.append(sentence)
        requests = [s for s in usable if _is_question(s.text) or _REQUEST.search(s.text)]
        pool = requests or usable
        return pool[0] if pool else None

    def _summary(
        self, transcript: Transcript, candidates: list[CandidateMemory], decided: list[_Proposal | _Skip]
    ) -> CandidateMemory | None:
        if not transcript.turns:
            return None
        parts = [
            c
            for c in candidates
            if c.type in (MemoryType.EPISODE, MemoryType.RESOLUTION) and UNTRUSTED_INSTRUCTION not in c.flags
        ]
        if parts:
            body = " ".join(c.content for c in parts)
            outcome = any(c.type is MemoryType.RESOLUTION for c in parts)
            kind = (
                Authority.CONFIRMED_OUTCOME
                if (outcome or any(c.source_kind is Authority.CONFIRMED_OUTCOME for c in parts))
                else Authority.CUSTOMER_CONFIRMED
            )
            basis = "extractive summary of the session's episode and resolution statements"
            speaker = parts[0].speaker
        else:
            first = self._first_request(decided)
            if first is None:
                return None
            body = "Customer raised: " + first.text
            speaker = Speaker.CUSTOMER
            outcome = False
            kind = Authority.CUSTOMER_CLAIM
            basis = "first customer request of the session (no episode statements found)"
        channel = f"{transcript.channel} " if transcript.channel else ""
        head = f"Session ({channel.strip() or 'conversation'}): "
        tail = " Outcome confirmed." if outcome else ""
        text = mask_identifiers(re.sub(r"\s+", " ", head + body).strip()).text
        limit = EPISODE_SUMMARY_MAX_CHARS - len(tail)
        if len(text) > limit:
            text = text[: limit - 1].rstrip() + "…"
        text += tail
        return CandidateMemory(
            type=MemoryType.EPISODE,
            category="EPISODE",
            content=text,
            value={"summary": True, "outcome_confirmed": outcome} if outcome else {"summary": True},
            span=SourceSpan(turn=0, start=0, end=len(transcript.turns[0].text)),
            speaker=speaker,
            source_kind=kind,
            confidence=0.7,
            confidence_basis=basis,
            extractor=self.name,
            extractor_version=self.version,
        )
