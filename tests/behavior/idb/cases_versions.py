"""Dexie 4's version rules: newer databases open, missing parts are added, versionchange reopens.

Dexie 4 never throws ``VersionError``. A database newer than the declaration (another
app's ``version(2)``) is opened at its installed version and worked with as it is; a
declared store or index the database lacks is added by a native version bump of one
(Dexie's SchemaDiff path). Both are reported: a ``SchemaDiffWarning`` and the
``schemaDiff`` entry of ``db.describe()``. Only a changed primary key is refused
(``UpgradeError``, in cases_schema.py). A ``versionchange`` closes the connection and
the next operation reopens it at the new version.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from behavior import Ctx, raises
from behavior.waiting import until
from panelot.idb import (
    Database,
    InvalidTableError,
    SchemaDiffWarning,
    SchemaError,
    SchemaVersion,
)

V1 = SchemaVersion(1, {"items": "id, x, y", "keep": "++id", "gone": "id"})
# What a Dexie app's version(2) might do: a new table, a new index, a table and an
# index dropped.
V2 = SchemaVersion(2, {"items": "id, x, z", "fresh": "++id, w", "gone": None})
V2_GROWN = SchemaVersion(2, {"items": "id, x, y, z", "fresh": "++id, w"})


async def _seed(ctx: Ctx, name: str, versions: Sequence[SchemaVersion]) -> None:
    db = await ctx.open([V1], name=name)
    await db.table("items").bulk_put(
        [{"id": i, "x": i % 2, "y": -i, "z": f"z{i}"} for i in range(6)]
    )
    await db.table("keep").bulk_add([{"v": "a"}, {"v": "b"}])
    await db.table("gone").put({"id": "g"})
    db.close()
    if len(versions) > 1:
        later = await ctx.open(versions, name=name)
        await later.table("fresh").add({"w": 1})
        later.close()


async def _open_warned(
    ctx: Ctx, versions: Sequence[SchemaVersion], name: str
) -> tuple[Database, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        db = await ctx.open(list(versions), name=name)
    return db, [str(w.message) for w in caught if issubclass(w.category, SchemaDiffWarning)]


async def _table(db: Database, name: str) -> Any:
    return db.table(name)


async def case_newer_database_opens_at_its_version(ctx: Ctx) -> None:
    name = ctx.new_name()
    await _seed(ctx, name, [V1, V2_GROWN])
    db, warned = await _open_warned(ctx, [V1], name)
    assert db.version == 20  # opened at the installed version: no VersionError, no bump
    assert len(warned) == 1 and "newer" in warned[0] and name in warned[0], warned
    described = db.describe()
    assert described["version"] == 20
    assert described["schemaDiff"] == {
        "declaredVersion": 10,
        "foundVersion": 20,
        "newer": True,
        "extraTables": ["fresh"],
        "extraIndexes": ["items.z"],
        "changedIndexes": [],
        "added": [],
    }, described["schemaDiff"]
    assert [s["name"] for s in described["stores"]] == ["fresh", "gone", "items", "keep"]
    # the declared tables work, reads and writes, with the data the other app left
    assert await db.table("items").where("x").equals(1).primary_keys() == [1, 3, 5]
    assert await db.table("items").where("y").between(-3, 0, True, True).primary_keys() == [
        3,
        2,
        1,
        0,
    ]
    await db.table("items").put({"id": 9, "x": 1, "y": -9, "z": "z9"})
    assert await db.table("keep").add({"v": "c"}) == 3
    assert await db.table("gone").get("g") == {"id": "g"}
    # the undeclared table is not part of this declaration (as in Dexie)
    await raises(InvalidTableError, _table(db, "fresh"))
    db.close()
    # the other app's declaration still opens it unchanged, and sees what was written
    other, warned = await _open_warned(ctx, [V1, V2_GROWN], name)
    assert other.version == 20 and not warned, warned
    assert "schemaDiff" not in other.describe()
    assert await other.table("items").where("z").equals("z9").primary_keys() == [9]
    assert await other.table("fresh").count() == 1


async def case_newer_database_lacking_declared_parts_gets_them_by_a_bump(ctx: Ctx) -> None:
    name = ctx.new_name()
    await _seed(ctx, name, [V1, V2])  # version 2 dropped table "gone" and index items.y
    db, warned = await _open_warned(ctx, [V1], name)
    assert db.version == 21, db.version  # the installed 20, bumped once to add them
    assert len(warned) == 1 and "gone, items.y" in warned[0], warned
    diff = db.describe()["schemaDiff"]
    assert diff["foundVersion"] == 20 and diff["newer"] is True
    assert diff["added"] == ["gone", "items.y"]
    assert diff["extraTables"] == ["fresh"] and diff["extraIndexes"] == ["items.z"]
    # the re-added index covers the records already there; the re-added table is empty
    assert await db.table("items").where("y").equals(-3).primary_keys() == [3]
    assert await db.table("gone").count() == 0
    db.close()
    # nothing more to add: the next open neither bumps nor adds
    again, _ = await _open_warned(ctx, [V1], name)
    assert again.version == 21
    assert again.describe()["schemaDiff"]["added"] == []


async def case_missing_index_at_same_version_is_added_by_a_bump(ctx: Ctx) -> None:
    name = ctx.new_name()
    await _seed(ctx, name, [V1])
    more = SchemaVersion(
        1, {"items": "id, x, y, z, [x+z]", "keep": "++id", "gone": "id", "more": "&code"}
    )
    db, warned = await _open_warned(ctx, [more], name)
    assert db.version == 11  # Dexie's SchemaDiff: the native version + 1
    assert len(warned) == 1 and "bump" in warned[0], warned
    diff = db.describe()["schemaDiff"]
    assert diff["newer"] is False and diff["foundVersion"] == 10
    assert diff["added"] == ["more", "items.z", "items.[x+z]"], diff
    # the new indexes cover the old records; the new table works
    assert await db.table("items").where("z").equals("z4").primary_keys() == [4]
    got = await db.table("items").where("[x+z]").between([1, ""], [1, "z4"]).primary_keys()
    assert got == [1, 3]
    await db.table("more").add({"code": "c1"})
    db.close()
    # reopened with the same declaration: 11 is the same version 1, not a newer one
    again, warned = await _open_warned(ctx, [more], name)
    assert again.version == 11 and not warned, warned
    assert "schemaDiff" not in again.describe()
    assert await again.table("more").get("c1") == {"code": "c1"}
    again.close()
    # the plain version 1 declaration opens 11 too, tolerating what was added
    plain, _ = await _open_warned(ctx, [V1], name)
    assert plain.version == 11
    diff = plain.describe()["schemaDiff"]
    assert diff["newer"] is False and diff["extraTables"] == ["more"]
    assert diff["extraIndexes"] == ["items.[x+z]", "items.z"]


async def case_changed_index_is_reported_and_left_as_installed(ctx: Ctx) -> None:
    name = ctx.new_name()
    await _seed(ctx, name, [V1])
    for stores, changed in (
        ({"items": "id, x, &y"}, {"unique": True}),
        ({"items": "id, x, *y"}, {"multiEntry": True}),
    ):
        db, warned = await _open_warned(ctx, [SchemaVersion(1, stores)], name)
        assert db.version == 10  # nothing to add: no bump (Dexie bumps here, to no effect)
        assert len(warned) == 1 and "items.y" in warned[0], warned
        (entry,) = db.describe()["schemaDiff"]["changedIndexes"]
        installed = {"name": "y", "keyPath": "y", "unique": False, "multiEntry": False}
        assert entry == {
            "table": "items",
            "index": "y",
            "installed": installed,
            "declared": {**installed, **changed},
        }, entry
        assert await db.table("items").where("y").equals(-2).primary_keys() == [2]
        db.close()


async def case_declared_upgrade_also_adds_what_the_old_version_lacked(ctx: Ctx) -> None:
    name = ctx.new_name()
    # version 1 was installed without its index y (an older declaration of it)
    db = await ctx.open([SchemaVersion(1, {"items": "id, x", "keep": "++id"})], name=name)
    await db.table("items").bulk_put([{"id": i, "x": i, "y": -i} for i in range(3)])
    db.close()
    v2 = SchemaVersion(2, {"fresh": "id"})
    db, warned = await _open_warned(ctx, [V1, v2], name)
    assert db.version == 20  # in the same upgrade, as Dexie's: no extra bump
    assert db.describe()["schemaDiff"]["added"] == ["gone", "items.y"], db.describe()
    assert len(warned) == 1
    assert await db.table("items").where("y").equals(-2).primary_keys() == [2]
    assert sorted(db.core.tables) == ["fresh", "gone", "items", "keep"]


async def case_versionchange_reopens_and_reruns_live_queries(ctx: Ctx) -> None:
    name = ctx.new_name()
    await _seed(ctx, name, [V1])
    panel = await ctx.open([V1], name=name)
    results: list[int] = []
    live = panel.live_query(lambda tx: tx.table("items").count(), on_result=results.append)
    try:
        await until(lambda: results == [6], what="the first count")
        # another context (a Dexie app) upgrades to version 2, and writes
        app, _ = await _open_warned(ctx, [V1, V2_GROWN], name)
        await app.table("items").put({"id": 6, "x": 0, "y": -6, "z": "z6"})
        await until(lambda: panel.core.versionchanged, what="the versionchange close")
        # the panel's next operation reopens at 20 and works; the live query runs again
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            await panel.table("keep").add({"v": "c"})
        assert any(issubclass(w.category, SchemaDiffWarning) for w in caught)
        assert (panel.version, panel.reopened) == (20, 1)
        assert panel.describe()["schemaDiff"]["newer"] is True
        await until(lambda: results[-1:] == [7], what="the count after the reopen")
        # writes of the reopened connection reach the other one's live queries again
        seen: list[int] = []
        other = app.live_query(lambda tx: tx.table("keep").count(), on_result=seen.append)
        try:
            await until(lambda: seen == [3], what="the other context's first count")
            await panel.table("keep").add({"v": "d"})
            await until(lambda: seen[-1:] == [4], what="the other context seeing the write")
        finally:
            other.close()
    finally:
        live.close()
    assert app.reopened == 0


async def case_reopen_is_shared_by_concurrent_operations(ctx: Ctx) -> None:
    import asyncio

    name = ctx.new_name()
    await _seed(ctx, name, [V1])
    panel = await ctx.open([V1], name=name)
    await ctx.open([V1, V2_GROWN], name=name)
    await until(lambda: panel.core.versionchanged, what="the versionchange close")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaDiffWarning)
        counts = await asyncio.gather(
            panel.table("items").count(), panel.table("keep").count(), panel.table("items").get(2)
        )
    assert counts == [6, 2, {"id": 2, "x": 0, "y": -2, "z": "z2"}]
    assert panel.reopened == 1


async def case_reopen_refuses_a_changed_primary_key(ctx: Ctx) -> None:
    name = ctx.new_name()
    await _seed(ctx, name, [V1])
    panel = await ctx.open([V1], name=name)
    # another app drops table "keep" and recreates it with another primary key
    drop = SchemaVersion(2, {"keep": None})
    remake = SchemaVersion(3, {"keep": "key"})
    await ctx.open([V1, drop, remake], name=name)
    await until(lambda: panel.core.versionchanged, what="the versionchange close")
    err = await raises(SchemaError, panel.table("items").count())
    assert getattr(err, "name", "") == "UpgradeError" and getattr(err, "field", "") == "keep"
