"""Writing docs into the index: each doc's postings and the corpus stats follow it.

Every function here runs inside one read-write transaction of the index database over
``docs``, ``postings`` and ``meta``, so a batch lands whole or not at all. A batch
writes the deltas of the terms it touches (:mod:`panelot.search.postings`); a delta
grown past ``DELTA_MAX`` is folded into its block here. A rebuild gathers every
posting in :class:`Bulk` and writes the blocks once.
"""

from __future__ import annotations

import json
from array import array
from collections import defaultdict, deque
from collections.abc import Mapping
from typing import Any

from panelot.idb import Transaction
from panelot.search.postings import (
    BLOCK_ENTRIES,
    DELTA_MAX,
    TF_MAX,
    Block,
    apply,
    block_key,
    block_of,
    block_record,
    cut,
    decode_block,
    delta_key,
    directory,
)
from panelot.search.schema import FORMAT

__all__ = ["INDEX_TABLES", "Bulk", "read_stats", "replace_docs", "reset", "thread_doc_ids"]

INDEX_TABLES = ("docs", "postings", "meta")
"""The tables of an index transaction."""

_PUT_CHARS = 4_000_000
"""A rebuild puts blocks in requests of about this many characters."""

_TF_TEXT = [str(tf) for tf in range(TF_MAX + 1)]
"""Each count's JSON text."""


def _codes() -> array[int]:
    """A new term's postings in :class:`Bulk`: 32-bit codes."""
    return array("I")


def _json(text: str) -> str:
    """``text`` as a JSON string, as ``json.dumps(..., ensure_ascii=False)`` writes it."""
    return json.dumps(text, ensure_ascii=False)


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


def stored(doc: dict[str, Any]) -> dict[str, Any]:
    """The record of a doc: its ``terms`` as one JSON string (cheap to cross and store)."""
    terms = doc.get("terms")
    if not isinstance(terms, dict):
        return doc
    return {**doc, "terms": json.dumps(terms, ensure_ascii=False, separators=(",", ":"))}


def _terms(doc: Any) -> dict[str, Any]:
    terms = doc.get("terms") if isinstance(doc, dict) else None
    if isinstance(terms, str):
        try:
            terms = json.loads(terms)
        except ValueError:
            return {}
    return terms if isinstance(terms, dict) else {}


def _tf(held: Any) -> int:
    """A doc's count of a term: stored as a count (or, in older docs, a positions list)."""
    if isinstance(held, int) and held > 0:
        return min(held, TF_MAX)
    return min(len(held), TF_MAX) if isinstance(held, list) and held else 1


async def replace_docs(tx: Transaction, new: Mapping[str, dict[str, Any] | None]) -> None:
    """Put each doc of ``new`` (``None``: delete it); update postings and stats to match."""
    if not new:
        return
    ids = list(new)
    olds = await tx.table("docs").bulk_get(ids)
    stats = await read_stats(tx)
    delta: dict[str, dict[str, int]] = {}
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
            puts.append(stored(doc))
        elif old is not None:
            dels.append(doc_id)
        if old_terms == new_terms:
            continue  # the same terms: the postings stay as they are
        for term in old_terms:
            delta.setdefault(term, {})[doc_id] = 0
        for term, held in new_terms.items():
            delta.setdefault(term, {})[doc_id] = _tf(held)
    if delta:
        await _write_deltas(tx, delta)
    if puts:
        await tx.table("docs").bulk_put(puts)
    if dels:
        await tx.table("docs").bulk_delete(dels)
    await tx.table("meta").put(stats)


async def _write_deltas(tx: Transaction, delta: dict[str, dict[str, int]]) -> None:
    """Add ``delta`` (``{term: {docId: tf}}``, 0: gone) to the terms' deltas; fold big ones."""
    terms = sorted(delta)
    table = tx.table("postings")
    records = await table.bulk_get([delta_key(t) for t in terms])
    write: list[dict[str, Any]] = []
    fold: dict[str, dict[str, int]] = {}
    for term, record in zip(terms, records, strict=True):
        held = record.get("docs") if isinstance(record, dict) else None
        docs = dict(held) if isinstance(held, dict) else {}
        docs.update(delta[term])
        if len(docs) > DELTA_MAX:
            fold[term] = docs
        else:
            write.append({"term": delta_key(term), "docs": docs})
    if write:
        await table.bulk_put(write)
    if fold:
        await _fold(tx, fold)


async def _fold(tx: Transaction, fold: dict[str, dict[str, int]]) -> None:
    """Fold these terms' deltas into their blocks (splitting a block grown too big)."""
    firsts = directory(await tx.table("meta").get("blocks"))
    groups: dict[str, dict[str, dict[str, int]]] = {}
    for term, docs in fold.items():
        groups.setdefault(block_of(firsts, term), {})[term] = docs
    table = tx.table("postings")
    order = sorted(groups)
    records = await table.bulk_get([block_key(f) for f in order])
    puts: list[dict[str, Any]] = []
    added: list[str] = []
    for first, record in zip(order, records, strict=True):
        block = decode_block(record)
        for term, docs in groups[first].items():
            merged = apply(block.get(term), docs)
            if merged:
                block[term] = merged
            else:
                block.pop(term, None)
        pieces = _split(first, block)
        added.extend(f for f, _ in pieces[1:])
        puts.extend(block_record(f, part) for f, part in pieces)
    await table.bulk_put(puts)
    await table.bulk_delete([delta_key(t) for t in sorted(fold)])
    if added:
        await tx.table("meta").put({"key": "blocks", "value": sorted({*firsts, *added})})


def _split(first: str, block: Block) -> list[tuple[str, Block]]:
    """The block starting at ``first``, in pieces if it holds too much.

    It is cut when it holds over twice :data:`BLOCK_ENTRIES` entries; the first piece
    keeps ``first``.
    """
    terms = sorted(block)
    sizes = [(t, len(block[t])) for t in terms]
    if sum(n for _, n in sizes) <= 2 * BLOCK_ENTRIES:
        return [(first, block)]
    starts = cut(sizes)
    starts[0] = first
    bounds = [*starts[1:], None]
    pieces: list[tuple[str, Block]] = []
    at = 0
    for start, end in zip(starts, bounds, strict=True):
        part: Block = {}
        while at < len(terms) and (end is None or terms[at] < end):
            part[terms[at]] = block[terms[at]]
            at += 1
        pieces.append((start, part))
    return pieces


class Bulk:
    """A rebuild's postings and stats, gathered in memory and written once at the end.

    A rebuild starts from an empty index, so its docs can be written chunk by chunk
    while every posting is gathered here and written at the end as blocks. A posting
    is one 32-bit number (the doc's number, its count in the low 8 bits) in an
    ``array`` per term: about 4 bytes each, so 100,000 messages (8.6 M postings) stay
    well inside the wasm heap's budget.
    """

    def __init__(self) -> None:
        self.keys: list[str] = []
        """Each doc's id as a JSON object key (``"id":``), by doc number."""
        self.postings: defaultdict[str, array[int]] = defaultdict(_codes)
        self.docs = 0
        self.length = 0

    def add(self, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Count ``docs`` in; return their records for the caller to write."""
        postings = self.postings
        into = postings.__getitem__  # a new term gets its array (defaultdict)
        append = array.append
        for doc in docs:
            self.docs += 1
            self.length += int(doc["len"])
            code = len(self.keys) << 8
            self.keys.append(_json(str(doc["id"])) + ":")
            terms: dict[str, Any] = doc["terms"]
            counts = terms.values()
            if not counts:
                continue
            if set(map(type, counts)) == {int} and 0 < min(counts) and max(counts) <= TF_MAX:
                # Counts as build_doc makes them: appended in C, no Python step per posting.
                deque(map(append, map(into, terms), map(code.__or__, counts)), maxlen=0)
            else:
                for term, held in terms.items():
                    into(term).append(code | _tf(held))
        return [stored(doc) for doc in docs]

    def _block(self, terms: list[str]) -> tuple[str, int]:
        """The JSON text of these terms' postings, and how many postings.

        The text is what ``block_record`` would make of them, built from the codes
        without a dict or a call per posting (about twice as fast).
        """
        keys, tfs = self.keys, _TF_TEXT
        doc_of, tf_of = (8).__rrshift__, (0xFF).__and__  # code >> 8, code & 0xFF
        parts = []
        entries = 0
        for term in terms:
            codes = self.postings.pop(term)
            entries += len(codes)
            docs = map(keys.__getitem__, map(doc_of, codes))
            inner = ",".join(map(str.__add__, docs, map(tfs.__getitem__, map(tf_of, codes))))
            parts.append(f"{_json(term)}:{{{inner}}}")
        return "{" + ",".join(parts) + "}", entries

    async def write(self, tx: Transaction) -> None:
        """Write the blocks, the directory and the stats (in the index transaction ``tx``)."""
        terms = sorted(self.postings)
        starts = cut((t, len(self.postings[t])) for t in terms) or [""]
        starts[0] = ""
        table = tx.table("postings")
        batch: list[dict[str, Any]] = []
        chars = at = 0
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else None
            first = at
            while at < len(terms) and (end is None or terms[at] < end):
                at += 1
            data, entries = self._block(terms[first:at])
            batch.append({"term": block_key(start), "n": entries, "data": data})
            chars += len(data)
            if chars >= _PUT_CHARS:
                await table.bulk_put(batch)
                batch, chars = [], 0
        if batch:
            await table.bulk_put(batch)
        await tx.table("meta").bulk_put(
            [
                {"key": "blocks", "value": starts},
                {"key": "stats", "docs": self.docs, "length": self.length},
            ]
        )
