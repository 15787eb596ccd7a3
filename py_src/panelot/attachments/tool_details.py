"""Large UI details of tool results live in attachments.

A ``tool_result`` payload is ``{itemId, ok, contentForLlm, details?}``; ``details`` is
free-form data for the UI (a page dump, a DOM tree, a table...). When its compact JSON
(UTF-8) is larger than :data:`DETAILS_INLINE_LIMIT` (32 KiB), ``message.append``
writes it, in the append's own transaction, as an attachment::

    {kind: "file", mime: "application/json", provenance: "tool",
     sourceRef: "tool-details:<itemId>", refs: {nodeIds: [<the node>]}, bytes: Blob}

and the node keeps a reference in its ``details`` field instead of the value::

    {"storedAs": "attachment", "attachmentId": "...", "mime": "application/json",
     "size": <bytes>}

The reference sits in ``details`` itself, so the ``ToolResult`` schema is unchanged,
the UI snapshot shows it as it is, and eviction marks it ``evicted: true`` like any
object in tool details naming an evicted attachment. Details that are not plain JSON
(bytes, NaN...) stay inline. ``node.details`` (:func:`read_details`) gives the value
back, reading the Blob after its transaction.

Only :func:`split_details` runs for every tool result (one ``json.dumps``), and only a
tool result's append covers the ``attachments`` table: for other node types the
append's transaction and work are unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from panelot.attachments.records import AttachmentInput, put_attachment, read_bytes
from panelot.clock import Clock, new_id
from panelot.idb import Database, Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.surrogates import escape_lone_surrogates
from panelot.tree.nodes import get_node
from panelot.tree.records import ThreadNode

__all__ = [
    "DETAILS_INLINE_LIMIT",
    "DETAILS_MIME",
    "DETAILS_SOURCE_PREFIX",
    "Offload",
    "details_reference",
    "read_details",
    "split_details",
    "store_details",
]

DETAILS_INLINE_LIMIT = 32 * 1024
"""Largest ``details`` kept inline: bytes of compact UTF-8 JSON."""

DETAILS_MIME = "application/json"
"""MIME type of a details attachment."""

DETAILS_SOURCE_PREFIX = "tool-details:"
"""``sourceRef`` of a details attachment: this prefix and the tool call's ``itemId``."""


@dataclass(frozen=True, slots=True)
class Offload:
    """Details to write as an attachment once the node exists."""

    attachment_id: str
    data: bytes
    item_id: str


def _compact_json(value: Any) -> bytes | None:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return None  # not plain JSON: kept inline
    return escape_lone_surrogates(text).encode("utf-8")  # valid UTF-8, the same JSON data


def split_details(payload: dict[str, Any]) -> tuple[dict[str, Any], Offload | None]:
    """A tool result payload with oversized ``details`` replaced by a reference.

    Returns ``(payload, offload)``: the payload unchanged and ``None`` when the details
    are small, absent or not plain JSON; otherwise a new payload (the caller's dict is
    not modified) and what :func:`store_details` must write.
    """
    details = payload.get("details")
    if details is None or details_reference(details) is not None:
        return payload, None
    data = _compact_json(details)
    if data is None or len(data) <= DETAILS_INLINE_LIMIT:
        return payload, None
    attachment_id = new_id()
    reference = {
        "storedAs": "attachment",
        "attachmentId": attachment_id,
        "mime": DETAILS_MIME,
        "size": len(data),
    }
    item_id = payload.get("itemId")
    offload = Offload(attachment_id, data, item_id if isinstance(item_id, str) else "")
    return {**payload, "details": reference}, offload


async def store_details(tx: Transaction, offload: Offload, node: ThreadNode, clock: Clock) -> None:
    """Write the details attachment of ``node`` (in the append's transaction)."""
    details = AttachmentInput(
        thread_id=node.thread_id,
        kind="file",
        mime=DETAILS_MIME,
        data=offload.data,
        provenance="tool",
        source_ref=(DETAILS_SOURCE_PREFIX + offload.item_id)[:2000],
        node_ids=[node.id],
        attachment_id=offload.attachment_id,
    )
    await put_attachment(tx, details, clock)


def details_reference(details: Any) -> dict[str, Any] | None:
    """The reference held in a node's ``details``, or ``None`` for inline details."""
    if (
        isinstance(details, dict)
        and details.get("storedAs") == "attachment"
        and isinstance(details.get("attachmentId"), str)
    ):
        return details
    return None


async def read_details(db: Database, node_id: str) -> dict[str, Any]:
    """A tool result's details, read back from its attachment when it was moved there.

    Returns ``{nodeId, stored: "inline"|"attachment", details}``, plus ``attachmentId``
    and ``size`` for an attachment; an evicted or missing one gives ``details: null``
    and ``evicted: true``. ValidationError if the node is not a tool result.
    """

    async def body(tx: Transaction) -> ThreadNode:
        return await get_node(tx, node_id)

    node = await db.transaction("r", ["nodes"], body)
    if node.type != "tool_result":
        raise ValidationError("nodeId: not a tool_result node", field="nodeId")
    details = getattr(node.payload, "details", None)
    ref = details_reference(details)
    if ref is None:
        return {"nodeId": node_id, "stored": "inline", "details": details}
    out = {"nodeId": node_id, "stored": "attachment", "attachmentId": ref["attachmentId"]}
    try:
        meta, data = await read_bytes(db, ref["attachmentId"])
    except NotFoundError:
        return {**out, "details": None, "evicted": True}
    if ref.get("evicted") or not data:
        return {**out, "details": None, "evicted": True}
    return {**out, "size": meta.get("size"), "details": json.loads(data.decode("utf-8"))}
