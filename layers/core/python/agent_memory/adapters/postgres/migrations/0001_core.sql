-- Core tables of the memory service. Runs unchanged on PostgreSQL 15-18 with pgvector >= 0.7.
CREATE EXTENSION IF NOT EXISTS vector;

-- The application role: owns nothing, so row-level security always applies to it.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_app') THEN
        CREATE ROLE memory_app NOLOGIN;
    END IF;
END
$$;
GRANT memory_app TO CURRENT_USER;

CREATE TABLE memory_records (
    id                 text PRIMARY KEY,
    tenant_id          text NOT NULL,
    subject_id         text NOT NULL,
    scope              text NOT NULL CHECK (scope IN ('subject', 'ticket', 'tenant')),
    ticket_id          text,
    session_id         text,
    type               text NOT NULL CHECK (type IN ('fact', 'preference', 'episode', 'resolution',
                                                     'observation', 'sentiment', 'commitment')),
    category           text NOT NULL,
    slot               text,
    content            text NOT NULL,
    value              jsonb NOT NULL DEFAULT '{}'::jsonb,
    source             jsonb NOT NULL,
    extractor          text,
    extractor_version  text,
    actor              text NOT NULL,
    authority          text NOT NULL,
    authority_rank     smallint NOT NULL CHECK (authority_rank BETWEEN 0 AND 5),
    confidence         real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    confidence_basis   text,
    importance         real NOT NULL DEFAULT 0.5,
    sensitivity        text NOT NULL,
    sensitivity_rank   smallint NOT NULL,
    status             text NOT NULL CHECK (status IN ('candidate', 'active', 'pending_approval', 'contested',
                                                       'quarantined', 'rejected', 'superseded', 'expired',
                                                       'tombstoned')),
    flags              text[] NOT NULL DEFAULT '{}',
    reasons            text[] NOT NULL DEFAULT '{}',
    created_at         timestamptz NOT NULL,
    effective_at       timestamptz NOT NULL,
    valid_to           timestamptz,
    last_validated_at  timestamptz,
    expires_at         timestamptz,
    legal_hold         boolean NOT NULL DEFAULT false,
    version            integer NOT NULL DEFAULT 1,
    supersedes_id      text,
    superseded_by_id   text,
    superseded_at      timestamptz,
    verified_by        text,
    verified_at        timestamptz,
    evidence_ref       text,
    lineage_keys       text[] NOT NULL DEFAULT '{}',
    content_hash       text NOT NULL,
    needs_revalidation boolean NOT NULL DEFAULT false,
    -- Dimension is fixed per deployment by the first `memory migrate` (see deployment_settings).
    embedding          vector,
    embedding_model    text,
    -- Full-text entries exist only while a record can be retrieved or reviewed: expiry,
    -- supersession and erasure drop them with the status change, no separate purge.
    content_tsv        tsvector GENERATED ALWAYS AS (
                           CASE WHEN status IN ('active', 'pending_approval', 'contested')
                                THEN to_tsvector('english', content) END) STORED
);

-- INV-MEM-03: never two active versions of one slot.
CREATE UNIQUE INDEX memory_records_one_active_per_slot
    ON memory_records (tenant_id, subject_id, slot)
    WHERE status = 'active' AND slot IS NOT NULL;
-- Per-subject reads and exact vector scans stay inside this B-tree range.
CREATE INDEX memory_records_subject ON memory_records (tenant_id, subject_id, status);
CREATE INDEX memory_records_hash ON memory_records (tenant_id, content_hash);
CREATE INDEX memory_records_review ON memory_records (tenant_id, created_at DESC)
    WHERE status IN ('pending_approval', 'contested');
CREATE INDEX memory_records_missing_embedding ON memory_records (tenant_id)
    WHERE embedding IS NULL AND status IN ('active', 'pending_approval', 'contested');
CREATE INDEX memory_records_expiry ON memory_records (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX memory_records_lineage ON memory_records USING gin (lineage_keys);
CREATE INDEX memory_records_tsv ON memory_records USING gin (content_tsv);

-- Append-only audit log, hash-chained per tenant.
CREATE TABLE memory_events (
    tenant_id   text NOT NULL,
    seq         bigint NOT NULL,
    id          text NOT NULL UNIQUE,
    event_type  text NOT NULL,
    memory_id   text,
    subject_id  text,
    actor       text NOT NULL,
    reason      text,
    payload     jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at  timestamptz NOT NULL,
    prev_hash   text NOT NULL,
    hash        text NOT NULL,
    PRIMARY KEY (tenant_id, seq)
);
CREATE INDEX memory_events_memory ON memory_events (tenant_id, memory_id);
CREATE INDEX memory_events_subject ON memory_events (tenant_id, subject_id, seq);

CREATE TABLE audit_chain_heads (
    tenant_id  text PRIMARY KEY,
    seq        bigint NOT NULL,
    hash       text NOT NULL
);

CREATE FUNCTION memory_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'memory_events is append-only (% refused)', TG_OP;
END
$$;
CREATE TRIGGER memory_events_no_update BEFORE UPDATE OR DELETE ON memory_events
    FOR EACH ROW EXECUTE FUNCTION memory_events_append_only();

-- What was erased, so an old transcript or write cannot bring it back.
CREATE TABLE tombstones (
    tenant_id     text NOT NULL,
    subject_id    text NOT NULL,
    content_hash  text,
    lineage_key   text,
    erasure_id    text,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tombstones_hash ON tombstones (tenant_id, content_hash);
CREATE INDEX tombstones_lineage ON tombstones (tenant_id, lineage_key);
CREATE INDEX tombstones_subject ON tombstones (tenant_id, subject_id);

CREATE TABLE idempotency_keys (
    tenant_id    text NOT NULL,
    key          text NOT NULL,
    fingerprint  text NOT NULL,
    status       integer NOT NULL,
    response     jsonb NOT NULL,
    memory_id    text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, key)
);

CREATE TABLE tenant_policies (
    tenant_id   text PRIMARY KEY,
    profile     text NOT NULL,
    overrides   jsonb NOT NULL DEFAULT '{}'::jsonb,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Deployment-wide settings checked at start (embedding dimension and model).
CREATE TABLE deployment_settings (
    key    text PRIMARY KEY,
    value  text NOT NULL
);

-- Row-level security: every tenant table sees only app.tenant_id, forced even for the owner.
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['memory_records', 'memory_events', 'audit_chain_heads', 'tombstones',
                             'idempotency_keys', 'tenant_policies']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format($p$CREATE POLICY tenant_isolation ON %I
                         USING (tenant_id = current_setting('app.tenant_id', true))
                         WITH CHECK (tenant_id = current_setting('app.tenant_id', true))$p$, t);
    END LOOP;
END
$$;

GRANT SELECT, INSERT, UPDATE, DELETE ON memory_records, tombstones, idempotency_keys, tenant_policies
    TO memory_app;
GRANT SELECT, INSERT, UPDATE ON audit_chain_heads TO memory_app;
GRANT SELECT, INSERT ON memory_events TO memory_app;
GRANT SELECT ON deployment_settings TO memory_app;

-- Cross-tenant maintenance (nightly purge, audit verification) needs the list of
-- tenants and nothing else: a registry of ids, filled when a tenant's audit chain starts.
CREATE TABLE tenants (
    tenant_id   text PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now()
);
GRANT SELECT, INSERT ON tenants TO memory_app;
