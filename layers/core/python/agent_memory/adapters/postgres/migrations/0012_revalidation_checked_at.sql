-- When a memory was last found contradicting its slot's live value: the time that check began
-- asking the system of record. A retrieval that found the memory agreeing clears the flag only if
-- no contradicting check began after its own; otherwise two retrievals racing could leave the
-- flag cleared by the older answer. Nullable without a default: no table rewrite.
ALTER TABLE memory_records ADD COLUMN IF NOT EXISTS revalidation_checked_at timestamptz;
