"""Large plain results come back exactly, value type for value type.

The browser core passes a large plain result to Python as marshal data written in JS
(``web/wiring.mjs``), where every number, string and nesting is encoded by hand.
These cases read many records holding every plain value kind, in results large enough
to take that path, and compare them with what was written, on both cores.
"""

from __future__ import annotations

import json
from typing import Any

from behavior import Ctx

# Plain values that stress the hand-written encoding: integer/float boundaries, the
# 15-bit digits of large integers, string lengths around the short-string limit,
# non-ASCII text, astral characters, lone surrogates, empty and nested containers.
VALUES: dict[str, Any] = {
    "ints": [0, 1, -1, 255, 256, 2**31 - 1, -(2**31), 2**31, -(2**31) - 1, 2**32 + 5],
    "big": [2**40, -(2**40), 2**53 - 1, -(2**53 - 1), 32767, 32768, 2**45 + 32767],
    "floats": [0.5, -2.5, 0.1, 1e-300, 5e-324, 1.7976931348623157e308, 123456.789, -1e-7],
    "bools": [True, False, None],
    "strings": ["", "a", "x" * 255, "y" * 256, "z" * 70_000, "é", "中文", "😀"],
    "mixed": 'é中😀 "q" \\ \t\x00\x01\x7f\u0080\u07ff\u0800\uffff \U0010ffff end',
    "surrogates": ["a\ud800b", "\udc00", "x\udbff"],
    # 64 characters and more: written natively when well formed, by hand when not.
    "long text": ["é中" * 40 + "😀" * 30, "a" * 64, "b\ud800" * 40, "\udfff" + "c" * 80],
    "nested": {"a": {"b": {"c": [[[], {}], [{"d": None}]]}}, "": "empty key", "1": 2},
    "unicode keys": {"é": 1, "中": [2], "😀": {"\ud800": 3}},
    # Keys cross once per result and by reference after that (short, long, non-ASCII).
    "long keys": {"k" * 255: 1, "k" * 256: 2, "é" * 300: 3, "ints": "a key seen before"},
}


async def case_large_results_keep_every_plain_value(ctx: Ctx) -> None:
    db = await ctx.open({"docs": "id, group"})
    docs = db.table("docs")
    rows = [{"id": i, "group": i % 3, "seq": i * 7, **VALUES} for i in range(40)]
    await docs.bulk_put(rows)
    got = await docs.to_list()
    assert got == rows
    # The same types too (1 == 1.0 hides them); JS orders integer-like keys first.
    assert json.dumps(got, sort_keys=True) == json.dumps(rows, sort_keys=True)
    for row in got:
        assert [type(v) for v in row["ints"] + row["big"]] == [int] * 17
        assert all(type(v) is float for v in row["floats"])
    assert await docs.where("group").equals(1).to_list() == [r for r in rows if r["group"] == 1]
    assert await docs.order_by("id").reverse().to_list() == rows[::-1]
    assert await docs.bulk_get([3, 999, 0]) == [rows[3], None, rows[0]]
    assert await docs.get(5) == rows[5]  # one record of over 70,000 characters


async def case_large_results_keep_integral_floats_as_stored(ctx: Ctx) -> None:
    # JS has one number type: in the browser a safe integral number reads back as an int,
    # as JSON gives it; on both cores one beyond 2**53 - 1 reads back as the float it is
    # (an int there would not write back).
    db = await ctx.open({"docs": "id"})
    docs = db.table("docs")
    rows = [{"id": i, "f": 2.0, "g": 1e20, "h": 1e21, "text": "t" * 400} for i in range(40)]
    await docs.bulk_put(rows)
    got = await docs.to_list()
    assert got == rows
    row = got[0]
    assert row["f"] == 2 and row["g"] == 10**20 and row["h"] == 1e21
    assert type(row["g"]) is float and type(row["h"]) is float


async def case_large_results_keep_repeated_short_values(ctx: Ctx) -> None:
    # Short string values repeated under one key cross by reference after the first;
    # a key with many distinct values stops being remembered. Each must read back as
    # written, including values of the reference limit's length and around it.
    db = await ctx.open({"docs": "id"})
    docs = db.table("docs")
    rows = [
        {
            "id": i,
            "thread": "t-0001",  # the same value in every record
            "type": ["user", "assistant", "tool", "é中😀"][i % 4],  # a few values in turn
            "many": f"value-{i % 23}",  # more distinct values than are remembered
            "edge": ["x" * 40, "y" * 41, "x" * 40 + "z", "", "a\ud800"][i % 5],
            "nested": {"type": ["user", "other"][i % 2], "thread": "t-0001"},
            "list": ["t-0001", "user"],  # values in lists are always written out
            "thread-like": "type",  # a value equal to a key name
            "text": f"{i} " + "t" * 100,  # long values are always written out
        }
        for i in range(200)  # marshal data of over 8 KiB: the path under test
    ]
    await docs.bulk_put(rows)
    assert await docs.to_list() == rows
    assert await docs.where("id").above(99).to_list() == rows[100:]


async def case_large_results_read_together_stay_apart(ctx: Ctx) -> None:
    # The JS writer reuses its buffer from one result to the next. Results read in one
    # round trip (and one after another) must each come back whole: a later, shorter or
    # longer result may not show through an earlier one.
    db = await ctx.open({"docs": "id, group"})
    docs = db.table("docs")
    rows = [{"id": i, "group": i % 4, "text": f"{i}:" + "w" * (100 + i % 9)} for i in range(400)]
    await docs.bulk_put(rows)

    def of(group: int) -> list[dict[str, Any]]:
        return [r for r in rows if r["group"] == group]

    async def body(tx: Any) -> list[Any]:
        t = tx.table("docs")
        return await tx.gather(
            t.to_list(),
            t.where("group").equals(1).to_list(),
            t.where("id").below(30).to_list(),
            t.where("group").equals(2).to_list(),
        )

    everything, ones, first, twos = await db.transaction("r", ["docs"], body)
    assert everything == rows and ones == of(1) and first == rows[:30] and twos == of(2)
    assert await docs.to_list() == rows
    assert await docs.where("id").below(10).to_list() == rows[:10]  # small after large
    assert await docs.where("group").equals(3).to_list() == of(3)
