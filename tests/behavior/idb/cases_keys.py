"""Keys: validation, the spec's comparison order, MIN_KEY/MAX_KEY, and stored key order."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from behavior import Ctx, raises
from panelot.idb import (
    MAX_KEY,
    MIN_KEY,
    ArgumentTypeError,
    DataError,
    SchemaError,
    compare_keys,
    validate_key,
)

D1 = datetime(2020, 1, 1, tzinfo=UTC)
D2 = datetime(2024, 6, 30, 12, 0, 0, 500_000, tzinfo=UTC)

# Strictly ascending in IndexedDB key order.
ORDERED: list[Any] = [
    -math.inf,
    -1e300,
    -5,
    -1.5,
    0,
    0.5,
    1,
    2.25,
    10,
    1e300,
    math.inf,
    D1,
    D2,
    "",
    "A",
    "Z",
    "a",
    "a\x00",
    "ab",
    "b",
    "\u00e9",
    "\u4e2d",
    "\U0001f600",  # a surrogate pair: 0xD83D ... sorts below U+FF5E in UTF-16
    "\uff5e",
    b"",
    b"\x00",
    b"\x00\x00",
    b"\x01",
    b"\xff",
    [],
    [-1],
    [0],
    [0, 0],
    [0, "a"],
    [1],
    [D1],
    ["a"],
    ["a", []],
    [b"\x00"],
    [[]],
    [[0]],
    [[[]]],
]


def _sign(n: int) -> int:
    return (n > 0) - (n < 0)


async def case_compare_keys_spec_order(ctx: Ctx) -> None:
    for i, a in enumerate(ORDERED):
        assert compare_keys(a, a) == 0, a
        for j, b in enumerate(ORDERED):
            got = compare_keys(a, b)
            assert got in (-1, 0, 1)
            assert got == _sign(i - j), (a, b, got)


async def case_compare_keys_details(ctx: Ctx) -> None:
    # ints and floats are the same number type
    assert compare_keys(1, 1.0) == 0
    assert compare_keys(2, 1.5) == 1
    # Dates compare by instant, whatever the time zone
    east = D1.astimezone(timezone(timedelta(hours=2)))
    assert east.hour == 2
    assert compare_keys(east, D1) == 0
    # Strings compare by UTF-16 code units, not by code points
    assert compare_keys("\U0001f600", "\uffff") == -1
    assert compare_keys("\ue000", "\U00010000") == 1
    # A prefix sorts first, for strings, binaries and arrays
    assert compare_keys("ab", "abc") == -1
    assert compare_keys(b"ab", b"abc") == -1
    assert compare_keys(["a"], ["a", 0]) == -1
    # Arrays compare element by element; the element types decide first
    assert compare_keys([1, "z"], [2, "a"]) == -1
    assert compare_keys(["a", 1], [1, "a"]) == 1
    assert compare_keys([[1, 2]], [[1, 3]]) == -1
    # tuples and bytearrays are accepted as arrays and binaries
    assert compare_keys((1, 2), [1, 2]) == 0
    assert compare_keys(bytearray(b"x"), b"x") == 0


async def case_min_key_and_max_key(ctx: Ctx) -> None:
    assert MIN_KEY == -math.inf
    assert MAX_KEY == [[]]
    assert validate_key(MIN_KEY) == MIN_KEY
    assert validate_key(MAX_KEY) == [[]]
    for key in ORDERED[1:]:
        assert compare_keys(MIN_KEY, key) == -1, key
    for key in ORDERED:
        if not (isinstance(key, list) and key and isinstance(key[0], list)):
            assert compare_keys(MAX_KEY, key) == 1, key
    # Inside a compound key, they bound every scalar second component.
    for key in ORDERED:
        if not isinstance(key, list):
            assert compare_keys(["t1", MIN_KEY], ["t1", key]) <= 0
            assert compare_keys(["t1", MAX_KEY], ["t1", key]) == 1
            assert compare_keys(["t1", MAX_KEY], ["t2", key]) == -1


async def case_validate_key_normalizes(ctx: Ctx) -> None:
    assert validate_key(5) == 5
    assert validate_key(-0.5) == -0.5
    assert validate_key(math.inf) == math.inf
    assert validate_key("x") == "x"
    assert validate_key(D1) == D1
    assert validate_key(bytearray(b"ab")) == b"ab"
    assert type(validate_key(bytearray(b"ab"))) is bytes
    assert validate_key(memoryview(b"cd")) == b"cd"
    assert validate_key((1, ("a", b"x"))) == [1, ["a", b"x"]]
    assert validate_key([]) == []


async def case_validate_key_rejects_with_field(ctx: Ctx) -> None:
    bad: list[Any] = [math.nan, True, None, {"a": 1}, {1, 2}, object(), 1j, frozenset(), 2**53]
    for value in bad:
        try:
            validate_key(value, "thing")
        except DataError as exc:
            assert exc.name == "DataError"
            assert exc.field == "thing", (value, exc.field)
            assert "thing" in exc.message
        else:
            raise AssertionError(f"{value!r} was accepted as a key")
    # the default field name
    try:
        validate_key(None)
    except DataError as exc:
        assert exc.field == "key"
    else:
        raise AssertionError("None was accepted")
    # nested offenders are named by position
    for value, field in (
        ([1, None], "k[1]"),
        ([1, [2, math.nan]], "k[1][1]"),
        (["a", True], "k[1]"),
        ([{"x": 1}], "k[0]"),
    ):
        try:
            validate_key(value, "k")
        except DataError as exc:
            assert exc.field == field, (value, exc.field)
        else:
            raise AssertionError(f"{value!r} was accepted as a key")
    # an array containing itself
    loop: list[Any] = [1]
    loop.append(loop)
    try:
        validate_key(loop, "k")
    except DataError as exc:
        assert exc.field is not None and exc.field.startswith("k")
    else:
        raise AssertionError("a cyclic array was accepted")
    # compare_keys refuses non-keys as well
    for value in (None, True, {"a": 1}):
        try:
            compare_keys(value, 1)
        except DataError:
            pass
        else:
            raise AssertionError(f"compare_keys accepted {value!r}")


# Stored keys of every type, one per record, in ascending key order.
STORED: list[Any] = [
    -math.inf,
    -3,
    -0.25,
    0,
    1,
    1.5,
    2,
    1e15,
    2**53 - 1,
    math.inf,
    D1,
    D2,
    "",
    "B",
    "a",
    "ab",
    "\u00e9",
    "\U0001f600",
    "\uff5e",
    b"",
    b"\x00",
    b"\x00\x01",
    b"\x7f",
    b"\xff",
    [],
    [0],
    [0, "a"],
    [1],
    [D1],
    ["a"],
    ["a", b"x"],
    [b"\x00"],
    [[]],
    [[1, 2]],
]


def _same_keys(got: list[Any], want: list[Any]) -> None:
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want, strict=True):
        assert compare_keys(g, w) == 0, (g, w)
        assert g == w, (g, w)


async def case_stored_keys_come_back_in_key_order(ctx: Ctx) -> None:
    db = await ctx.open({"things": "", "rows": "id, k"})
    shuffled = STORED[1::2] + STORED[::2][::-1]
    things = db.table("things")
    await things.bulk_put([{"pos": STORED.index(k)} for k in shuffled], shuffled)
    assert await things.count() == len(STORED)
    _same_keys(await things.to_collection().primary_keys(), STORED)
    assert [r["pos"] for r in await things.to_list()] == list(range(len(STORED)))
    assert [r["pos"] for r in await things.reverse().to_list()] == list(range(len(STORED)))[::-1]
    _same_keys(await things.order_by(":id").primary_keys(), STORED)
    # each key is found again by get and by equals
    for pos, key in enumerate(STORED):
        assert await things.get(key) == {"pos": pos}, key
        assert await things.where(":id").equals(key).to_list() == [{"pos": pos}], key

    # the same keys as in-line primary keys and as index keys
    rows = db.table("rows")
    await rows.bulk_add([{"id": k, "k": k, "pos": STORED.index(k)} for k in shuffled])
    _same_keys(await rows.to_collection().primary_keys(), STORED)
    _same_keys(await rows.order_by("id").primary_keys(), STORED)
    _same_keys(await rows.order_by("k").keys(), STORED)
    assert [r["pos"] for r in await rows.order_by("k").to_list()] == list(range(len(STORED)))
    _same_keys(await rows.order_by("k").reverse().keys(), STORED[::-1])
    # key ranges across types
    strings = await rows.where("k").between("", b"").keys()
    _same_keys(strings, [k for k in STORED if isinstance(k, str)])
    dates = await rows.where("k").between(D1, "", True, False).keys()
    _same_keys(dates, [D1, D2])
    arrays = await rows.where("k").above_or_equal([]).keys()
    _same_keys(arrays, [k for k in STORED if isinstance(k, list)])
    numbers = await rows.where("k").below(D1).keys()
    _same_keys(numbers, [k for k in STORED if isinstance(k, int | float)])
    binaries = await rows.where("k").between(b"", [], True, False).keys()
    _same_keys(binaries, [k for k in STORED if isinstance(k, bytes)])


async def case_int_and_float_keys_are_one_key(ctx: Ctx) -> None:
    db = await ctx.open({"t": ""})
    t = db.table("t")
    await t.put({"v": "int"}, 1)
    await t.put({"v": "float"}, 1.0)
    assert await t.count() == 1
    assert await t.get(1) == {"v": "float"}
    assert await t.get(1.0) == {"v": "float"}
    await t.put({"v": "tuple"}, (1, 2))
    assert await t.get([1, 2]) == {"v": "tuple"}
    await t.put({"v": "ba"}, bytearray(b"k"))
    assert await t.get(b"k") == {"v": "ba"}


def _signed_zero(x: Any) -> bool:
    return isinstance(x, float) and x == 0 and math.copysign(1.0, x) < 0


async def case_a_minus_zero_key_is_zero_and_a_generators_store_puts_it_in_the_value(
    ctx: Ctx,
) -> None:
    # Measured in Chromium: a -0 key is stored and read back as 0, and a store with a key
    # generator injects the key it read into the value at its key path; a store without
    # one keeps the value as given (read as 0 by the browser core, a listed difference).
    # put answers 0 here (IndexedDB and Dexie answer the -0 given, a listed difference).
    db = await ctx.open({"auto": "++id", "inline": "id", "free": ""})
    auto, inline, free = db.table("auto"), db.table("inline"), db.table("free")
    answers = [
        await auto.put({"id": -0.0, "t": [-0.0]}),
        await inline.put({"id": -0.0}),
        await free.put({"v": 1}, -0.0),
        *(await inline.put({"id": [-0.0, 1]})),
    ]
    assert answers == [0, 0, 0, 0, 1] and not any(map(_signed_zero, answers)), answers
    for table in (auto, inline, free):
        keys = await table.to_collection().primary_keys()
        assert keys[0] == 0 and not _signed_zero(keys[0]), (table.name, keys)
    stored = await auto.get(0)
    assert stored == {"id": 0, "t": [0]} and not _signed_zero(stored["id"]), stored
    assert _signed_zero(stored["t"][0]) == (ctx.kind == "memory"), stored  # a value, not a key
    assert _signed_zero((await inline.get(0))["id"]) == (ctx.kind == "memory")
    assert await auto.count() == 1 and await inline.count() == 2


async def case_invalid_keys_in_queries_raise_data_error(ctx: Ctx) -> None:
    db = await ctx.open({"t": "id, x"})
    t = db.table("t")
    for bad in (None, math.nan, True, {"a": 1}):
        if not isinstance(bad, dict):  # get({...}) is a query by criteria, as Dexie's
            await raises(DataError, t.get(bad))
        await raises(DataError, t.delete(bad))
    await raises(SchemaError, t.get({"a": 1}))  # no index serves "a"
    err = await raises(DataError, t.bulk_get(["a", None]))
    assert getattr(err, "field", None) == "keys[1]"
    for make in (
        lambda: t.where("x").equals(math.nan),
        lambda: t.where("x").above(None),
        lambda: t.where("x").between(1, True),
        lambda: t.where("x").any_of([1, {"a": 1}]),
    ):
        try:
            make()
        except (DataError, ArgumentTypeError):  # None is Dexie's TypeError
            pass
        else:
            raise AssertionError("an invalid key was accepted in a query")
