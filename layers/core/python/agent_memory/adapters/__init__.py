"""Adapters: PostgreSQL, embedders, extractors, queues, object store."""
