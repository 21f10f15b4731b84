"""Batched admission: many candidates through the write gateway's pipeline in one transaction.

Each candidate is decided on its own, by the same pure steps as a single write (`prepare`, then
`domain.decision.decide`), in the order given, and the batch stores what N single writes in that
order would store: the same decisions, records, supersessions, contested markers, idempotent
replies and audit events (one hash chain, in the same order). What changes is the cost: the
subject and slot locks are taken once for the batch (sorted, so batches sharing slots serialize
without deadlocking), the admission contexts and idempotency keys are read in one statement each,
and the records are written a statement per kind rather than per record; one commit for all.

A candidate whose context an earlier candidate of the same batch changed (the same slot, the same
content, the same subject/type/slot for the near-duplicate search, or a record an earlier one
superseded or contested) is decided on the batch's first read brought up to date with what the
batch itself has decided: its records, and the records they superseded or contested, as stored.
Where that cannot say for certain what the store would answer (the store's duplicate or nearest
record left service within the batch, two similarities too close to order, one at the threshold),
what is pending is written first and the context read again, in the same transaction, exactly as
the single write reads it. Idempotency keys repeated within a batch replay as they would one after
another.

All or nothing: a malformed candidate refuses the whole batch before anything is read (naming its
index and field), and a database error anywhere rolls it all back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from agent_memory.domain.admission import Classified
from agent_memory.domain.enums import Decision, Role
from agent_memory.domain.errors import Conflict, DomainError, InvalidRequest, PayloadTooLarge
from agent_memory.domain.hashing import content_hash, request_fingerprint
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.records import MemoryWrite, Principal, WriteResult
from agent_memory.domain.sentences import split_sentences
from agent_memory.observability import logger
from agent_memory.ports.batch import BatchTenantSession
from agent_memory.ports.store import RetryableConflict
from agent_memory.services.admission_steps import Admitter, ReadyWrite, prepare, wants_vector
from agent_memory.services.authorization import require_mutation, require_source_assertion
from agent_memory.services.batch_run import BatchRun

MAX_BATCH = 1000  # candidates per call (a route or an import chunks above it)
MAX_ATTEMPTS = 4


def refused_at(exc: DomainError, index: int, prefix: str) -> DomainError:
    """The same error, naming the candidate's position: `memories[3].slot`."""
    where = f"{prefix}[{index}]"
    return type(exc)(f"{where}: {exc.message}", field=f"{where}.{exc.field}" if exc.field else where)


def admit_batch(
    gateway: Admitter,
    principal: Principal,
    requests: Sequence[MemoryWrite],
    *,
    embeddings: Sequence[np.ndarray | None] | None = None,
    sentence_embeddings: Sequence[np.ndarray | None] | None = None,
    refuse_invalid: bool = False,
    field_prefix: str | None = "memories",
) -> list[WriteResult]:
    """Admit, hold or refuse every candidate, in order, in one transaction (see the module).

    Vectors may be precomputed (`embeddings`, aligned with `requests`; None where there is none);
    the missing ones are embedded in one call first. A malformed candidate raises its 4xx error
    naming `field_prefix[index].field` (unchanged with `field_prefix=None`) and nothing is written;
    with `refuse_invalid` it comes back as a refused result instead and the others go ahead."""
    if len(requests) > MAX_BATCH:
        raise PayloadTooLarge(f"at most {MAX_BATCH} memories per batch", field=field_prefix or "memories")
    require_mutation(principal, Role.AGENT, Role.INTEGRATION, action="write memories")
    policy = gateway.policies.for_tenant(principal.tenant_id)
    now = gateway.clock()
    results: list[WriteResult | None] = [None] * len(requests)
    prepared: list[tuple[int, MemoryWrite, Classified]] = []
    for i, request in enumerate(requests):
        try:
            require_source_assertion(principal, request.source.kind)
            clean, candidate = prepare(request, policy, now)
        except (InvalidRequest, PayloadTooLarge) as exc:
            if refuse_invalid:
                refused = exc.field or exc.code
                results[i] = WriteResult(
                    decision=Decision.REJECTED, reasons=[exc.code], memory=None, refused=refused
                )
                continue
            raise exc if field_prefix is None else refused_at(exc, i, field_prefix) from exc
        except DomainError as exc:
            raise exc if field_prefix is None else refused_at(exc, i, field_prefix) from exc
        prepared.append((i, clean, candidate))
    prepared = _within_quotas(gateway, principal, policy, prepared, results, refuse_invalid, field_prefix)
    vectors = _vectors(gateway, prepared, embeddings, sentence_embeddings)
    ready = _ready(prepared, vectors)
    if not ready:
        return [r for r in results if r is not None]
    decided, run = _admit_in_transaction(
        gateway, principal, ready, policy.near_duplicate_similarity, field_prefix
    )
    for (i, _), result in zip(ready, decided, strict=True):
        results[i] = result
    gateway.charge(principal, [r.clean for _, r in ready], decided)
    logger.info(
        "memory batch decided",
        extra={"candidates": len(requests), "rereads": run.rereads, "flushes": run.flushes},
    )
    return [r for r in results if r is not None]


def _within_quotas(
    gateway: Admitter,
    principal: Principal,
    policy: PolicyProfile,
    prepared: list[tuple[int, MemoryWrite, Classified]],
    results: list[WriteResult | None],
    refuse_invalid: bool,
    field_prefix: str | None,
) -> list[tuple[int, MemoryWrite, Classified]]:
    """The candidates the storage quotas leave room for. A batch that would break one is refused
    whole (429, nothing written); with `refuse_invalid` (an extracted session), the candidates of
    a subject over its quota come back refused, naming the quota, and the others go ahead."""
    refusals = gateway.storage_refusals(principal, policy, [clean for _, clean, _ in prepared])
    if not refusals:
        return prepared
    if not refuse_invalid:
        first = refusals.get(None) or next(iter(refusals.values()))
        raise first
    kept = []
    for i, clean, candidate in prepared:
        refusal = refusals.get(clean.subject_id)
        if refusal is None:
            kept.append((i, clean, candidate))
        else:
            results[i] = WriteResult(
                decision=Decision.REJECTED, reasons=[refusal.code], memory=None, refused=refusal.field
            )
    return kept


def _ready(
    prepared: list[tuple[int, MemoryWrite, Classified]],
    vectors: dict[int, tuple[np.ndarray | None, np.ndarray | None]],
) -> list[tuple[int, ReadyWrite]]:
    """Each prepared candidate hashed, fingerprinted and with its vectors (or marked pending)."""
    return [
        (
            i,
            ReadyWrite(
                clean=clean,
                candidate=candidate,
                content_hash=content_hash(
                    clean.subject_id, candidate.type.value, candidate.slot, clean.content
                ),
                fingerprint=request_fingerprint(clean.model_dump(mode="json")),
                embedding=vectors[i][0],
                sentence_embeddings=vectors[i][1],
                embedding_pending=wants_vector(candidate) and vectors[i][0] is None,
            ),
        )
        for i, clean, candidate in prepared
    ]


def _admit_in_transaction(
    gateway: Admitter,
    principal: Principal,
    ready: list[tuple[int, ReadyWrite]],
    near: float,
    field_prefix: str | None,
) -> tuple[list[WriteResult], BatchRun]:
    """The batch in one transaction, tried again whole after a concurrent conflict."""
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            with gateway.store.tenant(principal.tenant_id) as session:
                run = BatchRun(gateway, cast(BatchTenantSession, session), principal, near)
                try:
                    return run.admit([r for _, r in ready]), run
                except Conflict as exc:  # an idempotency key reused for another request
                    at = ready[run.position][0]
                    raise exc if field_prefix is None else refused_at(exc, at, field_prefix) from exc
        except RetryableConflict:
            if attempt == MAX_ATTEMPTS:
                raise
            logger.info("batch retried after a concurrent conflict", extra={"attempt": attempt})
    raise AssertionError("unreachable")


def _vectors(
    gateway: Admitter,
    prepared: list[tuple[int, MemoryWrite, Classified]],
    embeddings: Sequence[np.ndarray | None] | None,
    sentence_embeddings: Sequence[np.ndarray | None] | None,
) -> dict[int, tuple[np.ndarray | None, np.ndarray | None]]:
    """Each candidate's vector and sentence vectors: given, or embedded in one call for the
    candidates that want one and have none (an embedder failure defers their indexing)."""
    out: dict[int, tuple[np.ndarray | None, np.ndarray | None]] = {}
    missing: list[tuple[int, str]] = []
    for i, clean, candidate in prepared:
        whole = embeddings[i] if embeddings is not None else None
        sentences = sentence_embeddings[i] if sentence_embeddings is not None else None
        if whole is None and wants_vector(candidate):
            missing.append((i, clean.content))
        out[i] = (whole, sentences)
    if not missing:
        return out
    pieces = [[text, *split_sentences(text)] for _, text in missing]
    try:
        batch = gateway.embedder.embed([p for ps in pieces for p in ps])
    except Exception as exc:  # any embedder failure defers indexing, never loses the writes
        logger.warning(
            "embedding deferred", extra={"embedder": gateway.embedder.name, "error": type(exc).__name__}
        )
        return out
    at = 0
    for (i, _), ps in zip(missing, pieces, strict=True):
        out[i] = (batch[at], batch[at + 1 : at + len(ps)])
        at += len(ps)
    return out
