"""A request built with the overflow rescue's cut, or with a cut recorded on the thread.

:func:`cut_request` builds the request (:func:`panelot.request.build.build_request`) and
applies the pure plan of :mod:`panelot.request.rescue`: it reads the metadata of the
attachments the request names, the text of attachment-backed context entries to cut
(after the metadata, in reads of their own) and the done summaries of the items to cut
(``summaries``, by attachment id). With ``refused`` (a rescue), every large item is cut
and, if that is not enough, the request is built again with the smaller history budget;
the result gains ``rescue: {items, contextBudget, droppedNodes, record}``. With only a
recorded cut (``requestCut`` for the request's model), the items it names are cut and
its budget applies; the result gains ``cut: {items, contextBudget}``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from panelot.attachments.records import read_bytes
from panelot.clock import Clock
from panelot.host.thumbnails import Thumbnailer
from panelot.idb import Database, Transaction
from panelot.idb.errors import NotFoundError
from panelot.request.build import build_request, read_meta
from panelot.request.context import request_context_of
from panelot.request.file_text import decode_text
from panelot.request.rescue import (
    CutPlan,
    Sources,
    apply_cuts,
    find_items,
    messages_chars,
    rescue_budget,
)
from panelot.request.slimming import SlimOptions
from panelot.tree.records import RequestCut

__all__ = ["SummaryReader", "cut_of", "cut_request", "min_budget", "no_summaries"]

Meta = dict[str, Any]
SummaryReader = Callable[[Database, str, list[str], str | None], Awaitable[dict[str, str]]]
"""``(db, threadId, attachmentIds, model)`` → the done summaries' texts by attachment id."""


async def no_summaries(
    db: Database, thread_id: str, ids: list[str], model: str | None
) -> dict[str, str]:
    """No summaries: what the rescue uses where summaries are not built."""
    return {}


def min_budget(a: int | None, b: int | None) -> int | None:
    """The smaller of two history budgets (``None``: no limit)."""
    if a is None:
        return b
    return a if b is None else min(a, b)


def _named(messages: list[dict[str, Any]]) -> list[str]:
    found: dict[str, None] = {}
    for message in messages:
        for key in ("content", "attachedContext"):
            items = message.get(key)
            for item in items if isinstance(items, list) else []:
                ident = item.get("attachmentId") if isinstance(item, dict) else None
                if isinstance(ident, str):
                    found[ident] = None
    return list(found)


async def _texts(db: Database, ids: list[str]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for ident in ids:
        try:
            text = decode_text((await read_bytes(db, ident))[1])
        except NotFoundError:
            continue
        if text is not None:
            texts[ident] = text
    return texts


async def _build_and_cut(
    db: Database,
    build: Callable[[int | None, Sources], Awaitable[dict[str, Any]]],
    budget: int | None,
    keys: frozenset[str] | None,
    summaries: Callable[[list[str]], Awaitable[dict[str, str]]],
) -> tuple[dict[str, Any], CutPlan]:
    sources = Sources()
    built = await build(budget, sources)
    messages: list[dict[str, Any]] = built["messages"]
    meta = await read_meta(db, _named(messages))
    items = find_items(messages, sources, meta, keys)
    ids = list(dict.fromkeys(i.attachment_id for i in items if i.attachment_id))
    done = await summaries(ids) if ids else {}
    unread = [i.attachment_id for i in items if i.attachment_id and i.text is None]
    texts = await _texts(db, [i for i in dict.fromkeys(unread) if i and i not in done])
    return built, apply_cuts(messages, items, texts, done)


async def cut_request(
    db: Database,
    thread_id: str,
    leaf_id: str | None,
    budget: int | None,
    options: SlimOptions,
    thumbnailer: Thumbnailer,
    storage_budget: int,
    clock: Clock,
    *,
    refused: int | None,
    recorded: RequestCut | None,
    model: str | None,
    summaries: SummaryReader = no_summaries,
) -> dict[str, Any]:
    """The request of ``thread_id``'s path, cut (see the module).

    ``refused``: the refused request's ``refusedChars`` (a rescue); ``recorded``: the
    thread's recorded cut for ``model``.
    """
    if recorded is not None:
        budget = min_budget(budget, recorded.context_budget)

    async def build(limit: int | None, sources: Sources) -> dict[str, Any]:
        context = await request_context_of(db, thread_id, leaf_id, limit, clock, sources)
        return await build_request(db, context, options, thumbnailer, storage_budget, model=model)

    async def read_summaries(ids: list[str]) -> dict[str, str]:
        return await summaries(db, thread_id, ids, model)

    keys = None if refused is not None or recorded is None else frozenset(recorded.item_keys)
    built, plan = await _build_and_cut(db, build, budget, keys, read_summaries)
    smaller: int | None = None
    if refused is not None and messages_chars(plan.messages) > refused // 2:
        smaller = rescue_budget(refused, budget)
        if smaller != budget:
            built, plan = await _build_and_cut(db, build, smaller, keys, read_summaries)
        else:
            smaller = None
    out = {**built, "messages": plan.messages}
    if refused is not None:
        kept = [i["key"] for i in plan.items]
        if recorded is not None:
            kept = list(dict.fromkeys([*recorded.item_keys, *kept]))
        out["rescue"] = {
            "items": plan.items,
            "contextBudget": smaller,
            "droppedNodes": built.get("history", {}).get("droppedNodes", 0),
            "record": {"itemKeys": kept, "contextBudget": smaller},
        }
    elif recorded is not None:
        out["cut"] = {"items": plan.items, "contextBudget": recorded.context_budget}
    return out


def cut_of(raw_thread: Any, model: str | None) -> RequestCut | None:
    """The thread record's ``requestCut`` when it is for ``model``, else ``None``.

    A malformed field is ignored (the request is built as if none were recorded).
    """
    if model is None or not isinstance(raw_thread, dict):
        return None
    cut = raw_thread.get("requestCut")
    if not isinstance(cut, dict) or cut.get("model") != model:
        return None
    keys = cut.get("itemKeys")
    budget = cut.get("contextBudget")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        return None
    if budget is not None and (type(budget) is not int or budget < 0):
        budget = None
    at = cut.get("at")
    return RequestCut(model, list(keys), budget, at if type(at) is int else 0)


async def recorded_cut(db: Database, thread_id: str, model: str | None) -> RequestCut | None:
    """The cut recorded on thread ``thread_id`` for ``model`` (one read), if any."""
    if not model:
        return None

    async def body(tx: Transaction) -> Any:
        return await tx.table("threads").get(thread_id)

    return cut_of(await db.transaction("r", ["threads"], body), model)
