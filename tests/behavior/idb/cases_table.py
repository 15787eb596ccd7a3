"""Every Table method, key generation, constraints, and exact value round trips."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from behavior import Ctx, raises
from panelot.idb import (
    BulkError,
    ConstraintError,
    DataCloneError,
    DataError,
    ModifyError,
    Transaction,
)

STORES = {
    "items": "id, group, &email, *tags, meta.url, [group+n]",
    "auto": "++id, name",
    "ool": "",
    "oolauto": "++",
    "nested": "++meta.id",
}


async def case_get_and_bulk_get(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    items = db.table("items")
    assert await items.get("nope") is None
    await items.bulk_put([{"id": f"k{i}", "n": i} for i in range(5)])
    assert await items.get("k3") == {"id": "k3", "n": 3}
    got = await items.bulk_get(["k4", "missing", "k0", "k4", "k9"])
    assert got == [{"id": "k4", "n": 4}, None, {"id": "k0", "n": 0}, {"id": "k4", "n": 4}, None]
    assert await items.bulk_get([]) == []
    # a returned record is a copy: changing it changes nothing stored
    rec = await items.get("k1")
    rec["n"] = 100
    assert (await items.get("k1"))["n"] == 1


async def case_add_put_and_constraint(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    items = db.table("items")
    assert await items.add({"id": "a", "v": 1}) == "a"
    err = await raises(ConstraintError, items.add({"id": "a", "v": 2}))
    assert err.name == "ConstraintError"  # type: ignore[attr-defined]
    assert await items.get("a") == {"id": "a", "v": 1}
    assert await items.put({"id": "a", "v": 3}) == "a"
    assert await items.get("a") == {"id": "a", "v": 3}
    assert await items.put({"id": ["x", 1], "v": 4}) == ["x", 1]
    assert await items.get(["x", 1]) == {"id": ["x", 1], "v": 4}
    assert await items.count() == 2
    # the stored value is a copy of the one given
    value = {"id": "c", "list": [1, 2]}
    await items.put(value)
    value["list"].append(3)
    assert await items.get("c") == {"id": "c", "list": [1, 2]}


async def case_bulk_add_and_bulk_put_return_keys(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    items = db.table("items")
    keys = await items.bulk_add([{"id": 3}, {"id": "b"}, {"id": [1]}])
    assert keys == [3, "b", [1]]
    assert await items.bulk_put([{"id": 3, "v": 1}, {"id": 4}]) == [3, 4]
    assert await items.bulk_add([]) == []
    assert await items.bulk_put([]) == []
    assert await items.get(3) == {"id": 3, "v": 1}
    auto = db.table("auto")
    assert await auto.bulk_add([{"name": "a"}, {"name": "b"}, {"name": "c"}]) == [1, 2, 3]
    assert await auto.bulk_put([{"name": "d"}, {"id": 2, "name": "B"}, {"name": "e"}]) == [4, 2, 5]
    ool = db.table("ool")
    assert await ool.bulk_add(["x", {"y": 1}, 5], ["k1", "k2", 7]) == ["k1", "k2", 7]
    assert await ool.bulk_get(["k1", "k2", 7]) == ["x", {"y": 1}, 5]
    oolauto = db.table("oolauto")
    assert await oolauto.bulk_add([{"a": 1}, {"a": 2}], [None, 10]) == [1, 10]
    assert await oolauto.bulk_put([{"a": 3}]) == [11]
    err = await raises(DataError, ool.bulk_add([1, 2], ["a"]))
    assert getattr(err, "field", None) == "keys"


async def case_bulk_error_failures_by_position(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    items = db.table("items")
    await items.put({"id": 1})
    values = [
        {"id": 0},
        {"id": 1},
        {"id": 2},
        {"id": 2},
        {"id": 3, "email": "e"},
        {"id": 4, "email": "e"},
    ]
    err = await raises(BulkError, items.bulk_add(values))
    assert isinstance(err, BulkError) and err.name == "BulkError"
    assert sorted(err.failures) == [1, 3, 5]
    assert all(isinstance(f, ConstraintError) for f in err.failures.values())
    assert "3 of 6" in err.message
    # outside a transaction the call is all-or-nothing: nothing of it was committed
    assert await items.to_collection().primary_keys() == [1]
    # bulk_put fails only on unique indexes, and likewise writes nothing then
    await items.put({"id": 3, "email": "e"})
    err = await raises(BulkError, items.bulk_put([{"id": 10, "email": "e"}, {"id": 11}]))
    assert list(err.failures) == [0]  # type: ignore[attr-defined]
    assert await items.get(11) is None
    assert await items.get(10) is None


async def case_uncaught_bulk_error_aborts_transaction(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    await db.table("items").put({"id": "dup"})

    async def body(tx: Transaction) -> None:
        await tx.table("auto").add({"name": "before"})
        await tx.table("items").bulk_add([{"id": "new1"}, {"id": "dup"}, {"id": "new2"}])

    err = await raises(BulkError, db.transaction("rw", ["items", "auto"], body))
    assert list(err.failures) == [1]  # type: ignore[attr-defined]
    assert await db.table("items").to_collection().primary_keys() == ["dup"]
    assert await db.table("auto").count() == 0
    # the aborted transaction's generated key is given again (the generator was reverted)
    assert await db.table("auto").add({"name": "after"}) == 1


async def case_caught_bulk_error_commits_the_rest(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    await db.table("items").put({"id": "dup"})

    async def body(tx: Transaction) -> dict[int, str]:
        try:
            await tx.table("items").bulk_add([{"id": "new1"}, {"id": "dup"}, {"id": "new2"}])
        except BulkError as exc:
            await tx.table("auto").add({"name": "logged"})
            return {pos: e.name for pos, e in exc.failures.items()}
        return {}

    assert await db.transaction("rw", ["items", "auto"], body) == {1: "ConstraintError"}
    assert await db.table("items").to_collection().primary_keys() == ["dup", "new1", "new2"]
    assert await db.table("auto").count() == 1


async def case_update(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    items = db.table("items")
    await items.put({"id": "a", "n": 1, "meta": {"url": "u1", "x": 1}, "group": "g"})
    assert await items.update("a", {"n": 2, "meta.url": "u2", "deep.er.path": True}) == 1
    assert await items.get("a") == {
        "id": "a",
        "n": 2,
        "meta": {"url": "u2", "x": 1},
        "group": "g",
        "deep": {"er": {"path": True}},
    }
    assert await items.where("meta.url").equals("u2").primary_keys() == ["a"]
    assert await items.where("meta.url").equals("u1").count() == 0
    assert await items.update("missing", {"n": 1}) == 0
    assert await items.get("missing") is None
    assert await items.update("a", {"id": "a", "group": None}) == 1
    assert (await items.get("a"))["group"] is None
    assert await items.where("group").equals("g").count() == 0
    # A change of the primary key moves the record, as Dexie's update does.
    assert await items.update("a", {"id": "b"}) == 1
    assert await items.get("a") is None and (await items.get("b"))["n"] == 2
    assert await items.update("b", {"id": "a"}) == 1
    assert await items.get("b") is None and (await items.get("a"))["n"] == 2
    err = await raises(DataCloneError, items.update("a", {"bad": {1, 2}}))
    assert "bad" in (getattr(err, "field", "") or "")
    # unique index violation in an update
    await items.put({"id": "b", "email": "taken"})
    err = await raises(ModifyError, items.update("a", {"email": "taken"}))  # as Dexie's
    assert [f.name for f in getattr(err, "failures", [])] == ["ConstraintError"]
    assert "email" not in await items.get("a")
    # out-of-line keys
    ool = db.table("ool")
    await ool.put({"x": {"y": 1}}, "k")
    assert await ool.update("k", {"x.y": 2, "z": [1]}) == 1
    assert await ool.get("k") == {"x": {"y": 2}, "z": [1]}
    auto = db.table("auto")
    key = await auto.add({"name": "n"})
    assert await auto.update(key, {"name": "m"}) == 1
    assert await auto.get(key) == {"id": key, "name": "m"}
    await raises(DataError, items.update(None, {"n": 1}))


async def case_delete_bulk_delete_clear_count(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    items = db.table("items")
    await items.bulk_put([{"id": i, "group": i % 3} for i in range(10)])
    assert await items.count() == 10
    await items.delete(3)
    await items.delete(3)  # absent: no error
    await items.delete("nope")
    assert await items.count() == 9
    await items.bulk_delete([0, 1, 99, 1])
    assert await items.to_collection().primary_keys() == [2, 4, 5, 6, 7, 8, 9]
    assert await items.where("group").equals(1).primary_keys() == [4, 7]
    await items.bulk_delete([])
    await items.clear()
    assert await items.count() == 0
    assert await items.where("group").equals(1).count() == 0
    assert await items.to_list() == []
    await items.put({"id": 1, "group": 1})
    assert await items.where("group").equals(1).primary_keys() == [1]


async def case_auto_increment_inline(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    auto = db.table("auto")
    assert await auto.add({"name": "a"}) == 1
    assert await auto.add({"name": "b"}) == 2
    assert await auto.put({"name": "c"}) == 3
    assert await auto.to_list() == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": "b"},
        {"id": 3, "name": "c"},
    ]
    # an explicit numeric key above the generator bumps it
    assert await auto.add({"id": 10, "name": "ten"}) == 10
    assert await auto.add({"name": "next"}) == 11
    # a lower one does not
    assert await auto.put({"id": 5, "name": "five"}) == 5
    assert await auto.add({"name": "n12"}) == 12
    # a float bumps to floor + 1
    assert await auto.add({"id": 20.5, "name": "f"}) == 20.5
    assert await auto.add({"name": "n21"}) == 21
    # non-numeric keys do not touch it
    assert await auto.add({"id": "s", "name": "str"}) == "s"
    assert await auto.add({"id": [1], "name": "arr"}) == [1]
    assert await auto.add({"name": "n22"}) == 22
    # a negative one neither
    assert await auto.add({"id": -5, "name": "neg"}) == -5
    assert await auto.add({"name": "n23"}) == 23
    assert await auto.get(23) == {"id": 23, "name": "n23"}
    # an invalid key is not replaced by a generated one
    err = await raises(DataError, auto.add({"id": None, "name": "x"}))
    assert getattr(err, "field", "").endswith("id")
    await raises(DataError, auto.add({"id": True}))
    # in-line keys cannot also be given explicitly
    await raises(DataError, auto.add({"name": "x"}, 99))
    assert await auto.count() == 14


async def case_auto_increment_nested_key_path(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    nested = db.table("nested")
    assert await nested.add({"meta": {"other": 1}}) == 1
    assert await nested.get(1) == {"meta": {"other": 1, "id": 1}}
    assert await nested.add({"meta": {"id": 7}}) == 7
    # a missing parent object is created, as IndexedDB injects keys
    assert await nested.add({"x": 1}) == 8
    assert await nested.get(8) == {"x": 1, "meta": {"id": 8}}
    await raises(DataError, nested.add({"meta": "not an object"}))


async def case_auto_increment_out_of_line(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    t = db.table("oolauto")
    assert await t.add({"a": 1}) == 1
    assert await t.add("text") == 2
    assert await t.put([1, 2]) == 3
    assert await t.get(1) == {"a": 1}  # the key is not written into the value
    assert await t.get(2) == "text"
    assert await t.add({"a": 5}, 50) == 50
    assert await t.add({"a": 6}) == 51
    assert await t.put({"a": 7}, "s") == "s"
    assert await t.add({"a": 8}) == 52
    await raises(ConstraintError, t.add({"a": 9}, 50))
    assert await t.put({"a": 10}, 50) == 50
    assert await t.get(50) == {"a": 10}
    assert await t.to_collection().primary_keys() == [1, 2, 3, 50, 51, 52, "s"]


async def case_out_of_line_explicit_keys(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    t = db.table("ool")
    assert await t.add({"v": 1}, "b") == "b"
    assert await t.add({"v": 2}, ["a", 1]) == ["a", 1]
    assert await t.put("plain", 3) == 3
    await raises(ConstraintError, t.add({"v": 3}, "b"))
    err = await raises(DataError, t.add({"v": 4}))
    assert getattr(err, "field", "").endswith("key")
    err = await raises(DataError, t.put({"v": 5}, math.nan))
    assert getattr(err, "field", "").endswith("key")
    await raises(DataError, t.put({"v": 5}, {"a": 1}))
    await raises(DataError, t.put({"v": 5}, 2**53))
    await raises(DataError, t.put({"v": 5}, [-(2**60)]))
    assert await t.put({"v": 6}, 2**53 - 1) == 2**53 - 1
    assert await t.get(2**53 - 1) == {"v": 6}
    await t.delete(2**53 - 1)
    assert await t.to_collection().primary_keys() == [3, "b", ["a", 1]]
    assert await t.get(["a", 1]) == {"v": 2}


async def case_numbers_beyond_safe_integers_read_back_as_floats_and_write_back(
    ctx: Ctx,
) -> None:
    # JS numbers past 2**53 - 1 (all integral) come back as the floats they are: an int
    # there is refused on writing (JS would round it), so a read value must write back.
    db = await ctx.open(STORES)
    items = db.table("items")
    big = {"id": "big", "n": 1e20, "m": 2.0**53, "deep": {"l": [-(2.0**60), 3.5]}, "k": 7}
    await items.put(big)
    read = await items.get("big")
    assert read == big
    assert [type(read["n"]), type(read["m"]), type(read["deep"]["l"][0])] == [float] * 3
    assert type(read["k"]) is int  # a safe integer stays an int
    await items.put(read)  # the round trip
    await items.bulk_put([read, {**read, "id": "big2"}])
    rows = await items.where("id").any_of(["big", "big2"]).to_list()
    assert [type(r["n"]) for r in rows] == [float, float] and rows[0] == big
    await raises(DataCloneError, items.put({"id": "x", "n": 2**53 + 1}))


async def case_a_key_generator_ends_at_2_53(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    auto = db.table("auto")
    assert await auto.put({"id": 2**53 - 1, "name": "last safe"}) == 2**53 - 1
    key = await auto.add({"name": "generated"})
    assert key == 2**53 and type(key) is float
    record = await auto.get(key)
    assert record == {"id": 2.0**53, "name": "generated"} and type(record["id"]) is float
    await auto.put({**record, "name": "written back"})  # the generated key is a key
    assert (await auto.get(2.0**53))["name"] == "written back"
    await raises(ConstraintError, auto.add({"name": "one too many"}))
    assert await auto.count() == 2


async def case_unique_index(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    items = db.table("items")
    await items.add({"id": 1, "email": "a@x"})
    await raises(ConstraintError, items.add({"id": 2, "email": "a@x"}))
    await raises(ConstraintError, items.put({"id": 2, "email": "a@x"}))
    # replacing the holder itself is fine
    await items.put({"id": 1, "email": "a@x", "v": 2})
    # records without the field, or with a non-key there, are not in the index
    await items.bulk_add([{"id": 3}, {"id": 4}, {"id": 5, "email": None}, {"id": 6, "email": None}])
    await items.bulk_add([{"id": 7, "email": True}, {"id": 8, "email": True}])
    assert await items.order_by("email").primary_keys() == [1]
    # freeing the value lets another record take it
    await items.put({"id": 1, "email": "b@x"})
    await items.add({"id": 2, "email": "a@x"})
    assert await items.where("email").equals("a@x").primary_keys() == [2]
    assert await items.count() == 8


async def case_multi_entry_index(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    items = db.table("items")
    await items.bulk_put(
        [
            {"id": "a", "tags": ["x", "y", "x"]},
            {"id": "b", "tags": ["y", 3, None, {"no": 1}, ["z", 1]]},
            {"id": "c", "tags": "x"},  # a single key is indexed as such
            {"id": "d", "tags": []},
            {"id": "e"},
        ]
    )
    assert await items.where("tags").equals("x").primary_keys() == ["a", "c"]
    assert await items.where("tags").equals("y").primary_keys() == ["a", "b"]
    assert await items.where("tags").equals(3).primary_keys() == ["b"]
    assert await items.where("tags").equals(["z", 1]).primary_keys() == ["b"]
    assert await items.order_by("tags").keys() == [3, "x", "x", "y", "y", ["z", 1]]
    assert await items.order_by("tags").primary_keys() == ["b", "a", "c", "a", "b", "b"]
    assert await items.where("tags").any_of(["x", "y"]).primary_keys() == ["a", "c", "a", "b"]
    await items.put({"id": "a", "tags": ["w"]})
    assert await items.where("tags").equals("x").primary_keys() == ["c"]
    assert await items.where("tags").equals("w").primary_keys() == ["a"]
    await items.delete("b")
    assert await items.order_by("tags").keys() == ["w", "x"]


async def case_unique_multi_entry_index(ctx: Ctx) -> None:
    db = await ctx.open({"t": "id, &*tags"})
    t = db.table("t")
    await t.add({"id": 1, "tags": ["a", "b", "a"]})
    await raises(ConstraintError, t.add({"id": 2, "tags": ["c", "b"]}))
    await t.add({"id": 2, "tags": ["c", "d"]})
    await t.put({"id": 1, "tags": ["b", "e"]})
    assert await t.order_by("tags").keys() == ["b", "c", "d", "e"]


DT_UTC = datetime(2024, 2, 29, 23, 59, 58, 123000, tzinfo=UTC)
DT_OLD = datetime(1901, 3, 4, 5, 6, 7, tzinfo=UTC)

ROUND_TRIP: dict[str, Any] = {
    "id": "v",
    "none": None,
    "t": True,
    "f": False,
    "zero": 0,
    "int": -42,
    "big": 2**53 - 1,
    "float": 3.25,
    "negzero_free": -1.5e-300,
    "inf": math.inf,
    "ninf": -math.inf,
    "str": 'h\u00e9llo \u4e16\u754c \U0001f600 \x00 "quote" \\ \n',
    "empty": "",
    "bytes": b"\x00\x01\xfe\xff",
    "nobytes": b"",
    "date": DT_UTC,
    "old": DT_OLD,
    "list": [1, "a", None, [2, [3, {"k": None}]], {"x": b"z"}, DT_UTC],
    "emptylist": [],
    "dict": {"a": {"b": {"c": [None, True, 1.5]}}, "": "empty key", "with.dot": 1},
    "emptydict": {},
}


async def case_values_round_trip_exactly(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    items = db.table("items")
    await items.put(ROUND_TRIP)
    got = await items.get("v")
    assert got == ROUND_TRIP, got
    for k, v in ROUND_TRIP.items():
        assert type(got[k]) is type(v), (k, type(got[k]), type(v))
    assert got["none"] is None and got["list"][2] is None
    assert got["dict"]["a"]["b"]["c"][0] is None
    assert got["t"] is True and got["f"] is False
    assert got["date"].tzinfo is not None and got["date"].utcoffset() == timedelta(0)
    assert got["date"] == DT_UTC and got["list"][5] == DT_UTC
    assert (await items.to_list()) == [ROUND_TRIP]
    assert (await items.where(":id").equals("v").first()) == ROUND_TRIP
    # NaN survives as a value (not as a key)
    await items.put({"id": "nan", "x": math.nan})
    assert math.isnan((await items.get("nan"))["x"])
    # tuples come back as lists, bytearrays as bytes; an aware date keeps its instant
    plus2 = DT_UTC.astimezone(timezone(timedelta(hours=2)))
    await items.put({"id": "t", "tup": (1, (2, 3)), "ba": bytearray(b"ab"), "d": plus2})
    got = await items.get("t")
    assert got["tup"] == [1, [2, 3]] and got["ba"] == b"ab" and type(got["ba"]) is bytes
    assert got["d"] == DT_UTC
    # top-level non-object values in an out-of-line store
    ool = db.table("ool")
    for i, value in enumerate([None, 0, "s", [None], b"raw", DT_UTC, 1.5, True]):
        await ool.put(value, i)
        got_value = await ool.get(i)
        assert got_value == value and type(got_value) is type(value), (value, got_value)


async def case_non_storable_values_raise_data_clone_error(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    items = db.table("items")

    def fn() -> None:
        pass

    for bad, field in (
        ({"id": 1, "s": {1, 2}}, "s"),
        ({"id": 1, "o": object()}, "o"),
        ({"id": 1, "f": fn}, "f"),
        ({"id": 1, "deep": {"list": [1, {"x": frozenset()}]}}, "deep.list[1].x"),
        ({"id": 1, "k": {1: "int key"}}, "k"),
        ({"id": 1, "c": 1j}, "c"),
        ({"id": 1, "huge": 2**53}, "huge"),
        ({"id": 1, "l": [-(2**64)]}, "l[0]"),
    ):
        err = await raises(DataCloneError, items.put(bad))
        assert err.name == "DataCloneError"  # type: ignore[attr-defined]
        got_field = getattr(err, "field", "") or ""
        assert got_field.endswith(field), (field, got_field)
        assert field in str(err)
    err = await raises(DataCloneError, items.bulk_put([{"id": 1}, {"id": 2, "bad": {3}}]))
    assert getattr(err, "field", "") == "values[1].bad"
    assert await items.count() == 0


async def case_invalid_keys_raise_data_error_naming_field(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    items = db.table("items")
    for bad in (None, True, math.nan, {"a": 1}, [1, None]):
        err = await raises(DataError, items.put({"id": bad}))
        assert err.name == "DataError"  # type: ignore[attr-defined]
        assert (getattr(err, "field", "") or "").endswith("id"), getattr(err, "field", None)
    err = await raises(DataError, items.put({"no_id": 1}))
    assert (getattr(err, "field", "") or "").endswith("id")
    err = await raises(DataError, items.bulk_put([{"id": 1}, {"id": 2}, {"x": 3}]))
    assert getattr(err, "field", "") == "values[2].id"
    compound = await ctx.open({"c": "[a+b]"})
    err = await raises(DataError, compound.table("c").put({"a": 1, "b": None}))
    assert "a+b" in (getattr(err, "field", "") or "")
    await raises(DataError, items.put("not an object"))
    assert await items.count() == 0


async def case_table_methods_inside_transaction(ctx: Ctx) -> None:
    db = await ctx.open(STORES)

    async def body(tx: Transaction) -> list[Any]:
        items, auto = tx.table("items"), tx.table("auto")
        out: list[Any] = []
        out.append(await items.add({"id": 1, "group": "a"}))
        out.append(await items.bulk_put([{"id": 2, "group": "b"}, {"id": 3, "group": "a"}]))
        out.append(await items.update(2, {"group": "a"}))
        out.append(await items.count())
        await items.delete(1)
        out.append(await items.bulk_get([1, 2]))
        out.append(await auto.bulk_add([{"name": "x"}, {"name": "y"}]))
        out.append(await items.where("group").equals("a").primary_keys())
        await items.bulk_delete([3])
        out.append(await items.to_collection().primary_keys())
        return out

    out = await db.transaction("rw", ["items", "auto"], body)
    assert out == [1, [2, 3], 1, 3, [None, {"id": 2, "group": "a"}], [1, 2], [2, 3], [2]]
    assert await db.table("items").to_list() == [{"id": 2, "group": "a"}]


async def case_dates_are_stored_as_js_dates(ctx: Ctx) -> None:
    db = await ctx.open({"d": "id, at"})
    d = db.table("d")
    micro = datetime(2024, 1, 2, 3, 4, 5, 678_901, tzinfo=UTC)
    naive = datetime(2024, 1, 2, 3, 4, 5, 678_000)
    before_1970 = datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
    await d.put({"id": 1, "at": micro, "naive": naive, "old": before_1970})
    got = await d.get(1)
    ms = datetime(2024, 1, 2, 3, 4, 5, 678_000, tzinfo=UTC)
    # a JS Date holds whole milliseconds in UTC; a naive datetime is taken as UTC
    assert got["at"] == ms, got["at"]
    assert got["naive"] == ms and got["naive"].tzinfo is not None, got["naive"]
    assert got["old"] == datetime(1969, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC), got["old"]
    # as keys, too: both name the same millisecond
    assert await d.where("at").equals(ms).primary_keys() == [1]
    assert await d.where("at").equals(naive).primary_keys() == [1]
    await d.put({"id": micro, "v": 1})
    await d.put({"id": ms, "v": 2})
    assert await d.get(micro) == {"id": ms, "v": 2}
    assert await d.count() == 2
