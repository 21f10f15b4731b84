-- INV-MEM-02 (seed 000): "unverified conversational notes and customer sentiments must carry
-- expires_at <= now() + 180 days". Admission now bounds every unverified record (a customer's
-- claim, an agent's inference, a term waiting for approval) at 180 days from admission; this
-- backfills the rows admitted before, and the table holds the bound for the types that have no
-- TTL of their own (facts and preferences) and for sentiment, whatever writes them.
--
-- Verified rows (system of record, human verified) and an approval that lifts the bound are
-- outside the check; commitments are the agent's own follow-ups, open until closed. A backfilled
-- row already past its bound is expired, and the nightly purge removes it.

UPDATE memory_records
   SET expires_at = LEAST(COALESCE(expires_at, 'infinity'), created_at + interval '180 days')
 WHERE type IN ('fact', 'preference', 'episode', 'resolution', 'observation', 'sentiment')
   AND (authority_rank <= 1 OR status = 'pending_approval' OR type = 'sentiment')
   AND (expires_at IS NULL OR expires_at > created_at + interval '180 days');

ALTER TABLE memory_records ADD CONSTRAINT memory_records_unverified_expire CHECK (
    type NOT IN ('fact', 'preference', 'sentiment')
    OR NOT (authority_rank <= 1 OR status = 'pending_approval' OR type = 'sentiment')
    OR (expires_at IS NOT NULL AND expires_at <= created_at + interval '180 days 1 minute')
);
