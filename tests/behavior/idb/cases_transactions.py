"""Transaction lifetime, rollback and the premature-commit guard."""

from __future__ import annotations

import asyncio
from typing import Any

from behavior import Ctx, raises
from panelot.idb import ConstraintError, PrematureCommitError, Transaction

STORES = {"items": "id, group", "log": "++id"}


async def case_read_then_write_1000_steps(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    await db.table("items").put({"id": "counter", "n": 0})

    async def body(tx: Transaction) -> int:
        items = tx.table("items")
        for _ in range(1000):
            current = await items.get("counter")
            await items.put({"id": "counter", "n": current["n"] + 1})
        return int((await items.get("counter"))["n"])

    assert await db.transaction("rw", ["items"], body) == 1000
    assert (await db.table("items").get("counter"))["n"] == 1000


async def case_exception_aborts_everything(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    await db.table("items").put({"id": "keep", "n": 1})

    async def body(tx: Transaction) -> None:
        await tx.table("items").put({"id": "keep", "n": 2})
        await tx.table("items").bulk_put([{"id": f"x{i}"} for i in range(50)])
        await tx.table("log").add({"what": "written"})
        raise RuntimeError("boom")

    err = await raises(RuntimeError, db.transaction("rw", ["items", "log"], body))
    assert str(err) == "boom"
    assert (await db.table("items").get("keep"))["n"] == 1
    assert await db.table("items").count() == 1
    assert await db.table("log").count() == 0


async def case_foreign_await_is_refused(ctx: Ctx) -> None:
    db = await ctx.open(STORES)

    async def body(tx: Transaction) -> None:
        await tx.table("items").put({"id": "a"})
        await asyncio.sleep(0)
        await tx.table("items").put({"id": "b"})

    err = await raises(PrematureCommitError, db.transaction("rw", ["items"], body))
    assert "not an operation of its transaction" in str(err)
    assert await db.table("items").count() == 0


async def case_foreign_future_is_refused_even_if_caught(ctx: Ctx) -> None:
    db = await ctx.open(STORES)

    async def body(tx: Transaction) -> None:
        await tx.table("items").put({"id": "a"})
        try:
            await asyncio.get_running_loop().create_future()
        except PrematureCommitError:
            pass
        await tx.table("items").put({"id": "b"})

    await raises(PrematureCommitError, db.transaction("rw", ["items"], body))
    assert await db.table("items").count() == 0


async def case_nested_transaction_is_refused(ctx: Ctx) -> None:
    db = await ctx.open(STORES)

    async def inner(tx: Transaction) -> None:
        await tx.table("items").put({"id": "inner"})

    async def body(tx: Transaction) -> None:
        await tx.table("items").put({"id": "outer"})
        await db.transaction("rw", ["items"], inner)

    await raises(PrematureCommitError, db.transaction("rw", ["items"], body))
    assert await db.table("items").count() == 0


async def case_caught_request_error_keeps_transaction(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    await db.table("items").add({"id": "dup"})

    async def body(tx: Transaction) -> str:
        items = tx.table("items")
        try:
            await items.add({"id": "dup"})
        except ConstraintError:
            await items.add({"id": "after"})
            return "recovered"
        return "no error"

    assert await db.transaction("rw", ["items"], body) == "recovered"
    assert await db.table("items").get("after") == {"id": "after"}


async def case_return_value_and_reads_in_readonly(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    await db.table("items").bulk_put([{"id": str(i), "group": i % 2} for i in range(10)])

    async def body(tx: Transaction) -> dict[str, Any]:
        items = tx.table("items")
        return {
            "count": await items.count(),
            "odd": await items.where("group").equals(1).primary_keys(),
        }

    out = await db.transaction("r", ["items"], body)
    assert out == {"count": 10, "odd": ["1", "3", "5", "7", "9"]}
