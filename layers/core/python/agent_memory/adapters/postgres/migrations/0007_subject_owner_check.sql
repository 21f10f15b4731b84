-- Erasure of a subject that only another tenant holds answers 404 (API.md: a path that names
-- another tenant's data gets 403 or 404). Seeing past row-level security takes the schema owner:
-- one SECURITY DEFINER function that answers yes or no and returns nothing else. The policies
-- below apply to the owner role only; the application role memory_app is unaffected.
CREATE POLICY owner_existence_check ON memory_records FOR SELECT TO CURRENT_USER USING (true);
CREATE POLICY owner_existence_check ON sessions FOR SELECT TO CURRENT_USER USING (true);

-- One index probe per tenant (tenants is small; the B-tree leads with tenant_id), so the answer
-- costs the same on PostgreSQL 15-18 with or without skip scans.
CREATE FUNCTION subject_held_by_another_tenant(p_subject text, p_tenant text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT EXISTS (
        SELECT 1 FROM tenants t
         WHERE t.tenant_id <> p_tenant
           AND (EXISTS (SELECT 1 FROM memory_records r WHERE r.tenant_id = t.tenant_id AND r.subject_id = p_subject)
                OR EXISTS (SELECT 1 FROM sessions s WHERE s.tenant_id = t.tenant_id AND s.subject_id = p_subject)))
$$;
REVOKE ALL ON FUNCTION subject_held_by_another_tenant(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION subject_held_by_another_tenant(text, text) TO memory_app;
