"""``sync.resume {mode: "replace"}``'s first half: the server's documents the store lacks.

After a restore the user may decide that the server takes the restored data. The state's
knowledge is stale (it may lack what other devices pushed since), so this reads what the
server holds now (``GET /db/_all_docs``, in pages: each live document's winning
revision), then:

* a synced document the store does not hold gets a deleted revision, a child of the
  server's winning one (as a push deletes a thread), so every device's next pull drops it;
* a document the store holds gets the server's revision as its parent in the state (its
  digest left empty unless the state already knew that very revision), so the push that
  follows sends every restored record as a child of what the server has: it wins by the
  merge rules (its fields get fresh clocks) and never makes a sibling.

The push itself (:func:`panelot.sync.push.push`, comparing everything) is the caller's.
"""

from __future__ import annotations

import json
import urllib.parse
import uuid
from typing import Any

from panelot.errors import NetworkError
from panelot.idb import Database, Transaction
from panelot.sync.couch import Couch
from panelot.sync.docid import SYNCED_TABLES, doc_id, split_doc_id
from panelot.sync.outbox import WIDE
from panelot.sync.revs import next_rev, revisions

__all__ = ["PAGE", "replace_server", "server_revs"]

PAGE = 1000
"""Documents per ``_all_docs`` page."""


async def server_revs(couch: Couch) -> dict[str, str]:
    """Every live synced document on the server: ``{id: winning rev}``."""
    out: dict[str, str] = {}
    last: str | None = None
    where = f"GET {couch.target.url}/_all_docs"
    while True:
        query: dict[str, Any] = {"limit": PAGE}
        if last is not None:
            query.update(startkey=json.dumps(last), skip=1)
        answer = await couch.call("GET", "/_all_docs?" + urllib.parse.urlencode(query))
        rows = answer.get("rows") if isinstance(answer, dict) else None
        if not isinstance(rows, list):
            raise NetworkError(f"{where}: not a list of documents")
        for row in rows:
            did = row.get("id") if isinstance(row, dict) else None
            value = row.get("value") if isinstance(row, dict) else None
            rev = value.get("rev") if isinstance(value, dict) else None
            if not isinstance(did, str) or not isinstance(rev, str):
                continue
            last = did
            try:
                split_doc_id(did)
            except ValueError:
                continue  # a design document, anything not of ours
            out[did] = rev
        if len(rows) < PAGE:
            return out


async def _held(db: Database) -> set[str]:
    async def read(tx: Transaction) -> set[str]:
        ids: set[str] = set()
        for table in SYNCED_TABLES:
            keys = await tx.table(table).to_collection().primary_keys()
            ids.update(doc_id(table, k) for k in keys if isinstance(k, str))
        return ids

    return await db.transaction("r", list(SYNCED_TABLES), read)


async def _known(state: Database) -> dict[str, dict[str, Any]]:
    async def read(tx: Transaction) -> list[Any]:
        return await tx.table("docs").to_collection().to_list()

    rows = await state.transaction("r", ["docs"], read)
    return {r["id"]: r for r in rows if isinstance(r, dict) and isinstance(r.get("id"), str)}


async def replace_server(
    db: Database, state: Database, couch: Couch, batch_docs: int
) -> dict[str, Any]:
    """Delete on the server what ``db`` lacks; set the state for the push that follows.

    ``{deleted}``: how many documents got a deleted revision.
    """
    on_server = await server_revs(couch)
    held = await _held(db)
    known = await _known(state)
    rows: list[dict[str, Any]] = []
    deletions: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for did, rev in sorted(on_server.items()):
        table, _ = split_doc_id(did)
        if did in held:
            last = known.get(did)
            if last is None or last.get("rev") != rev or last.get("deleted"):
                rows.append({"id": did, "table": table, "rev": rev, "digest": ""})
            continue
        gone = next_rev(rev, True, {})
        doc = {"_id": did, "_rev": gone, "_revisions": revisions(gone, rev), "_deleted": True}
        row: dict[str, Any] = {"id": did, "table": table, "rev": gone, "deleted": True}
        last = known.get(did)
        if last is not None and "threadId" in last:
            row["threadId"] = last["threadId"]
        deletions.append((doc, row))
    for did, last in known.items():  # neither here nor live there: nothing to delete
        if did not in held and did not in on_server and not last.get("deleted"):
            rows.append({**last, "deleted": True})

    async def write(tx: Transaction) -> None:
        if rows:
            await tx.table("docs").bulk_put(rows)
        await tx.table("outbox").put({"id": WIDE, "n": uuid.uuid4().hex})

    await state.transaction("rw", ["docs", "outbox"], write)
    for start in range(0, len(deletions), max(batch_docs, 1)):
        batch = deletions[start : start + max(batch_docs, 1)]
        await couch.bulk_docs([doc for doc, _ in batch])

        async def record(tx: Transaction, batch: list[Any] = batch) -> None:
            await tx.table("docs").bulk_put([row for _, row in batch])

        await state.transaction("rw", ["docs"], record)
    return {"deleted": len(deletions)}
