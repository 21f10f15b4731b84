-- Tokens bound to their subjects, and refusals in the audit log.
--
-- A token may carry a `subjects` claim: the subject ids it acts for (seed 003's RET-02, "client_id
-- = authenticated user"). Every tenant transaction sets `app.subjects` beside `app.tenant_id` (the
-- subject ids as an array literal, or '' for a token without the claim), and the policies below
-- let a row of a subject-bearing table through only if app.subjects is empty or holds the row's
-- subject. They are RESTRICTIVE: they narrow the tenant policy, never widen it. A row of another
-- subject is as invisible as a row of another tenant, so a read answers as for an unknown subject.
--
-- The read path's functions (0013, 0016, 0020) set the tenant themselves when none is in force and
-- never set a binding: a bound token's retrieval therefore runs them inside a tenant transaction,
-- which sets both, and they keep what is in force.

-- Whether a row of `p_subject` is in the caller's binding. Plain SQL, STABLE, no SET clause: the
-- planner inlines it into each policy. CASE, not OR: the array cast runs only when a binding is set
-- ('' is no array literal). A NULL subject (a tenant-wide audit event) is outside every binding.
CREATE FUNCTION memory_subject_in_scope(p_subject text) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN coalesce(pg_catalog.current_setting('app.subjects', true), '') = '' THEN true
                ELSE p_subject = ANY (pg_catalog.current_setting('app.subjects', true)::text[]) END
$$;
GRANT EXECUTE ON FUNCTION memory_subject_in_scope(text) TO memory_app;

-- Tables a bound token reads and writes only for its subjects: every command is narrowed, so a
-- write for another subject fails the policy (the store answers 403, whether or not that subject
-- exists).
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['memory_records', 'memory_sentences', 'sessions', 'tombstones',
                             'erasure_requests', 'subject_holds', 'idempotency_keys', 'sor_values',
                             'sor_tickets', 'working_memory']
    LOOP
        EXECUTE format($p$CREATE POLICY subject_binding_read ON %I AS RESTRICTIVE FOR SELECT
                         USING (memory_subject_in_scope(subject_id))$p$, t);
        EXECUTE format($p$CREATE POLICY subject_binding_insert ON %I AS RESTRICTIVE FOR INSERT
                         WITH CHECK (memory_subject_in_scope(subject_id))$p$, t);
        EXECUTE format($p$CREATE POLICY subject_binding_update ON %I AS RESTRICTIVE FOR UPDATE
                         USING (memory_subject_in_scope(subject_id))
                         WITH CHECK (memory_subject_in_scope(subject_id))$p$, t);
        EXECUTE format($p$CREATE POLICY subject_binding_delete ON %I AS RESTRICTIVE FOR DELETE
                         USING (memory_subject_in_scope(subject_id))$p$, t);
    END LOOP;
END
$$;

-- The service's own records of what a caller did: read only for the binding's subjects, written
-- for any. A retrieval naming another subject answers as for an unknown subject, and its access
-- event (and any refusal) is still recorded; the events name no content.
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['memory_events', 'retrieval_log']
    LOOP
        EXECUTE format($p$CREATE POLICY subject_binding_read ON %I AS RESTRICTIVE FOR SELECT
                         USING (memory_subject_in_scope(subject_id))$p$, t);
    END LOOP;
END
$$;
CREATE POLICY subject_binding_update ON retrieval_log AS RESTRICTIVE FOR UPDATE
    USING (memory_subject_in_scope(subject_id)) WITH CHECK (memory_subject_in_scope(subject_id));
CREATE POLICY subject_binding_delete ON retrieval_log AS RESTRICTIVE FOR DELETE
    USING (memory_subject_in_scope(subject_id));

-- Refusals (401/403) and failed retrievals go into the tenant's audit chain, at most one event per
-- minute for each identical refusal (same actor, route and reason); the refusals in between are
-- counted here and reported by the next event of the same key. In the database, so the bound holds
-- across every function instance. No content, no subject: who, which route template, why.
CREATE TABLE audit_denial_windows (
    tenant_id   text NOT NULL,
    event_type  text NOT NULL,
    actor       text NOT NULL,
    route       text NOT NULL,
    reason      text NOT NULL,
    written_at  timestamptz NOT NULL,           -- when this key's last event was written
    suppressed  integer NOT NULL DEFAULT 0,     -- identical refusals since then, not yet written
    carried     integer NOT NULL DEFAULT 0,     -- what the last event reported as unwritten before it
    PRIMARY KEY (tenant_id, event_type, actor, route, reason)
);
ALTER TABLE audit_denial_windows ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_denial_windows FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_denial_windows
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
GRANT SELECT, INSERT, UPDATE, DELETE ON audit_denial_windows TO memory_app;
