"""The conversation list: reads only ``threads``, never scans ``nodes``."""

from __future__ import annotations

from itertools import chain
from typing import Any

from panelot.idb import Database
from panelot.idb.errors import ValidationError
from panelot.tree.shown import counts_held

__all__ = ["list_threads"]


def _is(value: Any, kind: type | tuple[type, ...], optional: bool = True) -> bool:
    return (value is None and optional) or (isinstance(value, kind) and not isinstance(value, bool))


def _listable(row: Any) -> bool:
    """Whether a stored thread record has the shape of the fields a list shows.

    A corrupt record (another client's bug, a disk error) is left out rather than
    handed to the UI; ``thread.get`` and ``thread.check`` report what is wrong with it.
    The check is cheap on purpose; the list runs it only on the threads it returns.
    """
    if not isinstance(row, dict):
        return False
    tags = row.get("tags")
    return (
        _is(row.get("id"), str, False)
        and _is(row.get("title"), str, False)
        and _is(row.get("updatedAt"), (int, float), False)
        and _is(row.get("folderId"), str)
        and (tags is None or isinstance(tags, list) and all(isinstance(t, str) for t in tags))
        and all(isinstance(row.get(k), bool | None) for k in ("pinned", "archived"))
        and _is(row.get("stats"), dict)
    )


def _candidates(
    rows: list[Any], archived: bool | None, folder_id: str | None, tag: str | None
) -> tuple[list[Any], list[Any]]:
    """The rows the filters keep, newest first: ``(pinned, the rest)``.

    Only the filtered fields are looked at, so this pass over every thread stays cheap;
    a malformed row may be kept here, and :func:`_listable` leaves it out later. For a
    well-formed row each test gives what it gives on the full check.
    """
    pinned: list[Any] = []
    rest: list[Any] = []
    for row in reversed(rows):  # a forward getAll reversed here is cheaper than a "prev" read
        try:
            if archived is not None and bool(row.get("archived")) != archived:
                continue
            if folder_id is not None and row.get("folderId") != folder_id:
                continue
            if tag is not None:
                tags = row.get("tags")
                if not isinstance(tags, list) or tag not in tags:
                    continue
            (pinned if row.get("pinned") else rest).append(row)
        except AttributeError:  # not an object: never listable
            continue
    return pinned, rest


async def list_threads(
    db: Database,
    *,
    archived: bool | None = False,
    folder_id: str | None = None,
    tag: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Threads newest first by ``updatedAt``, pinned ones before the rest.

    Records without a well-formed title, tags, folder, flags or ``updatedAt`` are left out.

    ``archived=None`` lists archived and active threads alike. IndexedDB does not index
    booleans, so ``pinned``/``archived`` are filtered in memory over the ``updatedAt``
    order rather than read through their (inert) indexes. The filters look at every
    thread; the full shape check only at those listed (and any it leaves out).

    A row's ``shown`` (what its current branch shows, :mod:`panelot.tree.shown`) is
    returned only while it holds; a row without it has no known count.
    """
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ValidationError("limit: must be a non-negative integer", field="limit")
    rows = await db.table("threads").order_by("updatedAt").to_list()
    pinned, rest = _candidates(rows, archived, folder_id, tag)
    wanted = len(rows) if limit is None else limit
    out: list[dict[str, Any]] = []
    for row in chain(pinned, rest):
        if len(out) >= wanted:
            break
        if _listable(row):
            out.append(counts_held(row))
    return out
