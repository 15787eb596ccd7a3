"""Values written cross into the store exactly, whichever way the core captures them.

The browser core snapshots a write's values as marshal data and builds the JS records
from it (``web/marshal_reader.mjs``); values marshal or the reader will not take
fall back to a Python deep copy. These cases pin what both paths store, on both cores:
every plain kind, shared and repeated objects, the refusals and their field names, and
that a value changed after the write began is stored as it was.
"""

from __future__ import annotations

import asyncio
import math
from collections import OrderedDict
from enum import IntEnum
from typing import Any

from behavior import Ctx, raises
from panelot.idb import DataCloneError


class Level(IntEnum):
    HIGH = 3


class Name(str):
    pass


def nest(depth: int) -> Any:
    value: Any = "core"
    for _ in range(depth):
        value = [value]
    return value


LONG_ASCII = "the quick brown fox " * 30
LONG_TEXT = "é中😀 text " * 40


def record(i: int) -> dict[str, Any]:
    return {
        "id": f"r{i}",
        "n": i,
        "ints": [0, -1, 2**31, -(2**31) - 1, 2**53 - 1, -(2**53 - 1)],
        "floats": [1.5, -0.0, 1e300],
        "flags": [True, False, None],
        "tuple": (1, (2, "x")),
        "bytes": b"\x00\xff",
        "bytearray": bytearray(b"ab"),
        "short": "ok",
        "uuid": "d7815fad-0587-9ebd-8a0d-c3de1159302c",
        "ascii": LONG_ASCII,
        "text": LONG_TEXT,
        "surrogate": "a\ud800b",
        "surrogate_long": "é" * 60 + "\udc00",
        "astral": "😀" * 50,
        "empty": {"list": [], "dict": {}, "str": ""},
        "ключ": {"nested": {"deep": [{"x": i}]}},
    }


# The browser captures writes of 8 values or more with marshal; padding a write with
# these puts the value under test on that path (fewer take the Python copy path).
PAD = [{"id": f"pad{i}"} for i in range(8)]


def stored_form(value: Any) -> Any:
    """What a record reads back as: tuples as lists, bytearrays as bytes."""
    if isinstance(value, dict):
        return {k: stored_form(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [stored_form(v) for v in value]
    if isinstance(value, bytearray):
        return bytes(value)
    return value


async def case_written_values_read_back_exactly(ctx: Ctx) -> None:
    db = await ctx.open({"docs": "id"})
    docs = db.table("docs")
    many = [record(i) for i in range(20)]
    await docs.bulk_put(many)
    await docs.put(record(100))
    for i in (0, 19, 100):
        got = await docs.get(f"r{i}")
        assert got == stored_form(record(i))
        assert type(got["tuple"]) is list and type(got["bytearray"]) is bytes
    specials = {"id": "nan", "v": [math.nan, math.inf, -math.inf]}
    await docs.put(specials)
    got = (await docs.get("nan"))["v"]
    assert math.isnan(got[0]) and got[1:] == [math.inf, -math.inf]


async def case_shared_and_repeated_objects_are_stored_as_copies(ctx: Ctx) -> None:
    db = await ctx.open({"docs": "id"})
    docs = db.table("docs")
    shared = {"text": LONG_ASCII, "list": [1, 2]}
    a = {"id": "a", "one": shared, "two": shared}
    b = {"id": "b", "one": shared, "same": shared["list"]}
    for write in ([a, b], [*PAD, a, b]):  # both capture paths
        await docs.bulk_put(write)
        assert await docs.get("a") == {"id": "a", "one": shared, "two": shared}
        assert await docs.get("b") == {"id": "b", "one": shared, "same": [1, 2]}
        await docs.clear()
    loop: list[Any] = []
    loop.append(loop)
    err = await raises(DataCloneError, docs.put({"id": "c", "loop": loop}))
    assert getattr(err, "field", "").startswith("values[0].loop")
    err = await raises(DataCloneError, docs.bulk_put([*PAD, {"id": "c", "loop": loop}]))
    assert getattr(err, "field", "").startswith("values[8].loop")
    assert await docs.count() == 0


async def case_nesting_is_refused_past_the_limit_on_both_paths(ctx: Ctx) -> None:
    db = await ctx.open({"docs": "id"})
    docs = db.table("docs")
    await docs.put({"id": "ok", "v": nest(200)})  # lists at levels 1..200 of the record
    await docs.bulk_put([*PAD, {"id": "ok2", "v": nest(200)}])
    assert await docs.get("ok") == {"id": "ok", "v": nest(200)}
    assert await docs.get("ok2") == {"id": "ok2", "v": nest(200)}
    for write in ([], PAD):  # both capture paths
        await raises(DataCloneError, docs.bulk_put([*write, {"id": "deep", "v": nest(201)}]))
        deeper = {"id": "deeper", "v": nest(5000)}  # beyond marshal's own limit
        await raises(DataCloneError, docs.bulk_put([*write, deeper]))
    assert await docs.count() == 10


async def case_refusals_name_the_field_and_write_nothing(ctx: Ctx) -> None:
    db = await ctx.open({"docs": "id"})
    docs = db.table("docs")
    for bad, field in (
        ({"id": "x", "m": {1: "int key"}}, "m"),
        ({"id": "x", "s": {1, 2}}, "s"),
        ({"id": "x", "c": [1j]}, "c[0]"),
        ({"id": "x", "big": -(2**53)}, "big"),
        ({"id": "x", "f": frozenset()}, "f"),
        ({"id": "x", "e": ...}, "e"),
    ):
        for write in ([{"id": "fine"}], PAD):  # both capture paths
            err = await raises(DataCloneError, docs.bulk_put([*write, bad]))
            want = f"values[{len(write)}].{field}"
            assert getattr(err, "field", "") == want, (want, getattr(err, "field", ""))
    assert await docs.count() == 0


async def case_subclasses_of_plain_types_are_stored_plain(ctx: Ctx) -> None:
    db = await ctx.open({"docs": "id"})
    docs = db.table("docs")
    value = {"id": Name("s"), "level": Level.HIGH, "od": OrderedDict(a=1), "name": Name("n")}
    await docs.put(value)
    got = await docs.get("s")
    assert got == {"id": "s", "level": 3, "od": {"a": 1}, "name": "n"}
    assert type(got["level"]) is int and type(got["od"]) is dict and type(got["name"]) is str


async def case_a_value_changed_after_the_write_began_is_stored_as_it_was(ctx: Ctx) -> None:
    db = await ctx.open({"docs": "id"})
    docs = db.table("docs")
    for count in (2, 10):  # both capture paths
        values = [{"id": f"v{i}", "items": [i], "meta": {"n": i}} for i in range(count)]
        task = asyncio.ensure_future(docs.bulk_put(values))
        await asyncio.sleep(0)  # the write has started: its values are captured
        for v in values:
            v["items"].append("later")  # type: ignore[attr-defined]
            v["meta"]["n"] = -1  # type: ignore[index]
        await task
        assert await docs.get("v1") == {"id": "v1", "items": [1], "meta": {"n": 1}}
        await docs.clear()


async def case_a_snapshot_reads_back_as_the_values_it_holds(ctx: Ctx) -> None:
    # What a core's snapshot holds (JS records in the browser, copies in memory) can be
    # inspected from Python, item by item and by slice.
    db = await ctx.open({"docs": "id"})
    values = [record(i) for i in range(10)]
    snap = db.core.snapshot(values)
    assert len(snap) == 10
    assert list(snap) == [stored_form(v) for v in values]
    assert snap[-1] == stored_form(values[9]) and snap[8:] == [stored_form(v) for v in values[8:]]
    values[0]["n"] = "changed"
    assert snap[0]["n"] == 0
