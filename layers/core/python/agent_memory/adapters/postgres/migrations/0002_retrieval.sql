-- Retrieval: the access log written with every retrieval (sealed into the audit
-- chain in batches), and the local system-of-record tables for development.

CREATE TABLE retrieval_log (
    tenant_id    text NOT NULL,
    id           text PRIMARY KEY,
    subject_id   text NOT NULL,
    actor        text NOT NULL,
    memory_ids   text[] NOT NULL,
    payload      jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX retrieval_log_tenant ON retrieval_log (tenant_id, created_at);

-- Live values a system of record owns (plan tier, seats, SLA): the local adapter reads these.
CREATE TABLE sor_values (
    tenant_id   text NOT NULL,
    subject_id  text NOT NULL,
    field       text NOT NULL,
    value       jsonb NOT NULL,
    as_of       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, subject_id, field)
);

CREATE TABLE sor_tickets (
    tenant_id   text NOT NULL,
    ticket_id   text NOT NULL,
    subject_id  text NOT NULL,
    status      text NOT NULL,
    priority    text,
    owner       text,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, ticket_id)
);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['retrieval_log', 'sor_values', 'sor_tickets']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format($p$CREATE POLICY tenant_isolation ON %I
                         USING (tenant_id = current_setting('app.tenant_id', true))
                         WITH CHECK (tenant_id = current_setting('app.tenant_id', true))$p$, t);
    END LOOP;
END
$$;

GRANT SELECT, INSERT, UPDATE, DELETE ON retrieval_log TO memory_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON sor_values, sor_tickets TO memory_app;
