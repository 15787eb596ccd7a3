"""idb.browser."""
