r"""The postings' storage shape: blocks of terms, small deltas, and the one read of them.

The ``postings`` table (key path ``term``) holds two kinds of record:

* a **block** ``{term: "b\x01<first>", n, data}``: every term from ``<first>`` up to the
  next block's first term, with their postings, as ONE JSON string ``data``
  (``{term: {docId: tf}}``). A rebuild writes the sorted vocabulary cut into blocks of
  about :data:`BLOCK_ENTRIES` (docId, tf) entries (a term holding more is a block of
  its own), so the index is a few hundred records, not one per term, and each crosses
  the Python -> JS boundary and IndexedDB as one string;
* a **delta** ``{term: "d\x01<term>", docs: {docId: tf}}``: what the batches changed
  in one term since its block was last written (``tf`` 0: the doc no longer holds it).
  A batch writes only the deltas of the terms it touches, so a common term's block is
  not rewritten by every batch; a delta past :data:`DELTA_MAX` entries is folded into
  its block (a block that grows past twice :data:`BLOCK_ENTRIES` is split).

The blocks' first terms are the **directory**, ``meta`` ``{key: "blocks", value:
[first, ...]}`` (sorted; the first is ``""``, so every term has a block). A term's
postings are its block's entries with its delta's applied (:func:`read_postings`).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from typing import Any

from panelot.idb import Transaction
from panelot.search.blockmemo import Block, BlockMemo, block_memo
from panelot.search.rank import MAX_EXPANSIONS

__all__ = [
    "BLOCK",
    "BLOCK_ENTRIES",
    "DELTA",
    "DELTA_MAX",
    "TF_MAX",
    "Block",
    "apply",
    "block_key",
    "block_of",
    "block_record",
    "cut",
    "decode_block",
    "delta_key",
    "directory",
    "read_postings",
]

BLOCK = "b\x01"
"""The key prefix of a block record."""

DELTA = "d\x01"
"""The key prefix of a delta record."""

BLOCK_ENTRIES = 4096
"""A rebuild cuts the vocabulary into blocks of about this many (docId, tf) entries."""

DELTA_MAX = 256
"""A delta holding more entries is folded into its block."""

TF_MAX = 255
"""Counts are stored up to this (they only order candidates; the check counts again)."""

_GROUP = 8
"""Blocks read per request while gathering a prefix's expansions."""

_PAGE = 64
"""Deltas read per request while gathering a prefix's expansions."""


def block_key(first: str) -> str:
    """The key of the block starting at ``first``."""
    return BLOCK + first


def delta_key(term: str) -> str:
    """The key of ``term``'s delta."""
    return DELTA + term


def directory(record: Any) -> list[str]:
    """The blocks' first terms from ``meta.blocks`` (``[""]`` when absent or damaged)."""
    value = record.get("value") if isinstance(record, dict) else None
    if isinstance(value, list) and value and value[0] == "":
        firsts = [f for f in value if isinstance(f, str)]
        if len(firsts) == len(value):
            return firsts
    return [""]


def block_of(firsts: list[str], term: str) -> str:
    """The first term of the block ``term`` belongs to."""
    return firsts[bisect_right(firsts, term) - 1]


def decode_block(record: Any) -> Block:
    """A block record's terms (empty when absent or damaged)."""
    data = record.get("data") if isinstance(record, dict) else None
    if not isinstance(data, str):
        return {}
    try:
        block = json.loads(data)
    except ValueError:
        return {}
    return block if isinstance(block, dict) else {}


def block_record(first: str, block: Block) -> dict[str, Any]:
    """The record of the block starting at ``first``."""
    entries = sum(len(docs) for docs in block.values())
    data = json.dumps(block, ensure_ascii=False, separators=(",", ":"))
    return {"term": block_key(first), "n": entries, "data": data}


def cut(sizes: Iterable[tuple[str, int]]) -> list[str]:
    """Where blocks start, over ``(term, entries)`` in term order.

    About :data:`BLOCK_ENTRIES` entries each (a larger term alone); the first start is
    the first term.
    """
    firsts: list[str] = []
    held = BLOCK_ENTRIES
    for term, n in sizes:
        if held + n > BLOCK_ENTRIES and held:
            firsts.append(term)
            held = 0
        held += n
    return firsts


def apply(docs: Mapping[str, Any] | None, delta: Mapping[str, Any] | None) -> dict[str, int]:
    """A term's postings: its block's entries ``docs`` with its ``delta`` applied.

    A count that is not a positive ``int`` (a damaged record) counts 1.
    """
    if not docs:
        merged: dict[str, int] = {}
    elif set(map(type, docs.values())) == {int} and min(docs.values()) > 0:
        merged = dict(docs)  # the usual case, checked and copied in C
    else:
        merged = {d: tf if type(tf) is int and tf > 0 else 1 for d, tf in docs.items()}
    for doc_id, tf in (delta or {}).items():
        if isinstance(tf, int) and tf > 0:
            merged[doc_id] = tf
        else:
            merged.pop(doc_id, None)
    return merged


def _docs(record: Any) -> dict[str, Any] | None:
    docs = record.get("docs") if isinstance(record, dict) else None
    return docs if isinstance(docs, dict) else None


async def read_postings(
    tx: Transaction, exact: list[str], prefix: str | None
) -> tuple[dict[str, dict[str, int]], Any, bool]:
    """The postings a query needs: ``(postings, stats record, formatted)``.

    ``postings`` is ``{term: {docId: tf}}`` for each of ``exact`` the index holds and the
    first :data:`~panelot.search.rank.MAX_EXPANSIONS` terms ``prefix`` starts (in term
    order; the prefix itself first when it is a term). ``stats`` is the ``meta.stats``
    record as read, ``formatted`` whether the index had its ``format`` record. Runs in a
    read transaction over ``postings`` and ``meta`` (a live query tracks every key).
    """
    fmt, stats, dir_record = await tx.table("meta").bulk_get(["format", "stats", "blocks"])
    firsts = directory(dir_record)
    blocks: dict[str, Block] = {}
    wanted = sorted({block_of(firsts, t) for t in exact})
    deltas = await _read(tx, wanted, [delta_key(t) for t in exact], blocks)
    postings: dict[str, dict[str, int]] = {}
    for term, delta in zip(exact, deltas, strict=True):
        docs = apply(blocks[block_of(firsts, term)].get(term), _docs(delta))
        if docs:
            postings[term] = docs
    if prefix is not None:
        postings.update(await _expand(tx, firsts, prefix, blocks))
    return postings, stats, isinstance(fmt, dict)


async def _read(
    tx: Transaction, firsts: list[str], keys: list[str], blocks: dict[str, Block]
) -> list[Any]:
    """Add the blocks starting at ``firsts`` to ``blocks``; return the records of ``keys``.

    A block the connection's :class:`~panelot.search.blockmemo.BlockMemo` holds is not
    read again: only its key is asked for (so a live query still tracks it), in the
    same round trip as the records read.
    """
    table = tx.table("postings")
    memo: BlockMemo | None = block_memo(tx.db)
    if memo is not None and not memo.live():
        memo = None
    version = 0 if memo is None else memo.version
    kept: list[str] = []
    missing: list[str] = []
    for first in firsts:
        if first in blocks:
            continue
        found = None if memo is None else memo.get(block_key(first))
        if found is None:
            missing.append(first)
        else:
            blocks[first] = found
            kept.append(block_key(first))
    asked = [block_key(f) for f in missing] + keys
    reads: list[Any] = [table.bulk_get(asked)] if asked else []
    if kept:
        reads.append(table.where("term").any_of(*kept).primary_keys())
    answers = await tx.gather(*reads) if reads else []
    records: list[Any] = answers[0] if asked else []
    for first, record in zip(missing, records, strict=False):
        block = blocks[first] = decode_block(record)
        if memo is not None:
            memo.put(block_key(first), block, version)
    return records[len(missing) :]


async def _expand(
    tx: Transaction, firsts: list[str], prefix: str, blocks: dict[str, Block]
) -> dict[str, dict[str, int]]:
    """The postings of the first :data:`MAX_EXPANSIONS` terms ``prefix`` starts.

    Two streams in term order are merged: the blocks' terms (blocks read in order from
    the one holding ``prefix`` while their first term starts with it, :data:`_GROUP` at
    a time) and the deltas (read by key range, a page at a time); a term whose delta
    leaves it no doc is skipped. It stops at the first :data:`MAX_EXPANSIONS` terms.
    """
    table = tx.table("postings")
    held: list[tuple[str, Any]] = []  # the blocks' terms read so far, in order
    changed: list[tuple[str, Any]] = []  # the deltas read so far, in order
    hi = bisect_right(firsts, prefix) - 1
    blocks_done = deltas_done = False
    bi = di = 0
    out: dict[str, dict[str, int]] = {}
    while len(out) < MAX_EXPANSIONS:
        if bi == len(held) and not blocks_done:
            group = [firsts[hi]]
            hi += 1
            while hi < len(firsts) and len(group) < _GROUP and firsts[hi].startswith(prefix):
                group.append(firsts[hi])
                hi += 1
            blocks_done = hi >= len(firsts) or not firsts[hi].startswith(prefix)
            await _read(tx, group, [], blocks)
            for f in group:
                held.extend(sorted((t, d) for t, d in blocks[f].items() if t.startswith(prefix)))
        if di == len(changed) and not deltas_done:
            where = table.where("term")
            rows = (
                await (
                    where.starts_with(delta_key(prefix))
                    if not changed
                    else where.between(
                        delta_key(changed[-1][0]), delta_key(prefix) + "\uffff", False
                    )
                )
                .limit(_PAGE)
                .to_list()
            )
            deltas_done = len(rows) < _PAGE
            changed.extend(
                (str(r["term"])[len(DELTA) :], _docs(r))
                for r in rows
                if isinstance(r, dict) and isinstance(r.get("term"), str)
            )
        if (bi == len(held) and not blocks_done) or (di == len(changed) and not deltas_done):
            continue  # a stream's next term is not read yet
        b = held[bi][0] if bi < len(held) else None
        d = changed[di][0] if di < len(changed) else None
        if b is None and d is None:
            break
        term = min(t for t in (b, d) if t is not None)
        docs = delta = None
        if b == term:
            docs = held[bi][1]
            bi += 1
        if d == term:
            delta = changed[di][1]
            di += 1
        merged = apply(docs if isinstance(docs, dict) else None, delta)
        if merged:
            out[term] = merged
    return out
