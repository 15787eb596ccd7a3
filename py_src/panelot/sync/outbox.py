"""The outbox of continuous sync: what changed here since the last push (docs/sync.md).

The section hears ``panelot_v1``'s change feed (every context's commits); each change
set's keys in the synced tables become document ids (:func:`changed_ids`), written to
the ``outbox`` table of ``panelot_sync_v1`` after the commit, in a transaction of their
own (:func:`note`), never on the write path. A change set that names a range, or a
table changed wholesale, cannot say which records changed: it writes :data:`WIDE`, and
the next push compares everything.

Each row carries a random mark ``n``, new at every write: a push takes the rows
(:func:`taken`) and, once the server has what it sent, deletes only the rows whose mark
is still the one it read (:func:`clear`), so a change heard during the push stays for
the next one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from panelot.idb import Database, Transaction
from panelot.idb.observe.changes import ALL, ObsSet
from panelot.sync.docid import SYNCED_TABLES, doc_id

__all__ = ["WIDE", "changed_ids", "clear", "note", "size", "taken"]

WIDE = "*"
"""The outbox row of a change whose keys are not known: the next push compares all."""


def changed_ids(changes: ObsSet, db_name: str) -> set[str]:
    """The document ids a change set of ``db_name`` names (:data:`WIDE` for a range)."""
    prefix = f"idb://{db_name}/"
    ids: set[str] = set()
    for part, ranges in changes.items():
        if part == ALL:
            ids.add(WIDE)
            continue
        if not part.startswith(prefix):
            continue
        table, _, sub = part[len(prefix) :].partition("/")
        if table not in SYNCED_TABLES or sub not in ("", ":dels"):
            continue
        for lo, hi in ranges:
            if isinstance(lo, str) and lo == hi:
                ids.add(doc_id(table, lo))
            else:
                ids.add(WIDE)
    return ids


async def note(state: Database, ids: Iterable[str]) -> None:
    """Put ``ids`` in the outbox, each with a new mark."""
    rows = [{"id": i, "n": uuid.uuid4().hex} for i in sorted(set(ids))]
    if not rows:
        return

    async def write(tx: Transaction) -> None:
        await tx.table("outbox").bulk_put(rows)

    await state.transaction("rw", ["outbox"], write)


async def taken(state: Database) -> dict[str, str]:
    """Every outbox row: ``{id: mark}``."""

    async def read(tx: Transaction) -> dict[str, str]:
        rows = await tx.table("outbox").to_collection().to_list()
        return {row["id"]: row["n"] for row in rows if isinstance(row, dict)}

    return await state.transaction("r", ["outbox"], read)


async def clear(state: Database, rows: dict[str, str]) -> None:
    """Delete the outbox rows of ``rows`` whose mark is still the one read."""
    if not rows:
        return

    async def write(tx: Transaction) -> None:
        table = tx.table("outbox")
        keys = sorted(rows)
        now = await table.bulk_get(keys)
        gone = [k for k, row in zip(keys, now, strict=True) if _marked(row, rows[k])]
        if gone:
            await table.bulk_delete(gone)

    await state.transaction("rw", ["outbox"], write)


def _marked(row: object, mark: str) -> bool:
    return isinstance(row, dict) and row.get("n") == mark


async def size(state: Database) -> int:
    """How many document ids wait in the outbox (:data:`WIDE` counts one)."""

    async def read(tx: Transaction) -> int:
        return await tx.table("outbox").count()

    return await state.transaction("r", ["outbox"], read)
