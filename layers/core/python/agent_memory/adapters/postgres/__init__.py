"""PostgreSQL + pgvector: the only place SQL lives."""
