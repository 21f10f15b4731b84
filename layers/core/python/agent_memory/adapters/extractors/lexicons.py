"""The rules' lexicons and patterns: what a statement is about, by the words it uses.

Shared by the rules extractor and the learned one (which keeps the deterministic ones: refusals,
venting, thanks, commitments, commercial terms, the system of record's values). The fact slots
(stakeholders, technical environment, account profile) are in `fact_slots`.
"""

from __future__ import annotations

import re

# Plan tier, seats and hedges are the domain's (statements the system of record owns are checked
# against it after every extractor): the rules read the same patterns.
from agent_memory.domain.statement_rules import HEDGE_MODAL as _HEDGE_MODAL  # noqa: F401
from agent_memory.domain.statement_rules import SOR_PLAN as _SOR_PLAN  # noqa: F401
from agent_memory.domain.statement_rules import SOR_SEATS as _SOR_SEATS  # noqa: F401

UNTRUSTED_INSTRUCTION = "untrusted_instruction"

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
