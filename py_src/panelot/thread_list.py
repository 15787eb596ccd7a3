"""The conversation list: reads only ``threads``, never scans ``nodes``."""

from __future__ import annotations

from typing import Any

from .idb import Database
from .idb.errors import ValidationError

__all__ = ["list_threads"]


async def list_threads(
    db: Database,
    *,
    archived: bool | None = False,
    folder_id: str | None = None,
    tag: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Threads newest first by ``updatedAt``, pinned ones before the rest.

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
        if isinstance(r, dict)
        and (archived is None or bool(r.get("archived")) == archived)
        and (folder_id is None or r.get("folderId") == folder_id)
        and (tag is None or tag in (r.get("tags") or []))
    ]
    out.sort(key=lambda r: not r.get("pinned"))  # stable: keeps updatedAt order within each
    return out if limit is None else out[:limit]
