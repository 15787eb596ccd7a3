"""Resolving a document's conflicting revisions on the server (docs/sync.md Merges).

A document pulled with more than one live leaf was merged by the rules
(:func:`~panelot.sync.merge.merge_leaves`); the merged body goes back as a child of the
winning revision and every other live leaf gets a deleted child, all in one
``_bulk_docs`` with ``new_edits: false``. The revision ids are deterministic
(:mod:`panelot.sync.revs`), so two devices resolving the same conflict write the same
revisions and make no new conflict. A thread with a deleted leaf is deleted: its live
leaves get the deleted children. A deleted leaf of a resolution carries ``merged: true``,
so no device takes it for a deletion of the record.
"""

from __future__ import annotations

from typing import Any

from panelot.sync.apply import Incoming
from panelot.sync.couch import Couch
from panelot.sync.mapping import ATTACHMENT, body_of
from panelot.sync.revs import next_rev, revisions

__all__ = ["MERGED", "resolution", "resolve"]


MERGED = "merged"
"""The field a resolution's deleted leaf carries (``true``): a merged-away revision, not a
deletion of the record (a thread's deletion wins over its live leaves; this does not)."""


def _deleted_child(doc_id: str, parent: str) -> dict[str, Any]:
    rev = next_rev(parent, True, {MERGED: True})
    doc = {"_id": doc_id, "_rev": rev, "_revisions": revisions(rev, parent), "_deleted": True}
    doc[MERGED] = True
    return doc


def resolution(item: Incoming) -> list[dict[str, Any]]:
    """The documents that resolve ``item``'s conflict (none when it has none).

    Sets ``item.rev`` to the merged revision (what the server then has).
    """
    if not item.losers:
        return []
    docs = [_deleted_child(item.id, loser) for loser in item.losers]
    if item.deleted or item.record is None:
        return docs
    body = body_of(item.table, item.record, item.clocks)
    rev_body = dict(body)
    if item.attachment is not None:
        meta = {k: item.attachment[k] for k in ("content_type", "digest", "length")}
        rev_body["_attachments"] = {ATTACHMENT: meta}
    rev = next_rev(item.rev, False, rev_body)
    doc: dict[str, Any] = {"_id": item.id, "_rev": rev, "_revisions": revisions(rev, item.rev)}
    doc.update(body)
    if item.attachment is not None:
        doc["_attachments"] = {ATTACHMENT: {**item.attachment, "stub": True}}
    item.rev = rev
    return [doc, *docs]


async def resolve(couch: Couch, items: list[Incoming]) -> int:
    """Write every resolution in one ``_bulk_docs``; the number of documents resolved."""
    docs: list[dict[str, Any]] = []
    resolved = 0
    for item in items:
        found = resolution(item)
        if found:
            docs += found
            resolved += 1
    if docs:
        await couch.bulk_docs(docs)
    return resolved
