"""Commands and queries of attachment summaries (:mod:`panelot.request.summaries`).

Commands (each with its receipt, in the same transaction as its effect)::

    summary.claim {attachmentId, model, again?}
        -> {claimed: true, summaryId, messages} | {claimed: false, reason}
    summary.store {attachmentId, model, text}   -> {summaryId, size}
    summary.fail  {attachmentId, model, error}  -> {summaryId}

``summary.claim`` decides and writes the pending record in one transaction; ``reason``
is ``done``, ``pending``, ``failed`` (tried again only with ``again: true``), ``image``
or ``not_text``. After that transaction (a Blob's bytes are never read inside one) it
reads the original's text and answers ``messages``: the OpenAI chat messages to send to
``model`` for the summary (the receipt keeps ``{claimed, summaryId}``; a replay reads
the text again). ``summary.store`` first evicts down to the budget minus the summary's
size, sparing its thread, as thumbnails do. Queries::

    summary.candidates {threadId, model, threshold?}
        -> {attachments: [{attachmentId, name, kind, size}]}   (oldest first; with no
           summary record for the model but a pending one claimed over 10 minutes ago)
    summary.list       {threadId}
        -> {summaries: [{attachmentId, summaryId, model, state, size, error?}]}

A summary's text is read like any attachment's: ``attachment.get {attachmentId:
summaryId}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from panelot.attachments.eviction import evict
from panelot.attachments.records import get_blob
from panelot.bus import Call, Env, Handler, Query
from panelot.idb import Transaction
from panelot.idb.errors import ValidationError
from panelot.request.model_name import check_model
from panelot.request.summaries import (
    candidates,
    check_text,
    claim,
    fail_summary,
    list_summaries,
    read_prompt,
    store_summary,
)
from panelot.settings.groups import DEFAULT_SUMMARY_THRESHOLD

__all__ = ["COMMANDS", "QUERIES"]

_TABLES = ("threads", "attachments")


@dataclass(frozen=True, slots=True)
class Claim:
    """``summary.claim``."""

    attachment_id: str
    model: str
    again: bool = False


async def _claim(tx: Transaction, call: Call[Claim]) -> dict[str, Any]:
    p = call.payload
    return await claim(tx, p.attachment_id, check_model(p.model), p.again, call.clock())


async def _claim_finish(env: Env, p: Claim, response: dict[str, Any]) -> dict[str, Any]:
    """A claim's prompt: the original's text read after the claim's transaction."""
    if not response.get("claimed"):
        return response
    return {**response, "messages": await read_prompt(env.db, p.attachment_id)}


@dataclass(frozen=True, slots=True)
class Store:
    """``summary.store``."""

    attachment_id: str
    model: str
    text: str


async def _store_prepare(env: Env, p: Store) -> None:
    """Make room for the summary (sparing its thread), outside the receipt's transaction."""
    check_model(p.model)
    check_text(p.text)
    original, _ = await get_blob(env.db, p.attachment_id)
    size = len(p.text.encode("utf-8"))
    await evict(env.db, max(env.host.storage.budget - size, 0), str(original["threadId"]))


async def _store(tx: Transaction, call: Call[Store]) -> dict[str, Any]:
    p = call.payload
    return await store_summary(tx, p.attachment_id, p.model, p.text)


@dataclass(frozen=True, slots=True)
class Fail:
    """``summary.fail``."""

    attachment_id: str
    model: str
    error: str


async def _fail(tx: Transaction, call: Call[Fail]) -> dict[str, Any]:
    p = call.payload
    return await fail_summary(tx, p.attachment_id, check_model(p.model), p.error)


@dataclass(frozen=True, slots=True)
class CandidatesArgs:
    """``summary.candidates``: ``threshold`` in bytes (default 8,000)."""

    thread_id: str
    model: str
    threshold: int = DEFAULT_SUMMARY_THRESHOLD

    def __post_init__(self) -> None:
        check_model(self.model)
        if self.threshold < 0:
            raise ValidationError("threshold: must be an integer >= 0", field="threshold")


async def _candidates(env: Env, a: CandidatesArgs) -> dict[str, Any]:
    async def body(tx: Transaction) -> list[dict[str, Any]]:
        return await candidates(tx, a.thread_id, a.model, a.threshold, env.clock())

    return {"attachments": await env.db.transaction("r", ["attachments"], body)}


@dataclass(frozen=True, slots=True)
class ListArgs:
    """``summary.list``."""

    thread_id: str


async def _list(env: Env, a: ListArgs) -> dict[str, Any]:
    async def body(tx: Transaction) -> list[dict[str, Any]]:
        return await list_summaries(tx, a.thread_id)

    return {"summaries": await env.db.transaction("r", ["attachments"], body)}


COMMANDS: dict[str, Handler[Any]] = {
    "summary.claim": Handler(payload=Claim, tables=_TABLES, run=_claim, finish=_claim_finish),
    "summary.store": Handler(payload=Store, tables=_TABLES, run=_store, prepare=_store_prepare),
    "summary.fail": Handler(payload=Fail, tables=_TABLES, run=_fail),
}
"""The summary commands."""

QUERIES: dict[str, Query[Any]] = {
    "summary.candidates": Query(args=CandidatesArgs, run=_candidates),
    "summary.list": Query(args=ListArgs, run=_list),
}
"""The summary queries."""
