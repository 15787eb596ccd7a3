"""Dexie's test/tests-table.js, case by case, on Dexie's own fixture (see docs/dexie-tests.md).

Each case checks what the Dexie test of the same name asserts; the cases are written anew.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from behavior import Ctx, raises
from panelot.idb import BulkError, Database, PanelotError, ReadOnlyError, Transaction

STORES = {
    "users": "++id, first, last, &username, *&email, *pets",
    "folks": "++, first, last",
    "items": "id",
    "outbound": "",
    "schema": "",
}
DAVID = {"first": "David", "last": "Fahlander", "username": "dfahlander"}
DAVID |= {"email": ["david@awarica.com", "daw@thridi.com"], "pets": ["dog"]}
KARL = {"first": "Karl", "last": "Faadersköld", "username": "kceder"}
KARL |= {"email": ["karl@ceder.what", "dadda@ceder.what"], "pets": []}


async def _db(ctx: Ctx) -> Database:
    db = await ctx.open(STORES)
    await db.table("users").bulk_add([dict(DAVID), dict(KARL)])  # ids 1 and 2
    return db


def _user(p: str, n: int | str, i: int | None = None) -> dict[str, Any]:
    u: dict[str, Any] = {
        "first": f"{p}ke{n}",
        "last": f"Persbrant{n}",
        "username": f"{_low(p)}per{n}",
    }
    u["email"] = [f"{_low(p)}per{n}@persbrant.net"]
    return u if i is None else {"id": i, **u}


def _low(p: str) -> str:
    return "a" if p == "Å" else p.lower()


def _at0(v: Any) -> Any:
    """``v[0]`` as JavaScript reads it: an array's first item or an object's "0"."""
    return v[0] if isinstance(v, list) else v["0"]


async def case_dexie_table_upsert(ctx: Ctx) -> None:
    db = await _db(ctx)
    users, outbound, folks = db.table("users"), db.table("outbound"), db.table("folks")
    alice = await users.add(
        {"first": "Alice", "last": "Smith", "username": "asmith", "email": ["alice@example.com"]}
    )
    assert (
        await users.upsert(alice, {"last": "Johnson", "email.0": "alice.johnson@example.com"})
        is True
    )
    u = await users.get(alice)
    assert (u["first"], u["last"], u["username"]) == ("Alice", "Johnson", "asmith")
    assert _at0(u["email"]) == "alice.johnson@example.com"
    assert (
        await users.upsert(
            alice + 1000, {"first": "Bob", "last": "Wilson", "email.0": "bob@example.com"}
        )
        is False
    )
    u = await users.get(alice + 1000)
    assert (u["id"], u["first"], u["last"]) == (alice + 1000, "Bob", "Wilson")
    assert _at0(u["email"]) == "bob@example.com" and "username" not in u
    await outbound.put({"name": "Original Item"}, 100)
    assert (
        await outbound.upsert(100, {"name": "Updated Item", "description": "Added description"})
        is True
    )
    assert await outbound.get(100) == {"name": "Updated Item", "description": "Added description"}
    assert await outbound.upsert(101, {"name": "New Item", "category": "Test"}) is False
    item = await outbound.get(101)
    assert item["name"] == "New Item" and item["category"] == "Test" and "id" not in item
    carol = await folks.add(
        {
            "first": "Carol",
            "last": "Davis",
            "address": {"city": "Stockholm", "street": "Kungsgatan"},
        }
    )
    await folks.upsert(carol, {"address.postalCode": "11122", "address.country": "Sweden"})
    address = (await folks.get(carol))["address"]
    assert address == {
        "city": "Stockholm",
        "street": "Kungsgatan",
        "postalCode": "11122",
        "country": "Sweden",
    }
    new = await folks.count() + 1000
    await folks.upsert(
        new, {"first": "David", "address.city": "Göteborg", "address.street": "Avenyn"}
    )
    u = await folks.get(new)
    assert (
        u["first"] == "David"
        and u["address"] == {"city": "Göteborg", "street": "Avenyn"}
        and "last" not in u
    )


async def case_dexie_issue841_put_sees_date_changes(ctx: Ctx) -> None:
    folks = (await _db(ctx)).table("folks")
    date1, date2 = datetime(2019, 5, 3, tzinfo=UTC), datetime(2020, 1, 1, tzinfo=UTC)
    seen: list[dict[str, Any]] = []
    folks.hook("updating", lambda mods, *_: seen.append(dict(mods)))
    key = await folks.add({"first": "Foo1", "last": "Bar", "date": date1})
    obj = await folks.get(key)
    assert obj["date"] == date1 and obj["first"] == "Foo1"
    obj["first"], obj["date"] = "Foo2", date2
    await folks.put(obj, key)
    assert len(seen) == 1 and seen[0]["first"] == "Foo2" and seen[0].get("date") == date2
    obj = await folks.get(key)
    assert obj["first"] == "Foo2" and obj["date"] == date2


async def case_dexie_issue966_put_dotted_field_in_update_hook(ctx: Ctx) -> None:
    folks = (await _db(ctx)).table("folks")
    seen: list[dict[str, Any]] = []

    def updating(mods: dict[str, Any], *_: Any) -> dict[str, Any]:
        seen.append(dict(mods))
        return dict(mods)

    folks.hook("updating", updating)
    key = await folks.add({"first": "first", "last": "last"})
    await folks.put({"first": "first", "last": "last", "nested.field": "value"}, key)
    assert seen[0].get("nested.field") == "value" and "nested" not in seen[0]
    obj = await folks.get(key)
    assert obj["nested.field"] == "value" and "nested" not in obj


async def case_dexie_update_array_property(ctx: Ctx) -> None:
    items = (await _db(ctx)).table("items")
    await items.put({"id": 1, "foo": [{"bar": 123}]})
    await items.update(1, {"foo": [{"bar": 222}]})
    assert (await items.get(1))["foo"] == [{"bar": 222}]


async def case_dexie_issue1130_updating_hook_contract(ctx: Ctx) -> None:
    folks = (await _db(ctx)).table("folks")
    key = await folks.add(
        {"first": "Foo", "last": "Bar", "address": {"city": "Stockholm", "street": "Folkungagatan"}}
    )
    folks.hook("updating", lambda *_: {"address.postalCode": 111})
    await folks.update(key, {"address.streetNo": 23})
    a = (await folks.get(key))["address"]
    assert a == {"city": "Stockholm", "street": "Folkungagatan", "streetNo": 23, "postalCode": 111}


async def case_dexie_get(ctx: Ctx) -> None:
    db = await _db(ctx)
    assert (await db.table("users").get(1))["first"] == "David"
    assert (await db.table("users").get(2))["first"] == "Karl"
    assert await db.table("users").get("nonexisting key") is None


async def case_dexie_where(ctx: Ctx) -> None:
    db = await _db(ctx)

    async def body(tx: Transaction) -> None:
        u = tx.table("users")
        w = u.where
        assert (await w("username").equals("kceder").first())["first"] == "Karl"
        assert len(await w("id").above(1).to_list()) == 1
        assert len(await w("id").above_or_equal(1).to_list()) == 2
        assert await w("id").below(2).count() == 1
        assert await w("id").below(1).count() == 0
        assert await w("id").below_or_equal(1).count() == 1
        assert await w("id").between(1, 1).count() == 0
        assert await w("id").between(0, float("inf")).count() == 2
        assert await w("id").between(1, 1, True, True).count() == 1
        assert await w("id").between(1, -1, True, True).count() == 0
        assert await w("id").between(1, 2).count() == 1
        assert await w("id").between(1, 2, True, True).count() == 2
        assert await w("id").between(1, 2, False, False).count() == 0
        assert [r["first"] for r in await w("last").starts_with("Fah").to_list()] == ["David"]
        assert [r["first"] for r in await w("last").starts_with("Faa").to_list()] == ["Karl"]
        assert [r["first"] for r in await w("last").starts_with("Fa").to_list()] == [
            "Karl",
            "David",
        ]
        got = await w("last").any_of("Fahlander", "Faadersköld").to_list()
        assert len(got) == 2 and got[0]["last"] == "Faadersköld"
        got = await w("last").any_of("Fahlander", "Faadersköld").reverse().to_list()
        assert len(got) == 2 and got[0]["last"] == "Fahlander"
        assert len(await w("last").any_of("Faadersköld").to_list()) == 1
        assert len(await w("email").equals("david@awarica.com").to_list()) == 1
        assert len(await w("email").starts_with("da").distinct().to_list()) == 2

    await db.transaction("r", "users", body)


async def case_dexie_count(ctx: Ctx) -> None:
    assert await (await _db(ctx)).table("users").count() == 2


async def case_dexie_count_with_limit(ctx: Ctx) -> None:
    assert await (await _db(ctx)).table("users").limit(1).count() == 1


async def case_dexie_limit_order_by_modify_reverse(ctx: Ctx) -> None:
    db = await _db(ctx)

    async def body(tx: Transaction) -> list[Any]:
        u = tx.table("users")
        await (
            u.order_by("first")
            .reverse()
            .limit(1)
            .modify(lambda x: x.update(helloMessage="Hello " + x["first"]))
        )
        return await u.order_by("first").reverse().to_list()

    a = await db.transaction("rw", "users", body)
    assert a[0]["first"] == "Karl" and a[0]["helloMessage"] == "Hello Karl"
    assert a[1]["first"] == "David" and not a[1].get("helloMessage")


async def case_dexie_filter(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    davids = await users.filter(lambda u: "david@awarica.com" in u["email"]).to_list()
    assert [d["first"] for d in davids] == ["David"]


async def case_dexie_each(ctx: Ctx) -> None:
    got: list[Any] = []
    await (await _db(ctx)).table("users").to_collection().each(got.append)
    assert [u["first"] for u in got] == ["David", "Karl"]


async def _put_flow(users: Any) -> None:
    new = {"first": "Åke", "last": "Persbrant", "username": "aper", "email": ["aper@persbrant.net"]}
    key = await users.put(new)
    assert key > 2
    assert new.get("id") == key  # Dexie sets the generated key on the object given
    user = await users.where("username").equals("aper").first()
    assert user["last"] == "Persbrant"
    user["last"] = "ChangedLastName"
    assert await users.put(user) == user["id"]
    assert (await users.where("last").equals("ChangedLastName").first())[
        "last"
    ] == "ChangedLastName"


async def case_dexie_put(ctx: Ctx) -> None:
    db = await _db(ctx)

    async def body(tx: Transaction) -> None:
        await _put_flow(tx.table("users"))

    await db.transaction("rw", "users", body)


async def case_dexie_put_no_transaction(ctx: Ctx) -> None:
    await _put_flow((await _db(ctx)).table("users"))


async def case_dexie_bulk_update(ctx: Ctx) -> None:
    items = (await _db(ctx)).table("items")
    await items.bulk_add([{"id": i, "foo": {"bar": i}} for i in (1, 2, 3)])
    await items.bulk_update(
        [
            {"key": 1, "changes": {"foo.bar": 101}},
            {"key": 2, "changes": {"foo.bar": 102, "foo.baz": "x"}},
            {"key": 4, "changes": {"foo.bar": 104}},
        ]
    )
    assert await items.to_list() == [
        {"id": 1, "foo": {"bar": 101}},
        {"id": 2, "foo": {"bar": 102, "baz": "x"}},
        {"id": 3, "foo": {"bar": 3}},
    ]


async def case_dexie_bulk_update_without_actual_changes(ctx: Ctx) -> None:
    items = (await _db(ctx)).table("items")
    updates = [{"key": f"nonexist{i}", "changes": {"foo.bar": 100 + i}} for i in (1, 2, 3)]
    await items.bulk_update(updates)
    assert await items.to_list() == []


BAD_UPDATES = [
    {"key": "nonexisting", "changes": {"username": "xyz"}},
    {"key": 1, "changes": {"username": "kceder"}},
]


def _check_bulk_error(err: BaseException) -> None:
    assert isinstance(err, BulkError) and list(err.failures) == [1], err
    assert isinstance(err.failures[1], PanelotError)


async def case_bulk_update_skips_values_js_takes_for_false(ctx: Ctx) -> None:
    """As Dexie's ``if (obj)``: a stored 0, "", false or NaN is left alone, not counted.

    Found by ``build.py fuzz`` (differential seed 584403): Dexie counted 1, panelot 2.
    """
    db = await ctx.open({"loose": ""})
    loose = db.table("loose")
    await loose.bulk_put([0, "", False, float("nan"), 5, {"v": 1}], ["a", "b", "c", "d", "e", "f"])
    updates = [{"key": k, "changes": {"v": 9, "x.y": 1}} for k in "abcdefz"]
    assert await loose.bulk_update(updates) == 2  # the number 5 and the object
    values = await loose.bulk_get(list("abcef"))
    assert values == [0, "", False, 5, {"v": 9, "x": {"y": 1}}], values


async def case_dexie_bulk_update_with_failure(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    _check_bulk_error(
        await raises(
            BulkError, users.bulk_update([*BAD_UPDATES, {"key": 2, "changes": {"first": "Baz"}}])
        )
    )
    got = [(u["first"], u["username"]) for u in await users.to_list()]
    # Dexie keeps the update that succeeded (Karl becomes "Baz"); bulk calls here are
    # all-or-nothing, a deliberate difference (README, docs/dexie.md)
    assert got == [("David", "dfahlander"), ("Karl", "kceder")]


async def case_dexie_bulk_update_with_failure_transactional(ctx: Ctx) -> None:
    db = await _db(ctx)

    async def body(tx: Transaction) -> None:
        await tx.table("users").bulk_update([*BAD_UPDATES, {"key": 2, "changes": {"foo.bar": 102}}])

    _check_bulk_error(await raises(BulkError, db.transaction("rw", "users", body)))
    got = [(u["first"], u["username"], u.get("foo")) for u in await db.table("users").to_list()]
    assert got == [("David", "dfahlander", None), ("Karl", "kceder", None)]


async def case_dexie_bulk_update_with_failure_transactional_catch(ctx: Ctx) -> None:
    db = await _db(ctx)

    async def body(tx: Transaction) -> None:
        try:
            await tx.table("users").bulk_update(
                [*BAD_UPDATES, {"key": 2, "changes": {"foo.bar": 102}}]
            )
        except BulkError:
            pass

    await db.transaction("rw", "users", body)
    got = [
        (u["first"], u["last"], u["username"], u.get("foo"))
        for u in await db.table("users").to_list()
    ]
    assert got == [
        ("David", "Fahlander", "dfahlander", None),
        ("Karl", "Faadersköld", "kceder", {"bar": 102}),
    ]


async def case_dexie_add(ctx: Ctx) -> None:
    db = await _db(ctx)

    async def body(tx: Transaction) -> None:
        users = tx.table("users")
        new = {
            "first": "Åke",
            "last": "Persbrant",
            "username": "aper",
            "email": ["aper@persbrant.net"],
        }
        key = await users.add(new)
        assert key > 2
        assert new.get("id") == key  # Dexie sets the generated key on the object given
        assert (await users.where("username").equals("aper").first())["last"] == "Persbrant"

    await db.transaction("rw", "users", body)


async def case_dexie_bulk_add(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    highest = await users.add({"username": "fsdkljfd", "email": ["fjkljslk"]})
    await users.delete(highest)
    assert await users.bulk_add([_user("Å", 1), _user("Å", 2)], all_keys=False) == highest + 2


async def case_dexie_bulk_add_all_results(ctx: Ctx) -> None:
    dudes = (await ctx.open({"dudes": "++, first, last"})).table("dudes")
    two = [{"first": "Åke1", "last": "Persbrant1"}, {"first": "Åke2", "last": "Persbrant2"}]
    marker = {"username": "fsdkljfd", "email": "fjkljslk", "find": "bulkAddAll"}
    highest = await dudes.add(dict(marker))
    assert await dudes.bulk_add([dict(x) for x in two], all_keys=True) == [highest + 1, highest + 2]
    highest = await dudes.add(dict(marker))
    assert await dudes.bulk_add([dict(x) for x in two], None, all_keys=True) == [
        highest + 1,
        highest + 2,
    ]
    assert await dudes.bulk_add(
        [dict(x) for x in two], ["sd5fs2df", "dasfsd3fs7df"], all_keys=True
    ) == ["sd5fs2df", "dasfsd3fs7df"]
    highest = await dudes.add(dict(marker))
    assert await dudes.bulk_add([dict(x) for x in two], all_keys=False) == highest + 2
    assert (
        await dudes.bulk_add([dict(x) for x in two], ["cv4btr45fbrt", "b33vn3fytn"], all_keys=False)
        == "b33vn3fytn"
    )
    assert (
        await dudes.bulk_add([dict(x) for x in two], ["dfgd2vdfh4d", "ty1jxdbd9"], all_keys=False)
        == "ty1jxdbd9"
    )


async def _count(db: Database, prefix: str) -> int:
    return await db.table("users").where("username").starts_with(prefix).count()


async def _catching_errors(
    db: Database, write: str, batches: dict[str, list[dict[str, Any]]], first_failures: int
) -> None:
    """The four ways of meeting a BulkError Dexie's bulkAdd/bulkPut-catching errors test walks through."""

    def run(tx_users: Any, p: str) -> Any:
        return getattr(tx_users, write)([dict(u) for u in batches[p]])

    async def caught(tx: Transaction) -> None:
        err = await raises(BulkError, run(tx.table("users"), "a"))
        assert isinstance(err, BulkError) and len(err.failures) == first_failures
        assert await tx.table("users").where("username").starts_with("aper").count() == 3

    await db.transaction("rw", "users", caught)
    assert await _count(db, "aper") == 3  # the transaction committed

    async def uncaught(tx: Transaction) -> None:
        await run(tx.table("users"), "x")

    await raises(BulkError, db.transaction("rw", "users", uncaught))
    assert await _count(db, "xper") == 0  # the transaction aborted
    await raises(BulkError, run(db.table("users"), "x"))
    # Dexie writes the rest outside a transaction (3); bulk calls here are all-or-nothing,
    # a deliberate difference (README, docs/dexie.md)
    assert await _count(db, "xper") == 0
    await raises(BulkError, run(db.table("users"), "y"))
    assert await _count(db, "yper") == 0  # Dexie: 3, as above

    async def rethrown(tx: Transaction) -> None:
        try:
            await run(tx.table("users"), "z")
        except BulkError:
            raise

    await raises(BulkError, db.transaction("rw", "users", rethrown))
    assert await _count(db, "zper") == 0


async def case_dexie_bulk_add_catching_errors(ctx: Ctx) -> None:
    batches = {_low(p): [_user(p, 1), _user(p, 2), _user(p, 2), _user(p, 3)] for p in "AXYZ"}
    await _catching_errors(await _db(ctx), "bulk_add", batches, 1)


async def case_dexie_bulk_add_non_inbound_autoincrement(ctx: Ctx) -> None:
    folks = (await _db(ctx)).table("folks")
    await folks.bulk_add([{"first": "Foo", "last": f"Bar{s}"} for s in ("", "2", "3", "4")])
    assert await folks.where("first").equals("Foo").count() == 4
    assert await folks.where("last").equals("Bar").count() == 1


async def case_dexie_bulk_put(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    highest = await users.add({"username": "fsdkljfd", "email": ["fjkljslk"]})
    await users.delete(highest)
    assert (await users.get(1))["username"] == "dfahlander"
    got = await users.bulk_put([_user("Å", 1), _user("Å", 2, 1), _user("Å", 3)], all_keys=False)
    assert got == highest + 2
    assert await users.where("username").starts_with("aper").count() == 3
    assert (await users.get(1))["username"] == "aper2"


async def case_dexie_bulk_put_all_results(ctx: Ctx) -> None:
    db = await ctx.open(
        {
            "users": "++id, first, last, find",
            "mates": "++id, first, last, find",
            "dudes": "++, first, last, find",
        }
    )
    for name, with_keys in (("users", False), ("mates", False), ("dudes", True)):
        t = db.table(name)
        highest = await t.add({"first": "fsdkljfd", "last": "fjkljslk", "find": "bulkPutAll"})
        three = [
            {"first": f"Åke{i}", "last": f"Persbrant{i}", "find": "bulkPutAll"} for i in (1, 2, 3)
        ]
        if with_keys:
            keys: list[Any] = ["sd5fs2df", highest, "dasfsd3fs7df"]
            assert await t.bulk_put(three, keys, all_keys=True) == keys
        else:
            three[1]["id"] = highest
            assert await t.bulk_put(three, all_keys=True) == [highest + 1, highest, highest + 2]
        assert await t.where("find").starts_with("bulkPutAll").count() == 3
        assert (await t.get(highest))["last"] == "Persbrant2"
    dudes = db.table("dudes")
    highest = await dudes.add({"username": "fsdkljfd", "email": "fjkljslk", "find": "bulkAddAll"})
    two = [{"first": "Åke1", "last": "Persbrant1"}, {"first": "Åke2", "last": "Persbrant2"}]
    assert await dudes.bulk_add([dict(x) for x in two], all_keys=False) == highest + 2
    assert (
        await dudes.bulk_add([dict(x) for x in two], ["cv4btr45fbrt", "b33vn3fytn"], all_keys=False)
        == "b33vn3fytn"
    )


async def case_dexie_bulk_put_overlapping_objects(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    await users.bulk_put(
        [{"id": "sdjls83", "first": "Daveious"}, {"id": "sdjls83", "last": "Olvono"}]
    )
    one = await users.get("sdjls83")
    assert one["last"] == "Olvono" and "first" not in one


async def case_dexie_bulk_put_catching_errors(ctx: Ctx) -> None:
    a = [_user("Å", 1), _user("Å", 2, 2), _user("Å", 2, 1), _user("Å", 2), _user("Å", 3)]
    x = [_user("X", 1), _user("X", 2, 2), _user("X", 2), _user("X", 2, 1), _user("X", 3)]
    y = [_user("Y", 1), _user("Y", 2), _user("Y", 2, 1), _user("Y", 2), _user("Y", 3)]
    z = [_user("Z", 1), _user("Z", 2), _user("Z", 2), _user("Z", 2, 2), _user("Z", 3)]
    await _catching_errors(await _db(ctx), "bulk_put", {"a": a, "x": x, "y": y, "z": z}, 2)


async def case_dexie_bulk_put_non_inbound_autoincrement(ctx: Ctx) -> None:
    folks = (await _db(ctx)).table("folks")
    await folks.bulk_put([{"first": "Foo", "last": f"Bar{s}"} for s in ("", "2", "3", "4")])
    assert await folks.where("first").equals("Foo").count() == 4
    assert await folks.where("last").equals("Bar").count() == 1


async def case_dexie_bulk_put_mixed_inbound_autoincrement(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    last = await users.bulk_put(
        [{"first": "Foo", "last": f"Bar{s}"} for s in ("", "2", "3", "4")], all_keys=False
    )
    assert await users.where("first").equals("Foo").count() == 4
    assert await users.where("last").equals("Bar").count() == 1
    mixed = [
        {"id": last - 3, "first": "Foo2", "last": "BarA"},
        {"first": "Foo2", "last": "BarB"},
        {"id": last - 1, "first": "Foo2", "last": "BarC"},
        {"first": "Foo2", "last": "BarD"},
    ]
    assert await users.bulk_put(mixed, all_keys=False) == last + 2
    assert await users.where("first").equals("Foo").count() == 2
    foo2s = await users.where("first").equals("Foo2").to_list()
    assert [f["last"] for f in foo2s] == ["BarA", "BarC", "BarB", "BarD"]


async def case_dexie_bulk_delete(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    keys = await users.order_by("id").keys()
    assert keys
    await users.bulk_delete(keys)
    assert await users.count() == 0


async def case_dexie_bulk_delete_nonexisting_keys(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    await users.bulk_delete(
        ["nonexisting1", "nonexisting2", await users.order_by(":id").last_key()]
    )
    assert await users.count() == 1


async def case_dexie_bulk_delete_faulty_key(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")

    async def go() -> None:
        await users.bulk_delete([{"faulty": "ohyes"}])

    await raises(PanelotError, go())


async def case_dexie_delete(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    assert await users.get(1) is not None
    await users.delete(1)
    assert await users.get(1) is None


async def case_dexie_delete_using_transaction(ctx: Ctx) -> None:
    db = await _db(ctx)

    async def body(tx: Transaction) -> None:
        users = tx.table("users")
        assert await users.get(1) is not None
        await users.delete(1)
        assert await users.get(1) is None

    await db.transaction("rw", "users", body)


async def case_dexie_delete_nonexisting_item(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    n = await users.count()
    await users.delete("nonexisting key")
    assert await users.count() == n


async def case_dexie_clear(ctx: Ctx) -> None:
    db = await _db(ctx)

    async def body(tx: Transaction) -> None:
        users = tx.table("users")
        assert await users.count() == 2
        await users.clear()
        assert await users.count() == 0

    await db.transaction("rw", "users", body)


async def case_dexie_fail_readonly(ctx: Ctx) -> None:
    db = await _db(ctx)

    async def body(tx: Transaction) -> None:
        await tx.table("users").bulk_add([{"first": "Foo", "last": "Bar"}])

    await raises(ReadOnlyError, db.transaction("r", "users", body))


async def case_dexie_fail_not_included_store(ctx: Ctx) -> None:
    db = await _db(ctx)

    async def body(tx: Transaction) -> None:
        await tx.table("users").bulk_add([{"first": "Foo", "last": "Bar"}])

    err = await raises(PanelotError, db.transaction("rw", "folks", body))
    assert isinstance(err, PanelotError) and err.name == "NotFoundError", err.name


async def case_dexie_fail_not_included_store_trans(ctx: Ctx) -> None:
    db = await _db(ctx)

    async def body(tx: Transaction) -> None:
        return None

    err = await raises(PanelotError, db.transaction("rw", "foodassaddas", body))
    assert isinstance(err, PanelotError) and err.name == "NotFoundError", err.name


async def case_dexie_bulk_get(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    data = [{"id": i, "first": f"Foo{i}", "last": f"Bar{i}"} for i in range(400)]
    await users.bulk_put(data)
    assert await users.bulk_get([d["id"] for d in data]) == data
    u1, u2, u3, u4 = await users.bulk_get(["x", "y", 100, "z"])
    assert u1 is None and u2 is None and u3["first"] == "Foo100" and u4 is None


async def case_dexie_bulk_error_by_pos(ctx: Ctx) -> None:
    users = (await _db(ctx)).table("users")
    rows = [
        {"first": "foo1", "username": "foobar"},
        {"first": "foo2", "username": "foobar"},
        {"first": "foo3", "username": "foobar3"},
    ]
    err = await raises(BulkError, users.bulk_add(rows))
    assert isinstance(err, BulkError) and list(err.failures) == [1]
    assert isinstance(err.failures[1], PanelotError) and 0 not in err.failures
