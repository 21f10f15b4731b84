-- Seed 002: "unresolvable conflicts keep both records marked contested, lower both confidences, and
-- queue human review". A contest multiplies both records' confidence by the policy's factor; the
-- confidence each had before is kept here so a reviewer's decision restores the winner's exactly
-- (NULL: the record is not lowered by a contest).
ALTER TABLE memory_records ADD COLUMN confidence_before_contest real;
