"""Values and keys crossing the browser core's JS boundary come back exactly.

The browser core passes a read's result to Python as JSON text, as UTF-8 bytes when the
text is long, or as the raw value when JSON cannot carry it; a one-key range
(``equals``) travels as the key itself. These cases pin the results of each path, on
both cores: short and long results, non-ASCII text, every key kind.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from behavior import Ctx

# Long enough (with the record around it) to cross as UTF-8 bytes in the browser.
TEXT = ('é中😀 "quoted" back\\slash\ttab\x01 ' * 400) + "\U0001f600end"
KINDS: list[Any] = [
    7,
    2**40,  # beyond 32 bits: not passed to JS as a plain integer
    -2.5,
    "ascii",
    "é中😀",
    "a\ud800b",  # a lone surrogate is a valid string key
    datetime(2024, 6, 30, 12, 0, 0, 500_000, tzinfo=UTC),
    b"\x00\xffbin",
    ["t1", 3],
]


async def case_long_results_cross_exactly(ctx: Ctx) -> None:
    db = await ctx.open({"docs": "id, group"})
    docs = db.table("docs")
    big = [{"id": i, "group": i % 2, "text": f"{i}:{TEXT}", "n": [i, None, True]} for i in range(6)]
    await docs.bulk_put(big)
    small = {"id": 99, "group": 5, "text": "short é", "n": []}
    await docs.put(small)
    assert await docs.get(3) == big[3]  # one long record
    assert await docs.get(99) == small
    assert await docs.get(1000) is None
    assert await docs.where("group").equals(0).to_list() == [big[0], big[2], big[4]]
    assert await docs.to_list() == [*big, small]
    assert await docs.bulk_get([5, 1000, 0]) == [big[5], None, big[0]]
    assert await docs.order_by("id").reverse().limit(2).to_list() == [small, big[5]]
    assert await docs.where("group").equals(1).reverse().to_list() == [big[5], big[3], big[1]]
    assert await docs.where("group").equals(1).keys() == [1, 1, 1]
    picked = await docs.where("group").equals(0).pick("id", "text").to_list()
    assert picked == [{"id": i, "text": f"{i}:{TEXT}"} for i in (0, 2, 4)]

    async def body(tx: Any) -> list[Any]:
        t = tx.table("docs")
        return await tx.gather(t.get(2), t.where("group").equals(1).to_list(), t.count())

    got = await db.transaction("r", ["docs"], body)
    assert got == [big[2], [big[1], big[3], big[5]], 7]


async def case_one_key_ranges_match_every_key_kind(ctx: Ctx) -> None:
    db = await ctx.open({"items": "++id, k", "byKey": "k"})
    items, by_key = db.table("items"), db.table("byKey")
    ids = await items.bulk_add([{"k": k} for k in KINDS] + [{"k": k} for k in KINDS[:3]])
    await by_key.bulk_put([{"k": k, "i": i} for i, k in enumerate(KINDS)])
    for i, k in enumerate(KINDS):
        expected = [ids[i], ids[len(KINDS) + i]] if i < 3 else [ids[i]]
        assert await items.where("k").equals(k).primary_keys() == expected, k
        assert await items.where("k").equals(k).count() == len(expected), k
        assert await by_key.where("k").equals(k).to_list() == [{"k": k, "i": i}], k
        assert (await by_key.get(k))["i"] == i, k
    assert await items.where("k").equals("absent").to_list() == []
    # a one-key range delete removes exactly that key
    assert await by_key.where("k").equals("é中😀").delete() == 1
    assert await by_key.where("k").equals(["t1", 3]).delete() == 1
    assert await by_key.count() == len(KINDS) - 2
    assert await by_key.get("é中😀") is None
    assert (await by_key.get("a\ud800b"))["i"] == 5
