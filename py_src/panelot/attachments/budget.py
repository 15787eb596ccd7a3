"""Writing an attachment within the budget: evict down to it first, then write.

The Python API's put (no receipt); the ``attachment.put`` command does the same with
one (:mod:`panelot.api.attachments`).
"""

from __future__ import annotations

from typing import Any

from panelot.attachments.eviction import evict
from panelot.attachments.records import (
    ATTACHMENT_TABLES,
    AttachmentInput,
    attachment_meta,
    put_attachment,
)
from panelot.idb import Database
from panelot.idb.blobs import blob_size

__all__ = ["put_within_budget"]


async def put_within_budget(
    db: Database,
    thread_id: str,
    kind: str,
    mime: str,
    data: Any,
    *,
    budget: int,
    **options: Any,
) -> dict[str, Any]:
    """Put bytes or a Blob handle as an attachment of ``thread_id``, within ``budget``.

    ``budget`` is the store's (its host's ``storage.budget``). First evicts down to
    ``budget - size`` (sparing ``thread_id``, the active thread),
    then writes the record in a transaction of its own. ``options`` are
    the other fields of :class:`~panelot.attachments.stored.AttachmentInput`. Returns the
    record's metadata.
    """
    attachment = AttachmentInput(thread_id=thread_id, kind=kind, mime=mime, data=data, **options)
    size = len(data) if isinstance(data, bytes | bytearray | memoryview) else blob_size(data)
    await evict(db, max(budget - size, 0), thread_id)
    record = await db.transaction(
        "rw",
        ATTACHMENT_TABLES,
        lambda tx: put_attachment(tx, attachment),
    )
    return attachment_meta(record)
