"""The Markdown summary retention keeps in place of a thread's messages: read and show it.

Retention (:mod:`panelot.lifecycle.retention`) replaces an old thread's messages with a
``page_text`` attachment of ``sourceRef`` :data:`~panelot.lifecycle.retention.SUMMARY_REF`.
This module finds it for the thread view (``thread.summary``) and for export, so what
retention kept is shown and exported, and the messages' removal is said plainly.
"""

from __future__ import annotations

import time
from typing import Any, TypedDict

from panelot.attachments.records import list_attachments, read_bytes
from panelot.idb import Database
from panelot.idb.errors import NotFoundError
from panelot.lifecycle.retention import SUMMARY_REF

__all__ = [
    "RetentionSummary",
    "removal_notice",
    "retention_summary",
    "summary_json",
    "with_summary",
]


class RetentionSummary(TypedDict):
    """A thread's retention summary: its attachment, its Markdown, when it was written."""

    attachmentId: str
    markdown: str
    createdAt: int


async def retention_summary(db: Database, thread_id: str) -> RetentionSummary | None:
    """The newest retention summary of ``thread_id``, or ``None`` (never summarized)."""
    rows = await db.transaction("r", ["attachments"], lambda tx: list_attachments(tx, thread_id))
    mine = [r for r in rows if r.get("sourceRef") == SUMMARY_REF]
    if not mine:
        return None
    newest = mine[-1]  # oldest createdAt first
    try:
        _, data = await read_bytes(db, newest["id"])
    except NotFoundError:  # deleted between the two reads
        return None
    return {
        "attachmentId": newest["id"],
        "markdown": data.decode("utf-8", errors="replace"),
        "createdAt": int(newest.get("createdAt") or 0),
    }


def removal_notice(summary: RetentionSummary) -> str:
    """The sentence saying what retention did, with its date (UTC)."""
    day = time.strftime("%Y-%m-%d", time.gmtime(summary["createdAt"] / 1000))
    return (
        f"Retention removed this conversation's messages on {day} and kept this summary "
        "of them in their place."
    )


def with_summary(summary: RetentionSummary, markdown: str) -> str:
    """A thread's Markdown export with its retention summary first.

    ``markdown`` is the export of what the thread shows now (a title line, then any
    messages written since); the result is the title, the removal notice, the summary's
    messages, and then those later messages under a rule.
    """
    lines = markdown.rstrip("\n").split("\n")
    title, later = lines[0], "\n".join(lines[1:]).strip()
    kept = summary["markdown"].split("\n", 1)  # the summary's own title line first
    body = kept[1].strip() if len(kept) > 1 and kept[0].startswith("# ") else summary["markdown"]
    parts = [title, f"> {removal_notice(summary)}", body.strip()]
    if later:
        parts += ["---", later]
    return "\n\n".join(p for p in parts if p) + "\n"


def summary_json(summary: RetentionSummary | None) -> dict[str, Any]:
    """The ``retentionSummary`` field of a JSON export (empty when there is none)."""
    return {} if summary is None else {"retentionSummary": dict(summary)}
