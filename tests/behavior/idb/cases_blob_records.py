"""Records holding Blobs are written and read back whole, whichever way they cross."""

from __future__ import annotations

from datetime import UTC, datetime

from behavior import Ctx
from panelot.idb.blobs import blob_bytes, is_blob, make_blob


async def case_records_with_top_level_blobs_round_trip(ctx: Ctx) -> None:
    """Blobs as top-level fields (the attachment shape), in several records of one call."""
    db = await ctx.open({"files": "id"})
    files = db.table("files")
    a, b, c = (make_blob(db, bytes([n]) * (n + 1), f"x/{n}") for n in range(3))
    await files.bulk_put(
        [
            {"id": "1", "bytes": a, "thumb": b, "meta": {"w": 1, "title": "é ☃"}, "n": None},
            {"id": "2", "meta": {"w": 2}},
            {"id": "3", "bytes": c, "size": 3, "tags": ["a", "b"]},
        ]
    )
    one, two, three = await files.bulk_get(["1", "2", "3"])
    assert set(one) == {"id", "bytes", "thumb", "meta", "n"}, one
    assert one["meta"] == {"w": 1, "title": "é ☃"} and one["n"] is None
    assert is_blob(one["bytes"]) and await blob_bytes(one["bytes"]) == b"\x00"
    assert is_blob(one["thumb"]) and await blob_bytes(one["thumb"]) == b"\x01\x01"
    assert one["bytes"].type == "x/0" and one["thumb"].type == "x/1"
    assert two == {"id": "2", "meta": {"w": 2}}
    assert (three["size"], three["tags"]) == (3, ["a", "b"])
    assert await blob_bytes(three["bytes"]) == b"\x02\x02\x02"


async def case_records_mixing_blobs_with_other_values_round_trip(ctx: Ctx) -> None:
    """Blobs beside bytes, dates and nested Blobs (the piece-by-piece path in the browser)."""
    db = await ctx.open({"files": "id"})
    files = db.table("files")
    when = datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    blob = make_blob(db, b"top", "text/plain")
    nested = make_blob(db, b"inner", "text/plain")
    await files.bulk_put(
        [
            {"id": "1", "bytes": blob, "raw": b"\x00\xff", "at": when},
            {"id": "2", "parts": [{"bytes": nested}], "at": None},
        ]
    )
    one, two = await files.bulk_get(["1", "2"])
    assert one["raw"] == b"\x00\xff" and one["at"] == when
    assert await blob_bytes(one["bytes"]) == b"top"
    assert two["at"] is None and await blob_bytes(two["parts"][0]["bytes"]) == b"inner"
