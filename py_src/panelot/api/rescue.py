"""The overflow rescue's command and queries, and what a request leaves out.

Command (payload → response)::

    thread.rescued {threadId, model, record: {itemKeys, contextBudget}}
        → {requestCut: {model, itemKeys, contextBudget, at}}

Queries (args → result)::

    provider.overflow {status?, message?, code?, type?} → {overflow}
    thread.sent {threadId, leafId?, contextBudget?, model?}
        → {firstNodeId, droppedNodes, contextBudget, items: [{key, nodeId, attachmentId?, how}]}

``thread.rescued`` is called by the panel only after a rescued retry's reply is stored
(``record`` is ``thread.request``'s ``rescue.record``, unchanged). It writes the thread
record's extension field ``requestCut`` in one transaction, through admission (a thread
being deleted refuses it), merging the item keys with a cut already recorded for the
same model (and keeping the smaller budget); a cut for another model is replaced.
``provider.overflow`` applies :func:`panelot.request.overflow.is_overflow`;
``thread.sent`` is :func:`panelot.request.sent.sent_of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from panelot.bus import Call, Env, Handler, Query, Staged
from panelot.codec import Id, Natural, Raw
from panelot.idb import Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.request.history import DEFAULT_CONTEXT_BUDGET, check_budget
from panelot.request.model_name import check_model
from panelot.request.overflow import is_overflow
from panelot.request.rescued import cut_of, min_budget, recorded_cut
from panelot.request.sent import sent_of
from panelot.tree.admission import read_thread

__all__ = ["COMMANDS", "QUERIES", "MAX_CUT_KEYS"]

MAX_CUT_KEYS = 2_000
"""Most item keys one recorded cut holds (the newest are kept)."""


@dataclass(frozen=True, slots=True)
class CutRecord:
    """``record``: what ``thread.request``'s ``rescue.record`` said to record."""

    item_keys: list[Id]
    context_budget: Natural | None = None


@dataclass(frozen=True, slots=True)
class ThreadRescued:
    """``thread.rescued``: record the rescue's cut for ``model`` on the thread."""

    thread_id: Id
    model: str
    record: CutRecord

    def __post_init__(self) -> None:
        check_model(self.model, "payload.model")
        if len(self.record.item_keys) > MAX_CUT_KEYS:
            raise ValidationError(
                f"payload.record.itemKeys: at most {MAX_CUT_KEYS} keys",
                field="payload.record.itemKeys",
            )


async def _rescued(tx: Transaction, call: Call[ThreadRescued]) -> Staged:
    p = call.payload
    raw = await read_thread(tx, call, p.thread_id)
    if not isinstance(raw, dict):
        raise NotFoundError(f"thread {p.thread_id!r} does not exist", field="threadId")
    keys, budget = list(p.record.item_keys), p.record.context_budget
    before = cut_of(raw, p.model)
    if before is not None:
        keys = list(dict.fromkeys([*before.item_keys, *keys]))[-MAX_CUT_KEYS:]
        budget = min_budget(before.context_budget, budget)
    cut = {"model": p.model, "itemKeys": keys, "contextBudget": budget, "at": call.clock()}
    if budget is None:
        del cut["contextBudget"]
    record = {**raw, "requestCut": cut}
    return Staged({"requestCut": cut}, (tx.table("threads").put(record),))


@dataclass(frozen=True, slots=True)
class OverflowArgs:
    """``provider.overflow``: a provider error's HTTP status and body fields."""

    status: int | None = None
    message: str = ""
    code: Raw = None
    type: Raw = None


def _word(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    return str(value) if isinstance(value, str | int) else None


async def _overflow(env: Env, a: OverflowArgs) -> dict[str, Any]:
    return {"overflow": is_overflow(a.status, a.message, _word(a.code), _word(a.type))}


@dataclass(frozen=True, slots=True)
class SentArgs:
    """``thread.sent``: the path (``leafId``), the history budget and the model."""

    thread_id: Id
    leaf_id: Id | None = None
    context_budget: int | None = DEFAULT_CONTEXT_BUDGET
    model: str | None = None

    def __post_init__(self) -> None:
        check_budget(self.context_budget)
        if self.model is not None:
            check_model(self.model)


async def _sent(env: Env, a: SentArgs) -> dict[str, Any]:
    recorded = await recorded_cut(env.db, a.thread_id, a.model)
    return await sent_of(
        env.db, a.thread_id, a.leaf_id, a.context_budget, env.clock, recorded, a.model
    )


COMMANDS: dict[str, Handler[Any]] = {
    "thread.rescued": Handler(payload=ThreadRescued, tables=("threads",), run=_rescued),
}
"""The rescue's command."""

QUERIES: dict[str, Query[Any]] = {
    "provider.overflow": Query(args=OverflowArgs, run=_overflow),
    "thread.sent": Query(args=SentArgs, run=_sent),
}
"""The rescue's queries."""
