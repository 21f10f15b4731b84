"""The memory store on PostgreSQL + pgvector. Plain, parameterized SQL."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from agent_memory.adapters.postgres.audit import AuditQueries
from agent_memory.adapters.postgres.batch import BatchAdmissionQueries
from agent_memory.adapters.postgres.contested import ContestedQueries
from agent_memory.adapters.postgres.database import REQUEST_BINDING, Database, _RequestBinding
from agent_memory.adapters.postgres.lifecycle import NOT_CLOSED_COMMITMENT, LifecycleQueries
from agent_memory.adapters.postgres.record_rows import (
    INSERT_RECORD,
    RECORD_COLUMNS,
    record_params,
    row_to_record,
)
from agent_memory.adapters.postgres.refusals import RefusalQueries
from agent_memory.adapters.postgres.retrieval import PostgresRetrievalReader, RetrievalQueries
from agent_memory.adapters.postgres.sessions import SessionQueries
from agent_memory.adapters.postgres.stats import StatsQueries
from agent_memory.adapters.postgres.subject_data import SubjectDataQueries
from agent_memory.adapters.postgres.ticket_scope import TicketScopeQueries
from agent_memory.adapters.postgres.working import WorkingMemoryQueries
from agent_memory.domain.enums import Authority
from agent_memory.domain.errors import OUTSIDE_BINDING, Forbidden
from agent_memory.domain.records import MemoryRecord
from agent_memory.ports.store import (
    AdmissionContext,
    IdempotentReply,
    RetryableConflict,
)
from agent_memory.request_scope import bound_subjects


class PostgresTenantSession(
    AuditQueries,
    SessionQueries,
    RetrievalQueries,
    LifecycleQueries,
    SubjectDataQueries,
    WorkingMemoryQueries,
    ContestedQueries,
    TicketScopeQueries,
    RefusalQueries,
    BatchAdmissionQueries,
    StatsQueries,
):
    """One tenant-scoped transaction (see Database.tenant_transaction)."""

    def __init__(self, conn: psycopg.Connection[DictRow], tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id

    # -- locks ---------------------------------------------------------------
    def lock_slot(self, subject_id: str, slot: str) -> None:
        """Serialize writers of one slot until commit (no lost supersession)."""
        self.conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"slot\x1f{self.tenant_id}\x1f{subject_id}\x1f{slot}",),
        )

    def lock_subject(self, subject_id: str) -> None:
        self.conn.execute(
            "SELECT pg_advisory_xact_lock_shared(hashtextextended(%s, 0))",
            (f"subject\x1f{self.tenant_id}\x1f{subject_id}",),
        )

    # -- admission -------------------------------------------------------------
    def admission_context(
        self,
        *,
        subject_id: str,
        memory_type: str,
        slot: str | None,
        content_hash: str,
        lineage_keys: Sequence[str],
    ) -> AdmissionContext:
        row = self.conn.execute(
            f"""
            SELECT
              (SELECT id FROM memory_records
                WHERE tenant_id = %(t)s AND subject_id = %(s)s AND slot = %(slot)s AND status = 'active') AS active_id,
              (SELECT id FROM memory_records
                WHERE tenant_id = %(t)s AND content_hash = %(h)s
                  AND status IN ('active', 'pending_approval', 'contested', 'quarantined')
                  AND {NOT_CLOSED_COMMITMENT}
                ORDER BY created_at LIMIT 1) AS duplicate_id,
              EXISTS (SELECT 1 FROM tombstones
                WHERE tenant_id = %(t)s
                  AND (content_hash = %(h)s
                       -- an erased subject's lineage refuses everything drawn from it; one deleted
                       -- memory's (memory_id set) only the same memory drawn again from it
                       OR (lineage_key = ANY(%(lk)s)
                           AND (memory_id IS NULL
                                OR (subject_id = %(s)s AND memory_type = %(ty)s
                                    AND slot IS NOT DISTINCT FROM %(slot)s))))) AS tombstoned,
              EXISTS (SELECT 1 FROM erasure_requests
                WHERE tenant_id = %(t)s AND subject_id = %(s)s AND status = 'running') AS erasing
            """,
            {
                "t": self.tenant_id,
                "s": subject_id,
                "ty": memory_type,
                "slot": slot,
                "h": content_hash,
                "lk": list(lineage_keys),
            },
        ).fetchone()
        assert row is not None
        active = self.get_record(row["active_id"]) if row["active_id"] else None
        duplicate = None
        if row["duplicate_id"]:
            duplicate = (
                active
                if active and active.id == row["duplicate_id"]
                else self.get_record(row["duplicate_id"])
            )
        return AdmissionContext(
            active=active,
            duplicate=duplicate,
            tombstoned=bool(row["tombstoned"]),
            erasing=bool(row["erasing"]),
        )

    def near_duplicate(
        self,
        *,
        subject_id: str,
        memory_type: str,
        slot: str | None,
        embedding: np.ndarray,
        min_similarity: float,
    ) -> MemoryRecord | None:
        if min_similarity > 1.0:
            return None
        row = self.conn.execute(
            f"""
            SELECT {RECORD_COLUMNS}, 1 - (embedding <=> %(e)s) AS similarity
              FROM memory_records
             WHERE tenant_id = %(t)s AND subject_id = %(s)s AND type = %(ty)s
               AND slot IS NOT DISTINCT FROM %(slot)s
               AND status IN ('active', 'pending_approval', 'contested')
               AND embedding IS NOT NULL AND {NOT_CLOSED_COMMITMENT}
             ORDER BY embedding <=> %(e)s
             LIMIT 1
            """,
            {"t": self.tenant_id, "s": subject_id, "ty": memory_type, "slot": slot, "e": embedding},
        ).fetchone()
        if row is None or row["similarity"] < min_similarity:
            return None
        return row_to_record(row)

    # -- records ---------------------------------------------------------------
    def insert_record(self, record: MemoryRecord, embedding: np.ndarray | None) -> None:
        self.conn.execute(INSERT_RECORD, record_params(record, embedding))

    def insert_sentences(self, memory_id: str, subject_id: str, embeddings: np.ndarray) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO memory_sentences (tenant_id, memory_id, subject_id, pos, embedding)"
                " VALUES (%s, %s, %s, %s, %s)",
                [(self.tenant_id, memory_id, subject_id, i, v) for i, v in enumerate(embeddings)],
            )

    def supersede(self, old_id: str, new_id: str, at: datetime) -> None:
        self.conn.execute(
            """UPDATE memory_records
                  SET status = 'superseded', superseded_by_id = %s, superseded_at = %s, valid_to = %s
                WHERE tenant_id = %s AND id = %s AND status = 'active'""",
            (new_id, at, at, self.tenant_id, old_id),
        )

    _UPDATABLE = frozenset(
        {
            "authority",
            "verified_by",
            "verified_at",
            "evidence_ref",
            "reasons",
            "version",
            "supersedes_id",
            "last_validated_at",
            "needs_revalidation",
            "legal_hold",
            "expires_at",
            "content",
            "value",
            "flags",
        }
    )

    def update_status(self, memory_id: str, status: str, **fields: Any) -> MemoryRecord:
        unknown = set(fields) - self._UPDATABLE
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        sets = ["status = %(status)s"]
        params: dict[str, Any] = {"status": status, "id": memory_id, "t": self.tenant_id}
        for k, v in fields.items():
            if k == "authority":
                sets.append("authority_rank = %(authority_rank)s")
                params["authority_rank"] = Authority(v).rank
                v = str(v)
            if k == "value":
                v = Jsonb(v)
            sets.append(f"{k} = %({k})s")
            params[k] = v
        row = self.conn.execute(
            f"UPDATE memory_records SET {', '.join(sets)} WHERE tenant_id = %(t)s AND id = %(id)s"
            f" RETURNING {RECORD_COLUMNS}",
            params,
        ).fetchone()
        if row is None:
            raise LookupError(memory_id)
        return row_to_record(row)

    def get_record(self, memory_id: str, *, for_update: bool = False) -> MemoryRecord | None:
        lock = " FOR UPDATE" if for_update else ""
        row = self.conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM memory_records WHERE tenant_id = %s AND id = %s{lock}",
            (self.tenant_id, memory_id),
        ).fetchone()
        return row_to_record(row) if row else None

    def active_for_slot(self, subject_id: str, slot: str) -> MemoryRecord | None:
        row = self.conn.execute(
            f"""SELECT {RECORD_COLUMNS} FROM memory_records
                 WHERE tenant_id = %s AND subject_id = %s AND slot = %s AND status = 'active'""",
            (self.tenant_id, subject_id, slot),
        ).fetchone()
        return row_to_record(row) if row else None

    def active_for_slots(self, subject_id: str, slots: Sequence[str]) -> list[MemoryRecord]:
        if not slots:
            return []
        rows = self.conn.execute(
            f"""SELECT {RECORD_COLUMNS} FROM memory_records
                 WHERE tenant_id = %s AND subject_id = %s AND slot = ANY(%s) AND status = 'active'
                 ORDER BY slot""",
            (self.tenant_id, subject_id, list(slots)),
        ).fetchall()
        return [row_to_record(r) for r in rows]

    def slot_history(self, subject_id: str, slot: str) -> list[MemoryRecord]:
        rows = self.conn.execute(
            f"""SELECT {RECORD_COLUMNS} FROM memory_records
                 WHERE tenant_id = %s AND subject_id = %s AND slot = %s
                 ORDER BY created_at, id""",
            (self.tenant_id, subject_id, slot),
        ).fetchall()
        return [row_to_record(r) for r in rows]

    def list_subject(
        self,
        subject_id: str,
        *,
        statuses: Sequence[str],
        types: Sequence[str] | None,
        max_sensitivity_rank: int,
        before: tuple[datetime, str] | None,
        limit: int,
    ) -> list[MemoryRecord]:
        rows = self.conn.execute(
            f"""SELECT {RECORD_COLUMNS} FROM memory_records
                 WHERE tenant_id = %(t)s AND subject_id = %(s)s AND status = ANY(%(st)s)
                   AND (%(ty)s::text[] IS NULL OR type = ANY(%(ty)s))
                   AND sensitivity_rank <= %(clr)s
                   AND (%(bc)s::timestamptz IS NULL OR (created_at, id) < (%(bc)s, %(bi)s))
                 ORDER BY created_at DESC, id DESC
                 LIMIT %(lim)s""",
            {
                "t": self.tenant_id,
                "s": subject_id,
                "st": list(statuses),
                "ty": list(types) if types else None,
                "clr": max_sensitivity_rank,
                "bc": before[0] if before else None,
                "bi": before[1] if before else None,
                "lim": limit,
            },
        ).fetchall()
        return [row_to_record(r) for r in rows]

    def review_queue(
        self, *, limit: int, before: tuple[datetime, str] | None, max_sensitivity_rank: int
    ) -> list[MemoryRecord]:
        rows = self.conn.execute(
            f"""SELECT {RECORD_COLUMNS} FROM memory_records
                 WHERE tenant_id = %(t)s AND status IN ('pending_approval', 'contested')
                   AND sensitivity_rank <= %(rank)s
                   AND (%(bc)s::timestamptz IS NULL OR (created_at, id) < (%(bc)s, %(bi)s))
                 ORDER BY created_at DESC, id DESC LIMIT %(lim)s""",
            {
                "t": self.tenant_id,
                "rank": max_sensitivity_rank,
                "bc": before[0] if before else None,
                "bi": before[1] if before else None,
                "lim": limit,
            },
        ).fetchall()
        return [row_to_record(r) for r in rows]

    def similar_pending(
        self, memory_ids: Sequence[str], min_similarity: float, max_sensitivity_rank: int
    ) -> dict[str, list[tuple[str, datetime, str]]]:
        """For each of these review items, the other items of its subject waiting for review that
        say nearly the same (same type and slot, vectors at least `min_similarity` alike), with
        when each was written and its content; only records the reviewer's clearance reaches."""
        rows = self.conn.execute(
            """SELECT a.id AS item, b.id AS other, b.created_at AS other_at, b.content AS other_content
                 FROM memory_records a
                 JOIN memory_records b ON b.tenant_id = a.tenant_id AND b.subject_id = a.subject_id
                  AND b.id <> a.id AND b.status IN ('pending_approval', 'contested')
                  AND b.type = a.type AND b.slot IS NOT DISTINCT FROM a.slot
                  AND b.sensitivity_rank <= %(rank)s AND b.embedding IS NOT NULL
                  AND 1 - (a.embedding <=> b.embedding) >= %(sim)s
                WHERE a.tenant_id = %(t)s AND a.id = ANY(%(ids)s) AND a.embedding IS NOT NULL
                ORDER BY a.id, b.created_at DESC, b.id DESC""",
            {
                "t": self.tenant_id,
                "ids": list(memory_ids),
                "sim": min_similarity,
                "rank": max_sensitivity_rank,
            },
        ).fetchall()
        out: dict[str, list[tuple[str, datetime, str]]] = {}
        for r in rows:
            out.setdefault(r["item"], []).append((r["other"], r["other_at"], r["other_content"]))
        return out

    def records_missing_embedding(self, limit: int) -> list[MemoryRecord]:
        rows = self.conn.execute(
            f"""SELECT {RECORD_COLUMNS} FROM memory_records
                 WHERE tenant_id = %s AND embedding IS NULL
                   AND status IN ('active', 'pending_approval', 'contested')
                 ORDER BY created_at LIMIT %s FOR UPDATE SKIP LOCKED""",
            (self.tenant_id, limit),
        ).fetchall()
        return [row_to_record(r) for r in rows]

    def set_embedding(self, memory_id: str, embedding: np.ndarray, model: str) -> None:
        self.conn.execute(
            """UPDATE memory_records SET embedding = %s, embedding_model = %s,
                      flags = array_remove(flags, 'embedding_pending')
                WHERE tenant_id = %s AND id = %s""",
            (embedding, model, self.tenant_id, memory_id),
        )

    # -- idempotency and policy --------------------------------------------------
    def idempotent_reply(self, key: str) -> IdempotentReply | None:
        row = self.conn.execute(
            "SELECT fingerprint, status, response FROM idempotency_keys WHERE tenant_id = %s AND key = %s",
            (self.tenant_id, key),
        ).fetchone()
        if row is None:
            return None
        return IdempotentReply(fingerprint=row["fingerprint"], response=row["response"], status=row["status"])

    def save_idempotent_reply(
        self, key: str, reply: IdempotentReply, memory_id: str | None, subject_id: str | None = None
    ) -> None:
        self.conn.execute(
            """INSERT INTO idempotency_keys (tenant_id, key, fingerprint, status, response, memory_id, subject_id)
               VALUES (%s, %s, %s, %s, %s, %s, %s)""",
            (
                self.tenant_id,
                key,
                reply.fingerprint,
                reply.status,
                Jsonb(reply.response),
                memory_id,
                subject_id,
            ),
        )

    # The statuses a quota counts (services/quotas.py): records that hold content and can still be
    # served or reviewed.
    _LIVE = ("active", "pending_approval", "contested", "quarantined")

    def live_memory_counts(self, subject_ids: Sequence[str]) -> dict[str, int]:
        """Live memories per subject (the `memory_records_subject` index answers it)."""
        rows = self.conn.execute(
            """SELECT subject_id, count(*) AS n FROM memory_records
                WHERE tenant_id = %s AND subject_id = ANY(%s) AND status = ANY(%s) GROUP BY subject_id""",
            (self.tenant_id, list(subject_ids), list(self._LIVE)),
        ).fetchall()
        return {r["subject_id"]: int(r["n"]) for r in rows}

    def live_memory_usage(self) -> tuple[int, int]:
        """The tenant's live memories and the bytes of their content."""
        row = self.conn.execute(
            """SELECT count(*) AS n, coalesce(sum(octet_length(content)), 0) AS size FROM memory_records
                WHERE tenant_id = %s AND status = ANY(%s)""",
            (self.tenant_id, list(self._LIVE)),
        ).fetchone()
        return (int(row["n"]), int(row["size"])) if row else (0, 0)

    def tenant_policy(self, *, for_update: bool = False) -> tuple[str, dict[str, Any]] | None:
        lock = " FOR UPDATE" if for_update else ""
        row = self.conn.execute(
            f"SELECT profile, overrides FROM tenant_policies WHERE tenant_id = %s{lock}", (self.tenant_id,)
        ).fetchone()
        return (row["profile"], row["overrides"]) if row else None

    def set_tenant_policy(self, profile: str, overrides: dict[str, Any]) -> None:
        self.conn.execute(
            """INSERT INTO tenant_policies (tenant_id, profile, overrides, updated_at) VALUES (%s, %s, %s, now())
               ON CONFLICT (tenant_id) DO UPDATE SET profile = EXCLUDED.profile, overrides = EXCLUDED.overrides,
                                                     updated_at = now()""",
            (self.tenant_id, profile, Jsonb(overrides)),
        )


class PostgresStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @contextmanager
    def tenant(
        self,
        tenant_id: str,
        *,
        reuse_plans: bool = False,
        subjects: Collection[str] | _RequestBinding | None = REQUEST_BINDING,
    ) -> Iterator[PostgresTenantSession]:
        """One tenant transaction; `subjects` as in Database.tenant_transaction (by default the
        request's token binding)."""
        try:
            with self.db.tenant_transaction(tenant_id, reuse_plans=reuse_plans, subjects=subjects) as conn:
                yield PostgresTenantSession(conn, tenant_id)
        except (
            psycopg.errors.UniqueViolation,
            psycopg.errors.SerializationFailure,
            psycopg.errors.DeadlockDetected,
        ) as exc:
            raise RetryableConflict(type(exc).__name__) from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            # Row-level security refused a row this transaction wrote: with the tenant always set,
            # that is a subject outside the token's binding (migration 0019). Refused the same way
            # whether or not the subject exists.
            if "row-level security" not in (exc.diag.message_primary or ""):
                raise
            raise Forbidden(OUTSIDE_BINDING) from exc

    @contextmanager
    def reader(self, tenant_id: str) -> Iterator[PostgresRetrievalReader]:
        """The read path's two calls, each one statement outside a transaction (they scope the
        tenant themselves): `retrieval_candidates`, then `log_retrieval`. For a token bound to
        subjects, inside one tenant transaction instead: the functions keep the tenant a
        transaction set, and the binding set beside it applies to them (they set no binding)."""
        if bound_subjects() is not None:
            with self.tenant(tenant_id) as session:
                yield PostgresRetrievalReader(session.conn, tenant_id)
            return
        with self.db.statements() as conn:
            yield PostgresRetrievalReader(conn, tenant_id)

    def ping(self) -> bool:
        """True when the database answers; raises Unavailable, within a few seconds, when not."""
        return self.db.ping()

    def tenants(self) -> Iterator[str]:
        with self.db.transaction() as conn:
            rows = conn.execute("SELECT tenant_id FROM tenants ORDER BY tenant_id").fetchall()
        yield from (r["tenant_id"] for r in rows)

    def deletion_replay_watermark(self) -> int:
        """The last deletion-registry entry this database has replayed (0: none)."""
        with self.db.transaction() as conn:
            row = conn.execute("SELECT through_seq FROM deletion_registry_replay WHERE id = 1").fetchone()
        return int(row["through_seq"]) if row else 0

    def set_deletion_replay_watermark(self, seq: int, entry_hash: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                """INSERT INTO deletion_registry_replay (id, through_seq, through_hash, replayed_at)
                   VALUES (1, %s, %s, now())
                   ON CONFLICT (id) DO UPDATE SET through_seq = EXCLUDED.through_seq,
                                                  through_hash = EXCLUDED.through_hash,
                                                  replayed_at = EXCLUDED.replayed_at""",
                (seq, entry_hash),
            )
