"""The postings' storage shape (blocks, deltas, the directory) reads back what was written.

A rebuild's :class:`~panelot.search.writes.Bulk` and the batches' ``replace_docs``
(deltas folded into blocks, blocks split) are checked against a plain dict of the
same postings, with small block and delta sizes so that every path runs; and
:func:`~panelot.search.postings.read_postings` against that dict for exact terms and
prefixes (the first ``MAX_EXPANSIONS`` completions in term order).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from loops import run_async
from panelot.idb import Database, MemoryFactory, Transaction
from panelot.search import postings as shape
from panelot.search import writes
from panelot.search.postings import BLOCK, DELTA, read_postings
from panelot.search.rank import MAX_EXPANSIONS
from panelot.search.schema import index_database
from panelot.search.writes import INDEX_TABLES, Bulk, replace_docs, reset

Model = dict[str, dict[str, int]]

WORDS = [f"{a}{b}{c}" for a in "abc" for b in "abcdef" for c in ("", "x", "yy", "zzz")]


@pytest.fixture(autouse=True)
def _small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of about 40 entries, deltas folded past 6: every path runs on a few docs."""
    for module in (shape, writes):
        monkeypatch.setattr(module, "BLOCK_ENTRIES", 40)
    monkeypatch.setattr(writes, "DELTA_MAX", 6)


def _doc(doc_id: str, terms: dict[str, int]) -> dict[str, Any]:
    return {
        "id": doc_id,
        "threadId": "t",
        "kind": "node",
        "len": sum(terms.values()),
        "terms": terms,
    }


def _random_terms(rng: random.Random) -> dict[str, int]:
    return {w: rng.randint(1, 300) for w in rng.sample(WORDS, rng.randint(1, 12))}


def _model(docs: dict[str, dict[str, int]]) -> Model:
    out: Model = {}
    for doc_id, terms in docs.items():
        for term, tf in terms.items():
            out.setdefault(term, {})[doc_id] = min(tf, shape.TF_MAX)
    return out


async def _index() -> Database:
    index = await index_database("postings-test").open(MemoryFactory())
    await index.transaction("rw", INDEX_TABLES, reset)
    return index


async def _read(index: Database, exact: list[str], prefix: str | None) -> Model:
    async def body(tx: Transaction) -> Model:
        found, _stats, formatted = await read_postings(tx, exact, prefix)
        assert formatted
        return found

    return await index.transaction("r", ["postings", "meta"], body)


def _expected(model: Model, exact: list[str], prefix: str | None) -> Model:
    out = {t: model[t] for t in exact if t in model}
    if prefix is not None:
        for term in sorted(t for t in model if t.startswith(prefix))[:MAX_EXPANSIONS]:
            out[term] = model[term]
    return out


async def _check_reads(index: Database, model: Model) -> None:
    for term in [*WORDS, "nothing"]:
        assert await _read(index, [term], None) == _expected(model, [term], None), term
    for prefix in ["a", "b", "ab", "bcx", "c", "", "q", "cfz"]:
        assert await _read(index, [], prefix) == _expected(model, [], prefix), prefix
    assert await _read(index, ["aa", "cf"], "b") == _expected(model, ["aa", "cf"], "b")


def test_a_rebuild_writes_blocks_that_read_back() -> None:
    rng = random.Random(38)
    docs = {f"n{i:03}": _random_terms(rng) for i in range(80)}

    async def main() -> None:
        index = await _index()
        bulk = Bulk()
        records = bulk.add([_doc(i, t) for i, t in docs.items()])
        assert all(isinstance(r["terms"], str) for r in records)  # one JSON string a doc
        await index.table("docs").bulk_put(records)
        await index.transaction("rw", INDEX_TABLES, bulk.write)
        keys = [str(k) for k in await index.table("postings").to_collection().primary_keys()]
        assert keys and all(k.startswith(BLOCK) for k in keys)
        assert len(keys) < len(_model(docs)) / 2  # blocks of terms, not a record per term
        await _check_reads(index, _model(docs))
        stats = await index.table("meta").get("stats")
        assert stats["docs"] == 80 and stats["length"] == sum(
            map(sum, map(dict.values, docs.values()))
        )
        index.close()

    run_async(main())


def test_batches_write_deltas_fold_them_into_blocks_and_split_blocks() -> None:
    rng = random.Random(7)

    async def main() -> None:
        index = await _index()
        docs: dict[str, dict[str, int]] = {}
        for step in range(60):
            change: dict[str, dict[str, Any] | None] = {}
            for _ in range(rng.randint(1, 4)):
                doc_id = f"n{rng.randint(0, 40):03}"
                if doc_id in docs and rng.random() < 0.3:
                    change[doc_id] = None
                    docs.pop(doc_id)
                else:
                    docs[doc_id] = _random_terms(rng)
                    change[doc_id] = _doc(doc_id, docs[doc_id])

            async def write(tx: Transaction, change: dict[str, Any] = change) -> None:
                await replace_docs(tx, change)

            await index.transaction("rw", INDEX_TABLES, write)
            if step % 15 == 14:
                await _check_reads(index, _model(docs))
        keys = [str(k) for k in await index.table("postings").to_collection().primary_keys()]
        blocks = [k for k in keys if k.startswith(BLOCK)]
        assert len(blocks) > 1 and any(k.startswith(DELTA) for k in keys)  # folded and split
        firsts = (await index.table("meta").get("blocks"))["value"]
        assert firsts[0] == "" and [BLOCK + f for f in firsts] == sorted(blocks)
        for record in await index.table("postings").to_list():
            if record["term"].startswith(DELTA):
                assert len(record["docs"]) <= 6
        await _check_reads(index, _model(docs))
        stats = await index.table("meta").get("stats")
        assert stats["docs"] == len(docs)
        index.close()

    run_async(main())


def test_batches_after_a_rebuild_change_deltas_not_blocks() -> None:
    rng = random.Random(3)
    docs = {f"n{i:03}": _random_terms(rng) for i in range(60)}

    async def main() -> None:
        index = await _index()
        bulk = Bulk()
        await index.table("docs").bulk_put(bulk.add([_doc(i, t) for i, t in docs.items()]))
        await index.transaction("rw", INDEX_TABLES, bulk.write)
        before = {r["term"]: r for r in await index.table("postings").to_list()}
        docs["n001"] = {"aa": 2, "newterm": 1}
        docs.pop("n002")
        change = {"n001": _doc("n001", docs["n001"]), "n002": None}

        async def write(tx: Transaction) -> None:
            await replace_docs(tx, change)

        await index.transaction("rw", INDEX_TABLES, write)
        after = {r["term"]: r for r in await index.table("postings").to_list()}
        assert {k: v for k, v in after.items() if k.startswith(BLOCK)} == before
        assert DELTA + "newterm" in after
        await _check_reads(index, _model(docs))
        assert (await _read(index, [], "new")) == {"newterm": {"n001": 1}}
        index.close()

    run_async(main())
