-- Forgetting one memory on request (DELETE /v1/memories/{id}).
--
-- A deleted record keeps its row, without content, so its version chain and its audit events
-- still point at something: status 'deleted' joins the statuses. Its full-text entry goes with the
-- status (the generated column indexes only retrievable statuses).
ALTER TABLE memory_records DROP CONSTRAINT IF EXISTS memory_records_status_check;
-- NOT VALID, then VALIDATE: the check of existing rows takes no lock that blocks reads or writes.
ALTER TABLE memory_records ADD CONSTRAINT memory_records_status_check
    CHECK (status IN ('candidate', 'active', 'pending_approval', 'contested', 'quarantined', 'rejected',
                      'superseded', 'expired', 'tombstoned', 'deleted')) NOT VALID;
ALTER TABLE memory_records VALIDATE CONSTRAINT memory_records_status_check;

-- The tombstone registry serves one deleted memory as it serves an erased subject. A row with a
-- memory_id is that memory's: its content hash refuses the same words for the same subject, type
-- and slot (as an erasure's does); its lineage keys refuse a candidate drawn again from the same
-- session or transcript for the same subject, type and slot (memory_type, slot). An erasure's rows
-- leave these columns NULL and refuse every candidate that carries their lineage.
ALTER TABLE tombstones ADD COLUMN IF NOT EXISTS memory_id text;
ALTER TABLE tombstones ADD COLUMN IF NOT EXISTS memory_type text;
ALTER TABLE tombstones ADD COLUMN IF NOT EXISTS slot text;
CREATE INDEX IF NOT EXISTS tombstones_memory ON tombstones (tenant_id, memory_id) WHERE memory_id IS NOT NULL;
