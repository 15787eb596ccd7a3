"""What is indexed of a record: its text, and the doc built from it.

A thread gives its title and tags; a user or assistant message its ``content`` text
blocks, a tool result its ``contentForLlm`` (else ``content``) text blocks. Every other
node type, a tombstone, and a thread being deleted give nothing. Attachments are not
indexed yet (docs/search.md, "What is left").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from panelot.search.text import index_terms
from panelot.tree.descent import is_tombstone

__all__ = ["MESSAGE_TYPES", "build_doc", "node_text", "thread_gone", "thread_text"]

MESSAGE_TYPES = frozenset({"user_message", "assistant_message", "tool_result"})
"""The node types whose text is indexed."""


def thread_gone(record: Any) -> bool:
    """Whether a thread record is absent, corrupt, or being deleted."""
    return (
        not isinstance(record, dict)
        or not isinstance(record.get("id"), str)
        or bool(record.get("deleting"))
    )


def thread_text(record: Mapping[str, Any]) -> str:
    """A thread's title and tags, one text."""
    title = record.get("title")
    tags = record.get("tags")
    parts = [title] if isinstance(title, str) else []
    if isinstance(tags, list):
        parts.extend(t for t in tags if isinstance(t, str))
    return "\n".join(parts)


def node_text(record: Any) -> str | None:
    """A node's visible text (``None``: not indexed: another type, a tombstone, corrupt)."""
    if not isinstance(record, dict) or record.get("type") not in MESSAGE_TYPES:
        return None
    if is_tombstone(record):
        return None
    payload = record.get("payload")
    if not isinstance(payload, dict):
        return None
    key = (
        "contentForLlm"
        if record["type"] == "tool_result" and "contentForLlm" in payload
        else "content"
    )
    blocks = payload.get(key)
    if isinstance(blocks, str):
        return blocks
    if not isinstance(blocks, list):
        return None
    texts = [
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return "\n\n".join(texts)


def build_doc(
    doc_id: str, thread_id: str, kind: str, text: str, updated_at: Any, node_id: str | None = None
) -> dict[str, Any]:
    """The doc of one text: how often it holds each term, and its length in tokens.

    Positions are not kept: a query checks phrases on the current text.
    """
    positions, length = index_terms(text)
    terms = {term: len(held) for term, held in positions.items()}
    doc: dict[str, Any] = {
        "id": doc_id,
        "threadId": thread_id,
        "kind": kind,
        "len": length,
        "terms": terms,
        "updatedAt": updated_at if isinstance(updated_at, int | float) else 0,
    }
    if node_id is not None:
        doc["nodeId"] = node_id
    return doc
