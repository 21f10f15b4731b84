-- Lineage keys (session:..., transcript:...) as rows with a B-tree, kept in step with
-- memory_records.lineage_keys by a trigger. Erasure finds a subject's derived records through
-- them. The array column's GIN index cannot serve that under row-level security: `@>` and `&&`
-- are not leakproof, so the planner may not use them below the tenant policy and scans the
-- table, testing every row against every key (minutes for a subject with thousands of sessions
-- in a 2,000,000-row table). Text equality is leakproof, so this index is used.
CREATE TABLE memory_lineage (
    tenant_id    text NOT NULL,
    lineage_key  text NOT NULL,
    memory_id    text NOT NULL REFERENCES memory_records (id) ON DELETE CASCADE,
    PRIMARY KEY (tenant_id, lineage_key, memory_id)
);
CREATE INDEX memory_lineage_memory ON memory_lineage (memory_id);

-- RLS for the application role. Not FORCEd: the owner maintains the table in bulk (backfill
-- below, benchmark loads); the application role never owns it.
ALTER TABLE memory_lineage ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_lineage
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
GRANT SELECT, INSERT, DELETE ON memory_lineage TO memory_app;

CREATE FUNCTION memory_lineage_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.lineage_keys IS NOT DISTINCT FROM OLD.lineage_keys THEN
            RETURN NULL;
        END IF;
        DELETE FROM memory_lineage
         WHERE tenant_id = NEW.tenant_id AND memory_id = NEW.id AND lineage_key <> ALL (NEW.lineage_keys);
    END IF;
    INSERT INTO memory_lineage (tenant_id, lineage_key, memory_id)
    SELECT NEW.tenant_id, k, NEW.id FROM unnest(NEW.lineage_keys) AS k
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
CREATE TRIGGER memory_lineage_sync AFTER INSERT OR UPDATE OF lineage_keys ON memory_records
    FOR EACH ROW EXECUTE FUNCTION memory_lineage_sync();

-- Existing rows. memory_records forces RLS even on its owner; the owner's SELECT policy of 0007
-- lets this backfill read every tenant's rows.
INSERT INTO memory_lineage (tenant_id, lineage_key, memory_id)
SELECT DISTINCT tenant_id, unnest(lineage_keys), id FROM memory_records
ON CONFLICT DO NOTHING;
