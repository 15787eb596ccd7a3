"""Dexie's where-clause vocabulary beyond one key range: sets, ranges, case folding, forms.

The expected answers are Dexie 4.4.7's on the same data (the differential suite in
tests/browser/test_dexie_differential.py checks the same clauses at random).
"""

from __future__ import annotations

from behavior import Ctx, raises
from behavior.idb.call_errors import lazy
from panelot.idb import (
    MIN_KEY,
    ArgumentTypeError,
    Database,
    DataError,
    InvalidArgumentError,
    SchemaError,
)

STORES = {"w": "id, n, s, *tags, [s+n], [a+b+c]"}

WORDS = ["apple", "Apple", "APPLE", "apricot", "Banana", "b", "straße", "STRASSE", "ß", "éclair"]


async def _db(ctx: Ctx) -> Database:
    db = await ctx.open(STORES)
    await db.table("w").bulk_put(
        [
            {
                "id": i,
                "n": i % 4,
                "s": w,
                "tags": [w[:1], f"t{i % 3}"],
                "a": i % 2,
                "b": i % 3,
                "c": i,
            }
            for i, w in enumerate(WORDS)
        ]
    )
    return db


async def case_not_equal_and_none_of(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("w")
    assert await t.where("n").not_equal(1).primary_keys() == [0, 4, 8, 2, 6, 3, 7]
    assert await t.where("n").none_of([0, 3]).primary_keys() == [1, 5, 9, 2, 6]
    assert await t.where("n").none_of([]).count() == len(WORDS)  # Dexie: every record
    assert await t.where("n").none_of(0, 1, 2, 3).count() == 0  # several arguments
    assert await t.where("n").not_equal(1).reverse().primary_keys() == [7, 3, 6, 2, 8, 4, 0]
    await t.put({"id": 99, "n": MIN_KEY})
    # Dexie's not_equal and none_of exclude -Infinity too: their ranges start above it.
    assert 99 not in await t.where("n").not_equal(1).primary_keys()
    assert 99 not in await t.where("n").none_of([2]).primary_keys()
    # Dexie 4.4.7: its inAnyRange check refuses the range around None (issue 35, #12).
    await raises(InvalidArgumentError, lazy(lambda: t.where("n").not_equal(None)))
    # A key above Dexie's maxKey ([[]]) makes a range its inAnyRange refuses, before
    # IndexedDB would see the value that is no key beside it (fuzz seed 8285).
    above, no_key = [["a"], 1.5], [True, 1e-07]
    await raises(InvalidArgumentError, lazy(lambda: t.where("n").none_of([above, no_key])))


async def case_in_any_range(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("w")
    assert await t.where("id").in_any_range([[1, 3], [6, 8]]).primary_keys() == [1, 2, 6, 7]
    both = t.where("id").in_any_range([[1, 3], [6, 8]], include_lowers=False, include_uppers=True)
    assert await both.primary_keys() == [2, 3, 7, 8]
    # overlapping and touching ranges: each key once, in key order
    merged = t.where("id").in_any_range([[5, 9], [1, 3], [2, 6]], include_uppers=True)
    assert await merged.primary_keys() == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    touching = t.where("id").in_any_range([[1, 3], [3, 5]], include_uppers=True)
    assert await touching.primary_keys() == [1, 2, 3, 4, 5]
    assert await touching.reverse().primary_keys() == [5, 4, 3, 2, 1]
    assert await t.where("id").in_any_range([]).count() == 0
    for bad in ([[3, 1]], [[1]], "ab", [[1, 2, 3]]):
        await raises(InvalidArgumentError, lazy(lambda bad=bad: t.where("id").in_any_range(bad)))
    # one range [3, 3) is no key range at all: Dexie's IDBKeyRange.bound refuses it
    await raises(DataError, lazy(lambda: t.where("id").in_any_range([[3, 3]])))


async def case_starts_with_any_of(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("w")
    assert await t.where("s").starts_with_any_of(["ap", "B"]).primary_keys() == [4, 0, 3]
    assert await t.where("s").starts_with_any_of("st", "é").primary_keys() == [6, 9]
    assert await t.where("s").starts_with_any_of([]).count() == 0
    await raises(ArgumentTypeError, lazy(lambda: t.where("s").starts_with_any_of([1])))


#: (clause, arguments, the value that is no key, its argument, Dexie 4.4.7's error there)
NON_KEYS: list[tuple[str, tuple[object, ...], object, str, type[Exception]]] = [
    # IndexedDB refuses the set's key range: IDBKeyRange.bound's DataError.
    ("any_of", ([1, None],), None, "keys[1]", DataError),
    ("any_of", (None, 2), None, "keys[0]", DataError),
    ("any_of", ([True],), True, "keys[0]", DataError),
    ("any_of", ([1, {"a": 1}],), "dict", "keys[1]", DataError),
    ("any_of", ([2, float("nan")],), "NaN", "keys[1]", DataError),
    # Dexie's inAnyRange check cannot order the ranges around the value.
    ("none_of", ([1, None],), None, "keys[1]", InvalidArgumentError),
    ("none_of", (True, 2), True, "keys[0]", InvalidArgumentError),
    ("none_of", ([{"a": 1}],), {"a": 1}, "keys[0]", InvalidArgumentError),
    ("not_equal", (None,), None, "key", InvalidArgumentError),
    ("not_equal", (False,), False, "key", InvalidArgumentError),
    ("in_any_range", ([[1, 2], [None, 3]],), [None, 3], "ranges[1]", InvalidArgumentError),
    ("in_any_range", ([[True, True]],), [True, True], "ranges[0]", InvalidArgumentError),
    # Dexie: "startsWithAnyOf() only works with strings", a TypeError.
    ("starts_with_any_of", (["a", None],), None, "prefixes[1]", ArgumentTypeError),
    ("starts_with_any_of", ([1],), 1, "prefixes[0]", ArgumentTypeError),
]


async def case_set_clauses_refuse_non_keys_as_dexie(ctx: Ctx) -> None:
    """Each set clause refuses a value that is no key with Dexie's error, naming it."""
    t = (await _db(ctx)).table("w")
    for clause, args, bad, field, kind in NON_KEYS:
        make = lambda clause=clause, args=args: getattr(t.where("n"), clause)(*args)  # noqa: E731
        exc = await raises(kind, lazy(make))
        assert type(exc) is kind, (clause, args, type(exc))
        assert exc.field == field, (clause, args, exc.field)  # type: ignore[attr-defined]
        shown = bad if isinstance(bad, str) else repr(bad)
        assert shown in str(exc) and field in str(exc), (clause, args, str(exc))
    assert await t.where("n").any_of([1, 3]).count() == 5  # the same clauses, given keys
    assert await t.where("n").none_of([1, 3]).count() == 5


async def case_ignore_case_ascii(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("w")
    assert await t.where("s").equals_ignore_case("apple").primary_keys() == [2, 1, 0]
    assert await t.where("s").equals_ignore_case("APPLE").reverse().primary_keys() == [0, 1, 2]
    assert await t.where("s").starts_with_ignore_case("AP").primary_keys() == [2, 1, 0, 3]
    assert await t.where("s").starts_with_ignore_case("").count() == len(WORDS)
    assert await t.where("s").any_of_ignore_case(["b", "BANANA"]).primary_keys() == [4, 5]
    found = await t.where("s").starts_with_any_of_ignore_case(["apr", "ba"]).primary_keys()
    assert found == [4, 3]
    assert await t.where("s").equals_ignore_case("cherry").count() == 0
    assert await t.where("s").any_of_ignore_case([]).count() == 0
    assert await t.where("tags").equals_ignore_case("A").primary_keys() == [1, 2, 0, 3]
    for make in (
        lambda: t.where("s").equals_ignore_case(1),
        lambda: t.where("s").any_of_ignore_case(["a", 2]),
        lambda: t.where("s").starts_with_ignore_case(None),
    ):
        await raises(ArgumentTypeError, lazy(make))


async def case_ignore_case_folds_as_dexie(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("w")
    # Forwards Dexie folds to lower case: "STRAßE" is "straße", which "STRASSE" is not.
    assert await t.where("s").equals_ignore_case("STRAßE").primary_keys() == [6]
    # Backwards it folds to upper case, where "straße" is "STRASSE" as well.
    assert await t.where("s").equals_ignore_case("STRAßE").reverse().primary_keys() == [6, 7]
    # "ß" upper-cases to "SS". Forwards, Dexie's jump from "STRASSE" goes to "ßS",
    # past "ß" itself, so it is never found; backwards it is.
    assert await t.where("s").equals_ignore_case("ß").primary_keys() == []
    assert await t.where("s").equals_ignore_case("ß").reverse().primary_keys() == [8]
    assert await t.where("s").equals_ignore_case("ÉCLAIR").primary_keys() == [9]


async def case_where_forms(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("w")
    assert await t.where(":id").between(2, 4).primary_keys() == [2, 3]
    assert await t.where("[s+n]").equals(["b", 1]).primary_keys() == [5]
    assert await t.where(["s", "n"]).equals(["b", 1]).primary_keys() == [5]
    # where({...}): a compound index starting with the fields serves it...
    assert await t.where({"n": 1, "s": "b"}).primary_keys() == [5]
    # ...else an index of one field and a filter for the rest
    assert await t.where({"n": 0, "c": 4}).primary_keys() == [4]
    assert await t.where({"tags": "a", "n": 0}).primary_keys() == [0]
    assert await t.where({"n": 2}).primary_keys() == [2, 6]
    assert (await t.get({"s": "b"}))["id"] == 5
    assert await t.get({"s": "zzz"}) is None
    await raises(SchemaError, lazy(lambda: t.where({"c": 1, "x": 2})))


async def case_virtual_index_of_a_compound_prefix(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("w")
    # No index "a" or "[a+b]": the compound [a+b+c] serves both, as Dexie's virtual index.
    assert await t.where("a").equals(1).primary_keys() == [3, 9, 1, 7, 5]
    assert await t.where("a").equals(1).keys() == [1, 1, 1, 1, 1]
    assert await t.where("[a+b]").equals([0, 2]).primary_keys() == [2, 8]
    assert await t.where(["a", "b"]).above([1, 1]).keys() == [[1, 2]]
    assert await t.where({"a": 0, "b": 1}).primary_keys() == [4]
    assert await t.where("a").any_of([1, 5]).count() == 5
    assert await t.order_by("a").reverse().first_key() == 1
    assert await t.where("a").between(0, 1).count() == 5
    assert await t.where("a").below_or_equal(0).count() == 5
    assert await t.where("a").above(0).unique_keys() == [1]
    await raises(SchemaError, lazy(lambda: t.where("b")))  # not a prefix of any index


async def case_between_edges(ctx: Ctx) -> None:
    t = (await _db(ctx)).table("w")
    assert await t.where("id").between(3, 3, True, True).primary_keys() == [3]
    assert await t.where("id").between(3, 3, True, False).count() == 0
    assert await t.where("id").between(3, 3, False, True).count() == 0
    await raises(DataError, lazy(lambda: t.where("id").between(3, 3, False, False)))
