"""An interpreter for random operation sequences, run on either core.

Property tests generate a list of plain-data operations with hypothesis, run it here on
the memory core in CPython and on the browser core in Chromium, and require the two
observation lists to be equal. Errors are observed by name.
"""

from __future__ import annotations

from typing import Any

from panelot.idb import Database, PanelotError, Transaction

STORES = {"items": "id, g, n, *tags, &email, [g+n]"}


async def _one(db: Database, op: dict[str, Any]) -> Any:
    t = db.table("items")
    kind = op["op"]
    if kind == "put":
        return await t.put(op["value"])
    if kind == "add":
        return await t.add(op["value"])
    if kind == "bulk_put":
        return await t.bulk_put(op["values"])
    if kind == "delete":
        await t.delete(op["id"])
        return None
    if kind == "update":
        return await t.update(op["id"], op["changes"])
    if kind == "get":
        return await t.get(op["id"])
    if kind == "count":
        return await t.count()
    if kind == "query":
        coll = t.where(op["index"])
        if op["how"] == "between":
            coll = coll.between(op["lo"], op["hi"], op["incl_lo"], op["incl_hi"])
        elif op["how"] == "equals":
            coll = coll.equals(op["lo"])
        else:
            coll = coll.any_of(op["keys"])
        if op["reverse"]:
            coll = coll.reverse()
        if op["offset"]:
            coll = coll.offset(op["offset"])
        if op["limit"] is not None:
            coll = coll.limit(op["limit"])
        return {"keys": await coll.primary_keys(), "count": await coll.count()}
    if kind == "abort_tx":

        async def body(tx: Transaction) -> None:
            for sub in op["values"]:
                await tx.table("items").put(sub)
            raise PanelotError("planned abort")

        try:
            await db.transaction("rw", ["items"], body)
        except PanelotError as exc:
            return {"aborted": exc.name}
    raise ValueError(f"unknown op {kind}")


async def run_ops(db: Database, ops: list[dict[str, Any]]) -> list[Any]:
    """Run ``ops`` in order; return one observation per op plus a final full dump."""
    seen: list[Any] = []
    for op in ops:
        try:
            seen.append({"ok": await _one(db, op)})
        except PanelotError as exc:
            seen.append({"error": exc.name})
    seen.append({"dump": await db.table("items").to_list()})
    return seen
