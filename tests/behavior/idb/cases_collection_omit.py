"""``Collection.omit``: every top-level field but the named ones, on both cores."""

from __future__ import annotations

from behavior import Ctx, raises
from panelot.idb.blobs import blob_size, is_blob, make_blob
from panelot.idb.errors import DataError


async def case_omit_reads_every_field_but_the_named_ones(ctx: Ctx) -> None:
    db = await ctx.open({"docs": "id, group"})
    docs = db.table("docs")
    await docs.bulk_put(
        [
            {
                "id": f"d{n}",
                "group": n % 2,
                "meta": {"n": n},
                "bytes": make_blob(db, b"x" * (n + 1), "text/plain"),
            }
            for n in range(5)
        ]
    )
    await docs.put({"id": "d9", "group": 1, "when": b"\x00\x01"})  # no bytes field at all
    rows = await docs.order_by("id").omit("bytes").to_list()
    assert rows[0] == {"id": "d0", "group": 0, "meta": {"n": 0}}, rows[0]
    assert [r["id"] for r in rows] == ["d0", "d1", "d2", "d3", "d4", "d9"]
    assert rows[-1] == {"id": "d9", "group": 1, "when": b"\x00\x01"}  # other values kept
    # through an index, reversed (the records path), with a filter seeing the projection
    odd = await docs.where("group").equals(1).omit("bytes", "meta").reverse().to_list()
    assert odd == [
        {"id": "d9", "group": 1, "when": b"\x00\x01"},
        {"id": "d3", "group": 1},
        {"id": "d1", "group": 1},
    ]
    seen: list[bool] = []
    small = docs.to_collection().omit("bytes").filter(lambda r: seen.append("bytes" in r) or True)
    assert len(await small.limit(2).to_list()) == 2 and seen and not any(seen)
    assert await docs.order_by("id").omit("bytes", "group", "meta").first() == {"id": "d0"}
    # the last projection wins: pick after omit keeps only the picked fields
    assert await docs.order_by("id").omit("meta").pick("id").last() == {"id": "d9"}
    # omit narrows reads only: the stored records keep their Blobs
    whole = await docs.get("d4")
    assert is_blob(whole["bytes"]) and blob_size(whole["bytes"]) == 5
    assert await docs.where("group").equals(0).omit("bytes").modify({"seen": True}) == 3
    again = await docs.get("d2")
    assert is_blob(again["bytes"]) and again["seen"] is True
    err = await raises(DataError, _call(lambda: docs.order_by("id").omit()))
    assert getattr(err, "field", None) == "fields"
    await raises(DataError, _call(lambda: docs.order_by("id").omit("a,b")))


async def _call(fn: object) -> None:
    assert callable(fn)
    fn()
