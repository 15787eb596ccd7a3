"""Document ids: ``<table>:<primary key>`` for each record of the synced tables."""

from __future__ import annotations

__all__ = ["SYNCED_TABLES", "doc_id", "split_doc_id"]

SYNCED_TABLES = (
    "threads",
    "nodes",
    "attachments",
    "skills",
    "memories",
    "plugins",
    "pluginAssets",
)
"""The tables whose records sync, one document each (docs/sync.md "What syncs")."""


def doc_id(table: str, key: str) -> str:
    """The document id of the record ``key`` of ``table`` (a synced table)."""
    if table not in SYNCED_TABLES:
        raise ValueError(f"{table!r} is not a synced table")
    return f"{table}:{key}"


def split_doc_id(value: str) -> tuple[str, str]:
    """``(table, key)`` of a document id; ``ValueError`` for an id of no synced table."""
    table, sep, key = value.partition(":")
    if not sep or table not in SYNCED_TABLES or not key:
        raise ValueError(f"{value!r} is not the id of a synced record")
    return table, key
