"""``thread.request``: the slimmed model request of a thread's path.

Query ``{threadId, leafId?, seenImages?, imageBudget?, staleStubs?, contextBudget?, model?}`` →
the context with its images' bytes, slimmed (:mod:`panelot.request.build`; thumbnails by
the store's host), its history cut to the newest turns within ``contextBudget``
characters (:mod:`panelot.request.history`). ``imageBudget`` null turns the unseen-image budget
off; ``contextBudget`` null sends the whole path. ``model`` (the model the request goes
to) picks the summary a stale attachment is sent as (:mod:`panelot.request.summaries`).

``model`` (optional): the model the request is for. A cut the overflow rescue recorded
on the thread for that model (``requestCut``, :mod:`panelot.request.rescued`) applies:
those items cut, the history budget the smaller of the two; the result gains ``cut``.
``rescue: {refusedChars}``: the provider refused the request as too long (the JSON
length of its messages): the request is rebuilt cut down (:mod:`panelot.request.rescue`)
and the result gains ``rescue: {items, contextBudget, droppedNodes, record}``.

Query ``file.readable`` ``{name, mime?}`` → ``{readable, maxChars, maxUploadBytes}``:
whether a request carries an attached file's text (when its bytes are UTF-8), or only its
name. The panel asks it when a file is attached, so the rule stays
:func:`panelot.request.file_text.is_text_like`; ``maxUploadBytes`` is the largest file
``message.send`` takes (:data:`panelot.attachments.records.MAX_SEND_BYTES`), which the
composer checks a chosen file against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from panelot.attachments.records import MAX_SEND_BYTES
from panelot.bus import Env, Query
from panelot.codec import Natural
from panelot.request.build import build_request
from panelot.request.context import request_context_of
from panelot.request.file_text import FILE_TEXT_CHARS, is_text_like
from panelot.request.history import DEFAULT_CONTEXT_BUDGET, check_budget
from panelot.request.model_name import check_model
from panelot.request.rescued import cut_request, recorded_cut
from panelot.request.slimming import DEFAULT_IMAGE_BUDGET, SlimOptions
from panelot.request.summaries import done_summaries

__all__ = ["QUERIES"]


@dataclass(frozen=True, slots=True)
class RescueArg:
    """``rescue``: the refused request's size (the JSON length of its messages)."""

    refused_chars: Natural


@dataclass(frozen=True, slots=True)
class RequestArgs:
    """``thread.request``."""

    thread_id: str
    leaf_id: str | None = None
    seen_images: bool = True
    image_budget: int | None = DEFAULT_IMAGE_BUDGET
    stale_stubs: bool = True
    context_budget: int | None = DEFAULT_CONTEXT_BUDGET
    model: str | None = None
    rescue: RescueArg | None = None

    def __post_init__(self) -> None:
        check_budget(self.context_budget)
        if self.model is not None:
            check_model(self.model)


async def _request(env: Env, a: RequestArgs) -> dict[str, Any]:
    options = SlimOptions(a.seen_images, a.image_budget, a.stale_stubs)
    host = env.host
    recorded = await recorded_cut(env.db, a.thread_id, a.model)
    if a.rescue is not None or recorded is not None:
        refused = a.rescue.refused_chars if a.rescue is not None else None
        return await cut_request(
            env.db,
            a.thread_id,
            a.leaf_id,
            a.context_budget,
            options,
            host.thumbnailer,
            host.storage.budget,
            env.clock,
            refused=refused,
            recorded=recorded,
            model=a.model,
            summaries=done_summaries,
        )
    context = await request_context_of(env.db, a.thread_id, a.leaf_id, a.context_budget, env.clock)
    return await build_request(
        env.db, context, options, host.thumbnailer, host.storage.budget, model=a.model
    )


@dataclass(frozen=True, slots=True)
class ReadableArgs:
    """``file.readable``: a file's name and MIME type (empty: the browser gave none)."""

    name: str
    mime: str = ""


async def _readable(env: Env, a: ReadableArgs) -> dict[str, Any]:
    return {
        "readable": is_text_like(a.mime, a.name),
        "maxChars": FILE_TEXT_CHARS,
        "maxUploadBytes": MAX_SEND_BYTES,
    }


QUERIES: dict[str, Query[Any]] = {
    "thread.request": Query(args=RequestArgs, run=_request),
    "file.readable": Query(args=ReadableArgs, run=_readable),
}
"""The request queries."""
