"""The ``panelot_v1`` database declaration, table for table as the data model's Dexie schema.

The index strings are verbatim from the data-model spec, so a Dexie app declaring
``db.version(1).stores(PANELOT_V1_STORES)`` opens the same database unchanged.
"""

from __future__ import annotations

from panelot.idb import Database, SchemaVersion

__all__ = ["DB_NAME", "PANELOT_V1_STORES", "PANELOT_VERSIONS", "panelot_database"]

DB_NAME = "panelot_v1"
"""The IndexedDB database name."""

PANELOT_V1_STORES: dict[str, str | None] = {
    "threads": "id, updatedAt, folderId, archived, pinned",
    "nodes": "id, threadId, [threadId+seq], parentId",
    "attachments": "id, threadId, createdAt",
    "skills": "id, name, enabled, sourceRef",
    "memories": "id, key, updatedAt",
    "runs": "id, threadId, [threadId+state], submissionId, updatedAt",
    "commandReceipts": "id, [clientId+submissionId], status, createdAt, expiresAt",
    "approvals": "id, threadId, runId, [threadId+status], requestedAt",
    "interactions": "id, threadId, runId, [threadId+status], requestedAt",
    "plugins": "id, name, enabled, updatedAt",
    "pluginAssets": "id, pluginId, [pluginId+path], kind, createdAt",
}
"""``db.version(1).stores({...})`` of the data model, verbatim."""

PANELOT_VERSIONS = [SchemaVersion(1, PANELOT_V1_STORES)]
"""Every declared version (only version 1 so far; native version 10)."""


def panelot_database(name: str = DB_NAME) -> Database:
    """Return an unopened :class:`~panelot.idb.Database` with the ``panelot_v1`` schema."""
    return Database(name, PANELOT_VERSIONS)
