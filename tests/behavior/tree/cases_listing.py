"""The thread list checks only the threads it returns: same output as checking every one.

``thread.list`` filters every thread on the fields it filters by, and runs the full
shape check only on the threads it is about to return (and on any it leaves out on
the way). These cases compare its output with a plain reference, the check of every
stored record followed by the filters and the pinned-first order, over well-formed,
pinned, archived, foldered, tagged and malformed records, for every filter and limit.
"""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from panelot.store import PanelotStore
from panelot.tree.listing import list_threads


def _thread(ident: Any, updated: Any, **fields: Any) -> dict[str, Any]:
    """A stored ThreadMeta record (wire form), with ``fields`` overriding or removed (None)."""
    record: dict[str, Any] = {
        "id": ident,
        "title": f"title {ident}",
        "createdAt": 1,
        "updatedAt": updated,
        "leafId": None,
        "tags": [],
        "pinned": False,
        "archived": False,
        "stats": {"turns": 0, "totalTokens": 0, "costUsd": 0},
        "scopeOrigins": [],
    }
    for key, value in {"updatedAt": updated, **fields}.items():
        if value is _ABSENT:
            record.pop(key, None)
        else:
            record[key] = value
    return record


_ABSENT = object()


def _well_formed(row: Any) -> bool:
    """What a listed thread must look like (the list's documented contract)."""

    def opt(value: Any, kind: Any) -> bool:
        return value is None or (isinstance(value, kind) and not isinstance(value, bool))

    if not isinstance(row, dict):
        return False
    tags = row.get("tags")
    return (
        isinstance(row.get("id"), str)
        and isinstance(row.get("title"), str)
        and isinstance(row.get("updatedAt"), int | float)
        and not isinstance(row.get("updatedAt"), bool)
        and opt(row.get("folderId"), str)
        and (tags is None or (isinstance(tags, list) and all(isinstance(t, str) for t in tags)))
        and all(row.get(k) is None or isinstance(row.get(k), bool) for k in ("pinned", "archived"))
        and opt(row.get("stats"), dict)
    )


def _reference(
    forward: list[Any], archived: bool | None, folder: str | None, tag: str | None, limit: Any
) -> list[Any]:
    """Every record checked, then filtered, newest first, pinned ones first (stable)."""
    out = [
        r
        for r in reversed(forward)
        if _well_formed(r)
        and (archived is None or bool(r.get("archived")) == archived)
        and (folder is None or r.get("folderId") == folder)
        and (tag is None or tag in (r.get("tags") or []))
    ]
    out.sort(key=lambda r: not r.get("pinned"))
    return out if limit is None else out[:limit]


def _mixed_records() -> list[dict[str, Any]]:
    good = [
        _thread("g01", 100),
        _thread("g02", 200, pinned=True),
        _thread("g03", 300, archived=True),
        _thread("g04", 400, folderId="f1", tags=["work"]),
        _thread("g05", 500, folderId="f2", tags=["work", "code"], pinned=True),
        _thread("g06", 600, tags=["code"], archived=True, pinned=True),
        _thread("g07", 700, folderId="f1"),
        _thread("g08", 700, folderId="f1"),  # same updatedAt: the id breaks the tie
        _thread("g09", 700.5, tags=None, pinned=None, archived=None, folderId=None),
        _thread("g10", 800, stats=None),
        _thread("g11", 900, tags=_ABSENT, pinned=_ABSENT, archived=_ABSENT),
        _thread("g12", 1000, tags=["work"]),
        _thread("g13", 50, pinned=True, folderId="f2"),
        _thread("g14", 1100, pinned=True, archived=True, folderId="f1", tags=["work"]),
    ]
    bad = [
        _thread("b-title", 1200, title=5, pinned=True),
        _thread("b-tags-text", 1210, tags="work"),  # "wor" in "work" must not match
        _thread("b-tags-number", 1220, tags=7),  # `in` on a number would raise
        _thread("b-tags-mixed", 1230, tags=["work", 3]),
        _thread("b-pinned-text", 1240, pinned="yes"),
        _thread("b-archived-text", 1250, archived="no"),
        _thread("b-archived-zero", 1260, archived=0),
        _thread("b-folder-number", 1270, folderId=9),
        _thread("b-stats-list", 1280, stats=[], pinned=True),
        _thread("b-updated-text", "later"),  # a string key: after every number
        _thread("b-updated-bool", True),  # not a key: not in the updatedAt index
        _thread("b-updated-absent", _ABSENT),
        _thread(42, 1290),  # a number id
        _thread("b-title-absent", 1300, title=_ABSENT, folderId="f1", tags=["work"]),
    ]
    return good + bad


async def _seed(store: PanelotStore, records: list[dict[str, Any]]) -> list[Any]:
    await store.db.table("threads").bulk_put(records)
    return list(await store.db.table("threads").order_by("updatedAt").to_list())


async def case_list_equals_checking_every_record_for_every_filter(ctx: Ctx) -> None:
    store = await ctx.store()
    forward = await _seed(store, _mixed_records())
    assert len(forward) == 26  # everything but the records without a numeric/text updatedAt
    compared = 0
    for archived in (False, True, None):
        for folder in (None, "f1", "f2", "nowhere"):
            for tag in (None, "work", "wor", "code", "nothing"):
                for limit in (None, 0, 1, 2, 3, 5, 8, 100):
                    args: dict[str, Any] = {"archived": archived}
                    if folder is not None:
                        args["folderId"] = folder
                    if tag is not None:
                        args["tag"] = tag
                    if limit is not None:
                        args["limit"] = limit
                    got = await store.query("thread.list", args)
                    want = _reference(forward, archived, folder, tag, limit)
                    assert got == want, (args, [r["id"] for r in got], [r["id"] for r in want])
                    compared += 1
    assert compared == 3 * 4 * 5 * 8
    # The reference is not vacuous: the expected lists, spelled out.
    ids = [r["id"] for r in await store.query("thread.list", {})]
    assert ids == ["g05", "g02", "g13", "g12", "g11", "g10", "g09", "g08", "g07", "g04", "g01"]
    every = [r["id"] for r in await store.query("thread.list", {"archived": None})]
    assert every[:6] == ["g14", "g06", "g05", "g02", "g13", "g12"]
    assert not any(str(i).startswith("b-") or i == 42 for i in every)
    assert await store.query("thread.list", {"tag": "wor", "archived": None}) == []
    work = await store.query("thread.list", {"tag": "work", "folderId": "f1", "archived": None})
    assert [r["id"] for r in work] == ["g14", "g04"]


async def case_list_skips_malformed_threads_before_the_limit(ctx: Ctx) -> None:
    """Malformed records at the top (newest, pinned) are skipped; the limit still fills."""
    store = await ctx.store()
    records = [_thread(f"bad{i:02d}", 5000 + i, pinned=True, title=None) for i in range(20)]
    records += [_thread(f"bad-tags{i:02d}", 4000 + i, tags={"work": 1}) for i in range(10)]
    records += [_thread(f"ok{i}", 100 + i, pinned=i == 0) for i in range(5)]
    forward = await _seed(store, records)
    for limit in (None, 0, 1, 3, 5, 6):
        got = await list_threads(store.db, limit=limit)
        assert got == _reference(forward, False, None, None, limit)
    assert [r["id"] for r in await list_threads(store.db, limit=3)] == ["ok0", "ok4", "ok3"]
    assert [r["id"] for r in await list_threads(store.db, tag="work")] == []
    assert len(await list_threads(store.db, archived=None)) == 5


async def case_list_of_an_empty_store_and_of_only_malformed_threads(ctx: Ctx) -> None:
    store = await ctx.store()
    assert await list_threads(store.db) == []
    assert await list_threads(store.db, limit=0) == []
    await _seed(store, [_thread("x", 1, title=1), _thread("y", 2, pinned="no")])
    assert await list_threads(store.db, archived=None) == []
    assert await list_threads(store.db, archived=None, limit=1) == []
