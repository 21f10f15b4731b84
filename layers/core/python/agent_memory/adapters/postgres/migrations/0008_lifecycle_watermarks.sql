-- Where each tenant's nightly consolidation got to: the near-duplicate pass compares only memories
-- written since, against their subject's other memories (a full pass is quadratic in subject size).
CREATE TABLE lifecycle_watermarks (
    tenant_id   text NOT NULL,
    name        text NOT NULL,
    at          timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, name)
);
ALTER TABLE lifecycle_watermarks ENABLE ROW LEVEL SECURITY;
ALTER TABLE lifecycle_watermarks FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON lifecycle_watermarks
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
GRANT SELECT, INSERT, UPDATE ON lifecycle_watermarks TO memory_app;
