-- The transactional outbox: a message for the queue is recorded in the transaction that makes it
-- true (a session close writes its extraction message beside the session row) and sent after the
-- commit, so a worker never receives a message about a row it cannot see yet, and a send that
-- fails after the commit is retried by the relay sweep instead of being lost. One row per
-- (tenant, dedupe_key): recording the same message twice is one row, and a sent row is kept so a
-- repeated close does not send it again. The payload names the tenant and the session only: no
-- subject id and no content, so erasure has nothing to reach here.
CREATE TABLE outbox (
    tenant_id   text NOT NULL,
    dedupe_key  text NOT NULL,  -- extract:<session_id>
    kind        text NOT NULL CHECK (kind IN ('extract')),
    payload     jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    sent_at     timestamptz,    -- NULL while pending
    attempts    integer NOT NULL DEFAULT 0,  -- sends tried
    last_error  text,           -- the last failed send's error class, never its message
    PRIMARY KEY (tenant_id, dedupe_key)
);
-- The sweep's look-up: a tenant's pending rows, oldest first.
CREATE INDEX outbox_pending ON outbox (tenant_id, created_at) WHERE sent_at IS NULL;

ALTER TABLE outbox ENABLE ROW LEVEL SECURITY;
ALTER TABLE outbox FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON outbox
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
GRANT SELECT, INSERT, UPDATE, DELETE ON outbox TO memory_app;

-- The sweep's other look-up: sessions that have not finished (few, against every session ever
-- closed), by when they last changed.
CREATE INDEX IF NOT EXISTS sessions_unfinished ON sessions (tenant_id, updated_at)
    WHERE status IN ('queued', 'processing');

-- The sweep walks the tenant registry, which was filled only when a tenant's audit chain started:
-- a tenant whose sessions were closed but never extracted was not in it. Recording an outbox
-- message registers its tenant from now on; tenants with sessions already are registered here
-- (the owner reads every tenant's sessions through 0007's policy).
INSERT INTO tenants (tenant_id) SELECT DISTINCT tenant_id FROM sessions ON CONFLICT DO NOTHING;
