"""``thread.request``: the slimmed model request of a thread's path.

Query ``{threadId, leafId?, seenImages?, imageBudget?, staleStubs?, contextBudget?, model?}`` →
the context with its images' bytes, slimmed (:mod:`panelot.request.build`; thumbnails by
the store's host), its history cut to the newest turns within ``contextBudget``
characters (:mod:`panelot.request.history`). ``imageBudget`` null turns the unseen-image budget
off; ``contextBudget`` null sends the whole path. ``model`` (the model the request goes
to) picks the summary a stale attachment is sent as (:mod:`panelot.request.summaries`).

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
from panelot.request.build import build_request
from panelot.request.context import request_context_of
from panelot.request.file_text import FILE_TEXT_CHARS, is_text_like
from panelot.request.history import DEFAULT_CONTEXT_BUDGET, check_budget
from panelot.request.slimming import DEFAULT_IMAGE_BUDGET, SlimOptions
from panelot.request.summaries import check_model

__all__ = ["QUERIES"]


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

    def __post_init__(self) -> None:
        check_budget(self.context_budget)
        if self.model is not None:
            check_model(self.model)


async def _request(env: Env, a: RequestArgs) -> dict[str, Any]:
    options = SlimOptions(a.seen_images, a.image_budget, a.stale_stubs)
    context = await request_context_of(env.db, a.thread_id, a.leaf_id, a.context_budget, env.clock)
    host = env.host
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
