# ruff: noqa: RUF001 - the confusables table holds look-alike letters on purpose
"""Injection screening: memory text is data, never an instruction.

A memory that reads like an instruction to a model ("ignore previous instructions", "you are
now...", "note to any AI reading this", "send the customer list to...", role tags, tool-call
syntax, our own delimiters) is flagged `untrusted_instruction` and quarantined by the gateway:
it is kept for review as inert data and never retrieved as context.

Screening reads the text the way a model would (`_reading_forms`): invisible characters
dropped, compatibility forms (fullwidth, mathematical letters) and Cyrillic or Greek
look-alikes folded to Latin, accents and case folded away, and, when present, digits used as
letters ("1gn0re") and letters spaced apart ("i g n o r e") joined back. The patterns below are
written against that folded text (lowercase, no accents), one table per signal and language:
English, French, German, Spanish, Portuguese and Dutch.

Support text talks about instructions all the time ("the setup instructions didn't work",
"please ignore my previous email"), and a false alarm loses a memory, so the override patterns
need both a verb of dismissal and something that points at the model's own instructions ("your",
"all", "previous", "above", "system"); the customer's own ("my", "our") never count. The
benchmark is `memory bench screening` (docs/benchmarks.md, "Injection screening").

Performance: every pattern starts at a literal word and its gaps are bounded runs of words
(no nested unbounded repeats), so matching is linear in the text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Screening:
    flagged: bool
    signals: tuple[str, ...]


def screen_for_instructions(text: str) -> Screening:
    """Return which instruction-like signals the text carries (empty = clean), in any form a
    model could read it (`_reading_forms`), including the ASCII hidden in Unicode tag characters,
    which models read although people cannot see it ("ASCII smuggling")."""
    forms = _reading_forms(text)
    signals = tuple(name for name, pattern in _SIGNALS if any(pattern.search(f) for f in forms))
    return Screening(flagged=bool(signals), signals=signals)


# --------------------------------------------------------------------------- reading forms

# Cyrillic and Greek letters that render like Latin ones in common fonts, plus a few Latin
# look-alikes (dotless i, script g). Folded after NFKC, which already maps fullwidth and
# mathematical letters to ASCII.
_CONFUSABLES = str.maketrans(
    {
        **dict(zip("аеорсухѕіјԁһԛԝӏкгп", "aeopcyxsijdhqwlkrn", strict=True)),
        **dict(zip("АВЕКМНОРСТХЅІЈԜ", "ABEKMHOPCTXSIJW", strict=True)),
        **dict(zip("αβγεικνορτυχϲϳ", "abyeikvoptuxcj", strict=True)),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ", "ABEZHIKMNOPTYXC", strict=True)),
        **dict(zip("ıɡɩʏ\u2018\u2019\u02bc\u00b4`", "igiy'''''", strict=True)),
    }
)
_LEET = str.maketrans("013457@$", "oieastas")
# A word mixing letters with digits or @/$ used as letters; plain numbers and ids are left alone.
_LEET_WORD = re.compile(r"(?=[a-z0-9@$]*[a-z])(?=[a-z0-9@$]*[013457@$])[a-z0-9@$]{2,}")
# Four or more single letters set apart by spaces, dots, dashes, stars or apostrophes: "i g n o r e".
_SPACED_RUN = re.compile(r"(?<![^\W\d_])[a-z](?:[ .*_'-]{1,4}[a-z](?![^\W\d_])){3,}")


def _fold(text: str) -> str:
    """The text as a model reads it, in the alphabet the patterns are written in."""
    if text.isascii() and not _IGNORABLE.search(text):
        return text.lower()
    shown = unicodedata.normalize("NFKC", _IGNORABLE.sub("", text)).translate(_CONFUSABLES)
    bare = "".join(ch for ch in unicodedata.normalize("NFKD", shown) if not unicodedata.combining(ch))
    return bare.casefold()


def _reading_forms(text: str) -> list[str]:
    folded = _fold(text)
    forms = [folded]
    hidden = "".join(chr(ord(ch) - _TAG_OFFSET) for ch in text if _TAG_FIRST <= ord(ch) <= _TAG_LAST)
    if hidden:
        forms.append(_fold(hidden))
    # Two or more such words with three letters or more: "1gn0re all prev1ous", not "q4" or "3pm".
    if sum(len(re.findall("[a-z]", word)) >= 3 for word in _LEET_WORD.findall(folded)) >= 2:
        forms.append(_LEET_WORD.sub(lambda m: m.group().translate(_LEET), folded))
    if _SPACED_RUN.search(folded):
        forms.append(_SPACED_RUN.sub(_collapse_spaced, folded))
    return forms


def _collapse_spaced(run: re.Match[str]) -> str:
    words = re.split(r"[ .*_-]{2,}", re.sub(r"\s*'\s*", "'", run.group()))  # "l ' a" is "l'a"
    return " ".join(re.sub(r"[ .*_-]", "", word) for word in words)


# --------------------------------------------------------------------------- pattern helpers


def _any(*alternatives: str) -> str:
    return "(?:" + "|".join(alternatives) + ")"


def _dismissal(
    verbs: str, fillers: str, pointers: str, objects: str, after: str, sep: str = r"\s+"
) -> list[str]:
    """ "<verb> [fillers] <pointer> [fillers] <object>" and "<verb> [fillers] <object> <pointer after>":
    a verb of dismissal aimed at instructions that are the model's (a pointer such as "your",
    "all", "previous", "above"). Fillers are closed word lists, so "my previous email" and
    "the setup instructions" never match."""
    v, f, p, o, a = (_any(x) for x in (verbs, fillers, pointers, objects, after))
    return [
        rf"\b{v}{sep}(?:{f}{sep}){{0,3}}?{p}{sep}(?:{f}{sep}){{0,2}}?{o}\b",
        rf"\b{v}{sep}(?:{f}{sep}){{0,3}}?{o}(?:{sep}[\w-]+)??{sep}{a}(?![\w-])",
    ]


_GAP = r"[^.!?;\n]{0,40}?"  # a short stretch of the same sentence
_EMAIL_OR_URL = r"(?:[\w.+-]+@[\w-]+\.[\w.-]+|https?://|www\.)"

# --------------------------------------------------------------------------- override / ignore

_EN_OBJECTS = (
    r"instructions?|directions|directives?|guidelines?|guidance|rules?|prompts?|system prompt|system messages?"
    r"|polic(?:y|ies)|restrictions?|constraints?|guardrails?|programming|training|safeguards?|context|commands"
    r"|configuration"
)
_EN_POINTERS = (
    r"your|all|any|every|previous(?:ly)?|prior|above|above-mentioned|earlier|preceding|foregoing|original|initial"
    r"|existing|old|former|current|default|system|developer|safety|internal|hidden|standing|built-in|given|preset"
)
_EN_FILLERS = rf"the|these|those|such|of|and|or|other|{_EN_POINTERS}"
_EN_STRONG = r"previous|prior|above|earlier|preceding|foregoing|original|initial|system|developer|safety|hidden|internal"
_EN_VOID = (
    r"(?:are|is)\s+(?:now\s+|hereby\s+|officially\s+)?(?:void|null|cancell?ed|revoked|obsolete|invalid|suspended"
    r"|lifted|overridden|superseded|replaced|disabled|deactivated|no longer (?:valid|in effect|active)|not valid)"
    r"|(?:no longer|don't|do not|does not|doesn't)\s+apply"
)

_OVERRIDE: dict[str, list[str]] = {
    "en": [
        *_dismissal(
            r"ignore|disregard|forget|override|overrule|bypass|skip|discard|dismiss|abandon|neglect|nullify|drop|erase"
            r"|wipe|reset|clear|(?:set|put|push|leave) aside|throw (?:out|away)|pay no (?:attention|heed|mind) to"
            r"|(?:do not|don't|dont|never|no longer) (?:follow|obey|apply|heed|respect|listen to|comply with)"
            r"|stop (?:following|obeying|applying|listening to)",
            _EN_FILLERS,
            _EN_POINTERS,
            _EN_OBJECTS,
            r"above|before|so far|until now|up to now|from (?:before|earlier|above)|earlier|previously"
            r"|(?:given|provided|received|written|stated|listed|set out)(?: to you)?"
            r"|you (?:were|have been|'ve been|got|received|have)",
        ),
        # "forget everything you were told", "disregard what you were told earlier", "ignore everything above"
        r"\b(?:ignore|disregard|forget|discard|dismiss|override)\s+(?:everything|anything|all|whatever|what)"
        r"(?:\s+(?:that|which|else))?\s+(?:you(?:'ve|'re| have| had| were| are| got)?(?:\s+been)?\s+"
        r"(?:told|given|taught|instructed|asked|programmed|trained|shown)"
        r"|(?:was|were|has been|had been|is|came|comes)\s+(?:said\s+|written\s+|stated\s+|given\s+)?"
        r"(?:before|above|earlier|previously|so far|until now)|above|before|earlier|previously|prior|so far)\b",
        # "your previous instructions are void", "the rules you were configured with no longer apply"
        rf"\b(?:your|all (?:of )?your|(?:all )?the (?:above|preceding|foregoing|system|developer|safety|hidden|internal))"
        rf"\s+(?:(?:{_EN_STRONG})\s+)?(?:{_EN_OBJECTS})"
        rf"\s+(?:{_EN_VOID})",
        rf"\b(?:{_EN_OBJECTS})\s+(?:that\s+)?you\s+(?:were|have been|'ve been|had been)\s+[\w-]+(?:\s+(?:with|by))?"
        rf"\s+(?:{_EN_VOID})",
    ],
    "fr": [
        *_dismissal(
            r"ignore[rsz]?|ignorons|oublie[rsz]?|oublions|neglige[rsz]?|outrepasse[rsz]?|contourne[rsz]?"
            r"|(?:fais|faites|faire) (?:abstraction|fi)|(?:ne )?(?:tiens|tenez|tenir) (?:pas|plus|aucun) compte"
            r"|(?:ne |n')?(?:suis|suivez|suivre|respecte[sz]?|respecter|applique[sz]?|appliquer|obeis|obeissez)"
            r" (?:pas|plus|jamais)|(?:laisse[rsz]?|mets|mettez|mettre) de cote|passe[rz]? outre|abandonne[rz]?",
            r"toutes?|tous|tout|les|la|le|l|des|de|du|d|tes|vos|ton|ta|votre|ces|cet|cette|aux|au|a",
            r"tes|vos|ton|ta|votre|toutes|tous|anciennes?|precedentes?",
            r"instructions?|consignes?|directives?|regles?|indications?|ordres|commandes|prompts?|restrictions?"
            r"|contraintes?|limites|garde-fous|politiques?|programmation|parametrage|recommandations",
            r"precedentes?|anterieures?|ci-dessus|plus haut|d'avant|d'origine|originales?|initiales?|du systeme"
            r"|systeme|recues?|donnees|actuelles?|en vigueur|de depart|de securite|internes?|cachees?|qui precedent",
            sep=r"[\s']+",
        ),
        r"\b(?:ignore[rsz]?|oublie[rsz]?|neglige[rsz]?)\s+tout(?:\s+ce\s+qu[e']\s*(?!\s*(?:je\b|j'|nous\b))"
        r"[^.!?\n]{0,30}?\b(?:dit|ecrit|demande|appris|donne|indique|recu|explique|ordonne|programme)\b"
        r"|\s+ce\s+qui\s+(?:precede|est\s+(?:ecrit\s+)?(?:au-dessus|ci-dessus|plus\s+haut)|a\s+ete\s+dit))",
        r"\b(?:tes|vos|les|toutes (?:les|tes|vos))\s+(?:instructions|consignes|directives|regles|indications)"
        r"(?:\s+[\w'-]+){0,4}?\s+(?:ne s'appliquent plus|ne sont plus (?:valables|valides|en vigueur|applicables)"
        r"|sont (?:desormais |maintenant |a present )?(?:annulees|caduques|nulles|obsoletes|suspendues|levees"
        r"|invalides|abrogees|remplacees)|n'ont plus cours)",
    ],
    "de": [
        *_dismissal(
            r"ignorier(?:e|en|t|st)?(?: sie)?|vergiss|vergesst|vergessen sie|missachte(?:n|t)?(?: sie)?"
            r"|ubergehe(?:n)?(?: sie)?|uberspringe(?:n)?(?: sie)?|verwirf|verwerfen sie",
            r"die|der|den|das|dem|des|alle[nmrs]?|deine[nmrs]?|eure[nmrs]?|ihre[nmrs]?|diese[nmrs]?|und|oder|von"
            r"|zuvor|vorher|bisher|samtliche[nmrs]?|jegliche[nmrs]?|vorherige[nmrs]?|vorige[nmrs]?|bisherige[nmrs]?"
            r"|obige[nmrs]?|fruhere[nmrs]?|vorangegangene[nmrs]?|ursprungliche[nmrs]?|gegebene[nmrs]?",
            r"deine[nmrs]?|eure[nmrs]?|ihre[nmrs]?|alle[nmrs]?|samtliche[nmrs]?|jegliche[nmrs]?|vorherige[nmrs]?"
            r"|vorige[nmrs]?|bisherige[nmrs]?|obige[nmrs]?|fruhere[nmrs]?|vorangegangene[nmrs]?|vorstehende[nmrs]?"
            r"|ursprungliche[nmrs]?|alte[nmrs]?|gegebene[nmrs]?|aktuelle[nmrs]?|bestehende[nmrs]?",
            r"\w*(?:anweisung|instruktion|regel|vorgabe|richtlinie|vorschrift|befehl|prompt|einschrankung"
            r"|beschrankung)\w*",
            r"von oben|oben|zuvor|vorher|bisher|davor",
        ),
        # a system compound needs no other pointer: "ignoriere die Systemanweisungen"
        r"\b(?:ignorier\w*|vergiss|vergesst|vergessen sie|missacht\w*|lass\w*|setze?)\s+(?:die\s+|den\s+|das\s+)?"
        r"system\w*(?:anweisung|prompt|regel|vorgabe|richtlinie|befehl)\w*",
        # separable and negated verbs put the particle last: "beachte die Vorgaben von oben nicht mehr"
        r"\b(?:beachte\w*|befolge\w*|folge|berucksichtige\w*|setze?|lass\w*)(?:\s+sie)?(?:\s+(?:die|den|das|alle"
        r"|deine[nmrs]?|eure[nmrs]?|ihre[nmrs]?|vorherige[nmrs]?|bisherige[nmrs]?|obige[nmrs]?|ursprungliche[nmrs]?"
        r"|system\w*)){1,3}\s+\w*(?:anweisung|instruktion|regel|vorgabe|richtlinie|vorschrift|befehl|prompt)\w*"
        r"(?:\s+[\w-]+){0,3}?\s+(?:nicht|nie|keinesfalls|ausser kraft|beiseite|links liegen|fallen)\b",
        r"\b(?:vergiss|vergesst|vergessen sie|ignorier\w*(?:\s+sie)?)\s+alles,?\s+(?:was|das)\s+(?!ich\b|wir\b)"
        r"[^.!?\n]{0,30}?\b(?:gesagt|aufgetragen|gegeben|beigebracht|erklart|mitgeteilt|geschrieben|befohlen"
        r"|vorgegeben)\b",
        r"\b(?:vergiss|vergesst|vergessen sie|ignorier\w*(?:\s+sie)?)\s+alles\s+(?:davor|vorherige|obige|bisherige"
        r"|bisher gesagte|oben|zuvor gesagte)",
        r"\balles,?\s+was\s+(?!ich\b|wir\b)[^.!?\n]{0,40}?\b(?:gesagt|aufgetragen|gegeben)\b[^.!?\n]{0,15}?,?"
        r"\s+gilt\s+nicht\s+mehr",
        r"\b(?:deine|eure|alle deine|die (?:vorherigen|bisherigen|obigen|ursprunglichen))\s+\w*(?:anweisung"
        r"|instruktion|regel|vorgabe|richtlinie)\w*(?:\s+[\w-]+){0,4}?\s+(?:gelten\s+nicht\s+mehr|sind\s+"
        r"(?:ab sofort\s+|jetzt\s+|nun\s+|hiermit\s+)?(?:aufgehoben|ungultig|nichtig|ausser kraft|hinfallig"
        r"|widerrufen|ersetzt))",
    ],
    "es": [
        *_dismissal(
            r"ignora[rd]?|ignore[ns]?|olvida[rd]?|olvide[ns]?|descarta[rd]?|descarte[ns]?|omite|omita|omitan"
            r"|desobedece|desobedezca|desatiende|saltate|salta|haz caso omiso (?:a|de)|hagan? caso omiso (?:a|de)"
            r"|no (?:hagas|haga|hagan) caso (?:a|de)|no (?:sigas|siga|sigan|obedezcas|obedezca|respetes|respete"
            r"|cumplas|cumpla|apliques|aplique)(?: mas)?|dej[ae] de (?:seguir|cumplir|aplicar|lado)"
            r"|pas[ae] por alto|prescind[ae] de",
            r"las|los|la|el|todas|todos|tus|sus|esas|estas|esos|estos|de|del|a|al|y|o",
            r"tus|sus|todas|todos|vuestras",
            r"instrucciones|instruccion|indicaciones|reglas|normas|directrices|directivas|ordenes|pautas"
            r"|restricciones|limitaciones|politicas|prompt|consignas",
            r"anteriores|previas|de arriba|precedentes|originales|iniciales|del sistema|de sistema|de seguridad"
            r"|internas|ocultas|recibidas|que (?:te|le|se te|se le) (?:dieron|han dado|dio|ha dado)|actuales"
            r"|vigentes|de antes",
        ),
        r"\b(?:ignora|ignore|olvida|olvide|descarta|descarte)\s+todo\s+lo\s+(?:que\s+(?!yo\b)[^.!?\n]{0,30}?"
        r"\b(?:dijeron|han dicho|ha dicho|dicho|indicaron|ensenaron|ordenaron|programaron|dieron|escrito"
        r"|explicaron)\b|anterior|de arriba|previo)",
        r"\b(?:tus|sus|vuestras|(?:todas )?las (?:instrucciones|indicaciones|reglas|normas|directrices|pautas)"
        r"\s+(?:anteriores|previas|originales|del sistema|que (?:te|le) dieron|que recibiste))"
        r"(?:\s+[\w-]+){0,4}?\s+(?:ya\s+)?(?:no\s+(?:son\s+validas|valen|aplican|se aplican|cuentan"
        r"|estan vigentes|tienen validez)|quedan\s+(?:anuladas|sin efecto|suspendidas|revocadas)"
        r"|(?:estan|son)\s+(?:anuladas|revocadas|suspendidas|obsoletas))",
    ],
    "pt": [
        *_dismissal(
            r"ignore|ignora|ignorem|ignorar|esqueca|esquece|esquecam|esquecer|desconsidere|desconsidera|desconsiderem"
            r"|descarte|descarta|despreze|despreza|nao (?:siga|sigas|sigam|obedeca|cumpra|respeite|aplique)(?: mais)?"
            r"|deix[ae] de (?:seguir|lado|cumprir|aplicar)|deixar de lado|pass[ae] por cima d[aoe]s?|pule|salte",
            r"as|os|a|o|todas|todos|suas|seus|tuas|teus|essas|estas|esses|estes|de|da|do|das|dos|e|ou",
            r"suas|seus|tuas|teus|todas|todos|vossas",
            r"instrucoes|instrucao|orientacoes|regras|normas|diretrizes|diretivas|ordens|comandos|restricoes"
            r"|politicas|prompt|indicacoes",
            r"anteriores|previas|acima|de cima|precedentes|originais|iniciais|do sistema|de sistema|de seguranca"
            r"|internas|ocultas|recebidas|que (?:lhe|te|voce) (?:deram|foram dadas|recebeu)|atuais|vigentes|de antes",
        ),
        r"\b(?:ignore|esqueca|esquece|desconsidere|descarte)\s+tudo(?:\s+o)?\s+(?:que|aquilo que)\s+(?!eu\b)"
        r"[^.!?\n]{0,30}?\b(?:disseram|dito|ensinaram|mandaram|pediram|escrito|deram|falaram|instruiram"
        r"|programaram|explicaram)\b",
        r"\b(?:ignore|esqueca|esquece|desconsidere|descarte)\s+tudo\s+(?:acima|anterior|o que esta acima)",
        r"\b(?:suas|seus|tuas|vossas|(?:todas )?as (?:instrucoes|orientacoes|regras|normas|diretrizes)"
        r"\s+(?:anteriores|previas|originais|do sistema|que (?:lhe|te|voce) (?:deram|recebeu)))"
        r"(?:\s+[\w-]+){0,4}?\s+(?:nao (?:valem|se aplicam|sao validas|estao em vigor|tem validade)(?: mais)?"
        r"|foram (?:canceladas|revogadas|anuladas|suspensas|substituidas)|estao (?:canceladas|suspensas|revogadas)"
        r"|perderam (?:a )?validade|deixaram de valer)",
    ],
    "nl": [
        *_dismissal(
            r"negeer|negeren|negeert|vergeet|vergeten|verwerp|verwerpen|omzeil|omzeilen"
            r"|(?:houd|hou|houdt) (?:dan )?geen rekening (?:meer )?met|trek je niets (?:meer )?aan van",
            r"de|het|alle|je|jouw|uw|die|deze|en|of|van|vorige|eerdere|voorgaande|bovenstaande|oorspronkelijke"
            r"|originele|gegeven",
            r"je|jouw|uw|alle|vorige|eerdere|voorgaande|bovenstaande|oorspronkelijke|originele|oude|huidige|gegeven",
            r"\w*(?:instructies?|opdrachten|regels|richtlijnen|aanwijzingen|voorschriften|bevelen|commando's|prompts?"
            r"|beperkingen)",
            r"hierboven|van hierboven|eerder|tot nu toe|van eerder|die je (?:hebt )?(?:gekregen|ontvangen)",
        ),
        r"\b(?:negeer|vergeet|verwerp)\s+(?:de\s+|het\s+)?systeem\w*",
        r"\b(?:volg|sla|laat|schuif|gooi|zet)(?:\s+(?:de|het|alle|je|jouw|uw|vorige|eerdere|voorgaande|bovenstaande"
        r"|oorspronkelijke|originele|systeem\w*)){1,3}\s+\w*(?:instructies?|opdrachten|regels|richtlijnen"
        r"|aanwijzingen|voorschriften|prompt)(?:\s+[\w-]+){0,2}?\s+(?:niet|niet meer|niet langer|over|los|varen"
        r"|vallen|terzijde|opzij|overboord)\b",
        r"\b(?:vergeet|negeer)\s+alles\s+(?:wat|dat)\s+(?!ik\b|wij\b|we\b)[^.!?\n]{0,30}?\b(?:verteld|gezegd"
        r"|opgedragen|gegeven|geleerd|geschreven|gevraagd)\b",
        r"\b(?:vergeet|negeer)\s+alles\s+(?:hierboven|hiervoor|van hiervoor|van eerder|wat hierboven staat)",
        r"\b(?:je|jouw|alle|de (?:vorige|eerdere|voorgaande|bovenstaande|oorspronkelijke))\s+\w*(?:instructies"
        r"|opdrachten|regels|richtlijnen|aanwijzingen)(?:\s+[\w-]+){0,5}?\s+(?:(?:gelden|geldt|zijn)\s+niet\s+"
        r"(?:meer|langer)|zijn\s+(?:vervallen|ongeldig|opgeheven|ingetrokken|vervangen))",
    ],
}

# --------------------------------------------------------------------------- role / system override

_NO_LIMITS = r"restrictions?|limits?|limitations|rules|filters?|guardrails?|safeguards?|censorship|checks"
# "you are now subscribed", "you are now a member": a status, not a role
_NOT_STATUS = r"(?!\s+(?:an?\s+|the\s+)?(?:\w+ed|able|eligible|ready|set|all set|on|in|customer|client|member|subscriber)\b)"
_ROLE_OVERRIDE: dict[str, list[str]] = {
    "en": [
        r"\b(?:you are|you're|u r) now\b" + _NOT_STATUS,
        r"\bfrom now on,?\s+(?:you\s+(?:are|will be|act|play|ignore|respond only|answer only|have no|must ignore)"
        r"|act|behave|pretend|ignore)\b",
        r"(?:^|[.!?:;]\s*|\byou\s+(?:will\s+|must\s+|should\s+|shall\s+|now\s+|can\s+)?)(?:act|behave)\s+as"
        r"\s+(?:if\s+you|an?\b|the\b|my\b)",
        r"\bpretend\s+(?:to be|you are|you're|that you)\b|\brole-?play(?:ing)?\s+as\b",
        r"\b(?:play|assume|take on)\s+the\s+(?:role|persona|identity)\s+of\b",
        r"\byour\s+new\s+(?:role|persona|identity|name|task|job|purpose|instructions?)\s+(?:is|are|:)",
        r"\b(?:new|updated|real|actual|true|revised)\s+system\s+(?:prompt|message|instructions?)\b",
        r"\bnew\s+(?:instructions|rules|directives)\s+(?:follow|below|are as follows|apply)\b",
        r"\bsystem[\s_-]*override\b|\boverride\s+(?:engaged|activated|enabled|accepted|mode|protocol|code)\b",
        r"\b(?:admin|administrator|root|sudo|developer)\s+(?:override|access|privileges?|rights)\s+"
        r"(?:granted|engaged|activated|enabled)\b",
        r"\b(?:unrestricted|unfiltered|jailbreak|jailbroken|god|dan)\s+mode\b|\bjailbreak\b",
        rf"\b(?:developer|dev|admin|debug|sudo|maintenance)\s+mode\b[^\n]{{0,60}}?\b(?:{_NO_LIMITS}|safety|policies)\b",
        rf"\b(?:ai|assistant|bot|chatbot|model|you(?:'re| are)?)\b[^.\n]{{0,30}}?\b(?:without|with no)\s+"
        rf"(?:any\s+)?(?:{_NO_LIMITS})\b",
    ],
    "fr": [
        r"\b(?:tu es|vous etes|t'es) (?:desormais|maintenant|a present|dorenavant)\b(?!\s+(?:une?\s+)?(?:inscrite?s?|abonnee?s?|connectee?s?|enregistree?s?|eligibles?|client|cliente|membre)\b)",
        r"\b(?:a partir de maintenant|dorenavant|desormais|a partir d'aujourd'hui),?\s+(?:tu|vous)\s+(?:es|etes"
        r"|agis|agissez|joues|jouez|ignores|ignorez|obeis|obeissez|n'as plus|n'avez plus)\b",
        r"\b(?:agis|agissez|comporte-toi|comportez-vous)\s+(?:comme|en tant que)\b",
        r"\b(?:fais|faites)\s+(?:semblant\s+d'etre|comme\s+si\s+(?:tu\s+etais|vous\s+etiez))\b",
        r"\b(?:joue|jouez|endosse|endossez|prends|prenez)\s+le\s+role\s+d",
        r"\b(?:nouveau|ton nouveau|votre nouveau)\s+role\s*:|\bton role est desormais\b",
        r"\b(?:nouveau|nouvelles?|vrai|veritable)\s+(?:prompt|instructions?|consignes?)\s+systeme\b",
        r"\b(?:surcharge|contournement|forcage|override|derogation)\s+(?:du\s+)?systeme\b",
        rf"\bmode\s+(?:developpeur|administrateur|debogage|debug|dieu|sans\s+(?:restriction|filtre|limite)s?)"
        rf"(?:{_GAP}\b(?:regles|restrictions|securite|filtres|limites)\b|\s*(?:active|enclenche|actif))",
        r"\b(?:assistant|ia|bot|chatbot|robot|modele|tu es|vous etes)\b[^.\n]{0,30}?\bsans\s+(?:aucune?\s+)?"
        r"(?:restrictions?|limites?|filtres?|regles?|censure|garde-fous)\b",
    ],
    "de": [
        r"\bdu bist (?:jetzt|nun|ab sofort|ab jetzt|von nun an|ab heute)\b(?!\s+(?:eine?\s+)?(?:kunde|kundin|mitglied|\w+iert)\b)",
        r"\b(?:ab jetzt|ab sofort|von nun an|ab heute),?\s+(?:bist du|agierst du|handelst du|spielst du"
        r"|ignorierst du|verhaltst du dich|antwortest du nur)\b",
        r"\b(?:agiere|agieren sie|verhalte dich|gib dich)\s+(?:als|wie)\b|\btu\s+so,?\s+als\b",
        r"\b(?:spiel|spiele|spielen sie|ubernimm|ubernehmen sie|schlupfe in)\s+die\s+rolle\b",
        r"\b(?:deine|ihre)\s+neue\s+(?:rolle|identitat|aufgabe)\s*(?:ist|:)|\bneue\s+rolle\s*:",
        r"\b(?:neue[rs]?|echte[rs]?|wahre[rs]?)\s+(?:systemprompt|systemanweisungen?|system-prompt)\b",
        r"\bsystem[\s-]*(?:override|uberschreibung)\b|\bsystemuberschreibung\b",
        rf"\b(?:entwicklermodus|admin-?modus|debug-?modus|entwickler-modus)\b(?:{_GAP}\b(?:sicherheitsregeln|regeln"
        rf"|einschrankungen|beschrankungen|filter|richtlinien)\b|\s*(?:aktiviert|aktiv|an|eingeschaltet))",
        r"\b(?:gott-?modus|jailbreak|uneingeschrankte[nr]? modus)\b",
        r"\b(?:assistent|ki|bot|chatbot|modell|du bist)\b[^.\n]{0,30}?\bohne\s+(?:jede\s+|jegliche\s+|alle\s+)?"
        r"(?:einschrankungen?|beschrankungen?|grenzen|filter|regeln|zensur)\b",
    ],
    "es": [
        r"\b(?:ahora|a partir de ahora|desde ahora),?\s+(?:eres|seras|actuas|actua|te comportas|ignoras"
        r"|respondes solo)\b|\beres ahora\b",
        r"\b(?:actua|actue|actuad|comportate|comportese)\s+como\b",
        r"\b(?:finge|finja|fingid)\s+(?:ser|que eres|que es)\b|\bhazte pasar por\b",
        r"\b(?:interpreta|interprete|juega|haz)\s+(?:el\s+)?(?:papel|rol)\s+de\b",
        r"\b(?:tu|su)\s+nuevo\s+(?:rol|papel)\s*(?::|es)|\bnuevo\s+(?:rol|papel)\s*:",
        r"\b(?:nuevo|nuevas?|verdadero)\s+(?:prompt|instrucciones)\s+del\s+sistema\b",
        r"\b(?:anulacion|sobrescritura|override|invalidacion)\s+del\s+sistema\b",
        rf"\bmodo\s+(?:desarrollador|administrador|dios|depuracion|sin\s+(?:restricciones|filtros|limites))"
        rf"(?:{_GAP}\b(?:reglas|restricciones|seguridad|filtros|limites)\b|\s*(?:activado|activo))",
        r"\b(?:asistente|ia|bot|chatbot|modelo|eres)\b[^.\n]{0,30}?\bsin\s+(?:ninguna\s+)?(?:restricciones?"
        r"|limites|filtros|reglas|censura)\b",
    ],
    "pt": [
        r"\b(?:agora|a partir de agora|de agora em diante),?\s+(?:voce|tu)\s+(?:e|es|sera|age|atua|ignora"
        r"|responde apenas|finge)\b(?!\s+(?:uma?\s+)?(?:cliente|membro|socio|assinante)\b)",
        r"\b(?:aja|atue|comporte-se|se comporte)\s+como\b",
        r"\b(?:finja|finge)\s+(?:ser|que (?:e|es|voce e))\b",
        r"\b(?:faca|faz|interprete|assuma)\s+o\s+papel\s+de\b",
        r"\b(?:seu|teu)\s+novo\s+(?:papel|cargo)\s*(?::|e)|\bnovo\s+papel\s*:",
        r"\b(?:novo|novas?|verdadeiro)\s+(?:prompt|instrucoes)\s+do\s+sistema\b",
        r"\b(?:sobrescrita|substituicao|anulacao|override)\s+do\s+sistema\b",
        rf"\bmodo\s+(?:desenvolvedor|administrador|deus|depuracao|sem\s+(?:restricoes|filtros|limites))"
        rf"(?:{_GAP}\b(?:regras|restricoes|seguranca|filtros|limites)\b|\s*(?:ativado|ativo))",
        r"\b(?:assistente|ia|bot|chatbot|modelo|voce e)\b[^.\n]{0,30}?\bsem\s+(?:nenhuma\s+)?(?:restricoes"
        r"|restricao|limites|filtros|regras|censura)\b",
    ],
    "nl": [
        r"\bje bent (?:nu|vanaf nu|voortaan)\b(?!\s+(?:een\s+)?(?:klant|lid|abonnee|ge\w+d)\b)",
        r"\b(?:vanaf nu|voortaan|vanaf vandaag),?\s+(?:ben je|gedraag je|treed je|speel je|negeer je"
        r"|antwoord je alleen)\b",
        r"\b(?:gedraag je|treed op|doe je voor)\s+als\b|\bdoe (?:maar )?alsof\b",
        r"\b(?:speel|neem|vervul)\s+de\s+rol\b",
        r"\b(?:je|jouw|uw)\s+nieuwe\s+rol\b|\bnieuwe\s+rol\s*:",
        r"\b(?:nieuwe|echte)\s+(?:systeemprompt|systeeminstructies)\b",
        r"\bsysteem[\s-]*(?:override|overschrijving)\b",
        rf"\b(?:ontwikkelaarsmodus|beheerdersmodus|debugmodus)\b(?:{_GAP}\b(?:veiligheidsregels|regels"
        rf"|beperkingen|filters|limieten)\b|\s*(?:ingeschakeld|actief|aan|geactiveerd))",
        r"\bgodmodus\b",
        r"\b(?:assistent|ai|bot|chatbot|model|je bent)\b[^.\n]{0,30}?\bzonder\s+(?:enige\s+)?(?:beperkingen?"
        r"|limieten|filters?|regels|censuur)\b",
    ],
}

# --------------------------------------------------------------------------- directives addressed to the model

_EN_AI = (
    r"ai|a\.i\.|artificial intelligence|chatbots?|bots?|llms?|language models?|copilots?|chatgpt|gpt|claude|gemini"
    r"|ai (?:assistants?|agents?|models?)|virtual (?:assistants?|agents?)|automated (?:assistants?|agents?)"
)
_NOT_A_PERSON = r"(?!\s+(?:manager|director|coach|professor|number|to)\b)"  # "assistant manager"
_DIRECTIVE: dict[str, list[str]] = {
    "en": [
        rf"\b(?:note|message|instructions?|reminder|attention|memo|notice|directive|warning|p\.?s\.?)\s+(?:to|for)"
        rf"\s+(?:any|all|every|each|the|whichever|whatever|whoever|an?)?\s*(?:{_EN_AI}|assistants?|models?)\b"
        + _NOT_A_PERSON,
        rf"(?:^|[.!?]\s+)(?:to|for)\s+(?:the|any|every|whichever|whatever)\s+(?:{_EN_AI}|assistant|model)\b"
        r"[^.:\n]{0,40}:",
        rf"(?:^|[.!?]\s+)(?:dear|hey|hi|hello|attention|attn)\s+(?:{_EN_AI}|assistant)\b" + _NOT_A_PERSON,
        rf"\b(?:{_EN_AI}|assistants?|agents?|models?)\s+(?:that is |who is |which is )?(?:reading|processing|seeing"
        r"|parsing|handling|summari[sz]ing|reviewing)\s+(?:this|these)\b",
        rf"\bif\s+you(?:'re| are)\s+(?:an?|the)\s+(?:{_EN_AI}|assistant|model|automated|virtual)\b",
        r"\bas an? (?:ai|language model|llm)(?: (?:assistant|model))?,?\s+(?:you|i|it)\b",
        rf"\b(?:{_EN_AI})\s+(?:must|should|shall|has to|have to|needs? to|(?:is|are) (?:required|expected|instructed)"
        r" to)\b",
        r"\bthe\s+(?:assistant|agent)\s+(?:must|should|shall|will|has to|needs to)\s+(?:always|never)\b",
        r"\b(?:always|never)\s+(?:tell|say to|offer|give|mention|charge|ask)\s+(?:the |this )?(?:customer|client|user)\b",
    ],
    "fr": [
        r"\b(?:note|message|rappel|avis|remarque|consigne|mot|attention|a l'intention|a l'attention)\b[^.:\n]{0,25}?"
        r"\b(?:ia|intelligence artificielle|chatbot|bot|robot|llm|modele de langage|assistante? (?:ia|virtuel(?:le)?"
        r"|automatique))\b",
        r"\b(?:note|message|rappel|avis|remarque|consigne|mot)\s+(?:pour|a|au)\s+l'(?:assistant|agent ia)\s*:",
        r"(?:^|[.!?]\s+)(?:cher|chere|bonjour|salut|hey)\s+(?:ia|chatbot|bot|robot|assistant ia)\b",
        r"\bsi (?:tu es|vous etes) (?:une?|l')\s*(?:ia|intelligence artificielle|modele de langage|assistant"
        r"|chatbot|bot|robot|llm)\b",
        r"\b(?:ia|assistants?|chatbots?|bots?|robots?|modeles?|agents?)\s+qui\s+(?:lit|lis|lisent|lisez|traite"
        r"|traitent|voit|voient)\s+(?:ceci|ce (?:message|texte|memo|souvenir|dossier))\b",
        r"\b(?:ia|assistants?|chatbots?|bots?|robots?|agents? ia)\s+(?:doit|doivent|devra|devront)"
        r"(?:\s+[\w'-]+){0,2}?\s+(?:toujours|jamais|systematiquement|automatiquement)\b",
    ],
    "de": [
        r"\b(?:hinweis|nachricht|notiz|erinnerung|achtung|anweisung|info|mitteilung)\s+(?:an|fur)\s+(?:die |den |das "
        r"|jede |jeden |jedes |alle |eine |einen )?(?:ki|kunstliche intelligenz|assistenten|assistent|chatbot|bot"
        r"|modell|sprachmodell|llm|ki-assistenten?)\b",
        r"(?:^|[.!?]\s+)(?:an|fur)\s+(?:den|die|das|jede|jeden)\s+(?:ki|chatbot|bot|assistenten|modell"
        r"|sprachmodell)\s*:",
        r"(?:^|[.!?]\s+)(?:liebe|lieber|hallo|hey|hi)\s+(?:ki|chatbot|bot|assistent|assistentin|sprachmodell)\b",
        r"\b(?:falls|wenn)\s+(?:du|sie)\s+(?:eine?\s+)?(?:ki|kunstliche intelligenz|sprachmodell|chatbot|bot"
        r"|ki-assistent|llm|assistent)\b[^.\n]{0,10}?\b(?:bist|sind)\b",
        r"\b(?:ki|assistent|chatbot|bot|modell|sprachmodell|agent)\w*,?\s+(?:die|der|das)\s+(?:dies|das|diesen text"
        r"|diese nachricht)\s+(?:liest|verarbeitet|sieht)\b",
        r"\b(?:ki|assistent(?:en)?|chatbot|bot|ki-agenten?)\s+(?:muss|mussen|soll|sollen|darf|durfen)"
        r"(?:\s+[\w-]+){0,3}?\s+(?:immer|niemals|nie|stets|grundsatzlich|keinesfalls)\b",
    ],
    "es": [
        r"\b(?:nota|mensaje|recordatorio|aviso|atencion|instrucciones?|indicacion)\s+(?:para|a)\s+(?:la |el |los |las "
        r"|cualquier |toda |todo |cada )?(?:ia|inteligencia artificial|asistentes? (?:virtual|automatico|de ia)"
        r"|chatbot|bot|robot|modelo(?: de lenguaje)?|llm)\b",
        r"\b(?:nota|mensaje|recordatorio|aviso)\s+(?:para|a)\s+(?:el|la)\s+(?:asistente|agente)\s*:",
        r"(?:^|[.!?]\s+)(?:para|al)\s+(?:el\s+)?(?:chatbot|bot|asistente|modelo|ia)\s*:",
        r"(?:^|[.!?]\s+)(?:querida|querido|hola|oye|estimada|estimado)\s+(?:ia|chatbot|bot|asistente virtual|modelo)\b",
        r"\bsi\s+(?:eres|es usted|usted es)\s+(?:una?|el|la)\s+(?:ia|inteligencia artificial|modelo de lenguaje"
        r"|asistente|chatbot|bot|llm)\b",
        r"\b(?:ia|asistentes?|chatbots?|bots?|modelos?|agentes?)\s+que\s+(?:lea|lee|procese|procesa|vea|ve)"
        r"\s+(?:esto|este (?:mensaje|texto))\b",
        r"\b(?:ia|asistentes?|chatbots?|bots?|agentes? de ia)\s+(?:debe|deben|debera|deberan|tiene que"
        r"|tienen que)(?:\s+[\w-]+){0,2}?\s+(?:siempre|nunca|jamas)\b",
    ],
    "pt": [
        r"\b(?:nota|mensagem|lembrete|aviso|atencao|instrucao|instrucoes)\s+(?:para|a|ao)\s+(?:o |a |qualquer |toda "
        r"|todo |cada )?(?:ia|inteligencia artificial|assistente virtual|chatbot|bot|robo|modelo de linguagem|modelo"
        r"|llm)\b",
        r"\b(?:nota|mensagem|lembrete|aviso)\s+(?:para|ao)\s+(?:o\s+)?(?:assistente|agente)\s*:",
        r"(?:^|[.!?]\s+)(?:para|ao)\s+(?:o\s+)?(?:chatbot|bot|assistente|modelo|ia)\s*:",
        r"(?:^|[.!?]\s+)(?:cara|caro|ola|oi|prezada|prezado)\s+(?:ia|chatbot|bot|assistente virtual|modelo)\b",
        r"\bse\s+(?:voce|tu)\s+(?:e|es|for)\s+(?:uma?|o|a)\s+(?:ia|inteligencia artificial|modelo de linguagem"
        r"|assistente|chatbot|bot|llm)\b",
        r"\b(?:ia|assistentes?|chatbots?|bots?|modelos?|agentes?)\s+que\s+(?:ler|le|processar|processa|vir|ve)"
        r"\s+(?:isto|isso|esta mensagem|este texto)\b",
        r"\b(?:ia|assistentes?|chatbots?|bots?|agentes? de ia)\s+(?:deve|devem|devera|deverao|tem que"
        r"|precisa|precisam)(?:\s+[\w-]+){0,2}?\s+(?:sempre|nunca|jamais)\b",
    ],
    "nl": [
        r"\b(?:notitie|bericht|herinnering|opmerking|let op|aandacht|instructie|boodschap)\s+(?:voor|aan)\s+(?:de |het "
        r"|elke |iedere |alle |een )?(?:ai|kunstmatige intelligentie|chatbot|bot|taalmodel|llm|ai-assistent|model)\b",
        r"\b(?:notitie|bericht|herinnering|opmerking|boodschap)\s+(?:voor|aan)\s+de\s+(?:assistent|agent)\s*:",
        r"(?:^|[.!?]\s+)(?:voor|aan)\s+(?:de|het|elke)\s+(?:chatbot|bot|assistent|model|taalmodel|ai)\s*:",
        r"(?:^|[.!?]\s+)(?:beste|lieve|hallo|hoi|hey)\s+(?:ai|chatbot|bot|taalmodel|ai-assistent)\b",
        r"\b(?:als|indien)\s+(?:je|jij|u)\s+(?:een|de)\s+(?:ai|taalmodel|assistent|chatbot|bot|llm|model)\b"
        r"[^.\n]{0,10}?\b(?:bent|is)\b",
        r"\b(?:ai|assistent|chatbot|bot|model|taalmodel|agent)\w*,?\s+die\s+dit\s+(?:leest|verwerkt|ziet)\b",
        r"\b(?:ai|assistenten?|chatbots?|bots?|ai-agenten)\s+(?:moet|moeten|dient|dienen|zal|zullen)"
        r"(?:\s+[\w-]+){0,3}?\s+(?:altijd|nooit)\b",
    ],
}

# --------------------------------------------------------------------------- exfiltration


def _exfiltration(verbs: str, objects: str, excluded: str) -> str:
    """<verb> then, within a few words none of which is the customer's own ("my", "our"), data that is not
    this customer's to have: other customers' records, a bulk export, secrets, the model's instructions."""
    return rf"\b{_any(verbs)}\b(?:\s+(?!{_any(excluded)}\b)[\w'-]+){{0,6}}?\s+{_any(objects)}"


_EXFILTRATION: dict[str, list[str]] = {
    "en": [
        _exfiltration(
            r"send|e-?mail|mail|forward|export|upload|post|leak|share|transmit|dump|copy|paste|include|attach|list"
            r"|print|output|reveal|disclose|show|display|repeat|tell me|give me|read out|write out|sync|push",
            r"(?:customer|client|user|subscriber|member|contact)s?(?:'s?)?\s+(?:list|lists|database|db|records|table"
            r"|export|base)\b|(?:all|every|each|the other|other)\s+(?:(?:of\s+)?(?:the|your)\s+)?(?:other\s+)?"
            r"(?:customer|client|user|account|contact)s?(?:'s?)?\s+(?:[\w-]+\s+){0,2}?(?:records?|data|details|emails?"
            r"|addresses|names|numbers|information|info|histor(?:y|ies)|invoices|files|conversations?|chats?)\b"
            r"|(?:names|emails?|e-mail addresses|phone numbers|addresses|details|data|records|information"
            r"|histor(?:y|ies))(?:\s+and\s+[\w-]+(?:\s+[\w-]+)?)?\s+(?:of|for|from)\s+(?:all|every|each|other)\s+"
            r"(?:the\s+|our\s+|your\s+)?(?:other\s+)?(?:customers|clients|users|accounts|contacts)\b"
            r"|(?:conversation|chat)\s+histor(?:y|ies)\s+of\s+other\b|(?:the\s+)?(?:whole|entire|full)\s+(?:database"
            r"|crm|customer base)\b|(?:api|secret|access|private|admin|database|db|root|service)\s+(?:keys?|passwords?"
            r"|credentials|tokens?)\b|connection strings?\b|system prompt\b|(?:hidden|internal|secret|original"
            r"|initial|system)\s+(?:instructions|prompt|rules)\b|your\s+(?:instructions|prompt|rules|configuration)\b",
            r"my|our|his|her|their",
        ),
    ],
    "fr": [
        _exfiltration(
            r"envoie[rsz]?|envoyez|envoyer|transfere[rsz]?|transmets|transmettez|exporte[rsz]?|partage[rsz]?"
            r"|publie[rsz]?|copie[rsz]?|colle[rsz]?|revele[rsz]?|affiche[rsz]?|divulgue[rsz]?|donne-moi|montre-moi"
            r"|repete[rsz]?|imprime[rsz]?|recopie[rsz]?|inclus|incluez|telecharge[rz]?",
            r"(?:la\s+)?liste\s+(?:complete\s+|entiere\s+)?de(?:s)?\s+clients|fichier\s+clients?|base\s+(?:de\s+"
            r"donnees\s+)?(?:clients|des clients|de contacts|contacts)|(?:de\s+|des\s+)?tous\s+les\s+(?:autres\s+)?"
            r"clients|des\s+autres\s+(?:clients|utilisateurs)|prompt\s+systeme|ton\s+prompt|tes\s+instructions"
            r"|instructions\s+(?:cachees|internes|secretes|systeme|initiales)|cles?\s+(?:d')?api|mot de passe\s+"
            r"(?:admin|administrateur|de la base)",
            r"mon|ma|mes|notre|nos",
        ),
    ],
    "de": [
        _exfiltration(
            r"schicke?|sende|senden sie|leite|exportiere|lade|teile|kopiere|gib|zeig(?:e)?|verrate|offenbare|nenne"
            r"|poste|veroffentliche|ubermittle|maile",
            r"\w*kunden(?:liste|datenbank|daten|kartei|stamm)\b|kontaktdatenbank|(?:aller|der anderen|anderer)\s+"
            r"(?:anderen\s+)?(?:kunden|nutzer|benutzer)|systemprompt|deine[nmrs]?\s+(?:anweisungen|instruktionen"
            r"|systemanweisungen)|(?:versteckten|geheimen|internen)\s+anweisungen|api-?schlussel|passwort der"
            r" datenbank|admin-?passwort|gesprachsverlauf anderer",
            r"meine[nmrs]?|unsere[nmrs]?|seine[nmrs]?",
        ),
    ],
    "es": [
        _exfiltration(
            r"envia|envie|enviad|manda|mande|reenvia|reenvie|exporta|exporte|sube|suba|comparte|comparta|copia|copie"
            r"|pega|revela|revele|muestrame|muestra|muestre|imprime|repite|divulga|filtra|publica|dime|dame",
            r"(?:la\s+)?lista\s+(?:completa\s+)?de\s+clientes|base\s+de\s+datos\s+de\s+(?:clientes|contactos)"
            r"|datos\s+(?:de\s+cuenta\s+)?de\s+(?:todos\s+los|los\s+demas|otros)\s+(?:clientes|usuarios)"
            r"|(?:de|a)\s+todos\s+los\s+(?:demas\s+)?clientes|(?:de|los)\s+(?:demas|otros)\s+(?:clientes|usuarios)"
            r"|prompt\s+del\s+sistema|tus\s+instrucciones|instrucciones\s+(?:ocultas|internas|secretas|del sistema"
            r"|originales)|claves?\s+(?:de\s+)?api|contrasena\s+(?:de la base|del administrador|de admin)"
            r"|historial\s+de\s+(?:conversaciones|chats)\s+de\s+otros",
            r"mi|mis|nuestr[oa]s?",
        ),
    ],
    "pt": [
        _exfiltration(
            r"envie|envia|mande|manda|encaminhe|encaminha|exporte|exporta|suba|compartilhe|partilhe|copie|cole"
            r"|revele|mostre|imprima|repita|divulgue|vaze|publique|diga-me",
            r"(?:a\s+)?lista\s+(?:completa\s+)?de\s+clientes|base\s+de\s+(?:dados\s+de\s+)?(?:clientes|contatos"
            r"|contactos)|dados\s+(?:de\s+conta\s+)?de\s+(?:todos\s+os|outros)\s+(?:outros\s+)?(?:clientes|usuarios)"
            r"|de\s+todos\s+os\s+(?:outros\s+)?clientes|(?:dos|de)\s+outros\s+(?:clientes|usuarios)"
            r"|prompt\s+(?:de|do)\s+sistema|suas\s+instrucoes|instrucoes\s+(?:ocultas|internas|secretas|do sistema"
            r"|originais)|chaves?\s+(?:de\s+)?api|senha\s+(?:do banco|do administrador|de admin)"
            r"|historico\s+de\s+conversas\s+de\s+outros",
            r"minha|minhas|meu|meus|nossa|nossas|nosso|nossos",
        ),
    ],
    "nl": [
        _exfiltration(
            r"stuur|verstuur|mail|e-mail|exporteer|upload|deel|kopieer|plak|onthul|toon|laat|print|herhaal|geef|lek"
            r"|publiceer",
            r"klanten(?:lijst|bestand|database)|contactendatabase|klantgegevens van|gegevens van (?:alle|andere)\s+"
            r"(?:andere\s+)?(?:klanten|gebruikers)|van alle (?:andere )?klanten|(?:alle\s+)?andere\s+(?:klanten"
            r"|gebruikers)|systeemprompt|je\s+(?:instructies|systeeminstructies)|verborgen\s+instructies"
            r"|(?:interne|geheime)\s+instructies|api-?sleutel|wachtwoord van de database|beheerderswachtwoord"
            r"|gespreksgeschiedenis van andere",
            r"mijn|onze|ons",
        ),
    ],
}

# --------------------------------------------------------------------------- markup, delimiters, tool calls

_SYSTEM_WORDS = r"system|systeme|sistema|systeem"
_ROLE_TAG = [
    # a role label opening a line or a sentence ("Operating system: Windows" is not one)
    r"(?:^|[.!?;>\]\)}\"']\s*)(?:system|assistant|developer)\s*:\s",
    r"<\|?(?:system|im_start|im_end)\|?>",
    rf"<\s*/?\s*(?:{_SYSTEM_WORDS}|system_prompt|instructions?|instructies|anweisungen|instrucciones|instrucoes"
    r"|context|admin|root|sudo|developer|assistant|user|human)\s*>",
    rf"\[\s*/?\s*(?:{_SYSTEM_WORDS}|assistant|developer|inst|sys)\s*\]",
    rf"(?:^|[.!?]\s+)#{{2,}}\s*(?:{_SYSTEM_WORDS}|system\w+|instructions?|instructies|anweisungen|instrucciones"
    r"|instrucoes|assistant|new instructions|nouvelles instructions|neue anweisungen|nuevas instrucciones"
    r"|novas instrucoes|nieuwe instructies)(?:\s+[\w-]+)?\s*(?::|$)",
    r"```\s*(?:system|assistant|instructions?)\b",
    rf"<!--\s*(?:assistant|{_SYSTEM_WORDS}|ai|llm|model|instructions?|note to)\b",
]
_DELIMITER = [
    # our delimiter's name in any brackets (look-alikes of "<" included), and other models' markers
    r"retrieved_memory\b|<\|[a-z_]+\|>|\[/?inst\]|<</?sys>>",
    r"(?:[-=#*\[<]{2,}\s*)(?:end|fin|ende|einde|fim)\s+(?:[\w']+\s+){0,2}?(?:memory|memoire|memoria|speichers?"
    r"|geheugens?|context|contexte|kontext|contexto|system ?prompt|instructions|prompt)\b",
    r"\b(?:end|fin|ende|einde|fim)\s+(?:[\w']+\s+){0,2}?(?:memory|memoire|memoria|speichers?|geheugens?|context"
    r"|contexte|kontext|contexto|system ?prompt|instructions|prompt)\s*[-=#*\]>]{2,}",
    r"\bbegin\s+(?:system\s+prompt|new\s+instructions)\b",
]
_TOOL_NAME = (
    r"(?:issue|grant|apply|delete|update|send|close|create|cancel|refund|transfer|set|add|remove|approve|change"
    r"|modify|reset|escalate|get|fetch|export|execute|run|call|make|post|write|submit|process|waive|credit|upgrade"
    r"|downgrade|unlock|disable|enable|lookup|search|query|list)_[a-z_]+"
)
_TOOL_WORDS = (
    r"tools?|functions?|fonction|outil|funktion|werkzeug|tool|funcion|herramienta|funcao|ferramenta|functie"
)
_TOOL_CALL = [
    r"\"?(?:tool_calls?|function_call|tool_use)\"?\s*[:=]|<\s*/?\s*(?:tool_call|tool_use|function_calls?|invoke)\b"
    r"|\bcall_tool\s*\(|\bfunctions\.\w+\s*\(",
    r"\"name\"\s*:\s*\"[\w.-]+\"\s*,\s*\"(?:arguments|parameters|args|input)\"\s*:",
    r"\baction\s*:\s*\w+\s*\n\s*action input\s*:|\baction input\s*:",
    rf"\b{_TOOL_NAME}\s*\(",
    rf"\b(?:{_TOOL_WORDS})\s+[`'\"]?{_TOOL_NAME}|\b{_TOOL_NAME}[`'\"]?\s+(?:{_TOOL_WORDS})\b",
    r"\b(?:call|invoke|run|execute|trigger|use|appelle[rz]?|execute[rz]?|lance[rz]?|utilise[rz]?|rufe|fuhre|starte"
    r"|nutze|verwende|llama|ejecuta|lanza|usa|chame|rode|roep|voer|gebruik)\s+(?:[\w'-]+\s+){0,3}?[`'\"]?"
    rf"{_TOOL_NAME}\b",
]


def _compile(table: dict[str, list[str]] | list[str]) -> re.Pattern[str]:
    patterns = [p for ps in table.values() for p in ps] if isinstance(table, dict) else table
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.MULTILINE)


# Signal names are recorded in a quarantined memory's reasons ("untrusted_instruction:<signals>").
_SIGNALS: list[tuple[str, re.Pattern[str]]] = [
    ("override_instructions", _compile(_OVERRIDE)),
    ("role_override", _compile(_ROLE_OVERRIDE)),
    ("directive_to_model", _compile(_DIRECTIVE)),
    ("exfiltration", _compile(_EXFILTRATION)),
    ("role_tag", _compile(_ROLE_TAG)),
    ("delimiter", _compile(_DELIMITER)),
    ("tool_call", _compile(_TOOL_CALL)),
]

_TAG_OFFSET, _TAG_FIRST, _TAG_LAST = 0xE0000, 0xE0020, 0xE007E  # tag characters shadowing printable ASCII
# Characters that show nothing: C0 and C1 controls (not tab, newlines or the other whitespace
# controls, which split words rather than hide them), Unicode's Default_Ignorable_Code_Point and
# format (Cf) characters: zero-width spaces, bidi controls, Hangul fillers, interlinear annotation
# marks, Unicode tags. They can hide words from a reviewer, split a word to escape screening, or
# smuggle text to a model.
_HIDING = (
    "\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f"
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180e"
    "\u200b\u200e\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e00ff\U000e01f0-\U000e0fff"
)
# ...and the ones ordinary text needs: joiners (Persian and Indic spelling, emoji sequences such as
# a woman technologist), the combining grapheme joiner (Hebrew), Mongolian free variation selectors,
# and variation selectors (emoji presentation, ideographic variants of CJK names). Screening ignores
# them too; a context line keeps them, except in runs of three or more, which no spelling needs
# and which could carry a message in binary.
_JOINING = "\u034f\u180b-\u180d\u180f\u200c\u200d\ufe00-\ufe0f\U000e0100-\U000e01ef"
_IGNORABLE = re.compile(f"[{_HIDING}{_JOINING}]")
_HIDDEN = re.compile(f"[{_HIDING}]|[{_JOINING}]{{3,}}")
# Fullwidth and small-form look-alikes of ASCII punctuation and letters (U+FF1C, U+FE64 for "<"), folded
# to ASCII so that escaping catches a forged delimiter; other compatibility forms ("m²") are left as written.
_ASCII_LOOKALIKES = re.compile("[\uff01-\uff5e\ufe50-\ufe6b]")


def visible_text(text: str) -> str:
    """What a context line may show of the text: nothing a reviewer cannot see (`_HIDDEN`), and
    ASCII look-alikes folded to ASCII so that escaping treats them as what they imitate."""
    shown = _HIDDEN.sub("", text)
    if shown.isascii():
        return shown
    return _ASCII_LOOKALIKES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), shown)
