-- The retrieval functions that memory_retrieval_scoped_rows replaced: 0011's
-- memory_retrieval_candidates and 0013's memory_retrieval_rows, kept until no deployed code called
-- them (the broker has called memory_retrieval_scoped_rows since 0020). The read path's current
-- functions are defined in sql/retrieval_functions.sql, which every migrate applies again.
DROP FUNCTION IF EXISTS memory_retrieval_candidates(text, text, vector, text, text[], timestamptz, integer, text[], integer);
DROP FUNCTION IF EXISTS memory_retrieval_rows(text, text, vector, text, text[], timestamptz, integer, text[], integer);
