"""Commands and queries of attachments, the budget, quota, retention and tool details.

Commands (each with its receipt, in the same transaction as its effect)::

    attachment.put     {threadId, kind, mime, dataBase64, meta?, trust?, provenance?,
                        sourceRef?, nodeId?}             -> {attachmentId, size}
    attachment.attach  {attachmentId, nodeId?, runId?}   -> {attachmentId, refs}
    attachment.evict   {budget?, activeThreadId?, storagePercent?, sparedThreadIds?}
                                                         -> {evicted, freed, total}
    thread.archive_old {days, activeThreadId?, sparedThreadIds?}
                                          -> {archived: [{threadId, summaryId, nodes,
                                                          attachments}]}

``attachment.put`` first evicts down to the budget minus its size, sparing its thread.
``attachment.evict`` is two-step: its ``prepare`` (outside the receipt's transaction)
chooses the victims and runs step 1 (marks); the receipt's transaction runs step 2
(deletes every record marked ``deleting``). Queries::

    attachment.list    {threadId?, limit?}   -> {attachments: [metadata...]} (oldest first)
    attachment.get     {attachmentId}        -> {...metadata, dataBase64}
    attachment.usage   {}                    -> {total, count, budget}
    attachment.resolve {threadId, leafId?, kinds?} -> {attachments: {id: {mime, size,
                                                  dataBase64} | {evicted: true}}}
    storage.estimate   {}                    -> {usage, quota, percent, warn, reported,
                                                 lagging}  (usage: reconciled, see quota)
    node.details       {nodeId}              -> a tool result's details
    retention.preview  {days, activeThreadId?, sparedThreadIds?}
                                             -> {threadIds, threads, messages}

``thread.archive_old`` replaces the messages of the threads older than ``days`` with a
Markdown summary (see :mod:`panelot.lifecycle.retention`), sparing ``activeThreadId``
and every id of ``sparedThreadIds``; ``retention.preview`` says what it would remove
now, for a confirmation.

``attachment.resolve`` reads only the attachments that image/file blocks of the
thread's visible path name (by default images): what a provider request needs.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from panelot.attachments.eviction import delete_marked, evict, step_one
from panelot.attachments.eviction import plan_eviction as _plan
from panelot.attachments.quota import (
    WARN_PERCENT,
    note_freed,
    reconcile,
    reported_usage,
    storage_estimate,
)
from panelot.attachments.records import (
    ATTACHMENT_TABLES,
    MAX_PUT_BYTES,
    AttachmentInput,
    attach,
    attachment_total,
    list_attachments,
    put_attachment,
    read_bytes,
)
from panelot.attachments.tool_details import read_details
from panelot.bus import Call, Env, Handler, Query
from panelot.codec import Raw
from panelot.faults import FAULTS
from panelot.idb import Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.lifecycle.retention import (
    RETENTION_TABLES,
    Preview,
    archive_thread,
    candidates,
    check_days,
    preview,
    spared_ids,
)
from panelot.tree.views import context_of

__all__ = ["COMMANDS", "QUERIES"]


def _decode(data: str) -> bytes:
    if len(data) > MAX_PUT_BYTES * 4 // 3 + 4:
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


# -- commands -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AttachmentPut:
    """``attachment.put``."""

    thread_id: str
    kind: str
    mime: str
    data_base64: str
    meta: dict[str, Raw] | None = None
    trust: str | None = None
    provenance: str | None = None
    source_ref: str | None = None
    node_id: str | None = None


class Put(TypedDict):
    """The stored attachment."""

    attachmentId: str
    size: int


async def _put_prepare(env: Env, p: AttachmentPut) -> bytes:
    """Decode, then make room: evict down to ``budget - size``, sparing the target thread."""
    data = _decode(p.data_base64)
    await evict(env.db, max(env.host.storage.budget - len(data), 0), p.thread_id)
    return data


async def _put(tx: Transaction, call: Call[AttachmentPut]) -> Put:
    p = call.payload
    attachment = AttachmentInput(
        thread_id=p.thread_id,
        kind=p.kind,
        mime=p.mime,
        data=call.prepared,
        meta=p.meta,
        trust=p.trust,
        provenance=p.provenance,
        source_ref=p.source_ref,
        node_ids=None if p.node_id is None else [p.node_id],
    )
    record = await put_attachment(tx, attachment, call.clock)
    return {"attachmentId": record["id"], "size": record["size"]}


@dataclass(frozen=True, slots=True)
class AttachmentAttach:
    """``attachment.attach``: a node and/or a run references the attachment."""

    attachment_id: str
    node_id: str | None = None
    run_id: str | None = None


class Attached(TypedDict):
    """The attachment's references after the command."""

    attachmentId: str
    refs: dict[str, Any]


async def _attach(tx: Transaction, call: Call[AttachmentAttach]) -> Attached:
    p = call.payload
    refs = await attach(tx, p.attachment_id, p.node_id, p.run_id)
    return {"attachmentId": p.attachment_id, "refs": refs}


@dataclass(frozen=True, slots=True)
class AttachmentEvict:
    """``attachment.evict``: down to ``budget`` (the store's, its host's, when absent).

    The attachments of ``active_thread_id`` and of every id of ``spared_thread_ids``
    (what the open pages show and what a panel will reopen) are left alone.

    With ``storage_percent``, when the storage in use is over :data:`WARN_PERCENT` of
    the quota (the reconciled estimate: what this store's earlier clean-ups freed is
    not counted again), also free enough to bring it down to that share.
    """

    budget: int | None = None
    active_thread_id: str | None = None
    storage_percent: float | None = None
    spared_thread_ids: list[str] | None = None


async def _excess(env: Env, percent: float | None) -> tuple[int | None, int]:
    """``(reported usage, bytes to free)``: the storage over ``percent`` of the quota.

    The reported usage is ``None`` without a quota (no browser: nothing lags there).
    """
    if percent is not None and not 0 <= percent <= 100:
        raise ValidationError(
            "payload.storagePercent: must be from 0 to 100", field="payload.storagePercent"
        )
    reported, quota = await reported_usage(env.host.storage_estimate, env.db)
    if not quota:
        return None, 0
    usage, _ = reconcile(env.host.storage.ledger, reported)
    if percent is None or usage * 100.0 / quota <= WARN_PERCENT:
        return reported, 0
    return reported, max(0, int(usage - percent / 100.0 * quota))


async def _evict_prepare(env: Env, p: AttachmentEvict) -> None:
    """Choose the victims and run step 1 (marks), before the receipt's transaction.

    Step 1 already releases the victims' bytes (their records lose their Blob), so what
    it freed is recorded then, in the host's ledger
    (:func:`~panelot.attachments.quota.note_freed`).
    """
    if p.budget is not None and p.budget < 0:
        raise ValidationError("payload.budget: must be at least 0", field="payload.budget")
    budget = env.host.storage.budget if p.budget is None else p.budget
    active = p.active_thread_id
    spared = frozenset(p.spared_thread_ids or ())
    reported, free = await _excess(env, p.storage_percent)
    plan = await env.db.transaction(
        "r", ["attachments"], lambda tx: _plan(tx, budget, active, spared, free=free)
    )
    if plan["ids"]:
        await step_one(env.db, plan["ids"])
        if reported is not None:
            note_freed(env.host.storage.ledger, reported, plan["freed"])
        FAULTS.hit("attachment.evict.between")


async def _evict(tx: Transaction, call: Call[AttachmentEvict]) -> dict[str, Any]:
    """Step 2, in the receipt's transaction: delete every record marked ``deleting``."""
    done = await delete_marked(tx)
    return {**done, "total": (await attachment_total(tx))["total"]}


@dataclass(frozen=True, slots=True)
class ArchiveOld:
    """``thread.archive_old``: threads older than ``days``, sparing the named ones."""

    days: Raw
    active_thread_id: str | None = None
    spared_thread_ids: list[str] | None = None


async def _archive_old(tx: Transaction, call: Call[ArchiveOld]) -> dict[str, Any]:
    p = call.payload
    days = check_days(p.days, "payload.days")
    spared = spared_ids(p.active_thread_id, p.spared_thread_ids)
    archived = []
    for thread_id in await candidates(tx, days, call.clock(), spared):
        result = await archive_thread(tx, thread_id, None, call.clock)
        if result["archived"]:
            archived.append({k: v for k, v in result.items() if k != "archived"})
    return {"archived": archived}


COMMANDS: dict[str, Handler[Any]] = {
    "attachment.put": Handler(
        payload=AttachmentPut, tables=ATTACHMENT_TABLES, run=_put, prepare=_put_prepare
    ),
    "attachment.attach": Handler(payload=AttachmentAttach, tables=ATTACHMENT_TABLES, run=_attach),
    "attachment.evict": Handler(
        payload=AttachmentEvict, tables=("attachments",), run=_evict, prepare=_evict_prepare
    ),
    "thread.archive_old": Handler(payload=ArchiveOld, tables=RETENTION_TABLES, run=_archive_old),
}
"""The attachment commands."""


# -- queries --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListArgs:
    """``attachment.list``: of one thread, or all; oldest first."""

    thread_id: str | None = None
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class AttachmentArgs:
    """``attachment.get``."""

    attachment_id: str


@dataclass(frozen=True, slots=True)
class NoArgs:
    """A query without arguments."""


@dataclass(frozen=True, slots=True)
class ResolveArgs:
    """``attachment.resolve``: the attachments the visible path's blocks name."""

    thread_id: str
    leaf_id: str | None = None
    kinds: list[Literal["image", "file"]] = field(default_factory=lambda: ["image"])


@dataclass(frozen=True, slots=True)
class NodeArgs:
    """``node.details``."""

    node_id: str


async def _q_list(env: Env, a: ListArgs) -> dict[str, Any]:
    rows = await env.db.transaction(
        "r", ["attachments"], lambda tx: list_attachments(tx, a.thread_id, a.limit)
    )
    return {"attachments": rows}


async def _q_get(env: Env, a: AttachmentArgs) -> dict[str, Any]:
    meta, data = await read_bytes(env.db, a.attachment_id)
    return {**meta, "dataBase64": base64.b64encode(data).decode("ascii")}


async def _q_usage(env: Env, a: NoArgs) -> dict[str, Any]:
    usage = await env.db.transaction("r", ["attachments"], attachment_total)
    return {**usage, "budget": env.host.storage.budget}


async def _q_estimate(env: Env, a: NoArgs) -> dict[str, Any]:
    return await storage_estimate(env.host, env.db)


async def _q_resolve(env: Env, a: ResolveArgs) -> dict[str, Any]:
    context = await context_of(env.db, a.thread_id, a.leaf_id, env.clock)
    wanted: list[str] = []
    for message in context["messages"]:
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") in a.kinds:
                ident = block.get("attachmentId")
                if isinstance(ident, str) and ident not in wanted:
                    wanted.append(ident)
    out: dict[str, Any] = {}
    for ident in wanted:
        try:
            meta, data = await read_bytes(env.db, ident)
        except NotFoundError:
            out[ident] = {"evicted": True}
            continue
        encoded = base64.b64encode(data).decode("ascii")
        out[ident] = {"mime": meta.get("mime"), "size": meta.get("size"), "dataBase64": encoded}
    return {"attachments": out}


async def _q_details(env: Env, a: NodeArgs) -> dict[str, Any]:
    return await read_details(env.db, a.node_id)


@dataclass(frozen=True, slots=True)
class PreviewArgs:
    """``retention.preview``: what ``thread.archive_old`` with these arguments would remove."""

    days: Raw
    active_thread_id: str | None = None
    spared_thread_ids: list[str] | None = None


async def _q_preview(env: Env, a: PreviewArgs) -> Preview:
    days = check_days(a.days, "days")
    spared = spared_ids(a.active_thread_id, a.spared_thread_ids)
    now = env.clock()
    return await env.db.transaction(
        "r", RETENTION_TABLES, lambda tx: preview(tx, days, now, spared)
    )


QUERIES: dict[str, Query[Any]] = {
    "attachment.list": Query(args=ListArgs, run=_q_list),
    "attachment.get": Query(args=AttachmentArgs, run=_q_get),
    "attachment.usage": Query(args=NoArgs, run=_q_usage),
    "attachment.resolve": Query(args=ResolveArgs, run=_q_resolve),
    "storage.estimate": Query(args=NoArgs, run=_q_estimate),
    "node.details": Query(args=NodeArgs, run=_q_details),
    "retention.preview": Query(args=PreviewArgs, run=_q_preview),
}
"""The attachment queries."""
