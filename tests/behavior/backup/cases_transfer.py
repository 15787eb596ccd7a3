"""``panelot.idb.transfer``: any database out as a ``dexie-export-import`` file and back.

The idb layer only, no domain: inbound, out-of-line (``++`` and ``""``) tables with
compound and multiEntry indexes, values JSON cannot carry (Blobs, binary, dates, NaN
and the infinities, lone surrogates, a ``$types`` field of the record's own), every
option of the addon that applies, and the all-or-nothing import.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Any, TypeVar

from behavior import Ctx, raises
from behavior.backup.fill import canon
from panelot.idb import Database, SchemaVersion
from panelot.idb.blobs import blob_bytes, is_blob, make_blob
from panelot.idb.errors import ConstraintError, PanelotError, ValidationError
from panelot.idb.transfer import (
    ExportOptions,
    ExportProgress,
    ImportOptions,
    ImportProgress,
    blob_source,
    export_db,
    import_db,
    read_header,
)

STORES: dict[str, str | None] = {
    "inb": "id, name, [a+b], *tags",
    "auto": "++, name",
    "out": "",
    "seq": "++id, n",
}
"""Inbound with compound and multiEntry indexes, out-of-line auto-increment, out-of-line,
inbound auto-increment."""

WHEN = datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
LONE = "a\ud800b"
"""A string with a lone surrogate (a JS string may hold one; UTF-8 cannot)."""

RENAME = ImportOptions(accept_name_diff=True)
"""Every import here goes into a database of another (unique) name."""

E = TypeVar("E", bound=PanelotError)


async def failure(kind: type[E], awaitable: Awaitable[Any]) -> E:
    """The ``kind`` error ``awaitable`` raised (:func:`behavior.raises`, typed)."""
    err = await raises(kind, awaitable)
    assert isinstance(err, kind)
    return err


async def seed(db: Database) -> None:
    """Rows of every kind in every table of :data:`STORES`."""
    inb = [
        {
            "id": LONE,
            "name": "x\udfffy",
            "a": 1,
            "b": "z",
            "tags": ["t1", "t2", "\udc00"],
            "raw": b"\x00\xff\x80",
            "at": WHEN,
            "blob": make_blob(db, bytes(range(256)) * 3, "image/png"),
            "nan": math.nan,
            "inf": math.inf,
            "ninf": -math.inf,
            "nested": {
                "$types": {"x": "date"},
                "a.b~c": WHEN,
                "list": [make_blob(db, b"", ""), {"d": b"q", "e": None}],
            },
        },
        {"id": "plain", "name": "p", "a": 1, "b": "y", "$types": {"q": "blob2"}},
        {"id": "both", "name": "p", "$types": "mine", "bytes": b"1", "tags": ["t2"]},
        {"id": "wrap", "$": 5, "$types": True},
        {"id": "emoji 😀", "tags": [], "a": 2, "b": "y", "v": -1.5, "big": 2**53 - 1, "t": True},
    ]
    await db.table("inb").bulk_put(inb)
    await db.table("auto").bulk_add([{"name": "one"}, {"name": "two", "x": b"2"}, {"name": LONE}])
    await db.table("out").bulk_put(
        [
            {"v": 1},
            "a string value",
            [1, 2.5, None],
            {"$types": 1},
            {"blob": make_blob(db, b"o", "")},
        ],
        [1, "k\ud800", WHEN, [1, "x", b"\x00"], b"\x01\x02"],
    )
    await db.table("seq").bulk_add([{"n": 1}, {"n": 2, "when": WHEN}, {"n": math.nan}])


async def contents(db: Database) -> dict[str, Any]:
    """Every table's primary keys and records (Blobs read, NaN comparable)."""
    out: dict[str, Any] = {}
    for name in STORES:
        if name not in db.core.tables:
            continue
        table = db.table(name)
        keys = await table.to_collection().primary_keys()
        out[name] = (await canon(keys), await canon(await table.to_list()))
    return out


async def exported(db: Database, options: ExportOptions | None = None) -> bytes:
    return await blob_bytes(await export_db(db, options))


async def case_transfer_round_trip_keeps_every_value_and_key(ctx: Ctx) -> None:
    src = await ctx.open(STORES)
    await seed(src)
    file = await export_db(src)
    assert is_blob(file) and file.type == "text/json"
    data = await blob_bytes(file)
    doc = json.loads(data)  # plain JSON (lone surrogates as escapes)
    assert doc["formatName"] == "dexie" and doc["formatVersion"] == 1
    assert doc["data"]["databaseName"] == src.name and doc["data"]["databaseVersion"] == 1
    listed = {t["name"]: (t["schema"], t["rowCount"]) for t in doc["data"]["tables"]}
    assert listed == {
        "inb": ("id,name,[a+b],*tags", 5),
        "auto": ("++,name", 3),
        "out": ("", 5),
        "seq": ("++id,n", 3),
    }
    inbound = {t["tableName"]: t["inbound"] for t in doc["data"]["data"]}
    assert inbound == {"inb": True, "auto": False, "out": False, "seq": True}
    rows = {t["tableName"]: t["rows"] for t in doc["data"]["data"]}
    first = next(r for r in rows["inb"] if r.get("id") == LONE)
    assert first["blob"]["type"] == "image/png" and first["$types"]["blob"] == "blob2"
    assert first["$types"]["nested.a~1b~0c"] == "date"
    assert first["nested"]["a.b~c"] == round(WHEN.timestamp() * 1000)
    assert first["nan"] == "NaN" and first["$types"]["nan"] == "nan"
    # a record's own $types field is wrapped, never read as Typeson's
    assert {"$": {"id": "plain", "name": "p", "a": 1, "b": "y", "$types": {"q": "blob2"}},
            "$types": True} in rows["inb"]  # fmt: skip

    dst = await ctx.open(STORES)
    result = await import_db(dst, blob_source(file), RENAME)
    assert result.tables == {"inb": 5, "auto": 3, "out": 5, "seq": 3} and result.skipped == []
    assert result.size == len(data)
    assert await contents(dst) == await contents(src)
    # the stored values are the real kinds, and the indexes hold them
    got = await dst.table("inb").get(LONE)
    assert got["at"] == WHEN and got["raw"] == b"\x00\xff\x80" and math.isnan(got["nan"])
    assert is_blob(got["blob"]) and got["blob"].type == "image/png"
    assert await blob_bytes(got["blob"]) == bytes(range(256)) * 3
    assert got["nested"]["$types"] == {"x": "date"} and got["nested"]["a.b~c"] == WHEN
    assert await dst.table("inb").where("tags").equals("t2").primary_keys() == [LONE, "both"]
    assert await dst.table("inb").where("tags").equals("\udc00").primary_keys() == [LONE]
    assert await dst.table("inb").where("[a+b]").equals([1, "y"]).primary_keys() == ["plain"]
    assert await dst.table("inb").where("name").equals("x\udfffy").primary_keys() == [LONE]
    assert await dst.table("auto").where("name").equals(LONE).primary_keys() == [3]
    assert await dst.table("out").get(WHEN) == [1, 2.5, None]
    assert await dst.table("out").get("k\ud800") == "a string value"
    # a second export of the copy is the same file, but for the database's name
    again = json.loads(await exported(dst))
    assert again["data"]["databaseName"] == dst.name
    again["data"]["databaseName"] = src.name
    assert again == doc
    # the key generators go on from the imported keys
    assert await dst.table("auto").add({"name": "four"}) == 4
    assert await dst.table("seq").add({"n": 4}) == 4


async def case_transfer_chunk_sizes_give_the_same_rows(ctx: Ctx) -> None:
    src = await ctx.open(STORES)
    await seed(src)
    await src.table("seq").bulk_add([{"n": i, "pad": "é☃" * i} for i in range(200)])
    default = await exported(src)
    one_by_one = await exported(src, ExportOptions(rows_per_chunk=1))
    assert one_by_one == default  # each row is encoded alike whatever chunk it is read in
    assert await exported(src, ExportOptions(rows_per_chunk=7)) == default
    expected = await contents(src)
    for chunk in (1024, 1025, 4096):
        dst = await ctx.open(STORES)
        options = ImportOptions(accept_name_diff=True, chunk_size_bytes=chunk)
        result = await import_db(dst, blob_source(one_by_one), options)
        assert result.tables["seq"] == 203
        assert await contents(dst) == expected, chunk
    dst = await ctx.open(STORES)
    await import_db(dst, blob_source(default), RENAME)
    assert await contents(dst) == expected
    err = await failure(
        ValidationError, import_db(dst, blob_source(default), ImportOptions(chunk_size_bytes=1023))
    )
    assert err.field == "chunk_bytes"
    err = await failure(ValidationError, export_db(src, ExportOptions(rows_per_chunk=0)))
    assert err.field == "rows_per_chunk"


async def case_transfer_progress_ends_done_and_complete(ctx: Ctx) -> None:
    src = await ctx.open(STORES)
    await seed(src)
    seen: list[ExportProgress] = []
    file = await export_db(src, ExportOptions(rows_per_chunk=1, progress=seen.append))
    size = len(await blob_bytes(file))
    last = seen[-1]
    assert last.done and [p for p in seen if p.done] == [last]
    assert (last.total_tables, last.completed_tables) == (4, 4)
    assert last.total_rows == last.completed_rows == 16
    assert dict(last.row_counts) == {"inb": 5, "auto": 3, "out": 5, "seq": 3}
    assert last.bytes == size
    done = [p.completed_rows for p in seen]
    assert done == sorted(done) and len(seen) >= 16

    reports: list[ImportProgress] = []
    dst = await ctx.open(STORES)
    options = ImportOptions(accept_name_diff=True, chunk_size_bytes=1024, progress=reports.append)
    await import_db(dst, blob_source(file), options)
    reading = [p for p in reports if p.stage == "reading"]
    writing = [p for p in reports if p.stage == "writing"]
    assert reports == reading + writing  # all reading first, then the writing
    for stage in (reading, writing):
        end = stage[-1]
        assert end.done and [p for p in stage if p.done] == [end]
        assert end.total_rows == end.completed_rows == 16
        assert end.total_tables == end.completed_tables == 4
        assert end.total_bytes == end.bytes == size
    assert [p.bytes for p in reading] == sorted(p.bytes for p in reading)
    assert reading[0].bytes < size  # read in parts of 1 KiB


async def case_transfer_skip_tables_and_filter(ctx: Ctx) -> None:
    src = await ctx.open(STORES)
    await seed(src)
    full = await contents(src)
    # export: a skipped table is not in the file; the filter sees values and out-of-line keys
    seen_keys: list[Any] = []

    def keep(table: str, value: Any, key: Any) -> bool:
        if table == "out":
            seen_keys.append(key)
            return bool(key != 1)
        return table != "seq" or bool(value["n"] == 2)

    file = await export_db(src, ExportOptions(skip_tables=["auto"], filter=keep))
    header = await read_header(blob_source(file))
    assert [t.name for t in header.tables] == [n for n in src.core.tables if n != "auto"]
    assert {t.name: t.row_count for t in header.tables}["seq"] == 3  # the count before the filter
    assert sorted(await canon(seen_keys), key=repr) == sorted(full["out"][0], key=repr)
    dst = await ctx.open(STORES)
    result = await import_db(dst, blob_source(file), RENAME)
    assert result.tables == {"inb": 5, "out": 4, "seq": 1}
    got = await contents(dst)
    assert got["auto"] == ([], []) and got["inb"] == full["inb"]
    assert got["out"][0] == full["out"][0][1:] and got["seq"][0] == [2]
    await failure(ValidationError, export_db(src, ExportOptions(skip_tables=["nope"])))

    # import: a skipped table's rows are not read into it; the filter drops rows
    whole = await export_db(src)
    dst = await ctx.open(STORES)

    def keep_inb(table: str, value: Any, key: Any) -> bool:
        return table != "inb" or value["id"] in ("plain", "wrap")

    options = ImportOptions(accept_name_diff=True, skip_tables=["out"], filter=keep_inb)
    result = await import_db(dst, blob_source(whole), options)
    assert result.skipped == ["out"] and "out" not in result.tables
    got = await contents(dst)
    assert got["out"] == ([], []) and got["inb"][0] == ["plain", "wrap"]
    assert got["auto"] == full["auto"] and got["seq"] == full["seq"]


CLASH: dict[str, Any] = {"inb": "plain", "auto": 2, "out": 1, "seq": 2}
"""A key of the seeded source in each table."""


async def target_with_rows(ctx: Ctx, conflict_in: str) -> Database:
    """A database of :data:`STORES` with rows of its own, one of them clashing.

    Every table holds a row of its own; ``conflict_in`` also one under a key the seeded
    source has (:data:`CLASH`).
    """
    dst = await ctx.open(STORES)
    await dst.table("inb").put({"id": "mine", "name": "kept"})
    await dst.table("auto").add({"name": "mine"}, 100)
    await dst.table("out").put("mine", "mine-key")
    await dst.table("seq").put({"id": 100, "n": "mine"})
    key = CLASH[conflict_in]
    if conflict_in in ("inb", "seq"):
        await dst.table(conflict_in).put({"id": key, "name": "old", "n": "old"})
    else:
        await dst.table(conflict_in).put({"name": "old"}, key)
    return dst


async def case_transfer_existing_keys_cleared_refused_or_overwritten(ctx: Ctx) -> None:
    src = await ctx.open(STORES)
    await seed(src)
    file = await export_db(src)
    order = [t.name for t in (await read_header(blob_source(file))).tables]
    first, last = order[0], order[-1]
    source = await contents(src)
    # The last table written holds a key of the file: the add is refused, and nothing
    # of the import stays, not even the first table's rows, written before.
    dst = await target_with_rows(ctx, last)
    before = await contents(dst)
    err = await failure(ConstraintError, import_db(dst, blob_source(file), RENAME))
    clash_at = source[last][0].index(CLASH[last])
    assert err.field is not None and err.field.startswith(f"{last}[{clash_at}]"), err.field
    assert await contents(dst) == before
    assert len(before[first][0]) < len(source[first][0])
    # overwrite_values: the file's row replaces the one there; the others stay
    result = await import_db(
        dst, blob_source(file), ImportOptions(accept_name_diff=True, overwrite_values=True)
    )
    assert result.tables[last] == len(source[last][0])
    got = await contents(dst)
    for name in STORES:
        keys, values = got[name]
        assert len(keys) == len(source[name][0]) + 1, name  # the source's and "mine"
        for key, value in zip(*source[name], strict=True):
            assert values[keys.index(key)] == value, (name, key)
    # clear_tables_before_import: exactly the file, nothing of the target left
    dst = await target_with_rows(ctx, last)
    options = ImportOptions(accept_name_diff=True, clear_tables_before_import=True)
    await import_db(dst, blob_source(file), options)
    assert await contents(dst) == source
    # clearing leaves a skipped table alone
    dst = await target_with_rows(ctx, "inb")
    mine = (await contents(dst))["auto"]
    options = ImportOptions(
        accept_name_diff=True, clear_tables_before_import=True, skip_tables=["auto"]
    )
    await import_db(dst, blob_source(file), options)
    got = await contents(dst)
    assert got["auto"] == mine and got["inb"] == source["inb"]


async def case_transfer_header_checks_refused_unless_accepted(ctx: Ctx) -> None:
    src = await ctx.open(STORES)
    await seed(src)
    file = await export_db(src)
    source = await contents(src)

    async def refused(dst: Database, field: str, options: ImportOptions, text: str) -> None:
        before = await contents(dst)
        err = await failure(ValidationError, import_db(dst, blob_source(file), options))
        assert err.field == field and text in err.message, (err.field, err.message)
        assert await contents(dst) == before

    # another name
    dst = await ctx.open(STORES)
    await refused(dst, "data.databaseName", ImportOptions(), repr(src.name))
    await import_db(dst, blob_source(file), RENAME)
    assert await contents(dst) == source
    # the same name, another version
    name = ctx.new_name()
    src2 = await ctx.open(STORES, name)
    await seed(src2)
    same_name = await export_db(src2)
    src2.close()
    await ctx.factory.delete(name)
    dst = await ctx.open([SchemaVersion(2, STORES)], name)
    err = await failure(ValidationError, import_db(dst, blob_source(same_name)))
    assert err.field == "data.databaseVersion" and "accept_version_diff" in err.message
    assert await contents(dst) == {n: ([], []) for n in STORES}
    await import_db(dst, blob_source(same_name), ImportOptions(accept_version_diff=True))
    assert await contents(dst) == source
    # a table of the file the database lacks
    fewer = {k: v for k, v in STORES.items() if k != "auto"}
    dst = await ctx.open(fewer)
    await refused(dst, "data.tables", RENAME, "'auto'")
    options = ImportOptions(accept_name_diff=True, accept_missing_tables=True)
    result = await import_db(dst, blob_source(file), options)
    assert result.skipped == ["auto"]
    assert await contents(dst) == {k: v for k, v in source.items() if k != "auto"}
    # a changed primary key
    changed = {**STORES, "seq": "id, n"}
    dst = await ctx.open(changed)
    await refused(dst, "data.tables", RENAME, "'++id'")
    options = ImportOptions(accept_name_diff=True, accept_changed_primary_key=True)
    await import_db(dst, blob_source(file), options)
    assert await contents(dst) == source


def file_with(doc: dict[str, Any], table: str, rows: list[Any]) -> bytes:
    """``doc`` with ``table``'s rows replaced (the header's count kept in step)."""
    doc = json.loads(json.dumps(doc))
    for entry in doc["data"]["data"]:
        if entry["tableName"] == table:
            entry["rows"] = rows
    for info in doc["data"]["tables"]:
        if info["name"] == table:
            info["rowCount"] = len(rows)
    return json.dumps(doc).encode()


async def case_transfer_bad_rows_named_and_nothing_written(ctx: Ctx) -> None:
    src = await ctx.open(STORES)
    await seed(src)
    doc = json.loads(await exported(src))
    ok = {"id": "ok", "name": "fine"}
    cases: list[tuple[str, list[Any], str, str]] = [
        ("inb", [ok, {"name": "no key"}], "inb[1]", "primary key"),
        ("inb", [ok, {"id": "ok2"}, [1, 2]], "inb[2]", "object"),
        ("out", [[1, "a"], ["b"]], "out[1]", "[key, value]"),
        ("out", [[1, "a"], [{"not": "a key"}, "b"]], "out[1]", "key"),
        ("inb", [ok, {"id": "t", "$types": {"nope": "date"}}], "inb[1].$types", "'nope'"),
        ("inb", [{"id": "t", "x": 1, "$types": {"x": "regexp"}}], "inb[0].x", "regexp"),
        ("inb", [{"id": "t", "x": "@@", "$types": {"x": "arraybuffer"}}], "inb[0].x", "base64"),
        ("inb", [{"id": "t", "x": {"type": "a"}, "$types": {"x": "blob2"}}], "inb[0].x.data", ""),
        ("inb", [ok, {"id": "t", "at": "NaN", "$types": {"at": "date"}}], "inb[1].at", "Date"),
        # JSON's integers have no size limit: one no float holds is not a date
        ("inb", [{"id": "t", "at": 10**400, "$types": {"at": "date"}}], "inb[0].at", "millis"),
    ]
    dst = await ctx.open(STORES)
    await dst.table("seq").add({"n": "already here"})
    before = await contents(dst)
    for table, rows, field, text in cases:
        data = file_with(doc, table, rows)
        err = await failure(ValidationError, import_db(dst, blob_source(data), RENAME))
        assert err.field == field and text in err.message, (field, err.field, err.message)
        assert await contents(dst) == before
    # not JSON, cut short, text after the end, another format: named too
    whole = json.dumps(doc).encode()
    for data, field in (
        (whole[: len(whole) // 2], "data.data"),
        (whole + b" {}", "file"),
        (b"\xff\xfe{}", "file"),
        (b'{"formatName": "other", "data": {"data": []}}', "formatName"),
        (whole.replace(b'"formatVersion": 1', b'"formatVersion": 2'), "formatVersion"),
    ):
        err = await failure(ValidationError, import_db(dst, blob_source(data), RENAME))
        assert err.field is not None and err.field.startswith(field), (field, err.field)
    assert await contents(dst) == before


async def case_transfer_reads_the_addons_other_kinds(ctx: Ctx) -> None:
    """Typeson kinds the addon (typeson-registry) may write besides the ones written here."""
    rows = [
        {"id": "blob", "b": {"type": "text/plain", "stringContents": "hi\u00ff"},
         "$types": {"b": "blob"}},
        {"id": "buf", "b": "AAEC", "$types": {"b": "arraybuffer"}},
        {"id": "undef", "gone": 0, "kept": 1, "$types": {"gone": "undef"}},
        {"id": "ref", "a": {"x": 1}, "b": "#a", "$types": {"b": "#"}},
        {"id": "arr", "l": {"0": "a", "2": "c", "length": 3}, "$types": {"l": "arrayNonindexKeys"}},
        {"id": "u8", "b": {"buffer": "AAECAw==", "byteOffset": 1, "length": 2},
         "$types": {"b": "uint8array2", "b.buffer": "arraybuffer"}},
        {"$": {"id": "root$", "when": 0}, "$types": {"$": {"when": "date"}}},
    ]  # fmt: skip
    doc = {
        "formatName": "dexie",
        "formatVersion": 1,
        "data": {
            "databaseName": "elsewhere",
            "databaseVersion": 1,
            "tables": [{"name": "t", "schema": "id", "rowCount": len(rows)}],
            "data": [{"tableName": "t", "inbound": True, "rows": rows}],
        },
    }
    db = await ctx.open({"t": "id"})
    await import_db(db, blob_source(json.dumps(doc).encode()), RENAME)
    got = {r["id"]: r for r in await db.table("t").to_list()}
    assert await blob_bytes(got["blob"]["b"]) == b"hi\xff" and got["blob"]["b"].type == "text/plain"
    assert got["buf"]["b"] == b"\x00\x01\x02"
    assert got["undef"] == {"id": "undef", "kept": 1}
    assert got["ref"]["b"] == {"x": 1}
    assert got["arr"]["l"] == ["a", None, "c"]
    assert got["u8"]["b"] == b"\x01\x02"
    assert got["root$"]["when"] == datetime(1970, 1, 1, tzinfo=UTC)
