"""A memory record as a row of `memory_records`: the columns read, the insert statement and the
conversions both ways. The store, its batched statements (batch.py), its retrieval queries
(retrieval.py) and the bulk load (bulk_load.py) all read and write records through these."""

from __future__ import annotations

from typing import Any

import numpy as np
from psycopg.types.json import Jsonb

from agent_memory.domain.enums import Authority, Sensitivity
from agent_memory.domain.records import MemoryRecord

RECORD_COLUMNS = (
    "id, tenant_id, subject_id, scope, ticket_id, session_id, type, category, slot, content, value, source, "
    "extractor, extractor_version, actor, authority, confidence, confidence_basis, importance, sensitivity, "
    "status, flags, reasons, created_at, effective_at, valid_to, last_validated_at, expires_at, legal_hold, "
    "version, supersedes_id, superseded_by_id, superseded_at, verified_by, verified_at, evidence_ref, "
    "lineage_keys, content_hash, embedding_model, needs_revalidation"
)
_FIELDS = [c.strip() for c in RECORD_COLUMNS.split(",")]


_REAL_FIELDS = ("confidence", "importance")  # float4 columns: binary results carry float4 noise


# What a stored record's row holds besides its fields: the ranks the queries filter and order by,
# and the vector. The normal insert and the bulk load (bulk_load.py) and the batched one (batch.py) all write exactly these.
INSERT_COLUMNS = (*_FIELDS, "authority_rank", "sensitivity_rank", "embedding")
INSERT_RECORD = (
    f"INSERT INTO memory_records ({', '.join(INSERT_COLUMNS)})"
    f" VALUES ({', '.join('%(' + c + ')s' for c in INSERT_COLUMNS)})"
)


def record_params(record: MemoryRecord, embedding: np.ndarray | None) -> dict[str, Any]:
    """The values of INSERT_COLUMNS (and more) for one record, adapted for psycopg."""
    d = record.model_dump(mode="python")
    d["value"] = Jsonb(d["value"])
    d["source"] = Jsonb(record.source.model_dump(mode="json", exclude_none=True))
    d["authority_rank"] = Authority(record.authority).rank
    d["sensitivity_rank"] = Sensitivity(record.sensitivity).rank
    d["embedding"] = embedding
    for k in ("type", "scope", "authority", "sensitivity", "status"):
        d[k] = str(d[k])
    return d


def row_to_record(row: dict[str, Any]) -> MemoryRecord:
    data = {k: row[k] for k in _FIELDS}
    for k in _REAL_FIELDS:
        data[k] = round(float(data[k]), 6)
    return MemoryRecord.model_validate(data)
