"""The rest of Dexie's Collection: or_, until, distinct, sort_by, each*, keys, clone."""

from __future__ import annotations

from typing import Any

from behavior import Ctx, raises
from behavior.idb.call_errors import lazy
from panelot.idb import Database, DataError, SchemaError

STORES = {"c": "id, n, s, *tags"}


async def _db(ctx: Ctx) -> Database:
    db = await ctx.open(STORES)
    await db.table("c").bulk_put(
        [
            {"id": i, "n": i % 3, "s": "xyz"[i % 3] * (1 + i % 2), "tags": ["a", f"b{i % 2}"]}
            for i in range(8)
        ]
        + [{"id": 8, "s": "w"}]
    )
    return db


async def case_or_merges_parts_taking_turns(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("c")
    # n == 0: 0, 3, 6; s == "yy": 1, 7. One cursor step each in turn: 0, 1, 3, 7, 6.
    either = t.where("n").equals(0).or_("s").equals("yy")
    assert await either.primary_keys() == [0, 1, 3, 7, 6]
    assert await either.count() == 5
    both = t.where("n").equals(1).or_("s").equals("yy")  # 1, 4, 7 and 1, 7: each once
    assert await both.primary_keys() == [1, 4, 7]
    assert await either.keys() == [0, "yy", 0, "yy", 0]  # each from the index that found it
    assert await both.keys() == [1, 1, "yy"]
    assert await either.filter(lambda r: r["id"] > 2).primary_keys() == [3, 7, 6]
    assert await either.limit(2).primary_keys() == [0, 1]
    assert await either.sort_by("id") == sorted(await either.to_list(), key=lambda r: r["id"])
    three = either.or_("id").above(6)
    assert sorted(await three.primary_keys()) == [0, 1, 3, 6, 7, 8]
    await raises(SchemaError, lazy(lambda: either.or_("nope")))


async def case_until_and_and(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("c")
    assert await t.to_collection().until(lambda r: r["id"] == 3).primary_keys() == [0, 1, 2]
    assert await t.to_collection().until(lambda r: r["id"] == 3, True).primary_keys() == [
        0,
        1,
        2,
        3,
    ]
    odd = t.to_collection().and_(lambda r: r["id"] % 2 == 1)
    assert await odd.until(lambda r: r["id"] > 4).primary_keys() == [1, 3]
    # offset before a filter on a plain range: the cursor jumps past rows the filter never sees
    jumped = t.to_collection().offset(2).filter(lambda r: r["id"] % 2 == 0)
    assert await jumped.primary_keys() == [2, 4, 6, 8]
    skipped = t.to_collection().filter(lambda r: r["id"] % 2 == 0).offset(2)
    assert await skipped.primary_keys() == [4, 6, 8]
    await raises(DataError, lazy(lambda: t.to_collection().until(3)))  # type: ignore[arg-type]


async def case_distinct_and_unique_keys(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("c")
    assert await t.where("tags").any_of(["a", "b1"]).count() == 12
    assert await t.where("tags").any_of(["a", "b1"]).distinct().count() == 8
    assert await t.where("n").equals(1).distinct().primary_keys() == [1, 4, 7]  # not multiEntry
    assert await t.order_by("tags").unique_keys() == ["a", "b0", "b1"]
    assert await t.order_by("s").reverse().unique_keys() == ["zz", "z", "yy", "y", "xx", "x", "w"]
    assert await t.order_by("n").first_key() == 0
    assert await t.order_by("n").last_key() == 2
    assert await t.where("n").equals(9).first_key() is None
    seen: list[Any] = []
    await t.order_by("tags").each_unique_key(seen.append)
    assert seen == ["a", "b0", "b1"]


async def case_each_and_keys(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("c")
    got: list[Any] = []
    await t.where("n").equals(2).each(lambda r: got.append(r["id"]))
    assert got == [2, 5]
    pairs: list[Any] = []
    await (
        t.where("n")
        .equals(2)
        .each(lambda r, cursor: pairs.append((cursor.key, cursor.primary_key)))
    )
    assert pairs == [(2, 2), (2, 5)]
    keys: list[Any] = []
    await t.where("s").starts_with("x").each_key(keys.append)
    assert keys == ["x", "x", "xx"]
    pks: list[Any] = []
    await t.where("s").starts_with("x").each_primary_key(pks.append)
    assert pks == [0, 6, 3]

    def boom(r: Any) -> None:
        raise ValueError("stop")

    await raises(ValueError, t.to_collection().each(boom))


async def case_sort_by_as_dexie(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("c")
    by_s = await t.to_collection().sort_by("s")
    assert [r["id"] for r in by_s] == [8, 0, 6, 3, 4, 1, 7, 2, 5]
    assert [r["id"] for r in await t.to_collection().reverse().sort_by("s")] == [
        5,
        2,
        7,
        1,
        4,
        3,
        6,
        0,
        8,
    ]
    # a missing field does not compare (Dexie's cmp is NaN): V8's sort steps decide
    by_n = await t.to_collection().sort_by("n")
    assert [r["id"] for r in by_n] == [0, 3, 6, 1, 4, 7, 2, 5, 8]
    await raises(TypeError, t.to_collection().sort_by("n.deep"))
    await raises(DataError, t.to_collection().sort_by(""))


async def case_clone_and_immutability(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("c")
    c = t.where("n").equals(0)
    limited = c.limit(1)
    assert await c.count() == 3 and await limited.count() == 1  # c is unchanged
    assert await c.clone().primary_keys() == await c.primary_keys()
    assert await c.desc().primary_keys() == [6, 3, 0]
