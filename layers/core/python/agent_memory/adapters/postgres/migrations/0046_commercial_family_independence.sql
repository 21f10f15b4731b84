-- One commercial truth per account and family (seed 000 INV-MEM-03 across slots, MC-CR-01): when
-- a reviewer approves a term and says it stands beside its family's other active terms, the
-- record is flagged 'family_independent'; retrieval asks which of the family's facts it found are
-- so flagged (one statement, scoped to the tenant like the other read-path calls), and shows those
-- side by side instead of keeping only the newest verified one.

CREATE FUNCTION memory_family_independent(p_tenant text, p_ids text[])
RETURNS TABLE (id text)
    LANGUAGE plpgsql
    SET search_path = public, pg_temp
AS $fn$
#variable_conflict use_column
DECLARE
    scoped_here boolean := memory_enter_tenant(p_tenant);
BEGIN
RETURN QUERY
SELECT r.id
  FROM memory_records r
 WHERE r.tenant_id = p_tenant AND r.id = ANY (p_ids) AND 'family_independent' = ANY (r.flags);
IF scoped_here THEN
    PERFORM set_config('app.tenant_id', '', true);
END IF;
END
$fn$;
REVOKE ALL ON FUNCTION memory_family_independent(text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_family_independent(text, text[]) TO memory_app;
