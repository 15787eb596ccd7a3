"""The conversation list: reads only ``threads``, never scans ``nodes``."""

from __future__ import annotations

from typing import Any

from .idb import Database
from .idb.errors import ValidationError

__all__ = ["list_threads"]


def _is(value: Any, kind: type | tuple[type, ...], optional: bool = True) -> bool:
    return (value is None and optional) or (isinstance(value, kind) and not isinstance(value, bool))


def _listable(row: Any) -> bool:
    """Whether a stored thread record has the shape of the fields a list shows.

    A corrupt record (another client's bug, a disk error) is left out rather than
    handed to the UI; ``thread.get`` and ``thread.check`` report what is wrong with it.
    The check is cheap on purpose: the list reads every ThreadMeta.
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
    order rather than read through their (inert) indexes.
    """
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ValidationError("limit: must be a non-negative integer", field="limit")
    rows = await db.table("threads").order_by("updatedAt").to_list()
    rows.reverse()  # a forward getAll reversed here is cheaper than a "prev" read
    out = [
        r
        for r in rows
        if _listable(r)
        and (archived is None or bool(r.get("archived")) == archived)
        and (folder_id is None or r.get("folderId") == folder_id)
        and (tag is None or tag in (r.get("tags") or []))
    ]
    out.sort(key=lambda r: not r.get("pinned"))  # stable: keeps updatedAt order within each
    return out if limit is None else out[:limit]
