"""Full-text search: the index database, kept true by the change feed, never lying."""
