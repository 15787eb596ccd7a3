"""Attached text files in a model request: sent as their text, within bounds.

A ``file`` block names an attachment. When the file is text-like (``text/*``, JSON,
XML, YAML, Markdown, CSV, source code: by MIME type, or by file name when the browser
gave none) and its bytes are UTF-8, the request carries its text instead of a bare
reference, so the model reads what the user attached. The rules are pure and depend
only on the stored bytes, so the same tree gives the same request:

* one file sends at most :data:`FILE_TEXT_CHARS` characters; the rest is left out
  with a note saying how much;
* one request sends at most :data:`REQUEST_TEXT_CHARS` characters of files in all,
  newest message first; a file past that budget is sent as a one-line note;
* a file that is stale (the slimming rules already made it a stub), not text-like, or
  not UTF-8 stays as it is. Stored bytes are never changed.
"""

from __future__ import annotations

from typing import Any

from panelot.textfiles import decode_text, is_text_like

__all__ = [
    "FILE_TEXT_CHARS",
    "REQUEST_TEXT_CHARS",
    "decode_text",
    "file_text_block",
    "is_text_like",
    "over_budget_block",
]

FILE_TEXT_CHARS = 100_000
"""Most characters of one file a request carries."""
REQUEST_TEXT_CHARS = 400_000
"""Most characters of attached files one request carries in all."""


def _label(block: dict[str, Any]) -> str:
    name = block.get("name") or block.get("attachmentId") or "file"
    return str(name).replace("\n", " ")[:200]


def file_text_block(block: dict[str, Any], text: str, room: int) -> tuple[dict[str, Any], int]:
    """The text block sent for a file block, and how many characters of the file it holds.

    At most ``min(room, FILE_TEXT_CHARS)`` characters are sent; a note says how many
    were left out.
    """
    keep = min(len(text), room, FILE_TEXT_CHARS)
    body = text[:keep]
    if keep < len(text):
        body += f"\n[… {len(text) - keep:,} more characters of this file were not sent]"
    sent = {
        "type": "text",
        "text": f"[file: {_label(block)}]\n{body}",
        "file": True,
        "attachmentId": block.get("attachmentId"),
    }
    if keep < len(text):
        sent["truncated"] = True
    return sent, keep


def over_budget_block(block: dict[str, Any], chars: int) -> dict[str, Any]:
    """The note sent for a text file once the request's file budget is spent."""
    return {
        "type": "text",
        "text": f"[file: {_label(block)}, {chars:,} characters, not sent: "
        "this request already carries as much attached text as it may]",
        "file": True,
        "attachmentId": block.get("attachmentId"),
        "truncated": True,
    }
