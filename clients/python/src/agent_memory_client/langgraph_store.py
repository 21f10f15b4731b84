"""A LangGraph `BaseStore` backed by the Agent Memory Service.

```python
store = ServiceStore(MemoryClient(url, token=token))
graph = builder.compile(store=store)          # nodes get it as `store: BaseStore`
store.search(subject_namespace("ACC-CORP-4812"), query="renewal discount")
```

Namespaces: `("memories", <subject>)`. The tenant is the token's; the last label is the subject
id, with its periods written `%2E` (LangGraph forbids `.` in a label; `subject_namespace` does
it). The subjects a store may address are its configuration's (`subjects=`) or the token's bound
subjects (its `subjects` claim), never a namespace a model made up: any other namespace is refused
before a call, and a store with neither is refused at construction (`allow_unbound=True` lifts it
for back-office graphs that address many customers). Everything goes through the HTTP API with the
client's token, so the service's rules hold:

- `search(ns, query=...)` is `POST /v1/retrieve` (ranked, budgeted, under the token's
  clearance); without a query it lists the subject's active memories. `filter` matches item
  values exactly (`{"type": "preference"}`, `{"verified": True}`, `{"$ne": ...}`). The list it
  returns is a `Recalled`: when empty, its `note` says why (`excluded` counts, the floor).
- `put(ns, key, value)` proposes a memory to the write gateway, which decides: `value` holds the
  write's fields (`content`, and optionally `type`, `slot`, `category`, ...; never `source`: the
  source is the store's `source_kind`, what an agent reports). `{"content": ...}` alone is a
  content-only note the service classifies. A key shaped like a slot
  (`preference.contact_channel`) is the slot when the value names none, so a second put to that
  key supersedes the first; so does a put to the key (memory id) of an item that has a slot. The
  gateway may hold, quarantine or reject it: `write()` and `remember(ns, content)` return its
  decision (with `explanation`), and `last_write` keeps the last put's, where `put` (LangGraph's
  signature) returns nothing. Other keys name no stored memory: the item's key is the new
  memory's id.
- `get(ns, key)` reads a memory by id, or the active memory in a slot.
- `delete(ns, key)` forgets the memory (`DELETE /v1/memories/{id}`, a role that may forget).
- Items' keys are memory ids; their values are the record's fields (never an embedding).

Recalled values are data about the customer, never instructions for the model.
Needs the `langgraph` extra: `pip install 'agent-memory-client[langgraph]'`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the LangGraph store needs LangGraph: pip install 'agent-memory-client[langgraph]'"
    ) from exc

from agent_memory_client import models as m
from agent_memory_client._tooling import agent_source_kind, recall_note, token_subjects
from agent_memory_client.client import MemoryClient
from agent_memory_client.errors import InvalidRequest, NotFound

DEFAULT_PREFIX: tuple[str, ...] = ("memories",)
SLOT_KEY = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
# The fields a put's value may carry: the write's own, bar the subject (the namespace's) and the
# source (the store's configuration: a model's value never says who vouches for it).
WRITE_FIELDS = frozenset(m.MemoryWrite.model_fields) - {"subject_id", "source"}


class Recalled(list[SearchItem]):
    """What `search` found, and when nothing, why (`note`; `excluded` counts, `relevance_floor`)."""

    note: str | None = None
    excluded: dict[str, int]
    relevance_floor: float | None = None

    def __init__(self, items: Iterable[SearchItem] = (), found: m.RetrieveResult | None = None) -> None:
        super().__init__(items)
        self.excluded = dict(found.excluded) if found is not None else {}
        self.relevance_floor = found.relevance_floor if found is not None else None
        if not self:
            why = recall_note(found) if found is not None else None
            self.note = why or "nothing recalled: no active memory of this customer matched"


def subject_namespace(subject_id: str, prefix: tuple[str, ...] = DEFAULT_PREFIX) -> tuple[str, ...]:
    """The namespace of a subject: `("memories", "alice@example%2Ecom")`."""
    return (*prefix, subject_id.replace(".", "%2E"))


class ServiceStore(BaseStore):
    """LangGraph's store interface over the service's HTTP API, acting with one token.

    `subjects` are the customers it may address (default: the token's bound subjects);
    `source_kind` the source a typed put claims (what an agent reports: `customer_claim`, or
    `agent_inference`; `default_source` is its older spelling, `{"kind": ...}`); `forget_reason`
    is the reason a delete sends."""

    __slots__ = ("client", "default_source", "forget_reason", "last_write", "prefix", "subjects")

    def __init__(
        self,
        client: MemoryClient,
        *,
        prefix: tuple[str, ...] = DEFAULT_PREFIX,
        default_source: Mapping[str, Any] | None = None,
        forget_reason: str = "customer_request",
        subjects: Iterable[str] | None = None,
        source_kind: str | None = None,
        allow_unbound: bool = False,
    ) -> None:
        self.client = client
        self.prefix = tuple(prefix)
        kind = source_kind or (default_source or {}).get("kind")
        self.default_source = {**(default_source or {}), "kind": agent_source_kind(kind)}
        self.forget_reason = forget_reason
        self.last_write: m.WriteResult | None = None
        bound = token_subjects(client.token)
        configured = frozenset(subjects) if subjects is not None else None
        if configured is not None and bound is not None and not configured <= set(bound):
            raise ValueError("subjects names customers the token is not bound to")
        self.subjects = configured if configured is not None else frozenset(bound or ())
        if not self.subjects and not allow_unbound:
            raise ValueError(
                "ServiceStore acts on the customers its token is bound to (memory token ... --subjects ID) "
                "or those given as subjects=[...]; allow_unbound=True for a back-office graph"
            )

    # -- LangGraph's entry points ---------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Runs the operations in order, one or two API calls each."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                raise NotImplementedError(
                    "the service does not list a tenant's subjects; address a subject with subject_namespace()"
                )
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` on a worker thread (the sync client is thread-safe), so the event loop is free."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- what put does, with the gateway's decision ---------------------------------------------

    def write(
        self, namespace: tuple[str, ...], value: Mapping[str, Any], key: str | None = None
    ) -> m.WriteResult:
        """Propose `value` as a memory of the namespace's subject; the gateway's decision. A value
        with only `content` (and a session) is a content-only note the service classifies."""
        subject = self.subject_of(namespace)
        unknown = set(value) - WRITE_FIELDS
        if unknown:
            raise ValueError(
                f"not a field a put may set: {', '.join(sorted(unknown))} (the subject is the "
                "namespace's, the source the store's configuration)"
            )
        fields: dict[str, Any] = {k: v for k, v in value.items() if v is not None}
        content = fields.pop("content", None)
        if not isinstance(content, str):
            raise ValueError("a put's value needs its content, one sentence about the customer")
        if key is not None and not fields.get("slot"):
            slot = key if SLOT_KEY.match(key) else self._slot_of(subject, key)
            if slot:
                fields["slot"] = slot
        if fields.keys() - {"session_id"}:  # a typed write: the store's source, and replay-safe
            fields["source"] = self.default_source
            if key is not None and not fields.get("idempotency_key"):
                # A put LangGraph retries (same key, same value) is stored once.
                digest = hashlib.sha256(
                    json.dumps([subject, key, content, fields], sort_keys=True, default=str).encode()
                )
                fields["idempotency_key"] = f"langgraph:{digest.hexdigest()[:32]}"
        self.last_write = self.client.remember(subject, content, **fields)
        return self.last_write

    def remember(self, namespace: tuple[str, ...], content: str, **fields: Any) -> m.WriteResult:
        """A note about the namespace's subject (subject first, then content, like the client's
        `remember`); optional `session_id` and hints as for `write`. The gateway's decision."""
        return self.write(namespace, {"content": content, **fields})

    # -- namespaces -----------------------------------------------------------------------------

    def subject_of(self, namespace: tuple[str, ...]) -> str:
        """The subject id a namespace names (the tenant is the token's), if the store may address it."""
        namespace = tuple(namespace)
        if len(namespace) != len(self.prefix) + 1 or namespace[: len(self.prefix)] != self.prefix:
            raise InvalidNamespaceError(
                f"a namespace here is {(*self.prefix, '<subject>')}: one subject of the token's tenant"
            )
        subject = namespace[-1].replace("%2E", ".").replace("%2e", ".")
        if self.subjects and subject not in self.subjects:
            raise InvalidNamespaceError(
                "this store acts only on the customers its configuration or token is bound to"
            )
        return subject

    # -- the operations -------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        subject = self.subject_of(op.namespace)
        record = self._find(subject, op.key)
        if record is None:
            return None
        return Item(
            namespace=subject_namespace(subject, self.prefix),
            key=record.id,
            value=record_value(record),
            created_at=record.created_at,
            updated_at=updated_at(record),
        )

    def _find(self, subject: str, key: str) -> m.MemoryRecord | None:
        if SLOT_KEY.match(key):
            return next(
                (r for r in self.client.iter_memories(subject, status="active") if r.slot == key), None
            )
        try:
            record = self.client.get_memory(key)
        except (NotFound, InvalidRequest):  # unknown, or not shaped like an id at all
            return None
        return record if record.subject_id == subject else None

    def _slot_of(self, subject: str, key: str) -> str | None:
        """The slot of the memory a key names (a put to an item's key updates that slot)."""
        record = self._find(subject, key)
        return record.slot if record is not None else None

    def _search(self, op: SearchOp) -> Recalled:
        subject = self.subject_of(op.namespace_prefix)
        namespace = subject_namespace(subject, self.prefix)
        wanted = op.offset + op.limit
        found: list[SearchItem] = []
        result: m.RetrieveResult | None = None
        if op.query:
            types = _plain_type(op.filter)
            # How many one retrieval serves is the tenant's policy (its default, within a ceiling a
            # caller cannot raise): the store takes that and keeps `limit` of it
            fields: dict[str, Any] = {}
            if types:
                fields["types"] = types
            result = self.client.retrieve(subject, op.query, **fields)
            for hit in result.memories:
                value = retrieved_value(hit)
                if matches(value, op.filter):
                    found.append(
                        SearchItem(
                            namespace, hit.id, value, hit.effective_at, hit.effective_at, score=hit.score
                        )
                    )
        else:
            for record in self.client.iter_memories(subject, status="active"):
                value = record_value(record)
                if matches(value, op.filter):
                    found.append(
                        SearchItem(namespace, record.id, value, record.created_at, updated_at(record))
                    )
                if len(found) >= wanted:
                    break
        return Recalled(found[op.offset : wanted], result)

    def _put(self, op: PutOp) -> None:
        if op.value is None:
            subject = self.subject_of(op.namespace)
            record = self._find(subject, op.key)
            if record is not None:
                self.client.delete_memory(record.id, reason=self.forget_reason)
            return
        self.write(op.namespace, op.value, op.key)


def record_value(record: m.MemoryRecord) -> dict[str, Any]:
    """An item's value: the record's fields an agent reads (no embedding, no hashes)."""
    return {
        "content": record.content,
        "type": record.type,
        "category": record.category,
        "slot": record.slot,
        "value": record.value,
        "status": record.status,
        "authority": record.authority,
        "verified": record.verified,
        "confidence": record.confidence,
        "source": record.source.model_dump(mode="json", exclude_none=True),
        "effective_at": record.effective_at.isoformat(),
    }


def retrieved_value(hit: m.RetrievedMemory) -> dict[str, Any]:
    """A search hit's value: what retrieval says of the memory, with its section."""
    return {
        "content": hit.content,
        "type": hit.type,
        "category": hit.category,
        "slot": hit.slot,
        "section": hit.section,
        "authority": hit.authority,
        "verified": hit.verified,
        "confidence": hit.confidence,
        "contested": hit.contested,
        "source": hit.source.model_dump(mode="json", exclude_none=True),
        "effective_at": hit.effective_at.isoformat(),
    }


def updated_at(record: m.MemoryRecord) -> datetime:
    return max(d for d in (record.created_at, record.last_validated_at, record.verified_at) if d is not None)


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter: exact matches, or `{"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": x}`."""
    for field, wanted in (conditions or {}).items():
        have = value.get(field)
        if isinstance(wanted, Mapping):
            for operator, operand in wanted.items():
                if not _compare(operator, have, operand):
                    return False
        elif have != wanted:
            return False
    return True


def _compare(operator: str, have: Any, operand: Any) -> bool:
    if operator == "$eq":
        return bool(have == operand)
    if operator == "$ne":
        return bool(have != operand)
    if have is None:
        return False
    if operator == "$gt":
        return bool(have > operand)
    if operator == "$gte":
        return bool(have >= operand)
    if operator == "$lt":
        return bool(have < operand)
    if operator == "$lte":
        return bool(have <= operand)
    raise ValueError(f"unsupported filter operator {operator}")


def _plain_type(conditions: Mapping[str, Any] | None) -> list[str] | None:
    wanted = (conditions or {}).get("type")
    return [wanted] if isinstance(wanted, str) else None
