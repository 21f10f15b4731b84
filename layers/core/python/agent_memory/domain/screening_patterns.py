"""The patterns injection screening looks for, one table per signal and language (English,
French, German, Spanish, Portuguese, Dutch; the other languages are in `screening_scripts`), written against the folded text `screening` reads
(lowercase, no accents, look-alikes folded to Latin). How they are read and why they need both a
verb of dismissal and a pointer at the model's own instructions: `screening`.

Performance: every pattern starts at a literal word and its gaps are bounded runs of words
(no nested unbounded repeats), so matching is linear in the text. Screening runs a pattern only
on a text that holds the literal strings it needs (`screening_prefilter`, which derives them from
the pattern: nothing to declare here, but a pattern must need some, which its tests check).
"""

from __future__ import annotations

import re

from agent_memory.domain import screening_scripts as _scripts
from agent_memory.domain.screening_overrides import OVERRIDE as _OVERRIDE
from agent_memory.domain.screening_overrides import ROLE_OVERRIDE as _ROLE_OVERRIDE
from agent_memory.domain.screening_overrides import exfiltration

# --------------------------------------------------------------------------- directives addressed to the model

_EN_AI = (
    r"ai|a\.i\.|artificial intelligence|chatbots?|bots?|llms?|language models?|copilots?|chatgpt|gpt|claude|gemini"
    r"|summari[sz]ers?"
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
        rf"\bif\s+(?:an?|any|the)\s+(?:{_EN_AI}|assistant|model|agent)\s+(?:is\s+)?(?:reads?|reading|sees?|seeing"
        r"|processes|processing|summari[sz]es|summari[sz]ing)\s+(?:this|these|the following)\b",
        r"\bas an? (?:ai|language model|llm)(?: (?:assistant|model))?,?\s+(?:you|i|it)\b",
        rf"\b(?:{_EN_AI})\s+(?:must|should|shall|has to|have to|needs? to|(?:is|are) (?:required|expected|instructed)"
        r" to)\b",
        r"\bthe\s+(?:assistant|agent)\s+(?:must|should|shall|will|has to|needs to)\s+(?:always|never)\b",
        r"\b(?:always|never)\s+(?:tell|say to|offer|give|mention|charge|ask)\s+(?:the |this )?(?:customer|client|user)\b",
        # a note to whoever reads the text, whatever reads it
        r"\b(?:to|for|attention|dear)\s+(?:whoever|whomever|anyone|anybody|any(?:one|body)?\s+(?:who|that)|all who"
        r"|everyone who)\s+(?:is\s+)?(?:reads?|reading|sees?|seeing|processes|processing|handles?|opens?)\s+"
        r"(?:this|these)\b",
        r"\b(?:to|for)\s+(?:whoever|anyone who|anybody who)\s+(?:picks?|takes?)\s+(?:this|it)\s+(?:up|over)\b",
        r"(?:^|[.!?]\s+)(?:whoever|anyone who|anybody who)\s+(?:is\s+)?(?:reads?|reading|sees?|processes)\s+this\b"
        r"[^.\n]{0,20}?,",
        rf"\b(?:{_EN_AI}|assistants?|agents?|models?)\s+(?:that|who|which)\s+(?:reads?|sees?|processes|handles"
        r"|parses|summari[sz]es|reviews|finds)\s+(?:this|these)\b",
        rf"\b(?:whichever|whatever|any|every)\s+(?:{_EN_AI}|assistant|model|agent|bot)\s+(?:ends up|happens to be"
        r"|winds up|is|gets to)?\s*(?:reading|processing|seeing|handling|summari[sz]ing)\s+(?:this|these)\b",
        rf"\b(?:important|fyi|heads up|instructions?|info|notice)\s+(?:for|to)\s+(?:the\s+|any\s+|every\s+)?"
        rf"(?:{_EN_AI}|assistants?)\s*:",
        # an imperative to give something away, at the start of a sentence or for every customer
        r"(?:^|[.!?:;]\s*)(?:please\s+)?(?:always|never|from now on,?)\s+(?:offer|give|grant|apply|approve|waive"
        r"|refund|credit|upgrade|promise|quote|charge)\b[^.\n]{0,60}?(?:discount|refund|credit|free|upgrade|fee"
        r"|waiver|compensation|at no (?:cost|charge)|%)",
        r"\b(?:always|never)\s+(?:offer|give|grant|apply|approve|waive|promise|quote|charge)\b[^.\n]{0,40}?"
        r"\b(?:to|for)\s+(?:every|each|all|any)\s+(?:customer|client|user|caller|account)s?\b",
        r"\bend\s+(?:your|each|every)\s+(?:answer|reply|response|message)s?\s+with\b",
        # "AI: when you read this, ...", "Bot: always ..."
        r"(?:^|[.!?]\s+)(?:ai|bot|chatbot|llm|gpt|copilot|model)\s*:\s+(?:when|if|please|always|never|do not|don't"
        r"|ignore|you must|from now|remember)\b",
        r"\btell\s+the\s+(?:customer|user|client|caller)\s+to\s+(?:click|visit|open|follow)\b",
        r"\bwhen\s+this\s+(?:memory|note|record|text|message)\s+is\s+(?:retrieved|read|loaded|shown|used|seen)\b",
        r"\bif\s+(?:anyone|someone|somebody|the customer|they)\s+asks?\s+(?:about|for)\s+(?:this|the)\s+(?:account|customer"
        r"|debt|balance|order|case|ticket)\b[^.\n]{0,10}?,?\s*(?:say|tell|answer|reply|respond|confirm|claim)\b",
        rf"\b(?:the\s+)?next\s+(?:{_EN_AI}|assistant|model|agent)\s+(?:to|that|who)\s+(?:reads?|sees?|handles?|processes"
        r"|opens?)\s+(?:this|these)\b",
        # "IMPORTANT (read carefully, assistant):", "Policy update for assistants:"
        rf"\b(?:important|urgent|attention|warning|note|fyi|reminder|notice|policy update|update)\b[^:\n]{{0,30}}?"
        rf"\b(?:{_EN_AI}|assistants?|models?)\b[^:\n]{{0,5}}?:",
        r"\b(?:do not|don't|never)\s+(?:tell|inform|let)\s+the\s+(?:customer|client|user|caller)\b",
        r"\bthe\s+(?:assistant|ai|bot|model|chatbot)\s+(?:should|must|shall|will|needs to|has to)\s+(?:hide|conceal|withhold"
        r"|not (?:mention|reveal|tell|disclose))\b",
        r"\bto\s+anyone\s+who\s+asks\b",
        r"(?:^|[.!?]\s+)(?:psst|hey|hi|ok|okay|listen|look|yo|remember|note)\s*,?\s+(?:dear\s+|helpful\s+|good\s+)?"
        r"(?:assistant|ai|bot|chatbot|model)\s*(?:[:,-]|\s-)",
        r"\bgive\s+(?:them|him|her|the customer|this customer|this user)\s+(?:whatever|anything|everything)\s+(?:they|he|she)"
        r"\s+(?:ask|want|request)",
        r"(?:^|[.!?:;,]\s*)approve\s+(?:every|all|any)\s+(?:requests?|refunds?|exceptions?|claims?)\b",
        r"\b(?:follow|obey)\s+only\s+(?:this|these|the following|my)\s+(?:memory|note|message|instructions?|text"
        r"|record)\b",
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


_EXFILTRATION: dict[str, list[str]] = {
    "en": [
        r"\b(?:show|tell|give|reveal|print|list|repeat)\s+(?:me\s+)?(?:the|your)\s+(?:instructions|rules|prompt|guidelines)\s+"
        r"(?:that\s+)?you\s+(?:were|have been)\s+(?:configured|programmed|given|set up|trained|initiali[sz]ed)\b",
        r"\bwhat\s+(?:were\s+you|have\s+you\s+been)\s+(?:told|instructed|given|asked)\s+(?:in|by)\s+(?:your|the)\s+"
        r"(?:setup|system|initial|first|developer)\s+(?:message|prompt|instructions?)\b",
        r"\b(?:summari[sz]e|list|describe|recap|tell me about)\s+(?:the\s+)?(?:last|previous|other|recent)\s+(?:\w+\s+)?"
        r"(?:customers|clients|users|callers|conversations|chats)\s+(?:that\s+)?you\b",
        r"\b(?:output|print|dump|leak|reveal|paste|display|read out|list)\s+(?:me\s+)?(?:the\s+)?(?:full|complete|entire"
        r"|whole)\s+list\s+of\s+(?:all\s+)?(?:customers|clients|users|subscribers|members|contacts|accounts)\b",
        exfiltration(
            r"send|e-?mail|mail|forward|export|upload|post|leak|share|transmit|dump|copy|paste|include|attach|list|append"
            r"|quote"
            r"|print|output|reveal|disclose|show|display|repeat|tell me|give me|read out|read me|write out|sync|push",
            r"(?:customer|client|user|subscriber|member|contact)s?(?:'s?)?\s+(?:list|lists|database|db|records|table"
            r"|export|base)\b|(?:all|every|each|the other|other)\s+(?:(?:of\s+)?(?:the|your)\s+)?(?:other\s+)?"
            r"(?:customer|client|user|account|contact)s?(?:'s?)?\s+(?:[\w-]+\s+){0,2}?(?:records?|data|details|emails?"
            r"|addresses|names|numbers|information|info|histor(?:y|ies)|invoices|files|conversations?|chats?|balances?"
            r"|orders|payments|transactions|statements|passwords|accounts)\b|(?:hidden|secret|internal|first|initial)\s+"
            r"(?:part|section|portion)s?\s+of\s+your\s+(?:prompt|instructions)|(?:your\s+)?(?:setup|initial|developer)\s+"
            r"(?:message|prompt)\b|(?:stored\s+)?memor(?:y|ies)\s+(?:about|of|on)\s+"
            r"(?:other|all|every)\s+(?:customers|clients|users|accounts)\b"
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
        exfiltration(
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
        exfiltration(
            r"schicke?|sende|senden sie|leite|exportiere|lade|teile|kopiere|gib|zeig(?:e)?|verrate|offenbare|nenne"
            r"|poste|veroffentliche|ubermittle|maile",
            r"\w*kunden(?:liste|datenbank|daten|kartei|stamm)\b|kontaktdatenbank|(?:aller|der anderen|anderer)\s+(?:\w+en\s+)?"
            r"(?:anderen\s+)?(?:kunden|nutzer|benutzer)|systemprompt|deine[nmrs]?\s+(?:anweisungen|instruktionen"
            r"|systemanweisungen)|(?:versteckten|geheimen|internen)\s+anweisungen|api-?schlussel|passwort der"
            r" datenbank|admin-?passwort|gesprachsverlauf anderer",
            r"meine[nmrs]?|unsere[nmrs]?|seine[nmrs]?",
        ),
    ],
    "es": [
        exfiltration(
            r"envia|envie|enviad|manda|mande|reenvia|reenvie|exporta|exporte|sube|suba|comparte|comparta|copia|copie"
            r"|pega|revela|revele|muestrame|muestra|muestre|imprime|repite|divulga|filtra|publica|dime|dame",
            r"(?:la\s+)?lista\s+(?:completa\s+)?de\s+clientes|base\s+de\s+datos\s+(?:completa\s+)?de\s+(?:clientes|contactos)"
            r"|datos\s+(?:de\s+cuenta\s+)?de\s+(?:todos\s+los|los\s+demas|otros)\s+(?:clientes|usuarios)"
            r"|(?:de|a)\s+todos\s+los\s+(?:demas\s+)?clientes|(?:de|los)\s+(?:demas|otros)\s+(?:clientes|usuarios)"
            r"|prompt\s+del\s+sistema|tus\s+instrucciones|instrucciones\s+(?:ocultas|internas|secretas|del sistema"
            r"|originales)|claves?\s+(?:de\s+)?api|contrasena\s+(?:de la base|del administrador|de admin)"
            r"|historial\s+de\s+(?:conversaciones|chats)\s+de\s+otros",
            r"mi|mis|nuestr[oa]s?",
        ),
    ],
    "pt": [
        exfiltration(
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
        exfiltration(
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

# --------------------------------------------------------------------------- claims of authority over the model

# Who may claim to stand above the model: its makers and the system's operators, not the customer's
# own administrator ("as the account administrator I authorize my colleague" is ordinary support).
_EN_OVER_MODEL = (
    r"(?:the|an?)\s+(?:system|platform|it|server|database|ai|bot|model|chatbot)\s+(?:administrator|admin|operator"
    r"|owner|developer|engineer)|your\s+(?:administrator|admin|operator|owner|developers?|creators?|makers?"
    r"|supervisor|programmers?)|(?:the|an?)\s+(?:developer|creator|operator|owner)s?\s+of\s+(?:this|the|your)\s+"
    r"(?:assistant|ai|bot|model|system|chatbot)|(?:the|your)\s+security\s+team|openai|anthropic"
)
_AUTHORITY_EN = [
    # "as the system administrator I authorize you", "I am your developer and I am instructing you"
    rf"\b(?:as|i am|i'm|this is|speaking as|we are)\s+(?:{_EN_OVER_MODEL})\b[^.\n]{{0,60}}?\b(?:i|we)\s+"
    r"(?:hereby\s+|am\s+|'m\s+|are\s+)?(?:authori[sz]e|authori[sz]ing|instruct|instructing|order|ordering|command"
    r"|commanding|direct|directing|permit|allow|grant|require|telling)\s+(?:you|the (?:assistant|ai|agent|model|bot))\b",
    # "this message comes from the security team: you are cleared to share..."
    rf"\b(?:message|note|memo|instruction|directive|notice|request)\s+(?:comes\s+|is\s+|was\s+sent\s+)?(?:directly\s+)?"
    rf"from\s+(?:{_EN_OVER_MODEL}|the\s+(?:system|developers?|administrators?|admin team|operators?|platform))\b"
    r"[^\n]{0,80}?\byou\s+(?:are|have been)\s+(?:now\s+|hereby\s+)?(?:cleared|authori[sz]ed|permitted|allowed"
    r"|approved|instructed|required)\s+to\b",
    r"\bauthori[sz]ed\s+by\s+(?:the\s+)?(?:(?:platform|system|site)\s+(?:operator|administrator|owner)|openai"
    r"|anthropic|(?:your|the)\s+developers?|(?:the\s+)?security\s+team)\b",
    r"\b(?:admin|administrator|root|sudo|developer|security|override|system)\s+(?:authori[sz]ation|clearance"
    r"|override|access)\s+code\b",
    r"\bby\s+order\s+of\s+(?:the\s+)?[\w ]{0,40}?,\s+(?:the\s+)?(?:assistant|ai|agent|model|bot)s?\s+(?:must"
    r"|shall|should|will|is to|are to)\b",
    r"\b(?:openai|anthropic|your developers?|developer)\s+(?:developer\s+|(?:safety|security|policy|trust and safety"
    r"|engineering)\s+team\s+)?(?:notice|directive|instruction|override|announcement|message)\s*:",
    r"\b(?:per|according to|following)\s+(?:the\s+)?(?:instructions?|orders?|directions?)\s+(?:from|of)\s+(?:the\s+)?"
    r"(?:platform'?s?|system'?s?|your|the)\s+(?:developers?|administrators?|operators?|owners?|creators?)\b",
    r"\bas\s+your\s+(?:supervisor|manager|boss|superior|admin|administrator|owner|operator|developer|creator)\b[^.\n]{0,20}?"
    r"\b(?:i|we)\b[^.\n]{0,10}?\b(?:tell|telling|order|ordering|instruct|instructing|authori[sz]e|authori[sz]ing|direct"
    r"|directing|command|commanding|require|requiring)\s+you\b",
    r"\b(?:message|note|notice|memo|instructions?|update)\s+from\s+(?:openai|anthropic)(?:\s+(?:staff|team|developers?"
    r"|engineers?|safety|support))?\s*:",
    r"\b(?:approved|authori[sz]ed|signed off|sanctioned|ordered|mandated)\s+by\s+your\s+(?:system\s+administrator"
    r"|administrator|admin|developers?|operators?|creators?|makers?|owners?)\b",
    r"\b(?:this|these)\s+(?:instructions?|notes?|messages?|directives?|memos?)\s+(?:has|have|takes?|carr(?:y|ies))\s+"
    r"(?:top|highest|the highest|absolute|maximum|first|overriding)\s+priority\b",
    r"\b(?:verified|authenticated|authori[sz]ed|approved|official|priority)\s+(?:admin|administrator|root|developer"
    r"|system|security)\s+(?:request|command|instruction|directive|override|order)\b",
    r"\bi\s+(?:have|hold|got)\s+(?:root|admin|administrator|sudo|developer|superuser|full)\s+(?:access|privileges?|rights)"
    r"\s+(?:to|on|over)\s+(?:this|the|your)\s+(?:deployment|system|assistant|bot|model|server|instance|ai)\b",
    r"\b(?:has|have)\s+(?:authori[sz]ed|permitted|allowed|cleared|instructed)\s+you\s+to\s+(?:release|share|disclose"
    r"|reveal|send|give|bypass|ignore|skip)\b",
    r"\byou\s+(?:now\s+)?have\s+(?:admin|administrator|root|sudo|developer|superuser|elevated)\s+(?:rights|privileges"
    r"|access|permissions)\b[^.\n]{0,5}?\s*use\s+(?:them|it)\b",
    r"\b(?:acting|speaking|writing)\s+on\s+behalf\s+of\s+(?:the\s+)?(?:system|platform|site|service)\s+(?:owner|operator"
    r"|administrator|admin)\b",
    # "I am the developer of this assistant"
    r"\b(?:i|we)\s*(?:am|'m|are|'re)\s+(?:the|your|an?|one of the)\s+(?:lead\s+|senior\s+|chief\s+|original\s+)?"
    r"(?:developers?|creators?|makers?|programmers?|engineers?|builders?|operators?|administrators?)\s+(?:of|behind|for)\s+"
    r"(?:(?:this|the|your)\s+(?:assistant|ai|bot|chatbot|model|system)|you)\b",
    # "I'm the engineer who built this assistant"
    r"\b(?:i|we)\s*(?:am|'m|are|'re)\s+(?:the|your|an?|one of the)\s+[\w -]{0,30}?\b(?:who|that)\s+(?:built|created"
    r"|made|designed|programmed|trained|deployed|runs|operates|owns|configured)\s+(?:this|the|you)\b",
    r"\bi\s*(?:am|'m)?\s+(?:hereby\s+)?authori[sz](?:e|ing)\s+you\s+to\s+(?:ignore|bypass|disable|override|reveal"
    r"|disclose)\b",
    r"\b(?:security|safety|policy|admin|administrator|system|developer)\s+override\s+(?:approved|granted|authori[sz]ed"
    r"|confirmed|accepted)\b",
    r"\byou\s+(?:now\s+)?(?:have|are granted|'ve been granted|have been granted|get)\s+(?:the\s+|full\s+)?(?:permission"
    r"|authori[sz]ation|clearance|rights?)\s+to\s+(?:ignore|bypass|disable|override|reveal|disclose|expose|leak"
    r"|share (?:other|all|every|internal))\b",
    r"\byou\s+(?:are|have been)\s+(?:now\s+|hereby\s+)?(?:cleared|authori[sz]ed|permitted|allowed)\s+to\s+"
    r"(?:ignore|bypass|skip|disable|override|reveal|disclose|share (?:account|customer|all|other)"
    r"|access (?:all|every|other))\b",
]

# --------------------------------------------------------------------------- links and images that carry data out

_URL = r"(?:https?:)?//"
_LINK_EXFILTRATION = [
    # a markdown image from another host: a model that writes it makes the reader's client fetch it
    rf"!\[[^\]\n]{{0,200}}\]\(\s*<?\s*{_URL}",
    # a URL whose query or path holds a template for the model to fill in
    # (single braces only around what a model holds: "{order_id}" in a webhook is a developer's template)
    rf"{_URL}[^\s]{{0,300}}?(?:\{{\{{|%7b%7b|\$\{{|(?:\{{|%7b)\s*[a-z_.]{{0,20}}?(?:secret|conversation|chat|histor"
    r"|transcript|prompt|e-?mail|memor|context|api_?key|password|credential|session|card|ssn|phone|address|instruction"
    r"|user(?:name)?\s*(?:\}|%7d)))",
    # a query value that names what a model holds
    rf"{_URL}[^\s?#]{{1,200}}\?[^\s]{{0,200}}?=[^\s&]{{0,40}}?(?:system_?prompt|secrets?\b|conversation"
    r"|chat_?history|transcript|credentials|api_?key|session_?token|sitzungs_?token|last_?message|customer_?e-?mail"
    r"|conversacion|conversa\b|gesprach|verlauf|historial)",
    # a bracketed placeholder for a query value ("?leak=[customer email]"), or a key that says what it is for
    rf"{_URL}[^\s?#]{{1,200}}\?[^\s]{{0,200}}?=\s*\[[a-z _-]{{2,40}}\]|{_URL}[^\s?#]{{1,200}}\?(?:[^\s]{{0,200}}?&)?"
    r"(?:leak|exfil|steal|dump|grab)=",
    # "in every reply ... https://", "... https://... in each answer"
    rf"\b(?:in|to|at the end of|after|with|for)\s+(?:every|each|all|your)\s+(?:answers?|repl(?:y|ies)|responses?|messages?"
    rf"|outputs?)\b[^\n]{{0,80}}?{_URL}",
    rf"\b(?:render|display|show|embed|insert|include|append|add|output|print)\b[^\n]{{0,80}}?{_URL}[^\n]{{0,200}}?"
    r"\b(?:in|to|at the end of)\s+(?:every|each|all)\s+(?:answers?|repl(?:y|ies)|responses?|messages?)\b",
    # a query left open for the conversation to follow
    rf"{_URL}[^\s]{{0,300}}?[?&][\w-]+=\s+(?:followed by|plus|then|and then|\+)\s+(?:the\s+)?(?:conversation|chat"
    r"|transcript|history|summary|messages|context|customer)",
    rf"{_URL}[^\s]{{0,300}}?[?&][\w-]+=\s+(?:with|and)\s+(?:the\s+)?(?:full\s+|whole\s+|chat\s+|conversation\s+"
    r"|customer'?s?\s+)?(?:conversation|chat|transcript|history|summary|messages|context|e-?mail|data)",
    r"\b(?:send|make|issue|fire)\s+an?\s+(?:get|post|http|https|web)\s+(?:request|call)\s+to\b",
    # sending the conversation to a URL
    rf"\b(?:append|send|post|upload|submit|add|write|forward)\s+(?:[\w'-]+\s+){{0,6}}?(?:conversation|chat|transcript"
    rf"|summary|history|messages|context|memories|memory)\b[^\n]{{0,40}}?\b(?:to|at)\s+{_URL}",
]

# --------------------------------------------------------------------------- markup, delimiters, tool calls

_SYSTEM_WORDS = r"system|systeme|sistema|systeem"
_ROLE_TAG = [
    # a role label opening a line or a sentence ("Operating system: Windows" is not one)
    r"(?:^|[.!?;>\]\)}\"']\s*)(?:system|assistant|developer)\s*:\s",
    r"<\|?(?:system|im_start|im_end)\|?>",
    rf"<\s*/?\s*(?:{_SYSTEM_WORDS}|system_prompt|instructions?|instructies|anweisungen|instrucciones|instrucoes"
    r"|context|admin|root|sudo|developer|assistant|user|human)\s*>",
    rf"\[\s*/?\s*(?:{_SYSTEM_WORDS}|assistant|developer|inst|sys)\s*\]",
    r"\[\s*(?:system|admin|developer|assistant)\s+(?:note|message|notice|instruction|override|prompt)\s*\]",
    r"\"role\"\s*:\s*\"(?:system|developer|assistant)\"",
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


def _flat(table: dict[str, list[str]] | list[str]) -> tuple[str, ...]:
    return tuple(p for ps in table.values() for p in ps) if isinstance(table, dict) else tuple(table)


# Signal names are recorded in a quarantined memory's reasons ("untrusted_instruction:<signals>").
# A signal is raised when any of its patterns matches (MULTILINE: "^" starts a line).
SIGNAL_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("override_instructions", _flat(_OVERRIDE) + _scripts.flat(_scripts.OVERRIDE)),
    ("role_override", _flat(_ROLE_OVERRIDE) + _scripts.flat(_scripts.ROLE_OVERRIDE)),
    ("directive_to_model", _flat(_DIRECTIVE) + _scripts.flat(_scripts.DIRECTIVE)),
    ("exfiltration", _flat(_EXFILTRATION) + _scripts.flat(_scripts.EXFILTRATION)),
    ("authority_claim", tuple(_AUTHORITY_EN) + _scripts.flat(_scripts.AUTHORITY)),
    ("link_exfiltration", tuple(_LINK_EXFILTRATION)),
    ("role_tag", _flat(_ROLE_TAG)),
    ("delimiter", _flat(_DELIMITER)),
    ("tool_call", _flat(_TOOL_CALL)),
)
FLAGS = re.MULTILINE
