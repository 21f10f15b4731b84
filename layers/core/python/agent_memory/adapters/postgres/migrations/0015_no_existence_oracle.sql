-- An erasure request for a subject this tenant does not hold is answered like any unknown
-- subject (a verified zero receipt), whether or not another tenant holds the same id: answering
-- 404 only in the second case told a caller that the subject exists elsewhere. The function that
-- saw past row-level security to tell the cases apart, and the owner policies it needed, go.
DROP FUNCTION IF EXISTS subject_held_by_another_tenant(text, text);
DROP POLICY IF EXISTS owner_existence_check ON memory_records;
DROP POLICY IF EXISTS owner_existence_check ON sessions;
