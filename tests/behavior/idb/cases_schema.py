"""Dexie stores strings, native versions, describe(), upgrades and refused openings."""

from __future__ import annotations

from typing import Any

from behavior import Ctx, raises
from panelot.idb import (
    Database,
    IndexSpec,
    InvalidStateError,
    SchemaError,
    SchemaVersion,
    TableSpec,
    UpgradeError,
    native_version,
    parse_stores,
)


def _idx(name: str, key_path: Any, unique: bool = False, multi: bool = False) -> dict[str, Any]:
    return {"name": name, "keyPath": key_path, "unique": unique, "multiEntry": multi}


def _store(
    name: str, key_path: Any, auto: bool = False, indexes: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {"name": name, "keyPath": key_path, "autoIncrement": auto, "indexes": indexes or []}


async def case_parse_stores_all_syntax(ctx: Ctx) -> None:
    tables = parse_stores(
        {
            "a": "++id, name, &email, *tags, [threadId+seq], meta.url, &*labels",
            "b": "++",
            "c": "",
            "d": "key",
            "e": "[x+y], x",
            "f": "&code",
            "g": " id ,  [ a + b.c ] , *x.y ",
        }
    )
    assert list(tables) == ["a", "b", "c", "d", "e", "f", "g"]
    a = tables["a"]
    assert isinstance(a, TableSpec) and a.name == "a"
    assert a.primary_key == IndexSpec("id", "id", True, False, True, "++id")
    assert [(i.name, i.key_path, i.unique, i.multi_entry, i.auto_increment) for i in a.indexes] == [
        ("name", "name", False, False, False),
        ("email", "email", True, False, False),
        ("tags", "tags", False, True, False),
        ("[threadId+seq]", ["threadId", "seq"], False, False, False),
        ("meta.url", "meta.url", False, False, False),
        ("labels", "labels", True, True, False),
    ]
    assert a.index("[threadId+seq]") is not None and a.index("[threadId+seq]").compound  # type: ignore[union-attr]
    assert a.index("name") is not None and not a.index("name").compound  # type: ignore[union-attr]
    assert a.index("nope") is None
    b, c, d = tables["b"].primary_key, tables["c"].primary_key, tables["d"].primary_key
    assert (b.key_path, b.auto_increment, b.unique) == (None, True, True)
    assert (c.key_path, c.auto_increment, c.unique) == (None, False, True)
    assert (d.name, d.key_path, d.auto_increment) == ("key", "key", False)
    assert tables["b"].indexes == () and tables["c"].indexes == ()
    e = tables["e"]
    assert (e.primary_key.name, e.primary_key.key_path) == ("[x+y]", ["x", "y"])
    assert [i.name for i in e.indexes] == ["x"]
    f = tables["f"].primary_key
    assert (f.name, f.key_path, f.unique) == ("code", "code", True)
    g = tables["g"]
    assert g.primary_key.key_path == "id"
    assert [(i.name, i.key_path, i.multi_entry) for i in g.indexes] == [
        ("[a+b.c]", ["a", "b.c"], False),
        ("x.y", "x.y", True),
    ]


async def case_parse_stores_rejects_bad_strings(ctx: Ctx) -> None:
    bad = [
        "id,,name",  # empty entry
        "id, name,",  # trailing comma
        "id, ++seq",  # ++ on an index
        "*id",  # multiEntry primary key
        "id, *[a+b]",  # multiEntry compound
        "id, [a+b",  # unbalanced
        "id, [a]",  # one-part compound
        "id, [a+]",  # empty part
        "id, name, name",  # duplicate
        "id, id",  # index named as the primary key
        "id, na me",  # space in a name
        "id, a-b",  # not an identifier
        "id, 1abc",  # starts with a digit
        "id, meta..url",  # empty path segment
        "++[a+b]",  # compound auto-increment
        "id, &",  # flag without a name
    ]
    for stores in bad:
        try:
            parse_stores({"t": stores})
        except SchemaError as exc:
            assert exc.name == "SchemaError"
            assert exc.field == "t", (stores, exc.field)
        else:
            raise AssertionError(f"{stores!r} was accepted")
    for mapping in ({"": "id"}, {"t": 5}):
        try:
            parse_stores(mapping)  # type: ignore[arg-type]
        except SchemaError:
            pass
        else:
            raise AssertionError(f"{mapping!r} was accepted")
    # a bad declaration is refused when opening, and nothing is created
    name = ctx.new_name()
    await raises(SchemaError, ctx.open({"t": "id,,x"}, name=name))
    await raises(
        SchemaError, ctx.open([SchemaVersion(1, {"t": "id"}), SchemaVersion(2, {"t": "*id"})])
    )
    await raises(SchemaError, ctx.open([]))
    await raises(SchemaError, ctx.open([SchemaVersion(1, {"t": "id"}), SchemaVersion(1.0, {})]))


async def case_native_version_is_round_n_times_10(ctx: Ctx) -> None:
    assert native_version(1) == 10
    assert native_version(2) == 20
    assert native_version(0.1) == 1
    assert native_version(1.5) == 15
    assert native_version(2.1) == 21
    assert native_version(0.3) == 3  # 0.3 * 10 is 3.0000000000000004
    assert native_version(2.25) == 23  # JS Math.round rounds halves up
    assert native_version(2.35) == 24
    assert native_version(0.05) == 1
    assert SchemaVersion(3, {}).native == 30
    for bad in (0, -1):
        try:
            native_version(bad)
        except SchemaError:
            pass
        else:
            raise AssertionError(f"version {bad} was accepted")
    db = await ctx.open([SchemaVersion(1.5, {"t": "id"})])
    assert db.version == 15
    assert db.describe()["version"] == 15
    db2 = await ctx.open([SchemaVersion(0.1, {"t": "id"})])
    assert db2.version == 1


FULL = {
    "zeta": "++id, name, &email, *tags, [threadId+seq], meta.url",
    "alpha": "++",
    "mid": "",
    "compound": "[a+b], c",
}

FULL_DESCRIBED = [
    _store("alpha", None, True),
    _store("compound", ["a", "b"], False, [_idx("c", "c")]),
    _store("mid", None, False),
    _store(
        "zeta",
        "id",
        True,
        [
            _idx("[threadId+seq]", ["threadId", "seq"]),
            _idx("email", "email", unique=True),
            _idx("meta.url", "meta.url"),
            _idx("name", "name"),
            _idx("tags", "tags", multi=True),
        ],
    ),
]


async def case_describe_shows_exact_structure(ctx: Ctx) -> None:
    name = ctx.new_name()
    db = await ctx.open(FULL, name=name)
    described = db.describe()
    assert described == {"name": name, "version": 10, "stores": FULL_DESCRIBED}, described
    assert list(described) == ["name", "version", "stores"]
    for store in described["stores"]:
        assert list(store) == ["name", "keyPath", "autoIncrement", "indexes"]
        for index in store["indexes"]:
            assert list(index) == ["name", "keyPath", "unique", "multiEntry"]
    db.close()
    # reopening the same declaration changes nothing
    again = await ctx.open(FULL, name=name)
    assert again.describe() == described
    assert again.version == 10


async def _seed_v1(ctx: Ctx, name: str) -> None:
    v1 = SchemaVersion(1, {"items": "id, x, y", "keep": "++id", "gone": "id"})
    db = await ctx.open([v1], name=name)
    await db.table("items").bulk_put(
        [{"id": i, "x": i % 2, "y": -i, "z": f"z{9 - i}", "tags": [i, i + 1]} for i in range(10)]
    )
    await db.table("keep").bulk_add([{"v": "a"}, {"v": "b"}])
    await db.table("gone").put({"id": "g"})
    db.close()


V1 = SchemaVersion(1, {"items": "id, x, y", "keep": "++id", "gone": "id"})
V2 = SchemaVersion(2, {"items": "id, x, z, *tags", "fresh": "++id, w", "gone": None})


async def case_multi_version_upgrade(ctx: Ctx) -> None:
    name = ctx.new_name()
    await _seed_v1(ctx, name)
    db = await ctx.open([V1, V2], name=name)
    assert db.version == 20
    assert db.describe() == {
        "name": name,
        "version": 20,
        "stores": [
            _store("fresh", "id", True, [_idx("w", "w")]),
            _store(
                "items",
                "id",
                False,
                [_idx("tags", "tags", multi=True), _idx("x", "x"), _idx("z", "z")],
            ),
            _store("keep", "id", True),
        ],
    }, db.describe()
    assert sorted(db.core.tables) == ["fresh", "items", "keep"]
    # the kept tables kept their data
    assert await db.table("items").count() == 10
    assert [r["v"] for r in await db.table("keep").to_list()] == ["a", "b"]
    assert await db.table("keep").add({"v": "c"}) == 3
    # the new indexes cover the old records
    assert await db.table("items").order_by("z").primary_keys() == list(range(9, -1, -1))
    assert await db.table("items").where("z").equals("z0").primary_keys() == [9]
    assert await db.table("items").where("tags").equals(5).primary_keys() == [4, 5]
    assert await db.table("items").where("x").equals(1).count() == 5
    # the removed index and the deleted table are gone
    await raises(SchemaError, _where(db, "items", "y"))
    err = None
    try:
        db.table("gone")
    except Exception as exc:  # InvalidTableError
        err = exc
    assert err is not None and getattr(err, "name", "") == "InvalidTableError"
    # the new table works
    assert await db.table("fresh").bulk_add([{"w": 1}, {"w": 2}]) == [1, 2]
    described = db.describe()
    db.close()
    # reopening at v2 keeps everything
    db2 = await ctx.open([V1, V2], name=name)
    assert db2.describe() == described
    assert await db2.table("fresh").count() == 2
    assert await db2.table("items").count() == 10


async def _get(db: Database, table: str, key: Any) -> Any:
    return await db.table(table).get(key)


async def _where(db: Database, table: str, index: str) -> Any:
    return await db.table(table).where(index).equals(1).to_list()


async def case_upgrade_in_steps_equals_fresh_install(ctx: Ctx) -> None:
    v3 = SchemaVersion(3, {"fresh": None, "items": "id, [x+z]", "later": "k"})
    # a fresh database gets the newest structure directly
    fresh = await ctx.open([V1, V2, v3])
    # one upgraded version by version
    name = ctx.new_name()
    await _seed_v1(ctx, name)
    step2 = await ctx.open([V1, V2], name=name)
    step2.close()
    step3 = await ctx.open([V1, V2, v3], name=name)
    assert step3.version == fresh.version == 30
    assert step3.describe()["stores"] == fresh.describe()["stores"], (
        step3.describe(),
        fresh.describe(),
    )
    assert [s["name"] for s in fresh.describe()["stores"]] == ["items", "keep", "later"]
    got = await step3.table("items").where("[x+z]").between([1, ""], [1, "z5"]).primary_keys()
    assert got == [9, 7, 5]


async def case_changed_primary_key_same_version_is_refused(ctx: Ctx) -> None:
    name = ctx.new_name()
    await _seed_v1(ctx, name)
    db = await ctx.open([V1], name=name)
    before = db.describe()
    db.close()
    for stores, table in (
        ({"items": "id, x, y", "keep": "id", "gone": "id"}, "keep"),  # autoIncrement differs
        ({"items": "key, x, y", "keep": "++id", "gone": "id"}, "items"),  # key path differs
        ({"items": "id, x, y", "keep": "++id", "gone": ""}, "gone"),  # out-of-line now
    ):
        # the declaration also lacks an index and a table: none of it may be added
        stores = {**stores, "more": "id", "keep2": "++"}
        err = await raises(UpgradeError, ctx.open([SchemaVersion(1, stores)], name=name))
        assert isinstance(err, SchemaError) and err.field == table, (err, table)
        assert f"table {table!r}" in str(err) and "primary key" in str(err), str(err)
        db = await ctx.open([V1], name=name)
        assert db.describe() == before, stores
        assert await db.table("items").count() == 10
        assert await db.table("gone").get("g") == {"id": "g"}
        db.close()
    # declaring less than installed is tolerated (Dexie tolerates extra stores/indexes)
    db = await ctx.open([SchemaVersion(1, {"items": "id, x"})], name=name)
    assert db.version == 10
    assert db.describe()["stores"] == before["stores"]
    assert db.describe()["schemaDiff"]["extraTables"] == ["gone", "keep"]
    assert db.describe()["schemaDiff"]["extraIndexes"] == ["items.y"]
    assert await db.table("items").where("x").equals(0).count() == 5
    await raises(SchemaError, _where(db, "items", "y"))


async def case_changing_primary_key_in_upgrade_is_refused(ctx: Ctx) -> None:
    name = ctx.new_name()
    await _seed_v1(ctx, name)
    db = await ctx.open([V1], name=name)
    before = db.describe()
    db.close()
    for stores in (
        {"items": "key, x, y"},
        {"items": "++id, x, y"},
        {"items": "[id+x], y"},
        {"keep": "id"},
        {"gone": ""},
    ):
        # the failing upgrade also carries valid steps: none of them may remain
        v2 = SchemaVersion(2, {**stores, "extra": "id", "keep2": "++"})
        if "items" not in stores:
            v2 = SchemaVersion(2, {**stores, "items": "id, x", "extra": "id"})
        err = await raises(UpgradeError, ctx.open([V1, v2], name=name))
        assert "primary key" in str(err), str(err)
        assert err.field in stores, (err.field, stores)  # type: ignore[attr-defined]
        db = await ctx.open([V1], name=name)
        assert db.version == 10
        assert db.describe() == before, (stores, db.describe())
        assert await db.table("items").count() == 10
        assert await db.table("keep").count() == 2
        db.close()


async def case_failed_unique_index_upgrade_changes_nothing(ctx: Ctx) -> None:
    name = ctx.new_name()
    await _seed_v1(ctx, name)
    db = await ctx.open([V1], name=name)
    before = db.describe()
    db.close()
    # x holds duplicates (0/1): a unique index over it cannot be built
    v2 = SchemaVersion(2, {"items": "id, &x", "gone": None, "fresh": "id"})
    err = await raises(Exception, ctx.open([V1, v2], name=name))
    assert getattr(err, "name", "") == "ConstraintError", repr(err)
    db = await ctx.open([V1], name=name)
    assert db.version == 10
    assert db.describe() == before, db.describe()
    assert await db.table("items").where("y").equals(-3).primary_keys() == [3]
    assert await db.table("gone").count() == 1


async def case_upgrade_and_delete_close_old_connections(ctx: Ctx) -> None:
    name = ctx.new_name()
    grown = SchemaVersion(2, {"items": "id, x, y, z", "fresh": "++id, w"})
    old = await ctx.open([V1], name=name)
    await old.table("items").put({"id": 1})
    new = await ctx.open([V1, grown], name=name)
    # the upgrade closed `old` (versionchange); its next operation reopens it, at 20
    assert old.core.versionchanged
    assert await old.table("items").get(1) == {"id": 1}
    assert (old.version, old.reopened) == (20, 1)
    assert await new.table("items").get(1) == {"id": 1}
    assert new.reopened == 0  # `old` reopening at 20 changed nothing
    await ctx.factory.delete(name)
    # the delete closed `new`: reopening makes the database afresh, empty
    assert await new.table("items").get(1) is None
    assert new.reopened == 1 and new.version == 20
    old.close()
    await raises(InvalidStateError, _get(old, "items", 1))  # closed on purpose: stays closed
    again = await ctx.open([V1, grown], name=name)
    assert await again.table("items").count() == 0
