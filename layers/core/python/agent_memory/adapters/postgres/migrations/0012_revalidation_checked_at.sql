-- When the live value that last flagged or cleared a memory's needs_revalidation was read from
-- the system of record (for a cached answer, when it was cached). store.revalidate lets a check
-- decide only if its read is newer, so an older answer never undoes a newer flag or clear
-- (agreement with a memory that is not flagged is not recorded, so an older contradiction can
-- still flag it until the next check). Nullable without a default: no table rewrite.
ALTER TABLE memory_records ADD COLUMN IF NOT EXISTS revalidation_checked_at timestamptz;
