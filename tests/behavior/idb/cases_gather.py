"""``Transaction.gather``: several operations of one transaction in one round trip."""

from __future__ import annotations

import asyncio
from typing import Any

from behavior import Ctx, raises
from panelot.idb import ConstraintError, PrematureCommitError, Transaction

STORES = {"items": "id, group", "log": "++id", "pairs": "[a+b]"}


async def case_gather_reads_answer_in_order(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    await db.table("items").bulk_put([{"id": f"i{n}", "group": n % 3} for n in range(9)])
    await db.table("log").bulk_add([{"n": n} for n in range(4)])

    async def body(tx: Transaction) -> list[Any]:
        items, log = tx.table("items"), tx.table("log")
        return await tx.gather(
            items.get("i4"),
            log.count(),
            items.where("group").equals(2).primary_keys(),
            items.get("missing"),
            items.bulk_get(["i1", "nope", "i8"]),
            items.where("group").any_of([0, 1]).count(),  # itself a batch: issued alone
            log.order_by("id").last(),
        )

    out = await db.transaction("r", ["items", "log"], body)
    assert out[0] == {"id": "i4", "group": 1}
    assert out[1] == 4
    assert out[2] == ["i2", "i5", "i8"]
    assert out[3] is None
    assert out[4] == [{"id": "i1", "group": 1}, None, {"id": "i8", "group": 2}]
    assert out[5] == 6
    assert out[6] == {"id": 4, "n": 3}


async def case_gather_mixes_reads_and_writes_in_order(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    await db.table("items").put({"id": "a", "n": 1})

    async def body(tx: Transaction) -> list[Any]:
        items, log = tx.table("items"), tx.table("log")
        return await tx.gather(
            items.get("a"),
            items.put({"id": "a", "n": 2}),
            items.get("a"),  # issued after the put: sees it
            log.add({"what": "first"}),
            log.bulk_add([{"what": "second"}, {"what": "third"}]),
            items.delete("a"),
            items.get("a"),
        )

    out = await db.transaction("rw", ["items", "log"], body)
    assert out[0] == {"id": "a", "n": 1}
    assert out[1] == "a"
    assert out[2] == {"id": "a", "n": 2}
    assert out[3] == 1  # generated keys come back
    assert out[4] == [2, 3]
    assert out[6] is None
    assert [r["what"] for r in await db.table("log").to_list()] == ["first", "second", "third"]


async def case_gather_runs_multi_step_coroutines(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    await db.table("items").bulk_put([{"id": f"c{n}", "n": 0} for n in range(3)])

    async def bump(tx: Transaction, ident: str, times: int) -> int:
        items = tx.table("items")
        for _ in range(times):
            row = await items.get(ident)
            await items.put({**row, "n": row["n"] + 1})
        return int((await items.get(ident))["n"])

    async def body(tx: Transaction) -> list[Any]:
        return await tx.gather(bump(tx, "c0", 1), bump(tx, "c1", 5), bump(tx, "c2", 0))

    assert await db.transaction("rw", ["items"], body) == [1, 5, 0]
    rows = await db.table("items").to_list()
    assert [r["n"] for r in rows] == [1, 5, 0]


async def case_gather_error_aborts_and_writes_nothing(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    await db.table("items").put({"id": "dup", "n": 1})
    finished: list[str] = []

    async def later(tx: Transaction) -> None:
        await tx.table("log").add({"what": "step 1"})
        await tx.table("log").add({"what": "step 2"})
        finished.append("later")

    async def body(tx: Transaction) -> list[Any]:
        return await tx.gather(
            tx.table("items").put({"id": "new"}),
            tx.table("items").add({"id": "dup", "n": 2}),
            later(tx),
        )

    await raises(ConstraintError, db.transaction("rw", ["items", "log"], body))
    assert finished == []  # the others were closed, not run to the end
    assert await db.table("items").to_list() == [{"id": "dup", "n": 1}]
    assert await db.table("log").count() == 0


async def case_gather_caught_error_lets_the_body_go_on(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    await db.table("items").put({"id": "dup"})

    async def body(tx: Transaction) -> str:
        try:
            await tx.gather(tx.table("items").add({"id": "dup"}), tx.table("items").get("dup"))
        except ConstraintError:
            pass
        await tx.table("items").put({"id": "after"})
        return "ok"

    assert await db.transaction("rw", ["items"], body) == "ok"
    assert sorted(r["id"] for r in await db.table("items").to_list()) == ["after", "dup"]


async def case_gather_refuses_foreign_awaits(ctx: Ctx) -> None:
    db = await ctx.open(STORES)

    async def sleepy(tx: Transaction) -> None:
        await tx.table("items").put({"id": "x"})
        await asyncio.sleep(0)

    async def body(tx: Transaction) -> None:
        await tx.gather(tx.table("items").put({"id": "y"}), sleepy(tx))

    await raises(PrematureCommitError, db.transaction("rw", ["items"], body))
    assert await db.table("items").count() == 0


async def case_gather_of_nothing_and_of_plain_values(ctx: Ctx) -> None:
    db = await ctx.open(STORES)

    async def constant() -> int:
        return 7

    async def body(tx: Transaction) -> list[Any]:
        return [await tx.gather(), await tx.gather(constant(), tx.table("items").count())]

    assert await db.transaction("r", ["items"], body) == [[], [7, 0]]
