"""What is indexed of a record: its text, and the doc built from it.

A thread gives its title and tags; a user or assistant message its ``content`` text
blocks, a tool result its ``contentForLlm`` (else ``content``) text blocks. Every other
node type, a tombstone, and a thread being deleted give nothing.

An attachment gives its text when it is an original the user or a page gave: a
``page_text`` record, or a ``file`` that is text-like (:func:`panelot.textfiles.is_text_like`,
by MIME type or by its ``meta.title`` name) and UTF-8, bounded to :data:`ATT_CHARS`
characters. Images, page snapshots, screenshots and derived records (thumbnails,
summaries, the retention summary, tool details: :data:`DERIVED_REFS`) give nothing, nor
does a record being evicted or without its Blob. Its doc id is ``att:<attachmentId>``.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import Any

from panelot.search.text import index_terms
from panelot.textfiles import is_text_like
from panelot.tree.descent import is_tombstone

__all__ = [
    "ATT_BYTES",
    "ATT_CHARS",
    "ATT_PREFIX",
    "DERIVED_REFS",
    "MESSAGE_TYPES",
    "att_doc_id",
    "attachment_text",
    "build_doc",
    "indexed_attachment",
    "node_text",
    "thread_gone",
    "thread_text",
]

MESSAGE_TYPES = frozenset({"user_message", "assistant_message", "tool_result"})
"""The node types whose text is indexed."""

ATT_CHARS = 200_000
"""The most characters of one attachment indexed (the rest is not searched)."""

ATT_BYTES = 4 * ATT_CHARS + 3
"""The most bytes of an attachment read: enough for :data:`ATT_CHARS` characters of
UTF-8 after a byte-order mark."""

ATT_PREFIX = "att:"
"""The doc id of an attachment: this prefix and the attachment's id."""

DERIVED_REFS = ("summary:", "thumbnail:", "retention:", "tool-details:")
"""``sourceRef`` prefixes of records derived from others, never indexed.

A model's summary of an attachment is left out on purpose: the original it summarizes
is indexed itself (a hit in the summary would repeat the original's), and its words
are the model's, not the user's.
"""


def att_doc_id(attachment_id: str) -> str:
    """The doc id of an attachment."""
    return ATT_PREFIX + attachment_id


def indexed_attachment(record: Any) -> bool:
    """Whether an attachment record's text is indexed (its bytes not yet read)."""
    if not isinstance(record, dict) or not isinstance(record.get("id"), str):
        return False
    if not isinstance(record.get("threadId"), str) or record.get("deleting"):
        return False
    if record.get("bytes") is None:
        return False
    ref = record.get("sourceRef")
    if isinstance(ref, str) and ref.startswith(DERIVED_REFS):
        return False
    kind = record.get("kind")
    if kind == "page_text":
        return True
    meta = record.get("meta")
    name = meta.get("title") if isinstance(meta, dict) else None
    return kind == "file" and is_text_like(record.get("mime"), name)


def attachment_text(data: bytes) -> str | None:
    """The first :data:`ATT_CHARS` characters of UTF-8 bytes; ``None``: not UTF-8.

    Only the :data:`ATT_BYTES` bytes that can hold that many characters are decoded;
    past them (``data`` longer: the reader passes one byte more than it decodes), a
    character cut at the end is left out. A byte-order mark is dropped.
    """
    room = ATT_BYTES
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    try:
        text = decoder.decode(data[:room], final=len(data) <= room)
    except UnicodeDecodeError:
        return None
    return text[:ATT_CHARS]


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
