"""A live query's patched re-runs give what a fresh read gives, for any writes.

A live query re-run reads only the keys the changes name and merges them into its last
result (``panelot.idb.observe.reuse``). On the memory core, hypothesis draws a query
(over the primary key, a single-valued index, a compound one or a multiEntry one; either
direction; with or without a limit) and a sequence of writes from the query's own
connection and from a second one: puts, adds of records that move in and out of the
range, updates, deletes, a collection's delete, a key range's delete and a clear, with
keys of several types.
After each write the live query must come to the result a fresh transaction reads.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from behavior.waiting import until
from hypothesis_support import examples
from loops import run_async
from panelot.idb import Database, MemoryFactory, SchemaVersion, Transaction
from panelot.idb.core import Mutate
from panelot.idb.keys import KeyRange, key_sort_key

STORES = {"rows": "id, g, [g+n], *tags", "other": "id"}

IDS = st.sampled_from([1, 2, 2.5, 7, "a", "b", "c", "z", [1], [1, "x"]])
GROUPS = st.sampled_from([0, 1, "g"])
N = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, "n", None]))
TAGS = st.lists(st.sampled_from(["t", "u", "v"]), max_size=2)


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    rec: dict[str, Any] = {"id": draw(IDS), "g": draw(GROUPS), "tags": draw(TAGS)}
    n = draw(N)
    if n is not None:
        rec["n"] = n
    if draw(st.booleans()):
        rec["text"] = draw(st.text(max_size=3))
    return rec


WRITES = st.one_of(
    st.tuples(st.just("put"), st.integers(0, 1), st.lists(records(), min_size=1, max_size=4)),
    st.tuples(st.just("delete"), st.integers(0, 1), st.lists(IDS, min_size=1, max_size=3)),
    st.tuples(st.just("update"), st.integers(0, 1), IDS, GROUPS),
    st.tuples(st.just("where_delete"), st.integers(0, 1), GROUPS),
    st.tuples(st.just("clear"), st.integers(0, 1)),
    st.tuples(st.just("delete_range"), st.integers(0, 1), IDS, IDS),
    st.tuples(st.just("other"), st.integers(0, 1), IDS),
)

Body = Callable[[Transaction], Awaitable[list[Any]]]


def make_query(kind: str, group: Any, reverse: bool, limit: int | None) -> tuple[str, Body]:
    """A query over ``rows`` of one of the kinds below, and its description."""

    async def body(tx: Transaction) -> list[Any]:
        table = tx.table("rows")
        if kind == "primary":
            coll = table.where("id").between(2, "c", True, True)
        elif kind == "g":
            coll = table.where("g").equals(group)
        elif kind == "g+n":
            coll = table.where("[g+n]").between([group, -2], [group, "n"], True, True)
        elif kind == "tags":
            coll = table.where("tags").equals("u")
        else:
            coll = table.to_collection()
        if reverse:
            coll = coll.reverse()
        if limit is not None:
            coll = coll.limit(limit)
        return await coll.to_list()

    return f"{kind} group={group!r} reverse={reverse} limit={limit}", body


QUERIES = st.builds(
    make_query,
    st.sampled_from(["primary", "g", "g+n", "tags", "all"]),
    GROUPS,
    st.booleans(),
    st.one_of(st.none(), st.integers(1, 4)),
)


async def _write(db: Database, write: tuple[Any, ...]) -> None:
    op = write[0]
    rows = db.table("rows")
    if op == "put":
        await rows.bulk_put(write[2])
    elif op == "delete":
        await rows.bulk_delete(write[2])
    elif op == "update":
        await rows.update(write[2], {"g": write[3]})
    elif op == "where_delete":
        await rows.where("g").equals(write[2]).delete()
    elif op == "clear":
        await rows.clear()
    elif op == "delete_range":  # as Dexie's Collection.delete() issues it: one key range
        lo, hi = sorted(write[2:4], key=key_sort_key)

        async def body(tx: Transaction) -> None:
            await tx.request(Mutate("rows", "deleteRange", range=KeyRange(lo, hi)))

        await db.transaction("rw", ["rows"], body)
    else:
        await db.table("other").put({"id": write[2]})


async def _check(query: tuple[str, Body], writes: list[tuple[Any, ...]]) -> None:
    factory = MemoryFactory()
    versions = [SchemaVersion(1, STORES)]
    mine = await Database("reuse", versions).open(factory)
    theirs = await Database("reuse", versions).open(factory)
    name, body = query
    latest: list[Any] = []
    try:
        with mine.live_query(body, on_result=latest.append, interval=0) as live:
            for step, write in enumerate(writes):
                await _write(theirs if write[1] else mine, write)
                want = await mine.transaction("r", ["rows", "other"], body)
                try:
                    await until(lambda want=want: latest and latest[-1] == want, 2.0)
                except AssertionError:
                    raise AssertionError(
                        f"{name}: after write {step} {write!r} the live query gave "
                        f"{latest[-1:]!r}, not {want!r} (patched {live.patched}, "
                        f"served {live.served})"
                    ) from None
    finally:
        mine.close()
        theirs.close()


@settings(max_examples=examples(300))
@given(QUERIES, st.lists(records(), min_size=1, max_size=8), st.lists(WRITES, max_size=8))
@example(  # a full window loses its first row: what follows it was never read
    make_query("g", 0, False, 1),
    [{"id": 1, "g": 0, "tags": []}, {"id": 2, "g": 0, "tags": []}],
    [("delete", 1, [1])],
)
@example(  # the same from the other end, and a row entering the window's middle
    make_query("g+n", 0, True, 2),
    [{"id": i, "g": 0, "n": i - 1, "tags": []} for i in (1, 2, 3)],
    [("put", 0, [{"id": "a", "g": 0, "n": 0.5, "tags": []}]), ("update", 1, 3, 1)],
)
def test_a_patched_rerun_gives_what_a_fresh_read_gives(
    query: tuple[str, Body], seed: list[dict[str, Any]], writes: list[tuple[Any, ...]]
) -> None:
    run_async(_check(query, [("put", 0, seed), *writes]))
