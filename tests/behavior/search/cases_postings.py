"""The postings' blocks as a reading context keeps them: served again, never stale.

Two connections of one index database stand for two contexts (a panel reading, the
indexer of another panel writing). The reader's decoded blocks (``BlockMemo``) serve a
query again without reading the block; another connection's write of that block
drops it, and a live query that got the block from the memo still wakes for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from behavior import Ctx
from behavior.payloads import text
from behavior.search.cases_index import find, node_ids, settled
from behavior.waiting import result_where, until
from panelot.idb import Database, Transaction
from panelot.search.blockmemo import block_memo
from panelot.search.postings import BLOCK, DELTA, block_record, read_postings
from panelot.search.schema import FORMAT, INDEX_STORES
from panelot.search.writes import INDEX_TABLES, Bulk, reset


def _doc(doc_id: str, terms: dict[str, int]) -> dict[str, Any]:
    return {"id": doc_id, "threadId": "t", "kind": "node", "len": 3, "terms": terms}


def _postings(
    terms: list[str], prefix: str | None = None
) -> Callable[[Transaction], Awaitable[Any]]:
    async def body(tx: Transaction) -> Any:
        found, _stats, _formatted = await read_postings(tx, terms, prefix)
        return found

    return body


async def _built(ctx: Ctx) -> tuple[Database, Database]:
    writer = await ctx.open(INDEX_STORES)
    reader = await ctx.open(INDEX_STORES, name=writer.name)
    await writer.transaction("rw", INDEX_TABLES, reset)
    bulk = Bulk()
    docs = [_doc("n1", {"fig": 1}), _doc("n2", {"fig": 2, "plum": 1})]
    await writer.table("docs").bulk_put(bulk.add(docs))
    await writer.transaction("rw", INDEX_TABLES, bulk.write)
    await _heard(writer, reader)
    return writer, reader


async def _heard(writer: Database, reader: Database) -> None:
    """Wait until ``reader`` has heard every commit ``writer`` made so far.

    Another connection's change sets arrive later, in order: once a last write's set
    has arrived, so have all before it (the reader's memo would drop blocks read before).
    """
    seen: list[Any] = []
    stop = reader.feed.subscribe(seen.append)
    part = f"idb://{writer.name}/meta/"
    try:
        await writer.table("meta").put({"key": "heard"})
        await until(lambda: any(part in s and s[part].has_key("heard") for s in seen), 5.0, "heard")
    finally:
        stop()


async def case_a_block_is_served_again_from_the_readers_memo(ctx: Ctx) -> None:
    _writer, reader = await _built(ctx)
    memo = block_memo(reader)
    tables = ["postings", "meta"]
    first = await reader.transaction("r", tables, _postings(["fig"]))
    assert first == {"fig": {"n1": 1, "n2": 2}}, first
    hits = memo.hits
    again = await reader.transaction("r", tables, _postings(["fig"], "pl"))
    assert again == {"fig": {"n1": 1, "n2": 2}, "plum": {"n2": 1}}, again
    assert memo.hits > hits  # the block was not read again


async def case_another_contexts_block_write_drops_it_and_wakes_a_live_query(ctx: Ctx) -> None:
    writer, reader = await _built(ctx)
    memo = block_memo(reader)
    tables = ["postings", "meta"]
    assert await reader.transaction("r", tables, _postings(["fig"])) == {"fig": {"n1": 1, "n2": 2}}
    hits = memo.hits
    with reader.live_query(_postings(["fig"])) as live:
        assert (await result_where(live, lambda r: True)) == {"fig": {"n1": 1, "n2": 2}}
        assert memo.hits > hits  # the live query's run took the block from the memo
        # Another context folds a delta into the block: the same key, new postings.
        block = {"fig": {"n1": 1, "n3": 4}, "plum": {"n2": 1}}
        await writer.table("postings").put(block_record("", block))
        woke = await result_where(live, lambda r: "n3" in r.get("fig", {}), timeout=10)
        assert woke == {"fig": {"n1": 1, "n3": 4}}, woke


async def case_an_index_of_format_1_is_rebuilt_in_blocks(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("T")
    node = await store.append(tid, "user_message", text("medlar jam"))
    await settled(store)
    assert store.search is not None
    index = store.search.index

    async def format_1(tx: Transaction) -> None:  # one record per term, as format 1 kept
        for table in INDEX_TABLES:
            await tx.table(table).clear()
        await tx.table("meta").bulk_put(
            [{"key": "format", "value": 1}, {"key": "stats", "docs": 1, "length": 2}]
        )
        await tx.table("postings").put({"term": "medlar", "docs": {node["nodeId"]: 1}})

    await index.transaction("rw", INDEX_TABLES, format_1)
    assert (await store.query("search.status"))["format"] == 1
    status = await settled(store)  # until it has the current format and no longer lags
    assert status["format"] == FORMAT == 2
    assert node_ids(await find(store, "medlar ja")) == [node["nodeId"]]
    keys = [str(k) for k in await index.table("postings").to_collection().primary_keys()]
    assert keys and all(k.startswith((BLOCK, DELTA)) for k in keys), keys
