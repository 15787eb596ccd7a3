"""``message.send``: a user's message, its files and its thread, in one command.

What the side panel's composer sends. Payload::

    {threadId?,                       absent: a new thread is created for the message
     thread?: {title?, folderId?, tags?},      the new thread's metadata
     parentId?,                       the node the user saw last (null: a root); absent:
                                      the thread's leaf
     content: [block...],             text blocks, and {type: "image"|"file", upload: i}
                                      for the i-th upload
     attachedContext?,
     uploads?: [{mime, dataBase64, name?}],
     autoTitle?: {title, when: [titles]}}      set the title only while it is one of these

Response ``{threadId, nodeId, seq, leafId, title, attachments: [{attachmentId, size}]}``.

Everything is written in one transaction with the receipt: the thread (when new), each
upload as an attachment of the thread, the user message whose blocks reference them,
each attachment's reference to the message, and the title. A failure anywhere writes
nothing, so no file is ever left without its message. The title is decided inside that
transaction from the stored one, so a rename made elsewhere in the meantime is kept.
Before the transaction, other threads' attachments are evicted down to the budget
minus the uploads' size, as ``attachment.put`` does.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

from panelot.api.attachments import MAX_PUT_BYTES
from panelot.attachments.eviction import current_budget, evict
from panelot.attachments.records import ATTACHMENT_TABLES, attach, put_attachment
from panelot.bus.admission import check_admission
from panelot.clock import Clock
from panelot.idb import Transaction
from panelot.idb.errors import ValidationError
from panelot.tree.nodes import LEAF, append_node, create_thread, get_thread, updated_thread
from panelot.tree.records import thread_to_wire

if TYPE_CHECKING:
    from panelot.bus.bus import CommandBus

__all__ = ["MAX_UPLOADS", "SEND_COMMANDS"]

MAX_UPLOADS = 20
"""Most files one message may carry."""
_FIELD = "payload."


def _fail(field: str, message: str) -> ValidationError:
    return ValidationError(f"{_FIELD}{field}: {message}", field=f"{_FIELD}{field}")


def _uploads(p: dict[str, Any]) -> list[dict[str, Any]]:
    """The uploads, checked for shape (not decoded)."""
    uploads = p.get("uploads", [])
    if not isinstance(uploads, list) or len(uploads) > MAX_UPLOADS:
        raise _fail("uploads", f"must be a list of at most {MAX_UPLOADS} files")
    for i, up in enumerate(uploads):
        if not isinstance(up, dict):
            raise _fail(f"uploads[{i}]", "must be an object")
        data = up.get("dataBase64")
        if not isinstance(data, str) or len(data) > MAX_PUT_BYTES * 4 // 3 + 4:
            raise _fail(
                f"uploads[{i}].dataBase64", f"must be base64 of at most {MAX_PUT_BYTES} bytes"
            )
        mime = up.get("mime")
        if not isinstance(mime, str) or not 0 < len(mime) <= 200:
            raise _fail(f"uploads[{i}].mime", "must be a string of 1 to 200 characters")
        name = up.get("name")
        if name is not None and (not isinstance(name, str) or not 0 < len(name) <= 255):
            raise _fail(f"uploads[{i}].name", "must be a string of 1 to 255 characters")
    return uploads


def _size(data: str) -> int:
    """The decoded size of base64 text, without decoding it."""
    return len(data) * 3 // 4 - data[-2:].count("=") if data else 0


def _decode(data: str, i: int) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise _fail(f"uploads[{i}].dataBase64", "is not valid base64") from None


def _blocks(p: dict[str, Any], count: int) -> list[tuple[int, Any]]:
    """The content, with the upload index of each block that references one (else -1)."""
    content = p.get("content")
    if not isinstance(content, list):
        raise _fail("content", "must be a list of content blocks")
    out: list[tuple[int, Any]] = []
    used: set[int] = set()
    for i, block in enumerate(content):
        ref = block.get("upload") if isinstance(block, dict) else None
        if ref is None:
            out.append((-1, block))
            continue
        if not isinstance(ref, int) or isinstance(ref, bool) or not 0 <= ref < count:
            raise _fail(f"content[{i}].upload", f"must be the index of one of {count} uploads")
        if ref in used or block.get("type") not in ("image", "file"):
            raise _fail(f"content[{i}]", "an image or file block must use its upload once")
        used.add(ref)
        out.append((ref, block))
    if len(used) != count:
        raise _fail("uploads", "every upload must be referenced by one content block")
    return out


def _auto_title(p: dict[str, Any]) -> tuple[str, list[str]] | None:
    spec = p.get("autoTitle")
    if spec is None:
        return None
    when = spec.get("when") if isinstance(spec, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("title"), str):
        raise _fail("autoTitle.title", "must be a string")
    if not isinstance(when, list) or not all(isinstance(w, str) for w in when):
        raise _fail("autoTitle.when", "must be a list of titles")
    return spec["title"], when


async def _prepare(bus: CommandBus, p: dict[str, Any]) -> None:
    """Make room first: evict down to the budget minus the uploads, sparing this thread."""
    size = sum(_size(up["dataBase64"]) for up in _uploads(p))
    if size:
        thread_id = p.get("threadId") if isinstance(p.get("threadId"), str) else None
        await evict(bus.db, max(current_budget() - size, 0), thread_id)


async def _thread(tx: Transaction, p: dict[str, Any], clock: Clock) -> tuple[str, Any]:
    """The thread the message goes to (created when the payload names none) and its parent."""
    thread_id = p.get("threadId")
    if thread_id is None:
        meta = p.get("thread", {})
        if not isinstance(meta, dict) or set(meta) - {"title", "folderId", "tags"}:
            raise _fail("thread", "must be an object with title, folderId and tags only")
        if "parentId" in p and p["parentId"] is not None:
            raise _fail("parentId", "a new thread's first message has no parent")
        created = await create_thread(
            tx,
            title=meta.get("title") or "",
            folder_id=meta.get("folderId"),
            tags=meta.get("tags"),
            clock=clock,
        )
        return created.id, None
    if not isinstance(thread_id, str):
        raise _fail("threadId", "must be a thread id")
    check_admission(await tx.table("threads").get(thread_id))
    parent = p["parentId"] if "parentId" in p else LEAF
    if parent is not None and parent != LEAF and not isinstance(parent, str):
        raise _fail("parentId", "must be a node id or null")
    return thread_id, parent


async def _send(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    uploads = _uploads(p)
    blocks = _blocks(p, len(uploads))
    title = _auto_title(p)
    thread_id, parent = await _thread(tx, p, clock)
    stored: list[dict[str, Any]] = []
    for i, up in enumerate(uploads):
        kind = next(b["type"] for ref, b in blocks if ref == i)
        meta = {"title": up["name"]} if up.get("name") else None
        record = await put_attachment(
            tx, thread_id, kind, up["mime"], _decode(up["dataBase64"], i),
            meta=meta, provenance="user", clock=clock,
        )  # fmt: skip
        stored.append(record)
    content = [
        block if ref < 0 else _reference(block, uploads[ref], stored[ref]) for ref, block in blocks
    ]
    payload: dict[str, Any] = {"content": content}
    if "attachedContext" in p:
        payload["attachedContext"] = p["attachedContext"]
    node = await append_node(tx, thread_id, "user_message", payload, parent, clock)
    for record in stored:
        await attach(tx, record["id"], node.id)
    thread = thread_to_wire(await get_thread(tx, thread_id))
    if title is not None and thread["title"] in title[1] and title[0] != thread["title"]:
        thread = thread_to_wire(updated_thread(thread, thread_id, {"title": title[0]}, clock))
        await tx.table("threads").put(thread)
    return {
        "threadId": thread_id,
        "nodeId": node.id,
        "seq": node.seq,
        "leafId": node.id,
        "title": thread["title"],
        "attachments": [{"attachmentId": r["id"], "size": r["size"]} for r in stored],
    }


def _reference(block: dict[str, Any], upload: dict[str, Any], record: dict[str, Any]) -> Any:
    """The content block of a stored upload."""
    ref: dict[str, Any] = {
        "type": block["type"],
        "attachmentId": record["id"],
        "mime": record["mime"],
    }
    if upload.get("name"):
        ref["name"] = upload["name"]
    if block["type"] == "file":
        ref["size"] = record["size"]
    return ref


SEND_COMMANDS: dict[str, tuple[Any, ...]] = {
    "message.send": (ATTACHMENT_TABLES, _send, _prepare),
}
"""Command type -> ``(tables, run, prepare)``; the bus wraps each in a ``Handler``."""
