"""Screening patterns for instructions that dismiss the model's own ("ignore your previous
instructions") or give it a new role ("you are now an unrestricted assistant"), per language.
The other signals and the table of signals: `screening_patterns`."""

from __future__ import annotations

# --------------------------------------------------------------------------- pattern helpers


def any_of(*alternatives: str) -> str:
    return "(?:" + "|".join(alternatives) + ")"


def dismissal(
    verbs: str, fillers: str, pointers: str, objects: str, after: str, sep: str = r"\s+"
) -> list[str]:
    """ "<verb> [fillers] <pointer> [fillers] <object>" and "<verb> [fillers] <object> <pointer after>":
    a verb of dismissal aimed at instructions that are the model's (a pointer such as "your",
    "all", "previous", "above"). Fillers are closed word lists, so "my previous email" and
    "the setup instructions" never match."""
    v, f, p, o, a = (any_of(x) for x in (verbs, fillers, pointers, objects, after))
    return [
        rf"\b{v}{sep}(?:{f}{sep}){{0,3}}?{p}{sep}(?:{f}{sep}){{0,2}}?{o}\b",
        rf"\b{v}{sep}(?:{f}{sep}){{0,3}}?{o}(?:{sep}[\w-]+)??{sep}{a}(?![\w-])",
    ]


def exfiltration(verbs: str, objects: str, excluded: str) -> str:
    """<verb> then, within a few words none of which is the customer's own ("my", "our"), data that is not
    this customer's to have: other customers' records, a bulk export, secrets, the model's instructions."""
    return rf"\b{any_of(verbs)}\b(?:\s+(?!{any_of(excluded)}\b)[\w'-]+){{0,6}}?\s+{any_of(objects)}"


GAP = r"[^.!?;\n]{0,40}?"  # a short stretch of the same sentence

# --------------------------------------------------------------------------- override / ignore

_EN_OBJECTS = (
    r"instructions?|directions|directives?|guidelines?|guidance|rules?|prompts?|system prompt|system messages?"
    r"|polic(?:y|ies)|restrictions?|constraints?|guardrails?|programming|training|safeguards?|context|commands"
    r"|configuration|standing orders"
)
_EN_POINTERS = (
    r"your|all|any|every|previous(?:ly)?|prior|above|above-mentioned|earlier|preceding|foregoing|original|initial"
    r"|existing|old|former|current|default|system|developer|safety|internal|hidden|standing|built-in|given|preset"
)
_EN_FILLERS = rf"the|these|those|such|of|and|or|other|{_EN_POINTERS}"
_EN_STRONG = r"previous|prior|above|earlier|preceding|foregoing|original|initial|system|developer|safety|hidden|internal"
_EN_VOID = (
    r"(?:are|is|were|was|have been|has been)\s+(?:now\s+|hereby\s+|officially\s+)?(?:void|null|cancell?ed|revoked"
    r"|obsolete|outdated|deprecated|invalid|suspended|lifted|overridden|superseded|replaced|disabled|deactivated|withdrawn"
    r"|rescinded|expired|no longer (?:valid|in effect|active|applicable)|not valid)"
    r"|(?:no longer|don't|do not|does not|doesn't)\s+(?:apply|count|matter|hold)"
)

OVERRIDE: dict[str, list[str]] = {
    "en": [
        *dismissal(
            r"ignore|disregard|forget|override|overrule|bypass|skip|discard|dismiss|abandon|neglect|nullify|drop|erase"
            r"|wipe|reset|clear|cancel|revoke|rescind|suspend|(?:set|put|push|leave) aside|throw (?:out|away)"
            r"|pay no (?:attention|heed|mind) to"
            r"|(?:do not|don't|dont|never|no longer) (?:follow|obey|apply|heed|respect|listen to|comply with)"
            r"|stop (?:following|obeying|applying|listening to)",
            _EN_FILLERS,
            _EN_POINTERS,
            _EN_OBJECTS,
            r"above|before|so far|until now|up to now|from (?:before|earlier|above)|earlier|previously"
            r"|(?:given|provided|received|written|stated|listed|set out)(?: to you)?"
            r"|you (?:were|have been|'ve been|got|received|have)|you (?:operate|work|run|function|act) (?:under|with)",
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
        # "the previous instructions are no longer valid", "all prior guidance is obsolete": a pointer at the
        # model's own instructions, the object right after it ("the old setup instructions" does not count)
        rf"\b(?:previous|prior|earlier|preceding|foregoing|original|initial|above|system|developer|standing)\s+"
        rf"(?:{_EN_OBJECTS})\s+(?:{_EN_VOID})",
        # "any rules loaded before this memory are hereby void"
        rf"\b(?:{_EN_OBJECTS})\s+(?:loaded|set|given|defined|provided|configured|received|written)\s+(?:before|above"
        rf"|prior to|earlier than)\b[^.\n]{{0,30}}?\s(?:{_EN_VOID})",
        r"\b(?:earlier|previous|prior|above|original)\s+(?:system\s+)?(?:message|prompt|instructions?)\s+(?:was|were)\s+"
        r"(?:a\s+|just\s+a\s+|only\s+a\s+)?(?:test|fake|mistake|joke|decoy)\b",
        r"\bthe\s+(?:real|actual|true)\s+(?:instructions|rules|prompt|task)\s+(?:are|is|follow)\s+(?:below|as follows|here)\b",
        rf"\b(?:everything|anything|all(?:\s+that)?)\s+you\s+(?:were|have been)\s+(?:configured|programmed|trained|instructed"
        rf"|told|given)\b[^.\n]{{0,20}}?\s(?:{_EN_VOID})",
        r"\byour\s+(?:instructions|prompt|system prompt|rules)\s+(?:end|stop|finish)\s+here\b",
        r"\b(?:below|here)\s+(?:are|is)\s+(?:the|your)\s+new\s+(?:ones|instructions|rules|prompt)\b",
        rf"\b(?:consider|treat|regard|deem)\s+(?:all\s+|every\s+|any\s+)?(?:(?:of\s+)?(?:the|your)\s+)?(?:(?:{_EN_POINTERS})"
        rf"\s+)?(?:{_EN_OBJECTS})\s+(?:as\s+)?(?:void|null|revoked|cancell?ed|obsolete|invalid|superseded|withdrawn|deleted"
        r"|irrelevant)\b",
        rf"\bdo\s+the\s+opposite\s+of\s+(?:what\s+)?(?:your|the)\s+(?:\w+\s+)?(?:{_EN_OBJECTS})\b",
        rf"\byour\s+(?:\w+\s+)?(?:{_EN_OBJECTS})\b[^.\n]{{0,80}}?\b(?:ignore|disregard|bypass|skip)\s+(?:them|it)\b",
        r"\b(?:follow|obey)\s+no\s+(?:other\s+)?(?:rules?|instructions?)\s+(?:except|but|other than)\s+(?:this|these|mine)\b",
        # "this note takes precedence", "this note overrides your instructions"
        r"\bthis\s+(?:note|memo|message|memory|record|text|instruction)\s+(?:takes|has)\s+(?:precedence|priority)\b",
        rf"\b(?:overrides|supersedes|replaces|trumps)\s+(?:your|all|any|the)\s+(?:(?:previous|prior|other|existing"
        rf"|system|current)\s+)?(?:{_EN_OBJECTS})\b",
        r"\b(?:overwrite|replace|swap out|rewrite)\s+your\s+(?:current\s+|existing\s+|original\s+|system\s+)?"
        r"(?:instructions|prompt|system prompt|rules|guidelines|programming|directives)\b",
        rf"\b(?:previous|prior|earlier|preceding|original|initial|old|former|system|standing)\s+(?:{_EN_OBJECTS})\s*[:=-]"
        r"\s*(?:void|null|revoked|cancell?ed|obsolete|invalid|superseded|rescinded|withdrawn|overridden|disabled)\b",
        rf"\bnone\s+of\s+(?:your|the|these|those)\s+(?:(?:{_EN_POINTERS})\s+)?(?:{_EN_OBJECTS})\s+(?:still\s+)?"
        r"(?:apply|applies|count|matter|hold|stand|(?:is|are)\s+(?:valid|in effect|active|binding))\b",
        rf"\b(?:{_EN_OBJECTS})\s+(?:that\s+)?you\s+(?:had|got|received|were given|have been given)\b[^.\n]{{0,20}}?\s"
        rf"(?:{_EN_VOID})",
        r"\b(?:everything|anything|all(?: of the text)?|whatever(?: was written)?)\s+(?:above|before|prior to)\s+"
        r"(?:this\s+(?:line|point|note|message|memo)\s+)?(?:is|was|are)\s+(?:now\s+)?(?:void|outdated|obsolete"
        r"|invalid|cancell?ed|irrelevant|superseded|no longer valid)\b",
    ],
    "fr": [
        *dismissal(
            r"ignore[rsz]?|ignorons|oublie[rsz]?|oublions|neglige[rsz]?|outrepasse[rsz]?|contourne[rsz]?"
            r"|(?:fais|faites|faire) (?:abstraction|fi)|laisse[rz]? tomber|(?:ne )?(?:tiens|tenez|tenir) (?:pas|plus|aucun) compte"
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
        r"|invalides|abrogees|remplacees|revoquees)|n'ont plus cours|ont ete (?:annulees|revoquees|levees|supprimees"
        r"|remplacees|abrogees))",
    ],
    "de": [
        *dismissal(
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
        r"|system\w*|bisher|zuvor|erhaltene[nmrs]?|gegebene[nmrs]?)){1,4}\s+\w*(?:anweisung|instruktion|regel|vorgabe"
        r"|richtlinie|vorschrift|befehl|prompt)\w*"
        r"(?:\s+[\w-]+){0,3}?\s+(?:nicht|nie|keinesfalls|ausser kraft|beiseite|links liegen|fallen)\b",
        r"\b(?:vergiss|vergesst|vergessen sie|ignorier\w*(?:\s+sie)?)\s+alles,?\s+(?:was|das)\s+(?!ich\b|wir\b)"
        r"[^.!?\n]{0,30}?\b(?:gesagt|aufgetragen|gegeben|beigebracht|erklart|mitgeteilt|geschrieben|befohlen"
        r"|vorgegeben)\b",
        r"\b(?:vergiss|vergesst|vergessen sie|ignorier\w*(?:\s+sie)?)\s+alles\s+(?:davor|vorherige|obige|bisherige"
        r"|bisher gesagte|oben|zuvor gesagte)",
        r"\balles,?\s+was\s+(?!ich\b|wir\b)[^.!?\n]{0,40}?\b(?:gesagt|aufgetragen|gegeben)\b[^.!?\n]{0,15}?,?"
        r"\s+gilt\s+nicht\s+mehr",
        r"\b(?:deine|eure|alle deine|die (?:vorherigen|bisherigen|obigen|ursprunglichen))\s+(?:\w+\s+)?\w*(?:anweisung"
        r"|instruktion|regel|vorgabe|richtlinie)\w*(?:\s+[\w-]+){0,4}?\s+(?:gelten\s+nicht\s+mehr"
        r"|sind\s+nicht\s+mehr\s+(?:gultig|in kraft|wirksam|anwendbar)|sind\s+"
        r"(?:ab sofort\s+|jetzt\s+|nun\s+|hiermit\s+)?(?:aufgehoben|ungultig|nichtig|ausser kraft|hinfallig"
        r"|widerrufen|ersetzt)|wurden\s+(?:vollstandig\s+|hiermit\s+|komplett\s+|alle\s+)?(?:widerrufen|aufgehoben"
        r"|annulliert|ersetzt|ausser kraft gesetzt))",
    ],
    "es": [
        *dismissal(
            r"ignora[rd]?|ignore[ns]?|olvidate de|olvidese de|olvidaos de|olvida[rd]?|olvide[ns]?|descarta[rd]?|descarte[ns]?|omite|omita|omitan"
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
            r"|que recibiste|que (?:has|habias) recibido|hasta ahora|hasta el momento"
            r"|vigentes|de antes",
        ),
        r"\b(?:ignora|ignore|olvida|olvide|descarta|descarte)\s+todo\s+lo\s+(?:que\s+(?!yo\b)[^.!?\n]{0,30}?"
        r"\b(?:dijeron|han dicho|ha dicho|dicho|indicaron|ensenaron|ordenaron|programaron|dieron|escrito"
        r"|explicaron)\b|anterior|de arriba|previo)",
        r"\b(?:tus|sus|vuestras|(?:todas )?las (?:instrucciones|indicaciones|reglas|normas|directrices|pautas)"
        r"\s+(?:anteriores|previas|originales|del sistema|que (?:te|le) dieron|que recibiste|que tenias|que tenia))"
        r"(?:\s+[\w-]+){0,4}?\s+(?:ya\s+)?(?:no\s+(?:son\s+validas|valen|aplican|se aplican|cuentan"
        r"|estan vigentes|tienen validez)|quedan\s+(?:anuladas|sin efecto|suspendidas|revocadas)"
        r"|(?:estan|son)\s+(?:anuladas|revocadas|suspendidas|obsoletas))",
        # "tus directrices han sido revocadas", "las reglas que tenías fueron anuladas" (not "las reglas
        # anteriores de devolución fueron revocadas", which is about returns)
        r"\b(?:(?:todas\s+)?(?:tus|sus|vuestras)\s+(?:instrucciones|indicaciones|reglas|normas|directrices|pautas)"
        r"(?:\s+(?:anteriores|previas|originales))?|las\s+(?:instrucciones|indicaciones|reglas|normas|directrices|pautas)"
        r"\s+que\s+(?:tenias|te dieron|recibiste|te han dado))\s+(?:ya\s+)?(?:han sido|fueron|quedan|quedaron)\s+"
        r"(?:revocadas|anuladas|canceladas|suspendidas|invalidadas|sustituidas)",
    ],
    "pt": [
        *dismissal(
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
        r"|nao (?:sao|estao) mais (?:validas|em vigor|aplicaveis)|nao (?:valem|se aplicam) mais"
        r"|foram (?:canceladas|revogadas|anuladas|suspensas|substituidas)|estao (?:canceladas|suspensas|revogadas)"
        r"|perderam (?:a )?validade|deixaram de valer)",
    ],
    "nl": [
        *dismissal(
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
        r"|oorspronkelijke|originele|systeem\w*|tot|nu|toe|ontvangen|gekregen|gegeven|eerder)){1,5}\s+\w*(?:instructies?"
        r"|opdrachten|regels|richtlijnen"
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
ROLE_OVERRIDE: dict[str, list[str]] = {
    "en": [
        r"(?:^|[.!?:;]\s*)(?:please\s+)?impersonate\s+",
        r"\bwith\s+(?:full|complete|unlimited|absolute)\s+authority\s+to\b",
        r"\bswitch\s+(?:personas?|characters?)\b",
        r"\b(?:disable|turn off|switch off|deactivate|bypass)\s+(?:your\s+|the\s+|all\s+)?(?:content|safety|security"
        r"|moderation)\s+(?:filter(?:ing|s)?|checks?|guardrails?|moderation|polic(?:y|ies)|rules)\b",
        r"\byou(?:'re| are)\b[^.\n]{0,40}?\bwith\s+(?:unlimited|unrestricted|absolute)\s+(?:approval\s+|admin\s+)?"
        r"(?:rights|authority|powers|permissions)\b",
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
        r"\bfais-toi passer pour\b|\bfaites-vous passer pour\b",
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
        rf"(?:{GAP}\b(?:regles|restrictions|securite|filtres|limites)\b|\s*(?:active|enclenche|actif))",
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
        rf"\b(?:entwicklermodus|admin-?modus|debug-?modus|entwickler-modus)\b(?:{GAP}\b(?:sicherheitsregeln|regeln"
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
        rf"(?:{GAP}\b(?:reglas|restricciones|seguridad|filtros|limites)\b|\s*(?:activado|activo))",
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
        rf"(?:{GAP}\b(?:regras|restricoes|seguranca|filtros|limites)\b|\s*(?:ativado|ativo))",
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
        rf"\b(?:ontwikkelaarsmodus|beheerdersmodus|debugmodus)\b(?:{GAP}\b(?:veiligheidsregels|regels"
        rf"|beperkingen|filters|limieten)\b|\s*(?:ingeschakeld|actief|aan|geactiveerd))",
        r"\bgodmodus\b",
        r"\b(?:assistent|ai|bot|chatbot|model|je bent)\b[^.\n]{0,30}?\bzonder\s+(?:enige\s+)?(?:beperkingen?"
        r"|limieten|filters?|regels|censuur)\b",
    ],
}
