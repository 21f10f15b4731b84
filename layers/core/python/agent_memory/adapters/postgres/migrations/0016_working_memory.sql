-- Working memory: short-lived values of one open session (the exchange rate just quoted, the
-- customer's current goal), shared by every function instance (Lambda has no process affinity).
--
-- UNLOGGED: a value lives minutes and is never the system of record for anything; losing the
-- table's contents in a crash of a plain PostgreSQL server (it is truncated on recovery) costs an
-- agent a value it can ask for again, and in exchange no write goes through the WAL, to replicas or
-- to WAL archives. On Aurora the table is crash-safe anyway; it can be read on the writer only,
-- which is where every function connects (through RDS Proxy).
--
-- The TTL is hard: every read filters `expires_at > statement_timestamp()` in its own SQL, so an
-- expired value is never returned, whether or not the nightly sweep has deleted it yet. Values are
-- stored masked (identifiers replaced) and only after screening; one session belongs to one
-- subject, and erasure deletes the subject's rows and verifies that none is left.
CREATE UNLOGGED TABLE working_memory (
    tenant_id   text NOT NULL,
    session_id  text NOT NULL,
    key         text NOT NULL,
    subject_id  text NOT NULL,
    value       jsonb NOT NULL,
    bytes       integer NOT NULL CHECK (bytes >= 0),  -- the stored value's JSON size (the bound)
    written_by  text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, session_id, key)
);
-- Erasure's look-up (every row of a subject, expired or not) and the nightly sweep's.
CREATE INDEX working_memory_subject ON working_memory (tenant_id, subject_id);
CREATE INDEX working_memory_expiry ON working_memory (tenant_id, expires_at);

ALTER TABLE working_memory ENABLE ROW LEVEL SECURITY;
ALTER TABLE working_memory FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON working_memory
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
GRANT SELECT, INSERT, UPDATE, DELETE ON working_memory TO memory_app;

-- A session's live values for the retrieval read path, as one statement outside a transaction:
-- it scopes the tenant itself, as migration 0013's functions do, and clears it again.
CREATE FUNCTION memory_working_items(p_tenant text, p_session text, p_subject text)
RETURNS TABLE (key text, value_json text, expires_at timestamptz)
    LANGUAGE plpgsql
    SET search_path = public, pg_temp
AS $fn$
#variable_conflict use_column
DECLARE
    scoped_here boolean := memory_enter_tenant(p_tenant);
BEGIN
RETURN QUERY
SELECT w.key, w.value::text, w.expires_at
  FROM working_memory w
 WHERE w.tenant_id = p_tenant AND w.session_id = p_session AND w.subject_id = p_subject
   AND w.expires_at > statement_timestamp()
 ORDER BY w.updated_at DESC, w.key;
IF scoped_here THEN
    PERFORM set_config('app.tenant_id', '', true);
END IF;
END
$fn$;
REVOKE ALL ON FUNCTION memory_working_items(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_working_items(text, text, text) TO memory_app;
