-- Free text a person typed into an audited action (a delete reason, an evidence reference, a hold
-- reason, an erasure request reference) lives beside the append-only chain, keyed by event and
-- subject, and is erased with the subject. The chained payload holds a digest salted with `salt`:
-- once the row is gone, the digest can no longer be matched against a guess.
CREATE TABLE audit_free_text (
    tenant_id   text NOT NULL,
    event_id    text NOT NULL,
    field       text NOT NULL,
    subject_id  text,
    text        text NOT NULL,
    salt        text NOT NULL,
    PRIMARY KEY (tenant_id, event_id, field)
);
CREATE INDEX audit_free_text_subject ON audit_free_text (tenant_id, subject_id);
ALTER TABLE audit_free_text ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_free_text FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_free_text
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
GRANT SELECT, INSERT, DELETE ON audit_free_text TO memory_app;
-- As for the events themselves: a token bound to subjects reads only their text; any is written.
CREATE POLICY subject_binding_read ON audit_free_text AS RESTRICTIVE FOR SELECT
    USING (memory_subject_in_scope(subject_id));
