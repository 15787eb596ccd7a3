"""Where-clauses, collections, and the scope and mode checks of queries."""

from __future__ import annotations

from typing import Any

from behavior import Ctx, raises
from panelot.idb import (
    MAX_KEY,
    MIN_KEY,
    ArgumentTypeError,
    Database,
    DataError,
    InvalidTableError,
    ModifyError,
    NotFoundError,
    ReadOnlyError,
    SchemaError,
    Transaction,
)

STORES = {
    "nums": "id, n, s, *tags, [threadId+seq]",
    "nodes": "id, [threadId+seq], threadId",
    "other": "id",
}


async def _nums(ctx: Ctx) -> Database:
    db = await ctx.open(STORES)
    await db.table("nums").bulk_put(
        [
            {
                "id": i,
                "n": i % 5,
                "s": ["apple", "apricot", "banana", "ap", "a", "b", "apz\uffff", "\U0001f600"][
                    i % 8
                ],
                "tags": [f"t{i % 3}", f"u{i % 2}"],
            }
            for i in range(20)
        ]
    )
    return db


async def case_equals_and_bounds(ctx: Ctx) -> None:
    db = await _nums(ctx)
    t = db.table("nums")
    assert await t.where("n").equals(2).primary_keys() == [2, 7, 12, 17]
    assert await t.where("n").equals(9).to_list() == []
    assert await t.where("id").equals(3).to_list() == [await t.get(3)]
    # Dexie's between: lower included, upper excluded
    assert await t.where("id").between(3, 6).primary_keys() == [3, 4, 5]
    assert await t.where("id").between(3, 6, True, True).primary_keys() == [3, 4, 5, 6]
    assert await t.where("id").between(3, 6, False, True).primary_keys() == [4, 5, 6]
    assert await t.where("id").between(3, 6, False, False).primary_keys() == [4, 5]
    assert await t.where("id").between(3, 3).primary_keys() == []
    assert await t.where("id").between(3, 3, True, True).primary_keys() == [3]
    assert await t.where("id").between(6, 3).primary_keys() == []  # reversed bounds: empty
    assert await t.where("id").between(3, 6).count() == 3
    assert await t.where("id").between(6, 3).count() == 0
    assert await t.where("n").between(1, 3).primary_keys() == [1, 6, 11, 16, 2, 7, 12, 17]
    assert await t.where("id").above(17).primary_keys() == [18, 19]
    assert await t.where("id").above_or_equal(17).primary_keys() == [17, 18, 19]
    assert await t.where("id").below(2).primary_keys() == [0, 1]
    assert await t.where("id").below_or_equal(2).primary_keys() == [0, 1, 2]
    assert await t.where("id").above(19).primary_keys() == []
    assert await t.where("id").above("a").primary_keys() == []  # strings sort after numbers
    assert await t.where("id").below("a").count() == 20
    assert await t.where("n").above(3).keys() == [4, 4, 4, 4]
    assert await t.where("id").between(MIN_KEY, MAX_KEY).count() == 20


async def case_any_of_orders_and_dedupes(ctx: Ctx) -> None:
    db = await _nums(ctx)
    t = db.table("nums")
    assert await t.where("id").any_of([5, 1, 3, 1, 99, 5.0]).primary_keys() == [1, 3, 5]
    assert await t.where("n").any_of([4, 0, 4]).primary_keys() == [0, 5, 10, 15, 4, 9, 14, 19]
    assert await t.where("n").any_of([4, 0]).reverse().primary_keys() == [
        19,
        14,
        9,
        4,
        15,
        10,
        5,
        0,
    ]
    assert await t.where("n").any_of([]).to_list() == []
    assert await t.where("n").any_of([]).count() == 0
    assert await t.where("n").any_of([1, 3]).count() == 8
    assert await t.where("id").any_of(["x", 2, [1]]).primary_keys() == [2]
    assert await t.where("n").any_of([4, 0]).offset(3).limit(2).primary_keys() == [15, 4]


async def case_starts_with(ctx: Ctx) -> None:
    db = await _nums(ctx)
    t = db.table("nums")
    ap = await t.where("s").starts_with("ap").to_list()
    assert sorted({r["s"] for r in ap}) == ["ap", "apple", "apricot", "apz\uffff"]
    assert [r["id"] for r in ap] == [3, 11, 19, 0, 8, 16, 1, 9, 17, 6, 14]
    assert await t.where("s").starts_with("a").count() == 13
    assert await t.where("s").starts_with("apz").primary_keys() == [6, 14]
    assert await t.where("s").starts_with("").count() == 20
    assert await t.where("s").starts_with("zzz").count() == 0
    assert await t.where("s").starts_with("\U0001f600").primary_keys() == [7, 15]
    try:
        t.where("s").starts_with(5)  # type: ignore[arg-type]
    except ArgumentTypeError as exc:  # Dexie's TypeError, and a Python TypeError too
        assert isinstance(exc, TypeError) and exc.name == "TypeError"
    else:
        raise AssertionError("starts_with accepted a number")


async def _nodes(ctx: Ctx) -> Database:
    db = await ctx.open(STORES)
    rows = [
        {"id": f"{t}-{s}", "threadId": t, "seq": s}
        for t in ("t0", "t1", "t2")
        for s in (3, 1, 2, 10)
    ]
    rows.append({"id": "t1-str", "threadId": "t1", "seq": "x"})
    rows.append({"id": "t1-none", "threadId": "t1"})  # no seq: not in the compound index
    await db.table("nodes").bulk_put(rows)
    return db


async def case_compound_ranges(ctx: Ctx) -> None:
    db = await _nodes(ctx)
    nodes = db.table("nodes")
    t1 = nodes.where("[threadId+seq]").between(["t1", MIN_KEY], ["t1", MAX_KEY])
    assert await t1.primary_keys() == ["t1-1", "t1-2", "t1-3", "t1-10", "t1-str"]
    assert await t1.keys() == [["t1", 1], ["t1", 2], ["t1", 3], ["t1", 10], ["t1", "x"]]
    assert await t1.count() == 5
    assert (await t1.last())["id"] == "t1-str"
    assert (await t1.first())["id"] == "t1-1"
    # the last numeric seq of a thread, as the app reads it
    last_num = nodes.where("[threadId+seq]").between(["t1", MIN_KEY], ["t1", ""])
    assert (await last_num.last())["seq"] == 10
    assert await last_num.reverse().limit(2).primary_keys() == ["t1-10", "t1-3"]
    # a key path list resolves to the compound index
    same = nodes.where(["threadId", "seq"]).between(["t1", 2], ["t1", 10], True, True)
    assert await same.primary_keys() == ["t1-2", "t1-3", "t1-10"]
    assert await nodes.where("[threadId+seq]").equals(["t2", 3]).primary_keys() == ["t2-3"]
    assert await nodes.where("[threadId+seq]").above(["t2", 3]).primary_keys() == ["t2-10"]
    assert await nodes.where("[threadId+seq]").below(["t0", MAX_KEY]).count() == 4
    assert await nodes.where("threadId").equals("t1").count() == 6
    assert await nodes.order_by("[threadId+seq]").count() == 13
    assert await nodes.where("[threadId+seq]").any_of(
        [["t2", 1], ["t0", 10], ["t9", 1]]
    ).primary_keys() == [
        "t0-10",
        "t2-1",
    ]


async def case_order_by_reverse_offset_limit(ctx: Ctx) -> None:
    db = await _nums(ctx)
    t = db.table("nums")
    by_n = [i for n in range(5) for i in range(20) if i % 5 == n]
    assert await t.order_by("n").primary_keys() == by_n
    assert await t.order_by("n").reverse().primary_keys() == by_n[::-1]
    assert await t.order_by("n").offset(3).limit(4).primary_keys() == by_n[3:7]
    assert await t.order_by("n").reverse().offset(3).limit(4).primary_keys() == by_n[::-1][3:7]
    assert await t.order_by("n").limit(4).offset(1).primary_keys() == by_n[1:4]
    assert await t.order_by("n").offset(1).offset(2).primary_keys() == by_n[3:]
    assert await t.order_by("n").limit(5).limit(3).primary_keys() == by_n[:3]
    assert await t.order_by("n").limit(0).to_list() == []
    assert await t.order_by("n").offset(50).to_list() == []
    assert await t.order_by("n").reverse().reverse().primary_keys() == by_n
    assert await t.order_by("id").primary_keys() == list(range(20))
    assert await t.order_by(":id").primary_keys() == list(range(20))
    assert await t.reverse().limit(3).primary_keys() == [19, 18, 17]
    assert await t.offset(18).primary_keys() == [18, 19]
    assert await t.limit(2).primary_keys() == [0, 1]
    assert len(await t.to_list()) == 20
    # counts honour offset and limit
    assert await t.order_by("n").offset(15).count() == 5
    assert await t.order_by("n").offset(3).limit(4).count() == 4
    assert await t.order_by("n").offset(18).limit(4).count() == 2
    # As Dexie: a negative limit yields nothing, a negative offset skips nothing.
    assert await t.order_by("n").limit(-1).to_list() == []
    assert await t.order_by("n").offset(-3).count() == 20
    for bad in (1.5, True, "2"):
        try:
            t.order_by("n").limit(bad)  # type: ignore[arg-type]
        except DataError:
            pass
        else:
            raise AssertionError(f"limit({bad!r}) was accepted")
        try:
            t.order_by("n").offset(bad)  # type: ignore[arg-type]
        except DataError:
            pass
        else:
            raise AssertionError(f"offset({bad!r}) was accepted")


async def case_filter_with_offset_limit_reverse(ctx: Ctx) -> None:
    db = await _nums(ctx)
    t = db.table("nums")
    even = [i for i in range(20) if i % 2 == 0]
    assert await t.filter(lambda r: r["id"] % 2 == 0).primary_keys() == even
    c = t.to_collection().filter(lambda r: r["id"] % 2 == 0)
    assert await c.offset(2).limit(3).primary_keys() == even[2:5]
    assert await c.reverse().offset(2).limit(3).primary_keys() == even[::-1][2:5]
    # Offsets and limits apply in call order, as Dexie's: three, then skip one of them.
    assert await c.limit(3).offset(1).primary_keys() == even[1:3]
    assert await c.limit(10).offset(50).primary_keys() == []
    assert await c.offset(50).limit(10).primary_keys() == []
    assert await c.offset(1).limit(2).offset(1).primary_keys() == even[2:3]
    assert await c.count() == 10
    assert await c.offset(8).count() == 2
    assert await c.limit(4).count() == 4
    assert await c.filter(lambda r: r["n"] == 0).primary_keys() == [0, 10]
    assert await c.keys() == even
    assert [r["id"] for r in await c.reverse().limit(2).to_list()] == [18, 16]
    assert (await c.first())["id"] == 0
    assert (await c.last())["id"] == 18
    assert await c.filter(lambda r: False).first() is None
    assert await c.filter(lambda r: False).last() is None
    by_n = t.order_by("n").filter(lambda r: r["id"] > 10)
    assert await by_n.primary_keys() == [15, 11, 16, 12, 17, 13, 18, 14, 19]
    assert await by_n.reverse().offset(1).limit(3).primary_keys() == [14, 18, 13]
    assert await by_n.keys() == [0, 1, 1, 2, 2, 3, 3, 4, 4]


async def case_first_last_to_list_keys(ctx: Ctx) -> None:
    db = await _nums(ctx)
    t = db.table("nums")
    assert (await t.where("n").equals(3).first())["id"] == 3
    assert (await t.where("n").equals(3).last())["id"] == 18
    assert await t.where("n").equals(9).first() is None
    assert await t.where("n").equals(9).last() is None
    assert await t.where("id").below(3).to_list() == [
        await t.get(0),
        await t.get(1),
        await t.get(2),
    ]
    assert await t.where("n").between(3, 5).keys() == [3, 3, 3, 3, 4, 4, 4, 4]
    assert await t.where("id").below(3).keys() == [0, 1, 2]
    # multiEntry: one key per index entry
    assert await t.where("tags").equals("t0").primary_keys() == [0, 3, 6, 9, 12, 15, 18]
    assert await t.where("tags").starts_with("u").count() == 20
    keys = await t.where("id").equals(4).to_list()
    assert keys[0]["tags"] == ["t1", "u0"]
    assert (
        await t.order_by("tags").keys()
        == ["t0"] * 7 + ["t1"] * 7 + ["t2"] * 6 + ["u0"] * 10 + ["u1"] * 10
    )
    assert await t.where("tags").any_of(["t2", "u1"]).limit(3).keys() == ["t2", "t2", "t2"]
    assert await t.order_by("tags").reverse().limit(2).keys() == ["u1", "u1"]
    assert await t.order_by("tags").reverse().limit(2).primary_keys() == [19, 17]
    assert await t.order_by("tags").count() == 40


async def case_modify_and_delete(ctx: Ctx) -> None:
    db = await _nums(ctx)
    t = db.table("nums")
    assert await t.where("n").equals(1).modify({"flag": True, "deep.x": 1}) == 4
    flagged = await t.filter(lambda r: r.get("flag") is True).primary_keys()
    assert flagged == [1, 6, 11, 16]
    assert (await t.get(6))["deep"] == {"x": 1}

    def bump(r: dict[str, Any]) -> None:
        r["n"] = r["n"] + 10

    assert await t.where("id").below(3).modify(bump) == 3
    assert [r["n"] for r in await t.where("id").below(4).to_list()] == [10, 11, 12, 3]
    assert await t.where("n").above_or_equal(10).primary_keys() == [0, 1, 2]
    assert await t.where("n").equals(99).modify({"x": 1}) == 0
    assert await t.filter(lambda r: r["id"] >= 18).modify({"n": None}) == 2
    assert (await t.get(18))["n"] is None
    assert await t.where("n").equals(3).primary_keys() == [3, 8, 13]
    # Moving two records to one primary key: the second add fails, nothing is written.
    err = await raises(ModifyError, t.where("id").below(2).modify({"id": 100}))
    assert isinstance(err, ModifyError)
    assert err.success_count == 1 and err.failed_keys == [1]
    assert [f.name for f in err.failures] == ["ConstraintError"]
    assert await t.where("id").above(99).count() == 0
    assert (await t.get(0))["n"] == 10 and (await t.get(1))["n"] == 11

    # A change of the primary key moves the record (Dexie deletes it and adds it anew).
    def change_id(r: dict[str, Any]) -> None:
        r["id"] = r["id"] + 100

    assert await t.where("id").below(2).modify(change_id) == 2
    assert await t.where("id").above(99).primary_keys() == [100, 101]
    assert await t.get(0) is None and (await t.get(100))["n"] == 10

    def back(r: dict[str, Any]) -> None:
        r["id"] = r["id"] - 100

    assert await t.where("id").above(99).modify(back) == 2
    assert (await t.get(0))["n"] == 10
    # delete
    assert await t.where("n").equals(4).delete() == 3  # 19 holds None now
    assert await t.where("n").equals(4).count() == 0
    assert await t.filter(lambda r: r["id"] > 15).delete() == 4
    assert await t.to_collection().reverse().limit(2).delete() == 2
    assert await t.count() == 20 - 3 - 4 - 2
    assert await t.where("n").equals(99).delete() == 0
    assert await t.order_by("n").offset(2).limit(3).delete() == 3
    assert await t.count() == 8


async def case_modify_respects_unique_index(ctx: Ctx) -> None:
    db = await ctx.open({"u": "id, &email"})
    u = db.table("u")
    await u.bulk_put([{"id": 1, "email": "a"}, {"id": 2, "email": "b"}, {"id": 3}])
    await raises(Exception, u.where("id").above(1).modify({"email": "a"}))
    assert await u.to_list() == [{"id": 1, "email": "a"}, {"id": 2, "email": "b"}, {"id": 3}]


async def case_out_of_line_collections(ctx: Ctx) -> None:
    db = await ctx.open({"kv": ""})
    kv = db.table("kv")
    await kv.bulk_put([{"v": i} for i in range(6)], [f"k{i}" for i in range(6)])
    assert await kv.where(":id").between("k1", "k4").primary_keys() == ["k1", "k2", "k3"]
    assert await kv.where(":id").starts_with("k").count() == 6
    assert await kv.reverse().limit(2).to_list() == [{"v": 5}, {"v": 4}]
    assert await kv.where(":id").any_of(["k5", "k0"]).modify({"w": 1}) == 2
    assert await kv.get("k5") == {"v": 5, "w": 1}
    assert await kv.where(":id").below("k2").delete() == 2
    assert await kv.to_collection().primary_keys() == ["k2", "k3", "k4", "k5"]


async def case_unknown_index_scope_and_mode_errors(ctx: Ctx) -> None:
    db = await _nums(ctx)
    t = db.table("nums")
    for make in (
        lambda: t.where("nope"),
        lambda: t.order_by("nope"),
        lambda: t.where(["n", "s"]),
        lambda: t.where("[n+s]"),
    ):
        try:
            make()
        except SchemaError as exc:
            assert exc.name == "SchemaError"
        else:
            raise AssertionError("an unknown index was accepted")
    try:
        db.table("missing")
    except InvalidTableError as exc:
        assert exc.field == "missing"
    else:
        raise AssertionError("an unknown table was accepted")
    # As Dexie: an unknown table of a transaction, or one out of its scope, is NotFoundError
    await raises(NotFoundError, db.transaction("r", ["nums", "missing"], _noop))

    async def write_in_readonly(tx: Transaction) -> None:
        await tx.table("nums").put({"id": 100})

    err = await raises(ReadOnlyError, db.transaction("r", ["nums"], write_in_readonly))
    assert err.name == "ReadOnlyError"  # type: ignore[attr-defined]
    for op in (
        lambda tx: tx.table("nums").add({"id": 101}),
        lambda tx: tx.table("nums").bulk_put([{"id": 101}]),
        lambda tx: tx.table("nums").delete(1),
        lambda tx: tx.table("nums").clear(),
        lambda tx: tx.table("nums").update(1, {"x": 1}),
        lambda tx: tx.table("nums").where("n").equals(1).modify({"x": 1}),
        lambda tx: tx.table("nums").where("n").equals(1).delete(),
    ):
        await raises(ReadOnlyError, db.transaction("r", ["nums"], op))
    assert await t.count() == 20

    async def out_of_scope(tx: Transaction) -> None:
        await tx.table("other").get(1)

    err = await raises(NotFoundError, db.transaction("rw", ["nums"], out_of_scope))
    assert getattr(err, "field", None) == "other"

    async def reads_ok(tx: Transaction) -> int:
        return await tx.table("nums").where("n").equals(1).count()

    assert await db.transaction("r", ["nums"], reads_ok) == 4
    assert await db.transaction("r", "nums", reads_ok) == 4
    try:
        await db.transaction("x", ["nums"], reads_ok)  # type: ignore[arg-type]
    except ValueError:
        pass
    else:
        raise AssertionError("mode 'x' was accepted")


async def _noop(tx: Transaction) -> None:
    return None


async def case_pick_reads_only_the_named_fields(ctx: Ctx) -> None:
    db = await ctx.open({"docs": "id, group"})
    docs = db.table("docs")
    await docs.bulk_put(
        [{"id": f"d{n}", "group": n % 2, "size": n * 10, "body": "x" * 50} for n in range(6)]
    )
    await docs.put({"id": "d9", "group": 1, "body": "no size"})
    picked = await docs.order_by("id").pick("id", "size").to_list()
    assert picked[:2] == [{"id": "d0", "size": 0}, {"id": "d1", "size": 10}]
    assert picked[-1] == {"id": "d9"}  # an absent field stays absent
    assert await docs.where("group").equals(1).pick("size").reverse().to_list() == [
        {},
        {"size": 50},
        {"size": 30},
        {"size": 10},
    ]
    assert await docs.order_by("id").pick("id").last() == {"id": "d9"}
    big = docs.where("group").equals(0).pick("id", "size").filter(lambda r: r["size"] > 0)
    assert await big.to_list() == [{"id": "d2", "size": 20}, {"id": "d4", "size": 40}]
    # pick narrows reads only: modify and delete still see and keep whole records
    assert await docs.where("group").equals(0).pick("id").modify({"seen": True}) == 3
    assert await docs.get("d2") == {
        "id": "d2",
        "group": 0,
        "size": 20,
        "body": "x" * 50,
        "seen": True,
    }
    try:
        docs.order_by("id").pick()
    except DataError as exc:
        assert exc.field == "fields"
    else:
        raise AssertionError("pick() without fields was accepted")


async def case_pick_dotted_paths_keep_the_nesting(ctx: Ctx) -> None:
    db = await ctx.open({"docs": "id"})
    docs = db.table("docs")
    await docs.bulk_put(
        [
            {"id": "a", "payload": {"deleted": True, "text": "x" * 40}, "seq": 1},
            {"id": "b", "payload": {"text": "kept out"}, "seq": 2},
            {"id": "c", "payload": "not an object", "seq": 3},
            {"id": "d", "payload": {"deep": {"flag": 0, "big": [1, 2]}}, "seq": 4},
            {"id": "e", "seq": 5},
        ]
    )
    picked = await docs.order_by("id").pick("id", "payload.deleted", "payload.deep.flag").to_list()
    assert picked == [
        {"id": "a", "payload": {"deleted": True}},
        {"id": "b"},  # a path that does not resolve is left out, its parents too
        {"id": "c"},
        {"id": "d", "payload": {"deep": {"flag": 0}}},
        {"id": "e"},
    ]
    assert await docs.get("a") == {
        "id": "a",
        "payload": {"deleted": True, "text": "x" * 40},
        "seq": 1,
    }  # the stored record is untouched
    for bad in (("payload", "payload.deleted"), ("a..b",), (".a",)):
        try:
            docs.order_by("id").pick(*bad)
        except DataError as exc:
            assert exc.field == "fields"
        else:
            raise AssertionError(f"pick{bad} was accepted")
    try:
        docs.order_by("id").omit("payload.deleted")
    except DataError as exc:
        assert exc.field == "fields"
    else:
        raise AssertionError("omit() took a dotted path")
