-- The read path's SQL functions as they are now: applied again by every `memory migrate`, after
-- the numbered migrations, so this file is their one definition. Edit a function here, in place.
-- CREATE OR REPLACE cannot change a function's arguments or result columns: a change to either
-- is a new function (or a numbered migration that drops the old one first), and the old one is
-- dropped by a numbered migration once no deployed code calls it.
--
-- The read path in two single statements: one call returns the candidates, one call writes the
-- access event. Called with no tenant in force, each sets the tenant for row-level security to its
-- argument (transaction-local: in autocommit it ends with the statement), so a retrieval needs no
-- BEGIN, no separate tenant statement and no COMMIT: two round trips, and the access event is
-- durable when its call returns, and the tenant they set is cleared again before they return, so
-- nothing after them in the same transaction or statement inherits it. Called inside a transaction
-- that already scopes a tenant, they keep that tenant, and an argument naming another tenant is an
-- error. All three functions are SECURITY INVOKER (the default): row-level security applies as to
-- a plain statement.

-- The rule both functions follow, in one place: with no tenant in force, scope this transaction to
-- p_tenant and say so (the caller clears it again before returning); with another tenant in force,
-- refuse. No SET clause, so the setting is not undone when this function returns. (Working memory's
-- memory_working_items, migration 0016, follows it too.)
CREATE OR REPLACE FUNCTION memory_enter_tenant(p_tenant text) RETURNS boolean
    LANGUAGE plpgsql
AS $fn$
DECLARE
    in_force text := coalesce(pg_catalog.current_setting('app.tenant_id', true), '');
BEGIN
IF in_force = '' THEN
    PERFORM pg_catalog.set_config('app.tenant_id', p_tenant, true);
    RETURN true;
ELSIF in_force IS DISTINCT FROM p_tenant THEN
    RAISE EXCEPTION 'tenant % asked inside a transaction scoped to another tenant', p_tenant
        USING ERRCODE = 'insufficient_privilege';
END IF;
RETURN false;
END
$fn$;
REVOKE ALL ON FUNCTION memory_enter_tenant(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_enter_tenant(text) TO memory_app;

-- A subject's retrieval candidates. Why a function: planning this statement costs more server CPU
-- than running it. A client-side prepared statement reuses the plan, but it is named session
-- state, and RDS Proxy pins every connection that holds one to a single database connection for
-- the rest of its life. PL/pgSQL keeps its plans inside the backend, out of the proxy's sight: each
-- database connection plans the query once, whichever client's transaction it serves. The query
-- between the `query:start` and `query:end` lines is also explained by `memory bench retrieve`.
-- A memory written with scope 'ticket' is a candidate only for a retrieval naming its ticket
-- (p_ticket); each row says whether it is contested (a lower-authority source contradicted it and
-- a reviewer has not yet decided). `tsvector::text` is taken only for the rows returned.
CREATE OR REPLACE FUNCTION memory_retrieval_scoped_rows(
    p_tenant text, p_subject text, p_q vector, p_qtext text, p_verified text[], p_now timestamptz,
    p_clr integer, p_types text[], p_n integer, p_ticket text
) RETURNS TABLE (
    id text, type text, authority text, confidence real, effective_at timestamptz, session_id text,
    slot text, similarity double precision, lexical double precision, sentence_similarity double precision,
    lexemes text, query_lexemes text[],
    content text, category text, source_json text, value_json text,
    expires_at timestamptz, embedding vector, needs_revalidation boolean, contested boolean
)
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET search_path = public, pg_temp
AS $fn$
#variable_conflict use_column
DECLARE
    scoped_here boolean := memory_enter_tenant(p_tenant);
BEGIN
RETURN QUERY
-- query:start memory_retrieval_scoped_rows
WITH scoped AS MATERIALIZED (
    SELECT r.id, r.type, r.authority, r.confidence, r.effective_at, r.session_id, r.slot,
           r.content_tsv,
           -- what showing a memory needs, read in the same snapshot (JSON as text: parsed only
           -- for the chosen few)
           r.content, r.category, r.source::text AS source_json, r.value::text AS value_json,
           r.expires_at, r.embedding, r.needs_revalidation,
           ('contested' = ANY (r.flags)) AS contested,
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
       -- a ticket's memories serve that ticket only: not another ticket, not a request naming none
       AND (r.scope <> 'ticket' OR r.ticket_id = $10)
), size AS (SELECT count(*) AS n FROM scoped),
q AS (  -- the query's lexemes, and the same lexemes OR-ed as a query (quoted: not parsed again)
    SELECT l.lexemes,
           (SELECT string_agg('''' || replace(replace(x, '\', '\\'), '''', '''''') || '''', ' | ')
              FROM unnest(l.lexemes) x)::tsquery AS tsq
      FROM (SELECT (SELECT array_agg(t.lexeme) FROM unnest(to_tsvector('english', $4)) t) AS lexemes) l
),
-- the subject's rows in scope that any signal finds; a larger subject: the top n by each signal,
-- and up to n verified facts (a subject within n: every one, unranked, `lexical` NULL)
found AS (
    SELECT sc.*, NULL::float8 AS lexical
      FROM scoped sc, q
     WHERE (SELECT n FROM size) <= $9
       AND (sc.similarity IS NOT NULL OR sc.sentence_similarity IS NOT NULL OR sc.pinned OR sc.content_tsv @@ q.tsq)
    UNION ALL
    SELECT c.id, c.type, c.authority, c.confidence, c.effective_at, c.session_id, c.slot, c.content_tsv,
           c.content, c.category, c.source_json, c.value_json, c.expires_at, c.embedding,
           c.needs_revalidation, c.contested, c.similarity, c.sentence_similarity, c.pinned, c.lexical
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
      ) c
     WHERE (c.similarity IS NOT NULL AND c.by_vector <= $9)
        OR (c.sentence_similarity IS NOT NULL AND c.by_sentence <= $9)
        OR (c.lexical > 0 AND c.by_text <= $9)
        OR (c.pinned AND c.by_pin <= $9)
)
SELECT f.id, f.type, f.authority, f.confidence, f.effective_at, f.session_id, f.slot,
       f.similarity, f.lexical, f.sentence_similarity, f.content_tsv::text, q.lexemes,
       f.content, f.category, f.source_json, f.value_json, f.expires_at, f.embedding, f.needs_revalidation,
       f.contested
  FROM found f, q
-- query:end memory_retrieval_scoped_rows
;
IF scoped_here THEN  -- the rows are already materialised: clearing the tenant cannot change them
    PERFORM set_config('app.tenant_id', '', true);
END IF;
END
$fn$;
REVOKE ALL ON FUNCTION memory_retrieval_scoped_rows(text, text, vector, text, text[], timestamptz, integer, text[], integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_retrieval_scoped_rows(text, text, vector, text, text[], timestamptz, integer, text[], integer, text) TO memory_app;

-- The access event of one retrieval, as one statement (see above).
CREATE OR REPLACE FUNCTION memory_log_retrieval(
    p_tenant text, p_id text, p_subject text, p_actor text, p_memory_ids text[], p_payload jsonb
) RETURNS void
    LANGUAGE plpgsql
    SET search_path = public, pg_temp
AS $fn$
DECLARE
    scoped_here boolean := memory_enter_tenant(p_tenant);
BEGIN
INSERT INTO retrieval_log (tenant_id, id, subject_id, actor, memory_ids, payload)
VALUES (p_tenant, p_id, p_subject, p_actor, p_memory_ids, p_payload);
IF scoped_here THEN
    PERFORM set_config('app.tenant_id', '', true);
END IF;
END
$fn$;
REVOKE ALL ON FUNCTION memory_log_retrieval(text, text, text, text, text[], jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_log_retrieval(text, text, text, text, text[], jsonb) TO memory_app;
