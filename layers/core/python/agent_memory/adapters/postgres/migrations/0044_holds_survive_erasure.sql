-- Legal holds win over erasure (GDPR Art. 17(3)(e): data needed for legal claims is kept).
-- Each hold gets an id an erasure receipt can name (`retained_under_hold: [{"hold_id", "records"}]`):
-- a subject's hold in `subject_holds`, one memory's hold beside its `legal_hold` flag. An erasure
-- that kept held records is completed by a later one (after the hold is released), which names the
-- erasure it completes.

ALTER TABLE subject_holds ADD COLUMN hold_id text;
UPDATE subject_holds SET hold_id = 'hold_' || substr(md5(tenant_id || chr(31) || subject_id || chr(31) || set_at::text), 1, 28)
 WHERE hold_id IS NULL;
ALTER TABLE subject_holds ALTER COLUMN hold_id SET NOT NULL;

ALTER TABLE memory_records ADD COLUMN legal_hold_id text;
UPDATE memory_records SET legal_hold_id = 'hold_' || substr(md5(tenant_id || chr(31) || id), 1, 28)
 WHERE legal_hold AND legal_hold_id IS NULL;

ALTER TABLE erasure_requests ADD COLUMN completes_erasure_id text;
CREATE INDEX erasure_requests_completes ON erasure_requests (tenant_id, completes_erasure_id)
 WHERE completes_erasure_id IS NOT NULL;
