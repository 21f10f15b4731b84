-- A session belongs to one subject, on every route (working memory, close, status).
--
-- `closed_by`: the token subject that closed the session (its agent). A memory drawn from the
-- session may not be approved by that agent (no self-approval); NULL for sessions closed before.
ALTER TABLE sessions ADD COLUMN closed_by text;

-- The subject a session id belongs to (its closed session, else its live working values), seen
-- past the caller's subject binding (migration 0019) but never past the tenant. The services call
-- it to answer a bound token that names another subject's session exactly as for an unknown one,
-- without writing into it; it returns a subject id only to the service, never to a caller.
CREATE FUNCTION memory_session_subject(p_session text) RETURNS text
    LANGUAGE sql STABLE
    SET app.subjects = ''
    SET search_path = public, pg_temp
AS $$
    SELECT coalesce(
        (SELECT s.subject_id FROM sessions s
          WHERE s.tenant_id = pg_catalog.current_setting('app.tenant_id', true)
            AND s.session_id = p_session),
        (SELECT w.subject_id FROM working_memory w
          WHERE w.tenant_id = pg_catalog.current_setting('app.tenant_id', true)
            AND w.session_id = p_session AND w.expires_at > pg_catalog.statement_timestamp()
          ORDER BY w.created_at LIMIT 1))
$$;
REVOKE ALL ON FUNCTION memory_session_subject(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_session_subject(text) TO memory_app;
