"""Bus commands and read queries for runs, approvals and interactions.

Commands (each with its receipt, in the same transaction as its effect)::

    run.start            {threadId, input, snapshot, submissionId?} -> {runId, state}
    run.transition       {runId, to, error?}                        -> {runId, state}
    approval.request     {threadId, runId, request}                 -> {approvalId, runState}
    approval.claim       {approvalId, decision}          -> {approvalId, nodeId, runState}
    interaction.request  {threadId, runId, request}                 -> {interactionId, runState}
    interaction.claim    {interactionId, response}    -> {interactionId, nodeId, runState}

Queries::

    run.get          {runId} | {submissionId}  -> the run record (input and snapshot included)
    run.list         {threadId, state?}        -> [run summary]  (no input/snapshot; snapshotDigest)
    run.recover      {runId, bindings}         -> {ok: true, snapshot} or the error
    approvals.pending {threadId}               -> {approvals: [...], interactions: [...]}

This module does not import :mod:`panelot.bus.bus` or :mod:`panelot.store` at run
time (they import it): :data:`RUN_COMMANDS` maps a type to ``(tables, run)`` and the
bus wraps each in its ``Handler``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from panelot.clock import Clock
from panelot.codec import encode
from panelot.idb import Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.runs.approvals import CLAIM_TABLES, REQUEST_TABLES, Kind, claim, pending, request
from panelot.runs.records import (
    RUN_TABLES,
    get_run,
    recover_run,
    run_by_submission,
    run_summary,
    runs_for_thread,
    start_run,
    transition,
)

if TYPE_CHECKING:
    from panelot.store import PanelotStore

__all__ = ["RUN_COMMANDS", "RUN_QUERIES"]

Run = Callable[[Transaction, dict[str, Any], Clock], Awaitable[Any]]
QueryFn = Callable[["PanelotStore", dict[str, Any]], Awaitable[Any]]


def _field(name: str, prefix: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _required(p: dict[str, Any], name: str, prefix: str = "payload") -> Any:
    if p.get(name) is None:
        raise ValidationError(f"{_field(name, prefix)}: is required", field=_field(name, prefix))
    return p[name]


def _str(p: dict[str, Any], name: str, required: bool = True, prefix: str = "payload") -> Any:
    if p.get(name) is None and not required:
        return None
    value = _required(p, name, prefix)
    if not isinstance(value, str):
        raise ValidationError(
            f"{_field(name, prefix)}: must be a string", field=_field(name, prefix)
        )
    return value


async def _run_start(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    run = await start_run(
        tx,
        _str(p, "threadId"),
        _str(p, "submissionId", False),
        _required(p, "input"),
        _required(p, "snapshot"),
        clock,
    )
    return {"runId": run["id"], "state": run["state"]}


async def _run_transition(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    run = await transition(tx, _str(p, "runId"), _str(p, "to"), clock, p.get("error"))
    return {"runId": run["id"], "state": run["state"]}


def _requester(kind: Kind) -> Run:
    async def run(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
        thread_id, run_id = _str(p, "threadId"), _str(p, "runId")
        record = await request(tx, kind, thread_id, run_id, _required(p, "request"), clock)
        state = (await get_run(tx, run_id))["state"]
        return {f"{kind}Id": record["id"], "runState": state}

    return run


def _claimer(kind: Kind, value: str) -> Run:
    async def run(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
        if value not in p:
            raise ValidationError(f"payload.{value}: is required", field=f"payload.{value}")
        return await claim(tx, kind, _str(p, f"{kind}Id"), p[value], clock)

    return run


RUN_COMMANDS: dict[str, tuple[tuple[str, ...], Run]] = {
    "run.start": (("threads", "runs"), _run_start),
    "run.transition": (RUN_TABLES, _run_transition),
    "approval.request": (REQUEST_TABLES, _requester("approval")),
    "approval.claim": (CLAIM_TABLES, _claimer("approval", "decision")),
    "interaction.request": (REQUEST_TABLES, _requester("interaction")),
    "interaction.claim": (CLAIM_TABLES, _claimer("interaction", "response")),
}
"""Command type -> ``(tables, run)``; :mod:`panelot.bus.bus` wraps each in a Handler."""


async def _q_get(s: PanelotStore, a: dict[str, Any]) -> Any:
    if a.get("submissionId") is not None:
        found = await run_by_submission(s.db, _str(a, "submissionId", prefix=""))
        if found is None:
            raise NotFoundError("no run was started by this submission", field="submissionId")
        return found
    run_id = _str(a, "runId", prefix="")
    return await s.db.transaction("r", ["runs"], lambda tx: get_run(tx, run_id))


async def _q_list(s: PanelotStore, a: dict[str, Any]) -> Any:
    rows = await runs_for_thread(
        s.db, _str(a, "threadId", prefix=""), _str(a, "state", False, prefix="")
    )
    return [run_summary(r) for r in rows]


async def _q_recover(s: PanelotStore, a: dict[str, Any]) -> Any:
    snap = await recover_run(s.db, _str(a, "runId", prefix=""), a.get("bindings"))
    return {"ok": True, "snapshot": encode(snap)}


async def _q_pending(s: PanelotStore, a: dict[str, Any]) -> Any:
    return await pending(s.db, _str(a, "threadId", prefix=""))


RUN_QUERIES: dict[str, QueryFn] = {
    "run.get": _q_get,
    "run.list": _q_list,
    "run.recover": _q_recover,
    "approvals.pending": _q_pending,
}
"""Read queries by name, merged into :data:`panelot.store.QUERIES`."""
