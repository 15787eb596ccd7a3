"""Writing docs into the index: each doc's postings and the corpus stats follow it.

Every function here runs inside one read-write transaction of the index database over
``docs``, ``postings`` and ``meta``, so a batch lands whole or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from panelot.idb import Transaction
from panelot.search.schema import FORMAT

__all__ = ["INDEX_TABLES", "Bulk", "read_stats", "replace_docs", "reset", "thread_doc_ids"]

INDEX_TABLES = ("docs", "postings", "meta")
"""The tables of an index transaction."""


async def read_stats(tx: Transaction) -> dict[str, Any]:
    """The corpus stats ``{key: "stats", docs, length}`` (zeros when absent or damaged)."""
    stats = await tx.table("meta").get("stats")
    if not isinstance(stats, dict) or not isinstance(stats.get("docs"), int):
        return {"key": "stats", "docs": 0, "length": 0}
    return stats


async def reset(tx: Transaction) -> None:
    """Empty the index and stamp it with the current format."""
    for table in INDEX_TABLES:
        await tx.table(table).clear()
    await tx.table("meta").bulk_put(
        [{"key": "format", "value": FORMAT}, {"key": "stats", "docs": 0, "length": 0}]
    )


async def thread_doc_ids(tx: Transaction, thread_id: str) -> list[str]:
    """The ids of every doc of a thread."""
    return [
        str(k) for k in await tx.table("docs").where("threadId").equals(thread_id).primary_keys()
    ]


def _terms(doc: Any) -> dict[str, Any]:
    terms = doc.get("terms") if isinstance(doc, dict) else None
    return terms if isinstance(terms, dict) else {}


def _tf(held: Any) -> int:
    """A doc's count of a term: stored as a count (or, in older docs, a positions list)."""
    if isinstance(held, int) and held > 0:
        return held
    return len(held) if isinstance(held, list) and held else 1


async def replace_docs(tx: Transaction, new: Mapping[str, dict[str, Any] | None]) -> None:
    """Put each doc of ``new`` (``None``: delete it); update postings and stats to match."""
    if not new:
        return
    ids = list(new)
    olds = await tx.table("docs").bulk_get(ids)
    stats = await read_stats(tx)
    delta: dict[str, dict[str, int | None]] = {}
    puts: list[dict[str, Any]] = []
    dels: list[str] = []
    for doc_id, old in zip(ids, olds, strict=True):
        doc = new[doc_id]
        old_terms, new_terms = _terms(old), _terms(doc)
        if isinstance(old, dict):
            stats["docs"] -= 1
            stats["length"] -= int(old.get("len") or 0)
        if doc is not None:
            stats["docs"] += 1
            stats["length"] += int(doc["len"])
            puts.append(doc)
        elif old is not None:
            dels.append(doc_id)
        if old_terms == new_terms:
            continue  # the same terms: the postings stay as they are
        for term in old_terms:
            delta.setdefault(term, {})[doc_id] = None
        for term, held in new_terms.items():
            delta.setdefault(term, {})[doc_id] = _tf(held)
    if delta:
        terms = sorted(delta)
        postings = await tx.table("postings").bulk_get(terms)
        write: list[dict[str, Any]] = []
        drop: list[str] = []
        for term, record in zip(terms, postings, strict=True):
            held = record.get("docs") if isinstance(record, dict) else None
            docs = dict(held) if isinstance(held, dict) else {}
            for doc_id, tf in delta[term].items():
                if tf is None:
                    docs.pop(doc_id, None)
                else:
                    docs[doc_id] = tf
            if docs:
                write.append({"term": term, "docs": docs})
            elif record is not None:
                drop.append(term)
        if write:
            await tx.table("postings").bulk_put(write)
        if drop:
            await tx.table("postings").bulk_delete(drop)
    if puts:
        await tx.table("docs").bulk_put(puts)
    if dels:
        await tx.table("docs").bulk_delete(dels)
    await tx.table("meta").put(stats)


class Bulk:
    """A rebuild's postings and stats, gathered in memory and written once at the end.

    A rebuild starts from an empty index, so its docs can be written chunk by chunk
    while the postings of common terms (held by most docs) are written once, instead
    of being read and rewritten by every chunk.
    """

    def __init__(self) -> None:
        self.postings: dict[str, dict[str, int]] = {}
        self.docs = 0
        self.length = 0

    def add(self, docs: list[dict[str, Any]]) -> None:
        """Count ``docs`` in (they are written by the caller)."""
        for doc in docs:
            self.docs += 1
            self.length += int(doc["len"])
            for term, held in doc["terms"].items():
                self.postings.setdefault(term, {})[doc["id"]] = _tf(held)

    async def write(self, tx: Transaction) -> None:
        """Write the postings and the stats (in the index transaction ``tx``)."""
        rows = [{"term": term, "docs": docs} for term, docs in self.postings.items()]
        await tx.table("postings").bulk_put(rows)
        await tx.table("meta").put({"key": "stats", "docs": self.docs, "length": self.length})
