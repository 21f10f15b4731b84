-- Seed 002: "restores replay the tombstone registry before serving traffic". The registry lives
-- outside the database (a file beside the local data, an S3 bucket with object lock in AWS); this
-- row says how far this database has replayed it. A restored database carries the row of its
-- backup's time, so every entry written since is replayed at the next start.
CREATE TABLE deletion_registry_replay (
    id            int PRIMARY KEY CHECK (id = 1),
    through_seq   bigint NOT NULL,
    through_hash  text NOT NULL,
    replayed_at   timestamptz NOT NULL
);
GRANT SELECT, INSERT, UPDATE ON deletion_registry_replay TO memory_app;
