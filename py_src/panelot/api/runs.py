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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from panelot.bus import Call, Env, Handler, Query
from panelot.codec import Raw, encode
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

__all__ = ["COMMANDS", "QUERIES"]


class RunState(TypedDict):
    """A run and the state it is in."""

    runId: str
    state: str


@dataclass(frozen=True, slots=True)
class RunStart:
    """``run.start``: the normalized input and the environment snapshot."""

    thread_id: str
    input: Raw
    snapshot: Raw
    submission_id: str | None = None


async def _run_start(tx: Transaction, call: Call[RunStart]) -> RunState:
    p = call.payload
    run = await start_run(tx, p.thread_id, p.submission_id, p.input, p.snapshot, call.clock)
    return {"runId": run["id"], "state": run["state"]}


@dataclass(frozen=True, slots=True)
class RunTransition:
    """``run.transition``."""

    run_id: str
    to: str
    error: Raw = None


async def _run_transition(tx: Transaction, call: Call[RunTransition]) -> RunState:
    p = call.payload
    run = await transition(tx, p.run_id, p.to, call.clock, p.error)
    return {"runId": run["id"], "state": run["state"]}


@dataclass(frozen=True, slots=True)
class UserRequest:
    """``approval.request`` / ``interaction.request``."""

    thread_id: str
    run_id: str
    request: Raw


@dataclass(frozen=True, slots=True)
class ApprovalClaim:
    """``approval.claim``."""

    approval_id: str
    decision: Raw


@dataclass(frozen=True, slots=True)
class InteractionClaim:
    """``interaction.claim``."""

    interaction_id: str
    response: Raw


def _requester(kind: Kind) -> Any:
    async def run(tx: Transaction, call: Call[UserRequest]) -> dict[str, Any]:
        p = call.payload
        record = await request(tx, kind, p.thread_id, p.run_id, p.request, call.clock)
        state = (await get_run(tx, p.run_id))["state"]
        return {f"{kind}Id": record["id"], "runState": state}

    return run


async def _claim_approval(tx: Transaction, call: Call[ApprovalClaim]) -> dict[str, Any]:
    p = call.payload
    return await claim(tx, "approval", p.approval_id, p.decision, call.clock)


async def _claim_interaction(tx: Transaction, call: Call[InteractionClaim]) -> dict[str, Any]:
    p = call.payload
    return await claim(tx, "interaction", p.interaction_id, p.response, call.clock)


COMMANDS: dict[str, Handler[Any]] = {
    "run.start": Handler(payload=RunStart, tables=("threads", "runs"), run=_run_start),
    "run.transition": Handler(payload=RunTransition, tables=RUN_TABLES, run=_run_transition),
    "approval.request": Handler(
        payload=UserRequest, tables=REQUEST_TABLES, run=_requester("approval")
    ),
    "approval.claim": Handler(payload=ApprovalClaim, tables=CLAIM_TABLES, run=_claim_approval),
    "interaction.request": Handler(
        payload=UserRequest, tables=REQUEST_TABLES, run=_requester("interaction")
    ),
    "interaction.claim": Handler(
        payload=InteractionClaim, tables=CLAIM_TABLES, run=_claim_interaction
    ),
}
"""The run commands."""


@dataclass(frozen=True, slots=True)
class RunArgs:
    """``run.get``: by its id, or by the submission that started it."""

    run_id: str | None = None
    submission_id: str | None = None


@dataclass(frozen=True, slots=True)
class ListArgs:
    """``run.list``."""

    thread_id: str
    state: str | None = None


@dataclass(frozen=True, slots=True)
class RecoverArgs:
    """``run.recover``: the bindings as they resolve now."""

    run_id: str
    bindings: Raw = None


@dataclass(frozen=True, slots=True)
class ThreadArgs:
    """``approvals.pending``."""

    thread_id: str


async def _q_get(env: Env, a: RunArgs) -> dict[str, Any]:
    if a.submission_id is not None:
        found = await run_by_submission(env.db, a.submission_id)
        if found is None:
            raise NotFoundError("no run was started by this submission", field="submissionId")
        return found
    run_id = a.run_id
    if run_id is None:
        raise ValidationError("runId: is required", field="runId")
    return await env.db.transaction("r", ["runs"], lambda tx: get_run(tx, run_id))


async def _q_list(env: Env, a: ListArgs) -> list[dict[str, Any]]:
    return [run_summary(r) for r in await runs_for_thread(env.db, a.thread_id, a.state)]


async def _q_recover(env: Env, a: RecoverArgs) -> dict[str, Any]:
    snap = await recover_run(env.db, a.run_id, a.bindings)
    return {"ok": True, "snapshot": encode(snap)}


async def _q_pending(env: Env, a: ThreadArgs) -> dict[str, Any]:
    return await pending(env.db, a.thread_id)


QUERIES: dict[str, Query[Any]] = {
    "run.get": Query(args=RunArgs, run=_q_get),
    "run.list": Query(args=ListArgs, run=_q_list),
    "run.recover": Query(args=RecoverArgs, run=_q_recover),
    "approvals.pending": Query(args=ThreadArgs, run=_q_pending),
}
"""The run queries."""
