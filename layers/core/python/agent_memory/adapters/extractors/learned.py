"""The learned offline extractor: a small trained head over MiniLM sentence vectors, no network.

Each turn is split into statements with the rules extractor's splitter; the
statements of a session are embedded in one batch by the embedder the service
already runs (all-MiniLM-L6-v2, 384 dimensions); a one-hidden-layer network
(plain numpy weights, `data/extractor-head.npz`, pinned by sha256 and trained
offline by `benchmarks/extraction/train.py`) gives each statement a label:
`none` (not worth storing) or a type with its slot (`preference|preference.cadence`,
`fact|stakeholder.decision_maker`, `fact|contract.discount`, `commitment`...).
Its probabilities are temperature-scaled on a validation split, so the
confidence it reports is calibrated; below `min_confidence` a statement is
skipped (`low_confidence`).

What stays deterministic (the rules extractor's pieces, reused):

- injection screening: instruction-like text is an inert flagged episode;
- speaker rules: only the customer states preferences, non-commercial facts
  and sentiment; only the agent gives commitments and observations, and an
  agent's own "I'll ..." (the rules' commitment pattern) is a commitment; system
  turns are read by the rules (tool output, confirmed outcomes);
- commercial terms: the rules' term detector or the model's `contract.*`
  label make a CONTRACT_COMMERCIAL fact, which the gateway holds for approval;
- inferences (observations) carry `agent_inference` and are quarantined, and an
  agent's guess about the customer (the rules' inference pattern) is one whatever
  the model says;
- the customer's refusals ("I'd rather not say"), no preference ("either is
  fine"), venting and bare thanks are not stored (the rules' lexicons), and a
  customer's question states no fact (it can still ask for a preference or a
  commercial term);
- identifiers: a customer's statement holding one is read by the rules and kept
  only as a problem report; every content is masked; plan tier and seats are the
  system of record's;
- the session pass (the customer's last statement in a slot wins), exact
  repeats dropped, the episode summary.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from agent_memory.adapters.extractors.fact_slots import (
    _PERSON,
)
from agent_memory.adapters.extractors.lexicons import (
    _COMMITMENT,
    _DECLINED,
    _DUE,
    _EXTRA_INJECTION,
    _NO_PREFERENCE,
    _NOT_COMMITMENT,
    _OBSERVATION,
    _PREF_SLOTS,
    _SOR_PLAN,
    _SOR_SEATS,
    _THANKS,
    _VENTING,
    _is_question,
)
from agent_memory.adapters.extractors.ngrams import NgramFeatures
from agent_memory.adapters.extractors.rules import (
    RulesExtractor,
)
from agent_memory.adapters.extractors.sentences import (
    Sentence,
    split_sentences,
)
from agent_memory.adapters.extractors.speaker_rules import (
    _Proposal,
    _Session,
    _Skip,
)
from agent_memory.domain.enums import Authority, FactCategory, MemoryType
from agent_memory.domain.errors import ConfigurationError
from agent_memory.domain.extraction import (
    ExtractionResult,
    Speaker,
    Transcript,
)
from agent_memory.domain.memory_types import TYPE_SPECS
from agent_memory.domain.sanitize import identifier_kinds
from agent_memory.domain.screening import screen_for_instructions
from agent_memory.ports.embedder import Embedder

HEAD_FILE = "extractor-head.npz"
HEAD_SHA256 = "0d52dabd7f64f1fd20fea7ad89d68ebcff83e8733148102cf2d66ea49127098a"
DEFAULT_MIN_CONFIDENCE = 0.5
# The most statements of one session the model reads (embedding them is the slow part on one vCPU); the
# rest are read by the rules.
MAX_MODEL_STATEMENTS = 1500
# A statement whose probability of being a commercial term reaches this is held for approval even
# when another label is likelier: a wrongly held statement costs a review, a wrongly admitted
# price costs a promise nobody approved.
DEFAULT_COMMERCIAL_FLOOR = 0.1
SPEAKERS = ("customer", "agent", "system")
_NOT_WORTH_STORING = frozenset({"not_memorable", "low_confidence"})

# Which labels each speaker can give (the speaker rules: the type table's `said_by`); a
# commercial term (contract.*) may be given to the customer's and the agent's statements.
_SAID_BY = {t.value: s.said_by for t, s in TYPE_SPECS.items()}


def _allowed(label: str, speaker: str) -> bool:
    if label == "none":
        return True
    kind, _, slot = label.partition("|")
    if slot.startswith("contract."):
        return speaker in ("customer", "agent")
    return speaker in _SAID_BY.get(kind, ())


def _commits(text: str) -> bool:
    """The rules' commitment pattern, where the plain word "well" is not a "we'll"."""
    found = any(m.group(0).casefold() != "well" for m in _COMMITMENT.finditer(text))
    return found and not _NOT_COMMITMENT.search(text)


def _not_worth_storing(text: str) -> str | None:
    if _DECLINED.search(text):
        return "declined_to_state"
    if _NO_PREFERENCE.search(text):
        return "no_explicit_preference"
    if _VENTING.search(text):
        return "venting"
    if _THANKS.search(text) and len(text.split()) <= 6:
        return "thanks"
    return None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def head_features(
    vectors: np.ndarray,
    speakers: list[str],
    texts: list[str],
    speaker_scale: float,
    ngrams: NgramFeatures | None,
    ngram_scale: float,
) -> np.ndarray:
    """The head's input (training builds it with this too): sentence vector, speaker, words."""
    onehot = np.zeros((len(speakers), len(SPEAKERS)), dtype=np.float32)
    for i, s in enumerate(speakers):
        onehot[i, SPEAKERS.index(s)] = speaker_scale
    parts = [np.asarray(vectors, dtype=np.float32), onehot]
    if ngrams is not None:
        parts.append(ngrams.transform(texts) * np.float32(ngram_scale))
    return np.hstack(parts)


class ExtractorHead:
    """The trained head: features -> hidden (ReLU) -> logits / temperature -> softmax. numpy only."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.w1 = weights["w1"].astype(np.float32)
        self.b1 = weights["b1"].astype(np.float32)
        self.w2 = weights["w2"].astype(np.float32)
        self.b2 = weights["b2"].astype(np.float32)
        self.labels: list[str] = [str(x) for x in weights["labels"]]
        self.temperature = float(weights["temperature"])
        self.speaker_scale = float(weights["speaker_scale"])
        # The statement's words beside its vector (ngrams.py), when the head was trained with them.
        self.ngrams: NgramFeatures | None = None
        self.ngram_scale = 0.0
        if "ngram_vocabulary" in weights:
            self.ngrams = NgramFeatures([str(t) for t in weights["ngram_vocabulary"]], weights["ngram_idf"])
            self.ngram_scale = float(weights["ngram_scale"])
        words = self.ngrams.dimension if self.ngrams is not None else 0
        self.dimension = int(self.w1.shape[0]) - len(SPEAKERS) - words

    @classmethod
    def load(cls, path: Path | None = None, *, sha256: str | None = HEAD_SHA256) -> ExtractorHead:
        """Load the committed weights (or `path`), refusing a file that does not match its pin."""
        if path is None:
            raw = (resources.files("agent_memory.adapters.extractors") / "data" / HEAD_FILE).read_bytes()
        else:
            raw = path.read_bytes()
        if sha256 is not None and _sha256(raw) != sha256:
            raise ConfigurationError("extractor head weights do not match their pinned sha256")
        import io

        with np.load(io.BytesIO(raw), allow_pickle=False) as data:
            return cls({k: data[k] for k in data.files})

    def features(self, vectors: np.ndarray, speakers: list[str], texts: list[str]) -> np.ndarray:
        return head_features(vectors, speakers, texts, self.speaker_scale, self.ngrams, self.ngram_scale)

    def probabilities(self, vectors: np.ndarray, speakers: list[str], texts: list[str]) -> np.ndarray:
        # The same numbers as `features(...) @ w1`, without the dense word columns: a statement holds
        # a handful of the vocabulary's n-grams, so their rows of w1 are added one statement at a
        # time, and the one large product is over the vector and speaker columns only.
        dense = head_features(vectors, speakers, texts, self.speaker_scale, None, 0.0)
        width = dense.shape[1]
        hidden = dense @ self.w1[:width] + self.b1
        if self.ngrams is not None:
            for row, text in enumerate(texts):
                columns, weights = self.ngrams.sparse(text)
                if columns.size:
                    scaled = (weights * self.ngram_scale).astype(np.float32)
                    hidden[row] += scaled @ self.w1[width + columns]
        hidden = np.maximum(hidden, 0.0)
        logits = (hidden @ self.w2 + self.b2) / self.temperature
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return np.asarray(p / p.sum(axis=1, keepdims=True))


class StatementScore(NamedTuple):
    label: str
    confidence: float
    commercial: float  # the probability that the statement is a commercial term
    contract_label: str  # its likeliest `fact|contract.*` label


class LearnedExtractor(RulesExtractor):
    """Session-close extractor with a trained statement classifier; the rules keep what must be fixed."""

    name = "learned"
    version = "1.0.0"

    def __init__(
        self,
        embedder: Embedder,
        *,
        head: ExtractorHead | None = None,
        min_confidence: float = DEFAULT_MIN_CONFIDENCE,
        commercial_floor: float = DEFAULT_COMMERCIAL_FLOOR,
    ) -> None:
        super().__init__(None)
        self.sentence_embedder = embedder
        self.head = head or ExtractorHead.load()
        self.min_confidence = min_confidence
        self.commercial_floor = commercial_floor

    # ------------------------------------------------------------------ public

    def classify_statements(self, texts: list[str], speakers: list[str]) -> list[tuple[str, float]]:
        """(label, calibrated confidence) per statement, the speaker rules applied to the choice."""
        return [(score.label, score.confidence) for score in self.score_statements(texts, speakers)]

    def score_statements(self, texts: list[str], speakers: list[str]) -> list[StatementScore]:
        """Each statement's label and calibrated confidence, the probability that it is a commercial
        term, and its likeliest commercial label (the speaker rules applied to all of them)."""
        if not texts:
            return []
        probs = self.head.probabilities(self.sentence_embedder.embed(texts), speakers, texts)
        labels = self.head.labels
        commercial = np.array([label.startswith("fact|contract.") for label in labels])
        allowed = {sp: np.array([_allowed(label, sp) for label in labels]) for sp in set(speakers)}
        out: list[StatementScore] = []
        for row, speaker in zip(probs, speakers, strict=True):
            masked = np.where(allowed[speaker], row, 0.0)
            total = float(masked.sum()) or 1.0
            best = int(masked.argmax())
            likeliest_contract = int(np.where(commercial, row, -1.0).argmax())
            out.append(
                StatementScore(
                    labels[best],
                    float(masked[best]) / total,
                    float(masked[commercial].sum()) / total,
                    labels[likeliest_contract],
                )
            )
        return out

    def extract(self, transcript: Transcript) -> ExtractionResult:
        session = _Session()
        sentences = [
            s
            for index, turn in enumerate(transcript.turns)
            for s in split_sentences(index, turn.speaker, turn.text)
        ]
        # The model reads a session's first MAX_MODEL_STATEMENTS statements; a longer transcript's
        # rest is read by the rules, so extraction time stays bounded (the extract function has
        # two minutes, and a 1 MB transcript holds over ten thousand statements).
        pending = [s for s in sentences if not self._read_by_rules(s)][:MAX_MODEL_STATEMENTS]
        labels = dict(
            zip(
                (id(s) for s in pending),
                self.score_statements([s.text for s in pending], [s.speaker.value for s in pending]),
                strict=True,
            )
        )
        decided: list[_Proposal | _Skip] = []
        for s in sentences:
            if id(s) not in labels:
                decided.extend(self._classify(s, session))  # screening, system turns, identifiers
            else:
                label, confidence, commercial, contract_label = labels[id(s)]
                if commercial >= self.commercial_floor and not label.startswith("fact|contract."):
                    # Holding a statement for approval is the safe side: a lower bar than admitting.
                    label, confidence = contract_label, commercial
                item = self._decide(s, label, confidence, session)
                if isinstance(item, _Skip) and item.score is None:
                    item.score = confidence  # the extraction report shows why, and how sure
                decided.append(item)
        return self._result(transcript, decided)

    # ------------------------------------------------------------------ decisions

    @staticmethod
    def _instruction(s: Sentence) -> bool:
        return bool(screen_for_instructions(s.text).flagged or _EXTRA_INJECTION.search(s.text))

    @classmethod
    def _read_by_rules(cls, s: Sentence) -> bool:
        """What the deterministic rules decide, never the model: injected instructions, system turns,
        and a customer's statement holding an identifier (kept only as a problem report)."""
        if s.speaker is Speaker.SYSTEM or cls._instruction(s):
            return True
        return s.speaker is Speaker.CUSTOMER and bool(identifier_kinds(s.text))

    def _decide(self, s: Sentence, label: str, confidence: float, session: _Session) -> _Proposal | _Skip:
        """The model's label turned into a proposal, under the deterministic rules: commercial terms
        held for approval, the agent's own commitments, and the rules' not-worth-storing checks."""
        kind, _, slot = label.partition("|")
        basis = f"learned statement classifier ({label}, calibrated p={confidence:.2f})"
        commercial = self._commercial_term(s, slot, confidence, basis, session)
        if commercial is not None:
            return commercial
        if (
            s.speaker is Speaker.AGENT
            and kind not in ("commitment", "observation")
            and _commits(s.text)
            and not _is_question(s.text)
        ):
            # The agent's own "I'll ..." is a commitment whatever the model says (a speaker rule).
            kind, confidence = "commitment", max(confidence, 0.85)
            basis = "agent stated commitment (the rules' pattern)"
        elif s.speaker is Speaker.AGENT and kind != "observation" and _OBSERVATION.search(s.text):
            # An agent's guess about the customer is an inference, quarantined, whatever the model says.
            kind, confidence = "observation", max(confidence, 0.5)
            basis = "agent inference about the customer (the rules' pattern)"
        elif label == "none":
            return _Skip(s, "not_memorable")
        skip = self._not_stored(s, kind, confidence)
        if skip is not None:
            return skip
        return self._proposal(s, kind, slot, confidence, basis, session)

    def _commercial_term(
        self, s: Sentence, slot: str, confidence: float, basis: str, session: _Session
    ) -> _Proposal | None:
        """Commercial terms are held for approval whoever states them: the rules' detector or the model."""
        ruled = self._commercial(s, session, customer=s.speaker is Speaker.CUSTOMER)
        if not slot.startswith("contract.") and ruled is None:
            return None
        if ruled is not None and slot.startswith("contract."):
            ruled.slot = slot
        proposal = ruled or _Proposal(
            s,
            MemoryType.FACT,
            Authority.CUSTOMER_CLAIM,
            confidence,
            "",
            category=FactCategory.CONTRACT_COMMERCIAL.value,
            slot=slot,
            value={"stated_by": s.speaker.value},
        )
        proposal.basis = basis + "; commercial term: needs human approval"
        proposal.confidence = max(confidence, proposal.confidence) if ruled else confidence
        return proposal

    def _not_stored(self, s: Sentence, kind: str, confidence: float) -> _Skip | None:
        """Below the confidence threshold, or what the rules never store whatever the label."""
        if confidence < self.min_confidence:
            return _Skip(s, "low_confidence")
        customer = s.speaker is Speaker.CUSTOMER
        if customer:
            # The rules' not-worth-storing lexicons: a refusal, no preference, venting, a bare thanks.
            refusal = _not_worth_storing(s.text)
            if refusal is not None:
                return _Skip(s, refusal)
            if _is_question(s.text) and kind != "preference":
                return _Skip(s, "customer_question")  # asking is not stating (a request may be a preference)
        if customer and (_SOR_PLAN.search(s.text) or _SOR_SEATS.search(s.text)) and kind != "episode":
            return _Skip(s, "owned_by_system_of_record")
        if identifier_kinds(s.text) and kind != "episode":
            return _Skip(s, "sensitive_identifier_only")
        return None

    def _proposal(
        self, s: Sentence, kind: str, slot: str, confidence: float, basis: str, session: _Session
    ) -> _Proposal | _Skip:
        """The proposal for a label's kind (its type, authority, category and value)."""
        if kind == "preference":
            return _Proposal(
                s,
                MemoryType.PREFERENCE,
                Authority.CUSTOMER_CONFIRMED,
                confidence,
                basis,
                category="PREFERENCE",
                slot=slot,
                value=self._preference_value(s.text, slot),
            )
        if kind == "fact":
            return self._fact_proposal(s, slot, confidence, basis)
        if kind == "commitment":
            due = _DUE.search(s.text)
            return _Proposal(
                s,
                MemoryType.COMMITMENT,
                Authority.AGENT_INFERENCE,
                confidence,
                basis,
                value={"owner": "agent", "due": due.group(0) if due else None, "state": "open"},
            )
        if kind == "observation":
            return _Proposal(s, MemoryType.OBSERVATION, Authority.AGENT_INFERENCE, confidence, basis)
        if kind == "resolution":
            if session.resolution_seen:
                return _Skip(s, "duplicate_confirmation")
            session.resolution_seen = True
            return _Proposal(
                s,
                MemoryType.RESOLUTION,
                Authority.CONFIRMED_OUTCOME,
                confidence,
                basis,
                value={"outcome_confirmed": True},
            )
        if kind == "episode":
            session.problem_seen = True
            return _Proposal(s, MemoryType.EPISODE, Authority.CUSTOMER_CONFIRMED, confidence, basis)
        if kind == "sentiment":
            return _Proposal(s, MemoryType.SENTIMENT, Authority.CUSTOMER_CONFIRMED, confidence, basis)
        return _Skip(s, "not_memorable")

    def _fact_proposal(self, s: Sentence, slot: str, confidence: float, basis: str) -> _Proposal:
        category = {
            "stakeholder": FactCategory.STAKEHOLDER,
            "tech": FactCategory.TECHNICAL_ENVIRONMENT,
            "profile": FactCategory.ACCOUNT_PROFILE,
        }[slot.split(".")[0]].value
        value: dict[str, Any] = {}
        if category == FactCategory.STAKEHOLDER.value:
            person = _PERSON.search(s.text)
            value = {"value": person.group(1) if person else "the speaker", "role": slot.split(".")[1]}
        return _Proposal(
            s,
            MemoryType.FACT,
            Authority.CUSTOMER_CONFIRMED,
            confidence,
            basis,
            category=category,
            slot=slot,
            value=value,
        )

    @staticmethod
    def _first_request(decided: list[_Proposal | _Skip]) -> Sentence | None:
        """As the rules' choice, but never a statement the model judged not worth storing (small talk)."""
        kept = [i for i in decided if not (isinstance(i, _Skip) and i.reason in _NOT_WORTH_STORING)]
        return RulesExtractor._first_request(kept)

    @staticmethod
    def _preference_value(text: str, slot: str) -> dict[str, Any]:
        pattern = dict(_PREF_SLOTS).get(slot)
        found = pattern.search(text) if pattern is not None else None
        return {"value": found.group(0)} if found else {}


__all__ = ["ExtractorHead", "LearnedExtractor", "head_features"]
