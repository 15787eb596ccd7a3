"""modify/update/upsert/bulk_update with Dexie's update specs and property modifications."""

from __future__ import annotations

import math
from typing import Any

from behavior import Ctx, raises
from behavior.idb.call_errors import lazy
from panelot.idb import (
    ArgumentTypeError,
    BulkError,
    ConstraintError,
    Database,
    DataError,
    ModifyContext,
    ModifyError,
    add,
    remove,
    replace_prefix,
)

STORES = {"m": "id, n, *tags, &code, s", "ool": "", "auto": "++id"}


async def _db(ctx: Ctx) -> Database:
    db = await ctx.open(STORES)
    await db.table("m").bulk_put(
        [{"id": i, "n": i, "tags": [f"t{i % 2}", "all"], "s": f"doc/{i}"} for i in range(4)]
    )
    return db


async def case_add_remove_replace_prefix(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("m")
    assert await t.where("id").below(2).modify({"n": add(10)}) == 2
    assert [r["n"] for r in await t.to_list()] == [10, 11, 2, 3]
    await t.update(2, {"n": remove(5), "missing": add(3), "gone": remove(1)})
    r = await t.get(2)
    assert r["n"] == -3 and r["missing"] == 3  # Number(undefined) || 0, as Dexie's add
    assert math.isnan(r["gone"])  # Number(undefined) - 1 is NaN, as Dexie's remove
    # lists: Dexie concatenates and sorts by String(item), UTF-16 order
    await t.update(3, {"tags": add(["b", "a", 10, 9])})
    assert (await t.get(3))["tags"] == [10, 9, "a", "all", "b", "t1"]
    await t.update(3, {"tags": remove(["all", 9])})
    assert (await t.get(3))["tags"] == [10, "a", "b", "t1"]
    await t.update(1, {"tags": remove(["x"]), "n": add(0.5)})
    assert (await t.get(1))["tags"] == ["all", "t1"] and (await t.get(1))["n"] == 11.5
    await t.update(0, {"none": remove(["x"])})  # not a list: becomes []
    assert (await t.get(0))["none"] == []
    assert await t.to_collection().modify({"s": replace_prefix("doc/", "file/")}) == 4
    assert [r["s"] for r in await t.to_list()] == ["file/0", "file/1", "file/2", "file/3"]
    await t.update(0, {"s": replace_prefix("zzz", "y"), "n": replace_prefix("a", "b")})
    assert (await t.get(0))["s"] == "file/0" and (await t.get(0))["n"] == 10
    for bad in (lambda: add("x"), lambda: remove(True), lambda: replace_prefix(1, "a")):
        await raises(ArgumentTypeError, lazy(bad))


async def case_dotted_paths_through_non_objects(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("m")
    await t.put({"id": 9, "n": 9, "meta": {"a": 1}, "num": 5, "text": "x", "zero": 0})
    await t.update(9, {"meta.b.c": 2, "fresh.x": 1, "num.y": 1, "text.z": 1, "zero.w": 1})
    r = await t.get(9)
    assert r["meta"] == {"a": 1, "b": {"c": 2}} and r["fresh"] == {"x": 1}
    # a number or string on the path is left as it was (Dexie cannot set through it);
    # a falsy one (0, "", null) is replaced by an object, as Dexie's setByKeyPath does
    assert r["num"] == 5 and r["text"] == "x" and r["zero"] == {"w": 1}


async def case_modify_function_may_skip_delete_or_replace(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("m")

    def change(value: dict[str, Any], ctx: ModifyContext) -> bool | None:
        if ctx.primary_key == 0:
            return False  # leave it
        if ctx.primary_key == 1:
            ctx.value = None  # delete it
            return None
        if ctx.primary_key == 2:
            ctx.value = {"id": 2, "n": 200}  # replace it
            return None
        value["n"] = -1
        return None

    assert await t.to_collection().modify(change) == 4
    assert [(r["id"], r["n"]) for r in await t.to_list()] == [(0, 0), (2, 200), (3, -1)]
    assert await t.where("n").equals(99).modify({"x": 1}) == 0


async def case_multi_entry_modify_changes_each_record_once(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("m")
    # Every record has two tags: Dexie lists each record twice and, past its chunk of
    # 200, adds twice. Here each record is changed once.
    assert await t.where("tags").any_of(["t0", "all"]).modify({"n": add(1)}) == 4
    assert [r["n"] for r in await t.to_list()] == [1, 2, 3, 4]
    assert await t.where("tags").any_of(["t0", "all"]).delete() == 4
    assert await t.count() == 0


async def case_order_by_delete_deletes_only_indexed_records(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("m")
    await t.put({"id": 50})  # no n: not in the index "n"
    assert await t.order_by("n").delete() == 4
    # Dexie's orderBy(index).delete() clears the whole table; here only what it holds.
    assert [r["id"] for r in await t.to_list()] == [50]


async def case_modify_error_writes_nothing(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("m")
    await t.update(0, {"code": "A"})
    err = await raises(ModifyError, t.where("id").above(0).modify({"code": "A"}))
    assert isinstance(err, ModifyError)
    assert err.success_count == 0 and err.failed_keys == [1, 2, 3]
    assert {f.name for f in err.failures} == {"ConstraintError"}
    assert await t.where("code").equals("A").primary_keys() == [0]
    assert err.to_json()["successCount"] == 0
    await raises(DataError, t.to_collection().modify({"": 1}))
    await raises(DataError, t.to_collection().modify([1]))


async def case_upsert_and_bulk_update(ctx: Ctx) -> None:
    db = await _db(ctx)
    t = db.table("m")
    assert await t.upsert(0, {"n": add(5), "extra": True}) is True
    assert (await t.get(0))["n"] == 5 and (await t.get(0))["extra"] is True
    assert await t.upsert(70, {"n": 1, "meta.x": 2}) is False
    assert await t.get(70) == {"n": 1, "meta": {"x": 2}, "id": 70}
    ool = db.table("ool")
    assert await ool.upsert("k", {"v": 1}) is False and await ool.get("k") == {"v": 1}
    assert await ool.upsert("k", {"v": add(1)}) is True and await ool.get("k") == {"v": 2}
    # A stored value that is no object takes no change, but it existed: True (Dexie
    # answers !!existing, so False for 0 or "": a deliberate difference).
    for falsy in (0, ""):
        await ool.put(falsy, "z")
        assert await ool.upsert("z", {"v": 1}) is True and await ool.get("z") == falsy
    changed = await t.bulk_update(
        [
            {"key": 1, "changes": {"n": add(100)}},
            {"key": 404, "changes": {"n": 1}},
            {"key": 2, "changes": {"s": "two"}},
        ]
    )
    assert changed == 2 and (await t.get(1))["n"] == 101 and (await t.get(2))["s"] == "two"
    assert await t.get(404) is None
    await raises(ConstraintError, t.bulk_update([{"key": 1, "changes": {"id": 5}}]))
    await t.update(3, {"code": "C"})
    err = await raises(
        BulkError,
        t.bulk_update([{"key": 1, "changes": {"n": 0}}, {"key": 2, "changes": {"code": "C"}}]),
    )
    assert list(getattr(err, "failures", {})) == [1]
    assert (await t.get(1))["n"] == 101  # nothing was written
    await raises(DataError, t.bulk_update([{"key": 1}]))
    assert await t.bulk_put([{"id": 80}, {"id": 81}], all_keys=False) == 81
    assert await t.bulk_put([{"id": 82}]) == [82]
    auto = db.table("auto")
    assert await auto.bulk_put([{}, {}], all_keys=False) == 2
