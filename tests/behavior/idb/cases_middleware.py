"""Middleware over the core protocol (``db.use``) and the table hooks built on it."""

from __future__ import annotations

from typing import Any

from behavior import Ctx, raises
from behavior.idb.call_errors import lazy
from panelot.idb import (
    MISSING,
    Database,
    DataError,
    GetMany,
    KeyRange,
    Mutate,
    PrematureCommitError,
    Query,
)
from panelot.idb.core import Request

STORES = {"t": "id, n", "auto": "++id, name", "ool": "", "ool2": ""}


async def _db(ctx: Ctx) -> Database:
    return await ctx.open(STORES)


async def case_middleware_sees_every_request_and_can_change_results(ctx: Ctx) -> None:
    db = await _db(ctx)
    seen: list[str] = []

    def logger(down: Any) -> Any:
        async def handle(req: Request) -> Any:
            seen.append(type(req).__name__ + ":" + getattr(req, "kind", getattr(req, "want", "")))
            return await down(req)

        return handle

    def doubler(down: Any) -> Any:  # a level below: changes what reads return
        async def handle(req: Request) -> Any:
            out = await down(req)
            if isinstance(req, GetMany):
                return [None if v is None else {**v, "n": v["n"] * 2} for v in out]
            return out

        return handle

    db.use(logger, name="log", level=20).use(doubler, name="double", level=5)
    t = db.table("t")
    await t.bulk_put([{"id": i, "n": i} for i in range(3)])
    assert (await t.get(2))["n"] == 4
    assert [r["n"] for r in await t.to_list()] == [0, 1, 2]  # a Query, untouched
    assert seen == ["Mutate:put", "GetMany:", "Query:values"]
    # gather's batch reaches the handlers as its parts
    seen.clear()

    async def two(tx: Any) -> list[Any]:
        return await tx.gather(tx.table("t").get(0), tx.table("t").get(1))

    assert [r["n"] for r in await db.transaction("r", ["t"], two)] == [0, 2]
    assert seen == ["GetMany:", "GetMany:"]
    db.unuse("double")
    assert (await t.get(2))["n"] == 2


async def case_middleware_may_read_before_a_write_in_the_same_transaction(ctx: Ctx) -> None:
    db = await _db(ctx)
    old: list[Any] = []

    def audit(down: Any) -> Any:
        async def handle(req: Request) -> Any:
            if isinstance(req, Mutate) and req.kind == "put" and req.table == "t":
                old.extend(await down(GetMany("t", list(req.resolved or []))))
            return await down(req)

        return handle

    db.use(audit, name="audit")
    t = db.table("t")
    await t.put({"id": 1, "n": 1})
    await t.put({"id": 1, "n": 2})
    assert old == [None, {"id": 1, "n": 1}]
    assert (await t.get(1))["n"] == 2


async def case_middleware_that_awaits_something_else_aborts_the_transaction(ctx: Ctx) -> None:
    import asyncio

    db = await _db(ctx)

    def sleepy(down: Any) -> Any:
        async def handle(req: Request) -> Any:
            if isinstance(req, Mutate):
                await asyncio.sleep(0)
            return await down(req)

        return handle

    db.use(sleepy, name="sleepy")
    await raises(PrematureCommitError, db.table("t").put({"id": 1, "n": 1}))
    db.unuse("sleepy")
    assert await db.table("t").count() == 0
    await raises(Exception, lazy(lambda: db.use(42)))  # type: ignore[arg-type]


async def case_creating_hook_changes_values_and_gives_keys(ctx: Ctx) -> None:
    db = await _db(ctx)
    calls: list[Any] = []
    outcome: list[Any] = []

    def creating(key: Any, value: dict[str, Any], hook: Any) -> Any:
        calls.append(key)
        value["created"] = True
        hook.on_success = outcome.append
        return None if key is not None else None

    t = db.table("t")
    t.hook("creating", creating)
    await t.add({"id": 1, "n": 1})
    await t.put({"id": 2, "n": 2})
    await t.put({"id": 2, "n": 3})  # exists: an update, not a creation
    assert calls == [1, 2]
    assert outcome == [1, 2]
    assert (await t.get(1))["created"] is True
    ool = db.table("ool")
    ool.hook("creating", lambda key, value, hook: "made" if key is None else None)
    assert await ool.add({"x": 1}) == "made"
    assert await ool.get("made") == {"x": 1}
    # a hook that gives no key leaves the record without one: the write is refused
    ool2 = db.table("ool2")
    ool2.hook("creating", lambda key, value, hook: None)
    await raises(DataError, ool2.add({"x": 1}))
    assert await ool2.count() == 0
    t.unhook("creating", creating)
    await t.add({"id": 3, "n": 3})
    assert "created" not in await t.get(3)


async def case_updating_hook_sees_the_changes_and_adds_more(ctx: Ctx) -> None:
    db = await _db(ctx)
    t = db.table("t")
    await t.put({"id": 1, "n": 1, "gone": "x", "nested": {"a": 1, "b": 2}})
    seen: list[Any] = []

    def updating(mods: dict[str, Any], key: Any, old: Any, hook: Any) -> dict[str, Any]:
        seen.append((dict(mods), key, old["n"]))
        return {"touched": old["n"] + 1}

    t.hook("updating", updating)
    await t.put({"id": 1, "n": 5, "nested": {"a": 1, "b": 3}})
    assert seen == [({"gone": MISSING, "nested.b": 3, "n": 5}, 1, 1)]
    assert (await t.get(1))["touched"] == 2
    assert await t.update(1, {"n": 6}) == 1  # update() is a put of the changed record
    assert seen[-1][0] == {"n": 6} and (await t.get(1))["touched"] == 6
    assert await t.where("id").equals(1).modify({"n": 7}) == 1
    assert seen[-1][0] == {"n": 7}


async def case_deleting_hook_sees_the_records(ctx: Ctx) -> None:
    db = await _db(ctx)
    t = db.table("t")
    await t.bulk_put([{"id": i, "n": i} for i in range(5)])
    gone: list[Any] = []
    t.hook("deleting", lambda key, value, hook: gone.append((key, value)))
    await t.delete(0)
    await t.delete(99)
    assert gone == [(0, {"id": 0, "n": 0}), (99, MISSING)]
    gone.clear()
    await t.where("n").above(2).delete()
    assert [k for k, _ in gone] == [3, 4]
    gone.clear()
    await t.clear()  # a deleteRange: the hooks see each record
    assert gone == [(1, {"id": 1, "n": 1}), (2, {"id": 2, "n": 2})]
    assert await t.count() == 0


async def case_reading_hook_maps_results_not_filters(ctx: Ctx) -> None:
    db = await _db(ctx)
    t = db.table("t")
    await t.bulk_put([{"id": i, "n": i} for i in range(4)])
    t.hook("reading", lambda v: {**v, "label": f"#{v['id']}"})
    assert (await t.get(1))["label"] == "#1"
    assert await t.get(99) is None
    assert [r["label"] for r in await t.bulk_get([2, 3])] == ["#2", "#3"]
    # filters see the stored records (Dexie maps only what it yields)
    found = await t.to_collection().filter(lambda r: "label" not in r and r["n"] > 1).to_list()
    assert [r["label"] for r in found] == ["#2", "#3"]
    assert "label" not in (await t.to_collection().raw().to_list())[0]
    assert [r["label"] for r in await t.order_by("n").reverse().sort_by("id")] == [
        "#3",
        "#2",
        "#1",
        "#0",
    ]
    await raises(DataError, lazy(lambda: t.hook("saving", lambda *a: None)))


async def case_hooked_write_failure_reports_and_writes_nothing(ctx: Ctx) -> None:
    db = await _db(ctx)
    t = db.table("t")
    errors: list[str] = []

    def creating(key: Any, value: Any, hook: Any) -> None:
        hook.on_error = lambda e: errors.append(e.name)

    t.hook("creating", creating)
    await t.add({"id": 1, "n": 1})
    await raises(Exception, t.add({"id": 1, "n": 2}))
    assert errors == ["ConstraintError"]
    assert (await t.get(1))["n"] == 1
    q = Query("t", None, KeyRange(), "values")
    assert len(await db.transaction("r", ["t"], lambda tx: tx.request(q))) == 1
