-- What became of every statement of a closed session (GET /v1/sessions/{id}/extraction): the
-- masked statement, its decision, the reason code, the model's score and the memory written.
-- Written with the session's outcome, in the same transaction. It quotes the (masked) transcript,
-- so it lives as long as the transcript does: the nightly transcript expiry deletes it, and a
-- subject's erasure deletes it and verifies that none is left. The session row owning it going
-- away takes it too (ON DELETE CASCADE).
CREATE TABLE extraction_reports (
    tenant_id   text NOT NULL,
    session_id  text NOT NULL,
    subject_id  text NOT NULL,
    statements  jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, session_id),
    FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, session_id) ON DELETE CASCADE
);
CREATE INDEX extraction_reports_subject ON extraction_reports (tenant_id, subject_id);

ALTER TABLE extraction_reports ENABLE ROW LEVEL SECURITY;
ALTER TABLE extraction_reports FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON extraction_reports
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY subject_binding_read ON extraction_reports AS RESTRICTIVE FOR SELECT
    USING (memory_subject_in_scope(subject_id));
CREATE POLICY subject_binding_insert ON extraction_reports AS RESTRICTIVE FOR INSERT
    WITH CHECK (memory_subject_in_scope(subject_id));
CREATE POLICY subject_binding_update ON extraction_reports AS RESTRICTIVE FOR UPDATE
    USING (memory_subject_in_scope(subject_id)) WITH CHECK (memory_subject_in_scope(subject_id));
CREATE POLICY subject_binding_delete ON extraction_reports AS RESTRICTIVE FOR DELETE
    USING (memory_subject_in_scope(subject_id));
GRANT SELECT, INSERT, UPDATE, DELETE ON extraction_reports TO memory_app;
