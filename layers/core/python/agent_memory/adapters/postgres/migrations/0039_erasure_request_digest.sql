-- An erasure request's reason and reference are the requester's words and may name the subject:
-- once the erasure is verified the row keeps only the reference's digest (which still answers a
-- repeated request with its first erasure), and the receipt names the request by that digest.
ALTER TABLE erasure_requests ADD COLUMN request_reference_sha256 text;
ALTER TABLE erasure_requests ALTER COLUMN reason DROP NOT NULL;
UPDATE erasure_requests
   SET request_reference_sha256 = encode(sha256(convert_to(subject_id || chr(31) || request_reference, 'UTF8')), 'hex')
 WHERE request_reference IS NOT NULL;
UPDATE erasure_requests
   SET receipt = receipt || jsonb_build_object('request_reference', NULL,
                                               'request_reference_sha256', request_reference_sha256)
 WHERE status = 'verified' AND receipt IS NOT NULL;
UPDATE erasure_requests SET reason = NULL, request_reference = NULL WHERE status = 'verified';
CREATE INDEX erasure_requests_reference ON erasure_requests (tenant_id, subject_id, request_reference_sha256)
    WHERE request_reference_sha256 IS NOT NULL;
