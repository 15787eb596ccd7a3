"""idb.memory."""
