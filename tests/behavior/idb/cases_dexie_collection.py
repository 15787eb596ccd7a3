"""Dexie's test/tests-collection.js, case by case, on Dexie's own fixture (see docs/dexie-tests.md).

Each case checks what the Dexie test of the same name asserts; the cases are written anew.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from behavior import Ctx, raises
from panelot.idb import Database, ModifyError, Transaction, add, remove, replace_prefix

STORES = {"users": "id, first, last, [foo+bar], &username, *&email, *pets, parentPath"}
DAVID = {"id": 1, "first": "David", "last": "Fahlander", "username": "dfahlander"}
DAVID |= {"email": ["david@awarica.com", "daw@thridi.com"], "pets": ["dog"]}
KARL = {
    "id": 2,
    "first": "Karl",
    "last": "Cedersköld",
    "username": "kceder",
    "email": ["karl@ceder.what"],
    "pets": [],
}
WHEN = datetime(2021, 3, 4, 5, 6, 7, 123_000, tzinfo=UTC)


async def _users(ctx: Ctx) -> Any:
    db: Database = await ctx.open(STORES)
    t = db.table("users")
    await t.bulk_add([dict(DAVID), dict(KARL)])
    return t


def _f(rows: list[Any], field: str = "first") -> list[Any]:
    return [r.get(field) for r in rows]


async def case_dexie_and_with_values(ctx: Ctx) -> None:
    t = await _users(ctx)
    c = (
        t.where("last")
        .in_any_range([["a", "g"], ["A", "G"]])
        .and_(lambda u: u["username"] == "dfahlander")
    )
    assert len(await c.to_list()) == 1


async def case_dexie_and_with_keys(ctx: Ctx) -> None:
    t = await _users(ctx)
    c = (
        t.where("last")
        .in_any_range([["a", "g"], ["A", "G"]])
        .and_(lambda u: u["username"] == "dfahlander")
    )
    assert len(await c.keys()) == 1


async def case_dexie_and_with_delete(ctx: Ctx) -> None:
    t = await _users(ctx)
    seen: list[Any] = []
    await t.order_by("username").and_(lambda u: seen.append(u)).delete()
    assert len(seen) == 2 and all(seen)  # the filter is given each (existing) user


async def case_dexie_each(ctx: Ctx) -> None:
    t = await _users(ctx)
    got: list[Any] = []
    await t.order_by("id").each(got.append)
    assert _f(got) == ["David", "Karl"]


async def case_dexie_count(ctx: Ctx) -> None:
    assert await (await _users(ctx)).count() == 2


async def case_dexie_to_array(ctx: Ctx) -> None:
    assert _f(await (await _users(ctx)).order_by("last").to_list()) == ["Karl", "David"]


async def case_dexie_limit(ctx: Ctx) -> None:
    t = await _users(ctx)

    async def body(tx: Transaction) -> None:
        u = tx.table("users")
        assert _f(await u.order_by("last").limit(1).to_list()) == ["Karl"]
        assert len(await u.order_by("last").limit(10).to_list()) == 2
        assert len(await u.order_by("last").limit(0).to_list()) == 0
        assert len(await u.order_by("last").limit(-1).to_list()) == 0
        assert len(await u.order_by("id").limit(-1).to_list()) == 0

    await t.db.transaction("r", "users", body)


async def case_dexie_offset_limit_combinations(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.bulk_add(
        [
            {
                "id": 3 + i,
                "first": f"First{i}",
                "last": f"Last{i}",
                "username": f"user{i}",
                "email": [f"user{i}@abc.se"],
            }
            for i in range(10)
        ]
    )
    for make in (
        lambda: t.where("first").starts_with_ignore_case("first"),
        lambda: t.where("first").starts_with("First"),
    ):
        assert await make().count() == 10
        for off, lim, n in ((0, 5, 5), (7, None, 3), (6, 4, 4), (7, 4, 3), (17, 4, 0)):
            c = make().offset(off) if off else make()
            c = c.limit(lim) if lim is not None else c
            assert await c.count() == n, (off, lim)
            c = make().offset(off) if off else make()
            c = c.limit(lim) if lim is not None else c
            assert len(await c.to_list()) == n, (off, lim)


async def case_dexie_first(ctx: Ctx) -> None:
    assert (await (await _users(ctx)).order_by("last").first())["first"] == "Karl"


async def case_dexie_last(ctx: Ctx) -> None:
    assert (await (await _users(ctx)).order_by("last").last())["first"] == "David"


async def case_dexie_and(ctx: Ctx) -> None:
    t = await _users(ctx)
    c = t.where("first").equals_ignore_case("david")
    assert await c.and_(lambda u: "apa" in u["email"]).first() is None
    c = t.where("first").equals_ignore_case("david")
    assert (await c.and_(lambda u: "daw@thridi.com" in u["email"]).first())["first"] == "David"


async def case_dexie_reverse(ctx: Ctx) -> None:
    assert (await (await _users(ctx)).order_by("first").reverse().first())["first"] == "Karl"


async def case_dexie_distinct(ctx: Ctx) -> None:
    t = await _users(ctx)
    assert len(await t.where("email").starts_with_ignore_case("d").to_list()) == 2
    assert len(await t.where("email").starts_with_ignore_case("d").distinct().to_list()) == 1


async def case_dexie_modify(ctx: Ctx) -> None:
    t = await _users(ctx)
    assert await t.to_collection().modify({"lastUpdated": WHEN}) == 2
    got = await t.to_list()
    assert _f(got) == ["David", "Karl"] and _f(got, "lastUpdated") == [WHEN, WHEN]


async def case_dexie_modify_using_function(ctx: Ctx) -> None:
    t = await _users(ctx)

    def change(u: dict[str, Any]) -> None:
        u["fullName"] = u["first"] + " " + u["last"]
        u["lastUpdated"] = WHEN

    await t.to_collection().modify(change)
    got = await t.to_list()
    assert got[0]["fullName"] == "David Fahlander" and _f(got, "lastUpdated") == [WHEN, WHEN]


async def case_dexie_modify_causing_error(ctx: Ctx) -> None:
    t = await _users(ctx)

    def change(u: dict[str, Any]) -> None:
        u["id"] = 1
        u["fullName"] = u["first"] + " " + u["last"]

    err = await raises(ModifyError, t.to_collection().modify(change))
    assert isinstance(err, ModifyError) and err.success_count == 1


async def case_dexie_modify_primary_key(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.add({"id": 87, "first": "Olle"})
    assert await t.where({"id": 87}).modify(lambda u: u.update(id=88))
    assert (await t.get(88))["first"] == "Olle"


async def case_dexie_modify_with_where_issue594(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.add(
        {
            "id": 3,
            "first": "David",
            "last": "Fahlander2",
            "username": "dfahlander2",
            "email": ["david2@awarica.com"],
            "pets": [],
        }
    )
    await t.add(
        {
            "id": 4,
            "first": "David",
            "last": "Fahlander3",
            "username": "dfahlander3",
            "email": ["david3@awarica.com"],
            "pets": [],
        }
    )
    assert len(await t.where("first").equals("David").to_list()) == 3
    assert (
        await t.where("first").equals("David").modify(lambda o: o.update(anotherProperty="test"))
        == 3
    )
    assert all(d["anotherProperty"] == "test" for d in await t.where({"first": "David"}).to_list())


async def case_dexie_delete(ctx: Ctx) -> None:
    t = await _users(ctx)
    assert await t.order_by("id").delete() == 2
    assert await t.count() == 0


async def case_dexie_delete_2(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.add({"id": 3, "first": "dAvid", "last": "Helenius", "username": "dahel"})
    assert await t.where("first").equals_ignore_case("david").delete() == 2
    assert _f(await t.to_list()) == ["Karl"]


async def case_dexie_delete_3_combine_with_or(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.add({"id": 3, "first": "dAvid", "last": "Helenius", "username": "dahel"})
    assert await t.where("first").equals("dAvid").or_("username").equals("kceder").delete() == 2
    assert _f(await t.to_list()) == ["David"]


async def case_dexie_keys(ctx: Ctx) -> None:
    assert await (await _users(ctx)).order_by("first").keys() == ["David", "Karl"]


async def case_dexie_unique_keys(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.add({"id": 3, "first": "David", "last": "Helenius", "username": "dahel"})
    assert await t.order_by("first").keys() == ["David", "David", "Karl"]
    assert await t.order_by("first").unique_keys() == ["David", "Karl"]


async def case_dexie_primary_keys(ctx: Ctx) -> None:
    assert await (await _users(ctx)).order_by("last").primary_keys() == [2, 1]


async def case_dexie_primary_keys_2(ctx: Ctx) -> None:
    assert await (await _users(ctx)).order_by("first").primary_keys() == [1, 2]


async def case_dexie_each_key_and_each_unique_key(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.add({"id": 3, "first": "Ylva", "last": "Fahlander", "username": "yfahlander"})
    a: list[Any] = []
    await t.order_by("last").each_key(lambda k, *_: a.append(k))
    b: list[Any] = []
    await t.order_by("last").each_unique_key(lambda k, *_: b.append(k))
    assert len(a) == 3 and len(b) == 2


async def case_dexie_or(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.add({"id": 3, "first": "Apan", "last": "Japan", "username": "apanjapan"})
    got = (
        await t.where("first")
        .equals_ignore_case("david")
        .or_("last")
        .equals("Japan")
        .sort_by("first")
    )
    assert _f(got) == ["Apan", "David"]
    c = t.where("first").equals_ignore_case("david").or_("last").equals("Japan").or_("id").equals(2)
    assert _f(await c.sort_by("id")) == ["David", "Karl", "Apan"]
    seen: list[Any] = []
    c = t.where("id").any_of(1, 2, 3, 4).or_("username").any_of("dfahlander", "kceder", "apanjapan")
    await c.each(seen.append)
    assert sorted(_f(seen)) == ["Apan", "David", "Karl"]


async def case_dexie_or_issue15(ctx: Ctx) -> None:
    db = await ctx.open({"phones": "++id, name, android, availability"})
    t = db.table("phones")
    await t.bulk_add(
        [{"id": 3 + i, "name": f"Name{i:03}", "android": 1, "availability": 0} for i in range(100)]
    )
    for _ in range(3):
        assert (
            len(await t.where("name").starts_with_ignore_case("name").or_("id").below(50).to_list())
            == 100
        )


async def case_dexie_until(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.bulk_add([{"id": 2 + i, "first": f"Apa{i}", "username": f"apa{i}"} for i in (1, 2, 3)])
    assert await t.order_by(":id").until(lambda u: u["first"] == "David").to_list() == []
    assert _f(await t.order_by(":id").until(lambda u: u["first"] == "David", True).to_list()) == [
        "David"
    ]
    got = await t.order_by("first").until(lambda u: u["first"] == "David").to_list()
    assert _f(got, "username") == ["apa1", "apa2", "apa3"]
    got = await t.order_by("first").reverse().until(lambda u: u["username"] == "apa2").to_list()
    assert _f(got) == ["Karl", "David", "Apa3"]


async def case_dexie_first_key(ctx: Ctx) -> None:
    assert await (await _users(ctx)).order_by("last").first_key() == "Cedersköld"


async def case_dexie_last_key(ctx: Ctx) -> None:
    assert await (await _users(ctx)).order_by("last").last_key() == "Fahlander"


async def case_dexie_first_key_on_primary_key(ctx: Ctx) -> None:
    assert await (await _users(ctx)).to_collection().first_key() == 1


async def case_dexie_last_key_on_primary_key(ctx: Ctx) -> None:
    assert await (await _users(ctx)).to_collection().last_key() == 2


async def case_dexie_issue1381_filter_primary_keys_on_virtual_index(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.add({"id": 1000, "foo": "A", "bar": "B"})
    assert await t.where({"foo": "A"}).filter(lambda x: True).primary_keys() == [1000]


async def case_dexie_modify_with_replace(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.bulk_add(
        [
            {"id": 1000, "foo": "A", "parentPath": "A/B/C"},
            {"id": 1001, "foo": "B", "parentPath": "A/B/C"},
            {"id": 1002, "foo": "C", "parentPath": "A/B"},
        ]
    )

    async def paths() -> list[Any]:
        return _f(await t.where("id").between(1000, 1003).to_list(), "parentPath")

    await (
        t.where("parentPath").starts_with("A/B").modify({"parentPath": replace_prefix("A/B", "X")})
    )
    assert await paths() == ["X/C", "X/C", "X"]
    await (
        t.where("parentPath").starts_with("X/C").modify({"parentPath": replace_prefix("X/C", "Y")})
    )
    assert await paths() == ["Y", "Y", "X"]
    await t.to_collection().modify({"parentPath": replace_prefix("X", "Z")})
    assert await paths() == ["Y", "Y", "Z"]
    assert (await t.get(1002)) == {"id": 1002, "foo": "C", "parentPath": "Z"}


async def case_dexie_modify_with_add_remove(ctx: Ctx) -> None:
    t = await _users(ctx)
    await t.bulk_add(
        [
            {"id": 1100, "foo": "A", "age": 18, "pets": ["dog", "cat"], "balance": 100},
            {"id": 1101, "foo": "A", "age": 18, "pets": ["cat", "dog"], "balance": 100},
        ]
    )
    await t.update(1100, {"age": add(1)})
    await t.update(1100, {"age": add(1)})
    assert (await t.get(1100))["age"] == 20

    async def body(tx: Transaction) -> None:
        await tx.table("users").update(1100, {"balance": add(100)})
        await tx.table("users").update(1101, {"balance": add(-100)})

    await t.db.transaction("rw", "users", body)
    assert _f(await t.bulk_get([1100, 1101]), "balance") == [200, 0]
    await t.update(1100, {"pets": add(["elephant"])})
    assert (await t.get(1100))["pets"] == ["cat", "dog", "elephant"]
    await t.update(1100, {"pets": remove(["dog"])})
    assert (await t.get(1100))["pets"] == ["cat", "elephant"]
    await t.update(
        1100, {"pets": add(["rabbit", "cow"]), "age": remove(1), "balance": add(1_000_000)}
    )
    user = await t.get(1100)
    assert user["pets"] == ["cat", "cow", "elephant", "rabbit"]
    assert user["age"] == 19 and user["balance"] == 1_000_200
