"""Bus commands and read queries for attachments, the budget, quota and retention.

Commands (each with its receipt, in the same transaction as its effect)::

    attachment.put     {threadId, kind, mime, dataBase64, meta?, trust?, provenance?,
                        sourceRef?, nodeId?}             -> {attachmentId, size}
    attachment.attach  {attachmentId, nodeId?, runId?}   -> {attachmentId, refs}
    attachment.evict   {budget?, activeThreadId?}        -> {evicted, freed, total}
    thread.archive_old {days, activeThreadId?}           -> {archived: [{threadId, summaryId,
                                                             nodes, attachments}]}

``attachment.evict`` is two-step: its ``prepare`` (outside the receipt's transaction)
chooses the victims and runs step 1 (marks); the receipt's transaction runs step 2
(deletes every record marked ``deleting``). Queries::

    attachment.list    {threadId?, limit?}   -> {attachments: [metadata...]} (oldest first)
    attachment.get     {attachmentId}        -> {...metadata, dataBase64}
    attachment.usage   {}                    -> {total, count, budget}
    attachment.resolve {threadId, leafId?, kinds?} -> {attachments: {id: {mime, size,
                                                  dataBase64} | {evicted: true}}}
    storage.estimate   {}                    -> {usage, quota, percent, warn}
    node.details       {nodeId}              -> a tool result's details (tool_details)

``attachment.resolve`` reads only the attachments that image/file blocks of the
thread's visible path name (by default images): what a provider request needs.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from panelot.attachments.blobs import blob_size
from panelot.attachments.eviction import (
    current_budget,
    delete_marked,
    evict,
    finish_interrupted,
    step_one,
)
from panelot.attachments.eviction import plan_eviction as _plan
from panelot.attachments.quota import storage_estimate
from panelot.attachments.records import (
    ATTACHMENT_TABLES,
    attach,
    attachment_meta,
    attachment_total,
    list_attachments,
    put_attachment,
    read_bytes,
)
from panelot.attachments.tool_details import TOOL_DETAILS_QUERIES
from panelot.clock import Clock
from panelot.faults import FAULTS
from panelot.idb import Database, Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.lifecycle.retention import (
    RETENTION_TABLES,
    archive_old_threads,
    archive_thread,
    candidates,
    check_days,
)

if TYPE_CHECKING:
    from panelot.bus.bus import CommandBus
    from panelot.store import PanelotStore

__all__ = [
    "ATTACHMENT_COMMANDS",
    "ATTACHMENT_QUERIES",
    "MAX_PUT_BYTES",
    "put_within_budget",
    "start_up",
]

QueryFn = Callable[["PanelotStore", dict[str, Any]], Awaitable[Any]]

MAX_PUT_BYTES = 64 * 1024 * 1024
"""Largest attachment ``attachment.put`` accepts as base64 (decoded size)."""


def _opt(p: dict[str, Any], name: str, kind: type | tuple[type, ...], prefix: str) -> Any:
    value = p.get(name)
    if value is None:
        return None
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ValidationError(f"{prefix}{name}: has the wrong type", field=f"{prefix}{name}")
    return value


def _req(p: dict[str, Any], name: str, kind: type | tuple[type, ...], prefix: str) -> Any:
    value = _opt(p, name, kind, prefix)
    if value is None:
        raise ValidationError(f"{prefix}{name}: is required", field=f"{prefix}{name}")
    return value


def _decode(data: Any) -> bytes:
    if not isinstance(data, str) or len(data) > MAX_PUT_BYTES * 4 // 3 + 4:
        raise ValidationError(
            f"payload.dataBase64: must be base64 of at most {MAX_PUT_BYTES} bytes",
            field="payload.dataBase64",
        )
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError(
            "payload.dataBase64: is not valid base64", field="payload.dataBase64"
        ) from None


async def _put(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    node_id = _opt(p, "nodeId", str, "payload.")
    record = await put_attachment(
        tx,
        _req(p, "threadId", str, "payload."),
        _req(p, "kind", str, "payload."),
        _req(p, "mime", str, "payload."),
        _decode(p.get("dataBase64")),
        meta=_opt(p, "meta", dict, "payload."),
        trust=_opt(p, "trust", str, "payload."),
        provenance=_opt(p, "provenance", str, "payload."),
        source_ref=_opt(p, "sourceRef", str, "payload."),
        node_ids=None if node_id is None else [node_id],
        clock=clock,
    )
    return {"attachmentId": record["id"], "size": record["size"]}


async def _put_prepare(bus: CommandBus, p: dict[str, Any]) -> None:
    """Make room first: evict down to ``budget - size``, sparing the target thread."""
    size = len(_decode(p.get("dataBase64")))
    thread_id = p.get("threadId") if isinstance(p.get("threadId"), str) else None
    await evict(bus.db, max(current_budget() - size, 0), thread_id)


async def _attach(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    attachment_id = _req(p, "attachmentId", str, "payload.")
    refs = await attach(
        tx, attachment_id, _opt(p, "nodeId", str, "payload."), _opt(p, "runId", str, "payload.")
    )
    return {"attachmentId": attachment_id, "refs": refs}


def _budget(p: dict[str, Any], prefix: str = "payload.") -> int:
    budget = _opt(p, "budget", int, prefix)
    if budget is not None and budget < 0:
        raise ValidationError(f"{prefix}budget: must be at least 0", field=f"{prefix}budget")
    return current_budget() if budget is None else int(budget)


async def _evict_prepare(bus: CommandBus, p: dict[str, Any]) -> None:
    """Choose the victims and run step 1 (marks), before the receipt's transaction."""
    budget, active = _budget(p), _opt(p, "activeThreadId", str, "payload.")
    plan = await bus.db.transaction("r", ["attachments"], lambda tx: _plan(tx, budget, active))
    if plan["ids"]:
        await step_one(bus.db, plan["ids"])
        FAULTS.hit("attachment.evict.between")


async def _evict(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    """Step 2, in the receipt's transaction: delete every record marked ``deleting``."""
    done = await delete_marked(tx)
    return {**done, "total": (await attachment_total(tx))["total"]}


async def _archive_old(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    days = check_days(p.get("days"), "payload.days")
    now = clock()
    active = _opt(p, "activeThreadId", str, "payload.")
    archived = []
    for thread_id in await candidates(tx, days, now, active):
        result = await archive_thread(tx, thread_id, None, clock)
        if result["archived"]:
            archived.append({k: v for k, v in result.items() if k != "archived"})
    return {"archived": archived}


ATTACHMENT_COMMANDS: dict[str, tuple[Any, ...]] = {
    "attachment.put": (ATTACHMENT_TABLES, _put, _put_prepare),
    "attachment.attach": (ATTACHMENT_TABLES, _attach),
    "attachment.evict": (("attachments",), _evict, _evict_prepare),
    "thread.archive_old": (RETENTION_TABLES, _archive_old),
}
"""Command type -> ``(tables, run[, prepare])``; the bus wraps each in a ``Handler``."""


def _arg(a: dict[str, Any], name: str, kind: type, required: bool = True) -> Any:
    value = _opt(a, name, kind, "")
    if value is None and required:
        raise ValidationError(f"{name}: is required", field=name)
    return value


async def _q_list(s: PanelotStore, a: dict[str, Any]) -> Any:
    thread_id, limit = _arg(a, "threadId", str, False), _arg(a, "limit", int, False)
    rows = await s.db.transaction(
        "r", ["attachments"], lambda tx: list_attachments(tx, thread_id, limit)
    )
    return {"attachments": rows}


async def _q_get(s: PanelotStore, a: dict[str, Any]) -> Any:
    meta, data = await read_bytes(s.db, _arg(a, "attachmentId", str))
    return {**meta, "dataBase64": base64.b64encode(data).decode("ascii")}


async def _q_usage(s: PanelotStore, a: dict[str, Any]) -> Any:
    usage = await s.db.transaction("r", ["attachments"], attachment_total)
    return {**usage, "budget": current_budget()}


async def _q_estimate(s: PanelotStore, a: dict[str, Any]) -> Any:
    return await storage_estimate(s.db)


async def _q_resolve(s: PanelotStore, a: dict[str, Any]) -> Any:
    kinds = a.get("kinds", ["image"])
    if not isinstance(kinds, list) or not all(k in ("image", "file") for k in kinds):
        raise ValidationError("kinds: must be a list of 'image' and 'file'", field="kinds")
    context = await s.context(_arg(a, "threadId", str), _arg(a, "leafId", str, False))
    wanted: list[str] = []
    for message in context["messages"]:
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") in kinds:
                ident = block.get("attachmentId")
                if isinstance(ident, str) and ident not in wanted:
                    wanted.append(ident)
    out: dict[str, Any] = {}
    for ident in wanted:
        try:
            meta, data = await read_bytes(s.db, ident)
        except NotFoundError:
            out[ident] = {"evicted": True}
            continue
        encoded = base64.b64encode(data).decode("ascii")
        out[ident] = {"mime": meta.get("mime"), "size": meta.get("size"), "dataBase64": encoded}
    return {"attachments": out}


ATTACHMENT_QUERIES: dict[str, QueryFn] = {
    "attachment.list": _q_list,
    "attachment.get": _q_get,
    "attachment.usage": _q_usage,
    "attachment.resolve": _q_resolve,
    "storage.estimate": _q_estimate,
    **TOOL_DETAILS_QUERIES,
}
"""Query name -> function, merged into ``PanelotStore`` queries."""


async def put_within_budget(
    db: Database, thread_id: str, kind: str, mime: str, data: Any, **options: Any
) -> dict[str, Any]:
    """The Python API's put (bytes or a Blob handle), within the attachment budget.

    First evicts down to ``budget - size`` (sparing ``thread_id``, the active thread),
    then writes the record in a transaction of its own (no receipt: use the
    ``attachment.put`` command for that). ``options`` are :func:`put_attachment`'s.
    Returns the record's metadata.
    """
    size = len(data) if isinstance(data, bytes | bytearray | memoryview) else blob_size(data)
    await evict(db, max(current_budget() - size, 0), thread_id)
    record = await db.transaction(
        "rw",
        ATTACHMENT_TABLES,
        lambda tx: put_attachment(tx, thread_id, kind, mime, data, **options),
    )
    return attachment_meta(record)


async def start_up(
    db: Database,
    clock: Clock,
    retention_days: int | None = None,
    active_thread_id: str | None = None,
) -> dict[str, Any]:
    """Start-up housekeeping: finish interrupted evictions, apply retention, enforce the budget.

    Returns ``{finished, archived, evicted}`` (counts).
    """
    finished = await finish_interrupted(db)
    archived = await archive_old_threads(db, retention_days, active_thread_id, clock)
    evicted = await evict(db, None, active_thread_id)
    return {"finished": finished, "archived": len(archived), "evicted": evicted["evicted"]}
