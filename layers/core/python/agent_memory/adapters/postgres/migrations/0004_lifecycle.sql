-- Lifecycle: erasure requests with per-step status and receipts, subject legal holds,
-- and the subject on idempotency replies (they hold a copy of the response) so erasure reaches them.

ALTER TABLE idempotency_keys ADD COLUMN subject_id text;
CREATE INDEX idempotency_keys_subject ON idempotency_keys (tenant_id, subject_id);

CREATE TABLE erasure_requests (
    tenant_id          text NOT NULL,
    erasure_id         text PRIMARY KEY,
    subject_id         text NOT NULL,
    reason             text NOT NULL,
    request_reference  text,
    requested_by       text NOT NULL,
    status             text NOT NULL CHECK (status IN ('running', 'verified', 'failed')),
    steps              jsonb NOT NULL DEFAULT '[]'::jsonb,
    lineage_keys       text[] NOT NULL DEFAULT '{}',
    receipt            jsonb,
    failure_reason     text,
    deadline           timestamptz NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    completed_at       timestamptz
);
CREATE INDEX erasure_requests_subject ON erasure_requests (tenant_id, subject_id, created_at DESC);
CREATE INDEX erasure_requests_running ON erasure_requests (tenant_id, deadline) WHERE status = 'running';

CREATE TABLE subject_holds (
    tenant_id   text NOT NULL,
    subject_id  text NOT NULL,
    reason      text NOT NULL,
    set_by      text NOT NULL,
    set_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, subject_id)
);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['erasure_requests', 'subject_holds']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format($p$CREATE POLICY tenant_isolation ON %I
                         USING (tenant_id = current_setting('app.tenant_id', true))
                         WITH CHECK (tenant_id = current_setting('app.tenant_id', true))$p$, t);
    END LOOP;
END
$$;
GRANT SELECT, INSERT, UPDATE ON erasure_requests TO memory_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON subject_holds TO memory_app;
