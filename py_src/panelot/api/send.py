"""``message.send``: a user's message, its files and its thread, in one command.

What the side panel's composer sends. Payload::

    {threadId?,                       absent: a new thread is created for the message
     thread?: {title?, folderId?, tags?},      the new thread's metadata
     parentId?,                       the node the user saw last (null: a root); absent:
                                      the thread's leaf
     content: [block...],             text blocks, and {type: "image"|"file", upload: i}
                                      for the i-th upload
     attachedContext?,
     uploads?: [{mime, dataBase64, name?}],     each at most MAX_SEND_BYTES (20 MiB)
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
from dataclasses import dataclass, field
from typing import Any, TypedDict

from panelot.attachments.eviction import evict
from panelot.attachments.records import (
    ATTACHMENT_TABLES,
    MAX_SEND_BYTES,
    AttachmentInput,
    attach,
    put_attachment,
)
from panelot.bus import Call, Env, Handler
from panelot.codec import Raw
from panelot.idb import Transaction
from panelot.idb.errors import ValidationError
from panelot.tree.nodes import LEAF, append_node, create_thread, get_thread, updated_thread
from panelot.tree.records import thread_to_wire

__all__ = ["COMMANDS", "MAX_UPLOADS"]

MAX_UPLOADS = 20
"""Most files one message may carry."""


def _fail(where: str, message: str) -> ValidationError:
    return ValidationError(f"payload.{where}: {message}", field=f"payload.{where}")


@dataclass(frozen=True, slots=True)
class Upload:
    """A file of the message, as base64."""

    mime: str
    data_base64: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class NewThread:
    """The metadata of the thread a first message creates."""

    title: str | None = None
    folder_id: str | None = None
    tags: list[Raw] | None = None


@dataclass(frozen=True, slots=True)
class AutoTitle:
    """A title to set only while the stored one is one of ``when``."""

    title: str
    when: list[str]


@dataclass(frozen=True, slots=True)
class MessageSend:
    """``message.send`` (see the module docstring)."""

    content: list[Raw]
    thread_id: str | None = None
    thread: NewThread | None = None
    parent_id: str | None = LEAF
    attached_context: Raw = None
    uploads: list[Upload] = field(default_factory=list)
    auto_title: AutoTitle | None = None


class Stored(TypedDict):
    """One upload, stored as an attachment."""

    attachmentId: str
    size: int


class Sent(TypedDict):
    """The message (the thread's leaf), its thread's title and its stored files."""

    threadId: str
    nodeId: str
    seq: float
    leafId: str
    title: str
    attachments: list[Stored]


def _check_uploads(uploads: list[Upload]) -> None:
    if len(uploads) > MAX_UPLOADS:
        raise _fail("uploads", f"must be a list of at most {MAX_UPLOADS} files")
    for i, up in enumerate(uploads):
        size = _size(up.data_base64)
        if size > MAX_SEND_BYTES:
            raise _fail(
                f"uploads[{i}].dataBase64",
                f"a file sent with a message can be at most {MAX_SEND_BYTES} bytes"
                f" ({MAX_SEND_BYTES // 2**20} MiB); this one is {size} bytes",
            )
        if not 0 < len(up.mime) <= 200:
            raise _fail(f"uploads[{i}].mime", "must be a string of 1 to 200 characters")
        if up.name is not None and not 0 < len(up.name) <= 255:
            raise _fail(f"uploads[{i}].name", "must be a string of 1 to 255 characters")


def _size(data: str) -> int:
    """The decoded size of base64 text, without decoding it."""
    return len(data) * 3 // 4 - data[-2:].count("=") if data else 0


def _decode(data: str, i: int) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise _fail(f"uploads[{i}].dataBase64", "is not valid base64") from None


def _blocks(content: list[Any], count: int) -> list[tuple[int, Any]]:
    """The content, with the upload index of each block that references one (else -1)."""
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


async def _prepare(env: Env, p: MessageSend) -> None:
    """Make room first: evict down to the budget minus the uploads, sparing this thread."""
    _check_uploads(p.uploads)
    size = sum(_size(up.data_base64) for up in p.uploads)
    if size:
        await evict(env.db, max(env.host.storage.budget - size, 0), p.thread_id)


async def _thread(tx: Transaction, call: Call[MessageSend]) -> tuple[str, str | None]:
    """The thread the message goes to (created when the payload names none) and its parent."""
    p = call.payload
    if p.thread_id is not None:
        return p.thread_id, p.parent_id
    if p.parent_id not in (None, LEAF):
        raise _fail("parentId", "a new thread's first message has no parent")
    meta = p.thread or NewThread()
    created = await create_thread(
        tx, title=meta.title or "", folder_id=meta.folder_id, tags=meta.tags, clock=call.clock
    )
    return created.id, None


def _reference(block: dict[str, Any], upload: Upload, record: dict[str, Any]) -> Any:
    """The content block of a stored upload."""
    ref: dict[str, Any] = {
        "type": block["type"],
        "attachmentId": record["id"],
        "mime": record["mime"],
    }
    if upload.name:
        ref["name"] = upload.name
    if block["type"] == "file":
        ref["size"] = record["size"]
    return ref


async def _send(tx: Transaction, call: Call[MessageSend]) -> Sent:
    p, clock = call.payload, call.clock
    _check_uploads(p.uploads)
    blocks = _blocks(p.content, len(p.uploads))
    thread_id, parent = await _thread(tx, call)
    stored: list[dict[str, Any]] = []
    for i, up in enumerate(p.uploads):
        kind = next(b["type"] for ref, b in blocks if ref == i)
        meta = {"title": up.name} if up.name else None
        upload = AttachmentInput(
            thread_id=thread_id,
            kind=kind,
            mime=up.mime,
            data=_decode(up.data_base64, i),
            meta=meta,
            provenance="user",
        )
        record = await put_attachment(tx, upload, clock)
        stored.append(record)
    content = [b if ref < 0 else _reference(b, p.uploads[ref], stored[ref]) for ref, b in blocks]
    payload: dict[str, Any] = {"content": content}
    if p.attached_context is not None:
        payload["attachedContext"] = p.attached_context
    node = await append_node(tx, thread_id, "user_message", payload, parent, clock)
    for record in stored:
        await attach(tx, record["id"], node.id)
    thread = thread_to_wire(await get_thread(tx, thread_id))
    title = p.auto_title
    if title is not None and thread["title"] in title.when and title.title != thread["title"]:
        thread = thread_to_wire(updated_thread(thread, thread_id, {"title": title.title}, clock))
        await tx.table("threads").put(thread)
    return {
        "threadId": thread_id,
        "nodeId": node.id,
        "seq": node.seq,
        "leafId": node.id,
        "title": thread["title"],
        "attachments": [{"attachmentId": r["id"], "size": r["size"]} for r in stored],
    }


COMMANDS: dict[str, Handler[Any]] = {
    "message.send": Handler(
        payload=MessageSend, tables=ATTACHMENT_TABLES, run=_send, prepare=_prepare
    ),
}
"""``message.send``."""
