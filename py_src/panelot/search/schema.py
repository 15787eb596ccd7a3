r"""The index database: its name, its tables, its format.

``panelot_search_v1`` sits beside ``panelot_v1`` on the same core factory (a second
IndexedDB database in a page, the same :class:`~panelot.idb.MemoryFactory` in
CPython). A store opened on another database name gets ``<name>-search``.

Tables (Dexie syntax)::

    docs:     "id, threadId"   {id, threadId, nodeId?, kind, len, terms: "<JSON {term: tf}>",
                                updatedAt, stamp?: {updatedAt, nodes}}
    postings: "term"           {term: "b\x01<first>", n, data: "<JSON {term: {docId: tf}}>"}
                               {term: "d\x01<term>", docs: {docId: tf}}
    meta:     "key"            {key: "format", value: FORMAT}
                               {key: "stats", docs, length}
                               {key: "blocks", value: [first, ...]}
                               {key: "checkpoint", value: {at}}

A doc's id is the node's id, or ``thread:<threadId>`` for a thread's title and tags;
the thread doc's ``stamp`` is the thread's ``updatedAt`` and node count when it was
last indexed (what catch-up compares). A doc keeps counts, not positions: a query
checks phrases on the current text. Its ``terms`` are one JSON string (one value to
cross and store, not one property per term). The postings are blocks of terms and
per-term deltas (:mod:`panelot.search.postings`).
"""

from __future__ import annotations

from panelot.idb import Database, SchemaVersion
from panelot.schema import DB_NAME

__all__ = ["FORMAT", "INDEX_NAME", "INDEX_STORES", "index_database", "index_name", "thread_doc_id"]

INDEX_NAME = "panelot_search_v1"
"""The index database of ``panelot_v1``."""

FORMAT = 2
"""The index format: an index of another format is rebuilt (2: postings in blocks and
deltas, a doc's terms as a JSON string; 1: one postings record per term)."""

INDEX_STORES: dict[str, str | None] = {
    "docs": "id, threadId",
    "postings": "term",
    "meta": "key",
}
"""``db.version(1).stores({...})`` of the index database."""


def index_name(db_name: str) -> str:
    """The index database's name for the store database ``db_name``."""
    return INDEX_NAME if db_name == DB_NAME else f"{db_name}-search"


def index_database(db_name: str) -> Database:
    """An unopened index database for the store database ``db_name``."""
    return Database(index_name(db_name), [SchemaVersion(1, INDEX_STORES)])


def thread_doc_id(thread_id: str) -> str:
    """The id of a thread's doc (its title and tags)."""
    return f"thread:{thread_id}"
