"""The overflow rescue's plan: which large items of a request to cut, and how (pure).

When a provider refuses a turn because the context is too long
(:func:`panelot.request.overflow.is_overflow`), the panel asks ``thread.request`` again
with ``rescue: {refusedChars}`` (the JSON length of the refused request's messages) and
retries once with what comes back. The plan, a pure function of the built request, its
message sources and the inputs named below (the same state gives the same request, byte
for byte):

1. **Cut large items.** Every item of the request over :data:`RESCUE_ITEM_CHARS`
   characters is cut: a file block sent as text, a page-context entry (inline, or backed
   by an attachment), an inline text block of a user message or a tool result. An item
   with a summary (``summaries``: attachment id → summary text) is sent as
   ``[Summary of <name> (<n> characters): <summary>]``; any other keeps its first
   :data:`HEAD_CHARS` and last :data:`TAIL_CHARS` characters around a note
   ``[… 123,456 characters of notes.txt left out …]``. Stale stubs, seen-image
   placeholders and summaries already sent are small and stay.
2. **A smaller history budget, only if needed.** If the messages' JSON is still longer
   than half of ``refusedChars``, the request is built again with the history budget
   :func:`rescue_budget` (``refusedChars // 4``, never above the one in use), and cut
   again. The newest turn is always sent (:mod:`panelot.request.history`), which is
   why the items must be cut for the retry to fit.

Each item has a key (:func:`item_key`): the attachment id of an attachment-backed item,
else ``<nodeId>#c<blockIndex>`` (a content block) or ``<nodeId>#e<entryIndex>`` (a
context entry). The result's ``rescue.record`` (``{itemKeys, contextBudget}``) is what
``thread.rescued`` stores on the thread (``requestCut``) after the retry's reply is
stored; later requests for the same model cut those items, and only those, and use
``min(budget, recorded budget)`` (:func:`apply_recorded`). Stored records and bytes are
never changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from panelot.request.slimming import own_message

__all__ = [
    "HEAD_CHARS",
    "RESCUE_ITEM_CHARS",
    "TAIL_CHARS",
    "CutPlan",
    "Item",
    "Sources",
    "apply_cuts",
    "find_items",
    "head_and_tail",
    "item_key",
    "messages_chars",
    "rescue_budget",
]

RESCUE_ITEM_CHARS = 4_000
"""An item longer than this (characters; an attachment's byte ``size``) is cut."""
HEAD_CHARS = 2_000
"""Characters kept from the start of a cut item."""
TAIL_CHARS = 1_000
"""Characters kept from the end of a cut item."""


@dataclass(slots=True)
class Sources:
    """The nodes the request's messages come from.

    ``user``: the user_message nodes, in order; ``tool``: tool_result nodes by ``itemId``.
    """

    user: list[str] = field(default_factory=list)
    tool: dict[str, str] = field(default_factory=dict)

    def node_of(self, messages: list[dict[str, Any]]) -> list[str | None]:
        """The node id of each message (``None``: assistant, or a result with no node)."""
        out: list[str | None] = []
        users = iter(self.user)
        for message in messages:
            role = message.get("role")
            if role == "user":
                out.append(next(users, None))
            elif role == "tool":
                item = message.get("itemId")
                out.append(self.tool.get(item) if isinstance(item, str) else None)
            else:
                out.append(None)
        return out


@dataclass(slots=True)
class Item:
    """One item of the request that may be cut."""

    key: str
    node_id: str
    message: int
    where: str
    """``"c"``: a content block; ``"e"``: a context entry."""
    pos: int
    name: str
    chars: int
    """Its length: characters of its text, or the attachment's byte ``size``."""
    attachment_id: str | None = None
    text: str | None = None
    """Its full text when the request holds it (``None``: an attachment to read)."""


@dataclass(slots=True)
class CutPlan:
    """The cut messages and what was cut (``items`` in request order)."""

    messages: list[dict[str, Any]]
    items: list[dict[str, Any]] = field(default_factory=list)


def item_key(node_id: str, where: str, pos: int, attachment_id: str | None) -> str:
    """An item's key: its attachment id, else ``<nodeId>#c<pos>`` / ``<nodeId>#e<pos>``."""
    return attachment_id if attachment_id else f"{node_id}#{where}{pos}"


def rescue_budget(refused_chars: int, current: int | None) -> int:
    """The smaller history budget of a rescue: ``refused_chars // 4``, at most ``current``."""
    budget = refused_chars // 4
    return budget if current is None else min(budget, current)


def messages_chars(messages: list[dict[str, Any]]) -> int:
    """The JSON length of ``messages`` (the measure of ``refusedChars``)."""
    return len(json.dumps(messages, ensure_ascii=False, separators=(",", ":"), default=str))


def head_and_tail(text: str, label: str) -> str:
    """``text`` cut to its head and tail around a note saying how much was left out."""
    left = len(text) - HEAD_CHARS - TAIL_CHARS
    if left <= 0:
        return text
    note = f"[… {left:,} characters of {label} left out …]"
    return f"{text[:HEAD_CHARS]}\n{note}\n{text[len(text) - TAIL_CHARS :]}"


def _one_line(value: Any, limit: int = 120) -> str:
    flat = " ".join(str(value).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _entry_name(entry: Mapping[str, Any]) -> str:
    parts = [_one_line(entry[k]) for k in ("title", "url") if isinstance(entry.get(k), str)]
    return " — ".join(p for p in parts if p) or "page text"


def _size(meta: Mapping[str, Any] | None) -> int:
    size = meta.get("size") if meta else None
    return size if isinstance(size, int) and not isinstance(size, bool) else 0


def _file_body(text: str) -> tuple[str, str]:
    """A file text block's ``(header line, body)`` (see :mod:`panelot.request.file_text`)."""
    head, sep, body = text.partition("\n")
    return (head, body) if sep and head.startswith("[file:") else ("", text)


def _candidates(
    messages: list[dict[str, Any]], nodes: list[str | None], meta: Mapping[str, Mapping[str, Any]]
) -> Iterator[Item]:
    for i, message in enumerate(messages):
        node = nodes[i]
        if node is None:
            continue
        blocks = message.get("content")
        for j, block in enumerate(blocks if isinstance(blocks, list) else []):
            if not isinstance(block, dict) or block.get("type") != "text":
                continue
            text = block.get("text")
            if not isinstance(text, str) or any(
                block.get(k) for k in ("stale", "seen", "summary", "cut")
            ):
                continue
            ident = block.get("attachmentId") if block.get("file") else None
            ident = ident if isinstance(ident, str) else None
            if ident is not None:
                label, body = _file_body(text)
                name = label[len("[file: ") : -1] if label.endswith("]") else ident
                yield Item(
                    item_key(node, "c", j, ident), node, i, "c", j, name, len(body), ident, body
                )
            else:
                yield Item(
                    item_key(node, "c", j, None),
                    node,
                    i,
                    "c",
                    j,
                    "this message",
                    len(text),
                    None,
                    text,
                )
        entries = message.get("attachedContext") if message.get("role") == "user" else None
        for k, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, dict) or entry.get("stale") or entry.get("summary"):
                continue
            text = entry.get("text")
            ident = entry.get("attachmentId")
            ident = ident if isinstance(ident, str) else None
            name = _entry_name(entry)
            if isinstance(text, str):
                key = item_key(node, "e", k, ident)
                yield Item(key, node, i, "e", k, name, len(text), ident, text)
            elif ident is not None:
                size = _size(meta.get(ident))
                yield Item(item_key(node, "e", k, ident), node, i, "e", k, name, size, ident, None)


def find_items(
    messages: list[dict[str, Any]],
    sources: Sources,
    meta: Mapping[str, Mapping[str, Any]],
    keys: frozenset[str] | None = None,
) -> list[Item]:
    """The items to cut.

    Every one over :data:`RESCUE_ITEM_CHARS` (``keys`` ``None``), or those whose key is
    in ``keys`` (a recorded cut) and still over it.
    """
    found = []
    for item in _candidates(messages, sources.node_of(messages), meta):
        if item.chars <= RESCUE_ITEM_CHARS:
            continue
        if keys is None or item.key in keys:
            found.append(item)
    return found


def _summary_text(item: Item, summary: str) -> str:
    return f"[Summary of {item.name} ({item.chars:,} characters): {summary}]"


def apply_cuts(
    messages: list[dict[str, Any]],
    items: list[Item],
    texts: Mapping[str, str],
    summaries: Mapping[str, str],
) -> CutPlan:
    """Cut ``items`` in a copy of ``messages`` (the input is not changed).

    ``texts``: the text of attachment-backed items the request does not hold (by
    attachment id); such an item with no text (evicted, not UTF-8) and no summary is
    sent as a one-line note. ``summaries``: attachment id → summary text.
    """
    out = list(messages)
    owned: set[int] = set()
    report: list[dict[str, Any]] = []
    for item in items:
        if item.message not in owned:
            out[item.message] = own_message(out[item.message])
            owned.add(item.message)
        message = out[item.message]
        summary = summaries.get(item.attachment_id) if item.attachment_id else None
        text = item.text if item.text is not None else texts.get(item.attachment_id or "")
        if summary is not None:
            body, how = _summary_text(item, summary), "summary"
        elif text is not None:
            body, how = head_and_tail(text, item.name), "cut"
        else:
            body, how = f"[{item.name} ({item.chars:,} characters) left out]", "cut"
        if item.where == "c":
            old = message["content"][item.pos]
            label, _ = _file_body(old.get("text", "")) if item.attachment_id else ("", "")
            new = {"type": "text", "text": f"{label}\n{body}" if label else body, how: True}
            if item.attachment_id:
                new["attachmentId"] = item.attachment_id
                new["file"] = True
            message["content"][item.pos] = new
        else:
            old = message["attachedContext"][item.pos]
            kept = {k: old[k] for k in ("type", "url", "title") if old.get(k) is not None}
            message["attachedContext"][item.pos] = {**kept, "text": body, how: True}
        entry: dict[str, Any] = {
            "key": item.key,
            "name": item.name,
            "how": how,
            "originalChars": item.chars,
            "keptChars": len(body),
        }
        if item.attachment_id:
            entry["attachmentId"] = item.attachment_id
        report.append(entry)
    return CutPlan(out, report)
