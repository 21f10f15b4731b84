-- Deployments migrated before 0006 built an HNSW index over every vector; per-subject search
-- never used it and every insert paid for it. The partial replacement (tenant-wide searches
-- only) is created with the deployment's dimension by `memory migrate`.
DROP INDEX IF EXISTS memory_records_embedding_hnsw;
