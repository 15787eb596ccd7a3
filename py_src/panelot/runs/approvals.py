"""Approvals and interactions: requests that wait, and their one claim.

Records of both tables are ``{id, threadId, runId, status, requestedAt, request,
resolvedAt?, nodeId?, closedReason?}`` plus ``decision`` (approvals: ``approved`` or
``denied``) or ``response`` (interactions: any JSON). ``status`` is ``pending`` or
``resolved``. They are read as :class:`~panelot.runs.stored.Approval` and
:class:`~panelot.runs.stored.Interaction`.

A request creates a pending record and moves its run to ``awaiting_approval`` (or
``awaiting_interaction``). A claim runs in ONE transaction over the two tables,
``nodes``, ``threads`` and ``runs``: it resolves the record, appends the
``approval_decision`` / ``interaction_response`` node under the thread's leaf and moves
the run on (``running`` once nothing of it is pending any more). A second claim, from
another context or replayed after a worker restart, finds the record resolved and
raises :class:`~panelot.errors.AlreadyResolvedError`; nothing changes.
"""

from __future__ import annotations

from typing import Any, Literal

from panelot.clock import Clock, new_id, now_ms
from panelot.codec import encode, id_field, plain_json
from panelot.errors import AlreadyResolvedError, TransitionError
from panelot.idb import Database, Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.runs.records import TERMINAL_STATES, apply_transition, get_run
from panelot.runs.snapshot import canonical_json
from panelot.runs.stored import Approval, Interaction
from panelot.tree.admission import check_admission
from panelot.tree.nodes import LEAF, append_node

__all__ = [
    "CLAIM_TABLES",
    "Kind",
    "MAX_REQUEST_BYTES",
    "REQUEST_TABLES",
    "claim",
    "claim_approval",
    "claim_interaction",
    "pending",
    "request",
]

Kind = Literal["approval", "interaction"]
"""Which of the two waiting tables a request or claim is about."""

REQUEST_TABLES = ("threads", "runs", "approvals", "interactions")
"""The tables a request's transaction must cover."""

CLAIM_TABLES = ("approvals", "interactions", "nodes", "threads", "runs")
"""The tables a claim's transaction must cover."""

MAX_REQUEST_BYTES = 256 * 1024
"""Largest accepted request or response: 256 KiB of canonical JSON."""

_TABLE = {"approval": "approvals", "interaction": "interactions"}
_RECORD: dict[str, type[Approval | Interaction]] = {
    "approval": Approval,
    "interaction": Interaction,
}
_WAIT = {"approval": "awaiting_approval", "interaction": "awaiting_interaction"}


def _json(value: Any, path: str, need_object: bool) -> Any:
    if need_object and not isinstance(value, dict):
        raise ValidationError(f"{path}: must be an object", field=path)
    clean = plain_json(value, path)
    if len(canonical_json(clean, path)) > MAX_REQUEST_BYTES:
        raise ValidationError(
            f"{path}: larger than MAX_REQUEST_BYTES ({MAX_REQUEST_BYTES})", field=path
        )
    return clean


async def _pending_of_run(tx: Transaction, table: str, run_id: str) -> int:
    return await (
        tx.table(table)
        .where("runId")
        .equals(run_id)
        .filter(lambda r: r.get("status") == "pending")
        .count()
    )


async def _settle(tx: Transaction, run: dict[str, Any], clock: Clock) -> dict[str, Any]:
    """Move the run to the state its pending items call for (approvals first)."""
    run_id = str(run["id"])
    if await _pending_of_run(tx, "approvals", run_id):
        target = "awaiting_approval"
    elif await _pending_of_run(tx, "interactions", run_id):
        target = "awaiting_interaction"
    else:
        target = "running"
    if run.get("state") == target:
        return run
    return await apply_transition(tx, run, target, clock)


async def request(
    tx: Transaction,
    kind: Kind,
    thread_id: str,
    run_id: str,
    body: Any,
    clock: Clock = now_ms,
) -> dict[str, Any]:
    """Create a pending approval or interaction and move its run to wait for it.

    The run must belong to ``thread_id`` and be ``running`` (or already waiting);
    otherwise TransitionError and nothing is written. ``tx`` covers REQUEST_TABLES.
    """
    thread_id, run_id = id_field(thread_id, "threadId"), id_field(run_id, "runId")
    clean = _json(body, "request", need_object=True)
    check_admission(await tx.table("threads").get(thread_id))
    run = await get_run(tx, run_id)
    if run.get("threadId") != thread_id:
        raise NotFoundError(
            f"run {run_id!r} does not belong to thread {thread_id!r}", field="runId"
        )
    record: dict[str, Any] = encode(
        _RECORD[kind](new_id(), thread_id, run_id, "pending", clock(), clean)
    )
    await tx.table(_TABLE[kind]).add(record)
    await _settle(tx, run, clock)
    return record


def _check_value(kind: Kind, value: Any) -> Any:
    if kind == "approval":
        if value not in ("approved", "denied"):
            raise ValidationError(
                f"decision: must be 'approved' or 'denied', got {value!r}", field="decision"
            )
        return value
    return _json(value, "response", need_object=False)


async def claim(
    tx: Transaction, kind: Kind, item_id: str, value: Any, clock: Clock = now_ms
) -> dict[str, Any]:
    """Resolve a pending item, append its node under the thread's leaf, move the run on.

    ``value`` is the decision (approvals) or the response (interactions). Returns
    ``{approvalId|interactionId, nodeId, runState}``. ``tx`` covers CLAIM_TABLES.
    """
    id_name = f"{kind}Id"
    item_id = id_field(item_id, id_name)
    value = _check_value(kind, value)
    table = tx.table(_TABLE[kind])
    record = await table.get(item_id)
    if not isinstance(record, dict):
        raise NotFoundError(f"{kind} {item_id!r} does not exist", field=id_name)
    if record.get("status") != "pending":
        why = record.get("closedReason")
        raise AlreadyResolvedError(
            f"{kind} {item_id!r} was already resolved at {record.get('resolvedAt')}"
            + (f" ({why})" if why else "")
            + "; this claim changed nothing",
            field=id_name,
        )
    check_admission(await tx.table("threads").get(record["threadId"]))
    run = await get_run(tx, record["runId"])
    if run.get("state") in TERMINAL_STATES:
        raise TransitionError(
            f"{kind} {item_id!r} cannot be claimed: its run is {run.get('state')}; "
            "this claim changed nothing",
            field=id_name,
        )
    now = clock()
    if kind == "approval":
        payload = {
            "approvalId": item_id,
            "request": record["request"],
            "decision": value,
            "ts": now,
        }
        node = await append_node(tx, record["threadId"], "approval_decision", payload, LEAF, clock)
        record.update(decision=value)
    else:
        payload = {
            "interactionId": item_id,
            "request": record["request"],
            "response": value,
            "respondedAt": now,
        }
        node = await append_node(
            tx, record["threadId"], "interaction_response", payload, LEAF, clock
        )
        record.update(response=value)
    record.update(status="resolved", resolvedAt=now, nodeId=node.id)
    await table.put(record)
    run = await _settle(tx, run, clock)
    return {id_name: item_id, "nodeId": node.id, "runState": run["state"]}


async def claim_approval(
    db: Database, approval_id: str, decision: str, clock: Clock = now_ms
) -> dict[str, Any]:
    """Claim an approval with ``approved``/``denied`` in one transaction (see :func:`claim`)."""
    return await db.transaction(
        "rw", CLAIM_TABLES, lambda tx: claim(tx, "approval", approval_id, decision, clock)
    )


async def claim_interaction(
    db: Database, interaction_id: str, response: Any, clock: Clock = now_ms
) -> dict[str, Any]:
    """Answer an interaction in one transaction (see :func:`claim`)."""
    return await db.transaction(
        "rw", CLAIM_TABLES, lambda tx: claim(tx, "interaction", interaction_id, response, clock)
    )


async def pending(db: Database, thread_id: str) -> dict[str, list[dict[str, Any]]]:
    """A thread's pending approvals and interactions (oldest first), via ``[threadId+status]``."""
    key = [id_field(thread_id, "threadId"), "pending"]

    async def body(tx: Transaction) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for name in ("approvals", "interactions"):
            rows = await tx.table(name).where("[threadId+status]").equals(key).to_list()
            out[name] = sorted(rows, key=lambda r: (r.get("requestedAt", 0), r.get("id", "")))
        return out

    return await db.transaction("r", ["approvals", "interactions"], body)
