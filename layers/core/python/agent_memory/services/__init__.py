"""Use cases: the write gateway, review, reads, retrieval, lifecycle."""
