-- The retrieval candidates query as a PL/pgSQL function (store.retrieval_candidates documents it).
--
-- Why a function: planning this statement costs more server CPU than running it. A client-side
-- prepared statement reuses the plan, but it is named session state, and RDS Proxy pins every
-- connection that holds one to a single database connection for the rest of its life, so the
-- proxy can no longer share it. PL/pgSQL keeps its plans inside the backend, out of the proxy's
-- sight: each database connection plans the query once, whichever client's transaction it serves.
-- SECURITY INVOKER (the default): row-level security applies exactly as to the statement itself.
-- The query between the markers is also explained by `memory bench retrieve` (its `plans`).
CREATE FUNCTION memory_retrieval_candidates(
    p_tenant text, p_subject text, p_q vector, p_qtext text, p_verified text[], p_now timestamptz,
    p_clr integer, p_types text[], p_n integer
) RETURNS TABLE (
    id text, type text, authority text, confidence real, effective_at timestamptz, session_id text,
    slot text, similarity double precision, lexical double precision, sentence_similarity double precision,
    lexemes text, query_lexemes text[], content text, category text, source_json text, value_json text,
    expires_at timestamptz, embedding vector, needs_revalidation boolean
)
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode = force_generic_plan
    SET search_path = public, pg_temp
AS $fn$
#variable_conflict use_column
BEGIN
RETURN QUERY
-- query:start
WITH scoped AS MATERIALIZED (
    SELECT r.id, r.type, r.authority, r.confidence, r.effective_at, r.session_id, r.slot,
           r.content_tsv, r.content_tsv::text AS lexemes,
           -- what showing a memory needs, read in the same snapshot (JSON as text: parsed only
           -- for the chosen few)
           r.content, r.category, r.source::text AS source_json, r.value::text AS value_json,
           r.expires_at, r.embedding, r.needs_revalidation,
           1 - (r.embedding <=> $3) AS similarity,
           s.sentence_similarity,
           (r.type = 'fact' AND r.authority = ANY($5)) AS pinned
      FROM memory_records r
      -- the subject's sentence vectors in one range scan, not one probe per memory
      LEFT JOIN (SELECT ms.memory_id, max(1 - (ms.embedding <=> $3)) AS sentence_similarity
                   FROM memory_sentences ms WHERE ms.tenant_id = $1 AND ms.subject_id = $2
                  GROUP BY ms.memory_id) s ON s.memory_id = r.id
     WHERE r.tenant_id = $1 AND r.subject_id = $2 AND r.status = 'active'
       AND (r.expires_at IS NULL OR r.expires_at > $6)
       AND r.sensitivity_rank <= $7
       AND ($8 IS NULL OR r.type = ANY($8))
), size AS (SELECT count(*) AS n FROM scoped),
q AS (  -- the query's lexemes, and the same lexemes OR-ed as a query (quoted: not parsed again)
    SELECT l.lexemes,
           (SELECT string_agg('''' || replace(replace(x, '\', '\\'), '''', '''''') || '''', ' | ')
              FROM unnest(l.lexemes) x)::tsquery AS tsq
      FROM (SELECT (SELECT array_agg(t.lexeme) FROM unnest(to_tsvector('english', $4)) t) AS lexemes) l
)
-- a subject with at most n memories in scope: every one that any signal finds is a candidate,
-- unranked (the caller ranks them)
SELECT sc.id, sc.type, sc.authority, sc.confidence, sc.effective_at, sc.session_id, sc.slot,
       sc.similarity, NULL::float8 AS lexical, sc.sentence_similarity, sc.lexemes, q.lexemes,
       sc.content, sc.category, sc.source_json, sc.value_json, sc.expires_at, sc.embedding,
       sc.needs_revalidation
  FROM scoped sc, q
 WHERE (SELECT n FROM size) <= $9
   AND (sc.similarity IS NOT NULL OR sc.sentence_similarity IS NOT NULL OR sc.pinned OR sc.content_tsv @@ q.tsq)
UNION ALL
-- a larger one: the top n by each signal, and up to n verified facts
SELECT c.id, c.type, c.authority, c.confidence, c.effective_at, c.session_id, c.slot,
       c.similarity, c.lexical, c.sentence_similarity, c.lexemes, q.lexemes,
       c.content, c.category, c.source_json, c.value_json, c.expires_at, c.embedding,
       c.needs_revalidation
  FROM (
    SELECT x.*,
           row_number() OVER (ORDER BY x.similarity DESC NULLS LAST, x.id) AS by_vector,
           row_number() OVER (ORDER BY x.sentence_similarity DESC NULLS LAST, x.id) AS by_sentence,
           row_number() OVER (ORDER BY x.lexical DESC, x.id) AS by_text,
           row_number() OVER (PARTITION BY x.pinned ORDER BY x.id) AS by_pin
      FROM (
        SELECT sc.*, coalesce(ts_rank_cd(sc.content_tsv, q.tsq), 0)::float8 AS lexical
          FROM scoped sc, q WHERE (SELECT n FROM size) > $9
      ) x
  ) c, q
 WHERE (c.similarity IS NOT NULL AND c.by_vector <= $9)
    OR (c.sentence_similarity IS NOT NULL AND c.by_sentence <= $9)
    OR (c.lexical > 0 AND c.by_text <= $9)
    OR (c.pinned AND c.by_pin <= $9)
-- query:end
;
END
$fn$;
REVOKE ALL ON FUNCTION memory_retrieval_candidates(text, text, vector, text, text[], timestamptz, integer, text[], integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_retrieval_candidates(text, text, vector, text, text[], timestamptz, integer, text[], integer) TO memory_app;
