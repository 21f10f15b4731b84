-- Sentence vectors: a long memory is also embedded sentence by sentence, so a fact buried
-- in one clause is found by its own vector (LongMemEval: +0.22 dense turn recall@5).
CREATE TABLE memory_sentences (
    tenant_id   text NOT NULL,
    memory_id   text NOT NULL REFERENCES memory_records (id) ON DELETE CASCADE,
    subject_id  text NOT NULL,
    pos         smallint NOT NULL,
    embedding   vector NOT NULL,
    PRIMARY KEY (memory_id, pos)
);
CREATE INDEX memory_sentences_subject ON memory_sentences (tenant_id, subject_id);

ALTER TABLE memory_sentences ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_sentences FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_sentences
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
GRANT SELECT, INSERT, DELETE ON memory_sentences TO memory_app;
