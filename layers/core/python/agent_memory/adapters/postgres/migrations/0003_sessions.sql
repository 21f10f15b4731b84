-- Closed sessions and the outcome of their extraction.
CREATE TABLE sessions (
    tenant_id        text NOT NULL,
    session_id       text NOT NULL,
    subject_id       text NOT NULL,
    ticket_id        text,
    channel          text,
    occurred_at      timestamptz NOT NULL,
    transcript_hash  text NOT NULL,
    transcript_key   text,
    turns            integer NOT NULL,
    status           text NOT NULL CHECK (status IN ('queued', 'processing', 'processed', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    outcome          jsonb NOT NULL DEFAULT '{}'::jsonb,
    memory_ids       text[] NOT NULL DEFAULT '{}',
    failure_reason   text,
    extractor        text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, session_id)
);
CREATE INDEX sessions_subject ON sessions (tenant_id, subject_id);

ALTER TABLE sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON sessions
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
GRANT SELECT, INSERT, UPDATE, DELETE ON sessions TO memory_app;
