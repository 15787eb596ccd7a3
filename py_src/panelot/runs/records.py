"""Runs: one record per agent run, its state machine and its recovery.

A run record is ``{id, threadId, submissionId?, createdAt, updatedAt, state, input,
snapshot, error?}`` (read as :class:`~panelot.runs.stored.Run`). :func:`start_run`
stores the normalized input and the versioned RunEnvironmentSnapshot (with its digest)
in the caller's transaction and creates the run in ``queued``; only a run whose stored
snapshot verifies can enter ``preparing``. :func:`recover_run` returns the stored
snapshot after checking it and the current bindings against it; it never re-reads
mutable settings.

States and their allowed transitions are :data:`TRANSITIONS`. The edges into the
``awaiting_*`` states and back out to ``running`` belong to :mod:`panelot.runs.approvals`
(a request, a claim); :func:`transition` refuses them, so a run cannot leave an
approval wait without its claim being recorded. Entering a terminal state closes the
run's pending approvals and interactions (``closedReason: "run_<state>"``).
"""

from __future__ import annotations

from typing import Any

from panelot.clock import Clock, new_id, now_ms
from panelot.codec import decode, encode, id_field, plain_json
from panelot.errors import BindingDriftError, MissingSnapshotError, TransitionError
from panelot.idb import Database, Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.runs.snapshot import (
    RunEnvironmentSnapshot,
    canonical_json,
    make_snapshot,
    verify_snapshot,
)
from panelot.runs.stored import RUN_STATES, Run, RunState
from panelot.tree.admission import check_admission
from panelot.tree.records import UserMessage

__all__ = [
    "ACTIVE_STATES",
    "GATED_TRANSITIONS",
    "MAX_INPUT_BYTES",
    "RUN_STATES",
    "RUN_TABLES",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "RunState",
    "apply_transition",
    "get_run",
    "normalize_input",
    "recover_run",
    "run_by_submission",
    "run_summary",
    "runs_for_thread",
    "start_run",
    "transition",
]

TERMINAL_STATES = frozenset({"completed", "failed", "cancelled"})
"""States a run never leaves."""

ACTIVE_STATES = frozenset(RUN_STATES) - TERMINAL_STATES
"""Non-terminal states: a run in one of them may still execute or resume."""

_ENDS = frozenset({"failed", "cancelled"})
TRANSITIONS: dict[str, frozenset[str]] = {
    "queued": frozenset({"preparing"}) | _ENDS,
    "preparing": frozenset({"running"}) | _ENDS,
    "running": frozenset({"awaiting_approval", "awaiting_interaction", "completed"}) | _ENDS,
    "awaiting_approval": frozenset({"running", "awaiting_interaction"}) | _ENDS,
    "awaiting_interaction": frozenset({"running", "awaiting_approval"}) | _ENDS,
    "completed": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}
"""Allowed ``from -> {to}`` transitions."""

GATED_TRANSITIONS = frozenset(
    (a, b)
    for a in RUN_STATES
    for b in RUN_STATES
    if b in TRANSITIONS[a]
    and ({a, b} & {"awaiting_approval", "awaiting_interaction"})
    and b not in TERMINAL_STATES
)
"""Edges only :mod:`.approvals` takes (a request or a claim), never ``run.transition``."""

RUN_TABLES = ("runs", "approvals", "interactions")
"""The tables a transition's transaction must cover (a terminal state closes pending items)."""

MAX_INPUT_BYTES = 1024 * 1024
"""Largest accepted normalized run input: 1 MiB of canonical JSON."""

_TRANSPORT = ("id", "providerKind", "baseUrl", "credentialRef")


def normalize_input(data: Any, path: str = "input") -> dict[str, Any]:
    """Return the normalized run input: a user message body ``{content, attachedContext?}``.

    A plain string is shorthand for one text block. The result is the canonical wire
    form (optional fields left out); ValidationError names the offending field.
    """
    if isinstance(data, str):
        data = {"content": [{"type": "text", "text": data}]}
    if isinstance(data, dict) and "deleted" in data:
        raise ValidationError(f"{path}.deleted: is not a known field", field=f"{path}.deleted")
    wire: dict[str, Any] = encode(decode(UserMessage, data, path))
    if len(canonical_json(wire, path)) > MAX_INPUT_BYTES:
        raise ValidationError(
            f"{path}: larger than MAX_INPUT_BYTES ({MAX_INPUT_BYTES})", field=path
        )
    return wire


def _state(value: Any, name: str) -> str:
    if value not in RUN_STATES:
        raise ValidationError(
            f"{name}: must be one of {list(RUN_STATES)}, got {value!r}", field=name
        )
    return str(value)


def run_summary(run: dict[str, Any]) -> dict[str, Any]:
    """A run without its (possibly large) input and snapshot, for listings."""
    out = {k: v for k, v in run.items() if k not in ("input", "snapshot")}
    snap = run.get("snapshot")
    out["snapshotDigest"] = snap.get("digest") if isinstance(snap, dict) else None
    return out


async def get_run(tx: Transaction, run_id: str) -> dict[str, Any]:
    """Return a stored run record; NotFoundError if absent."""
    raw = await tx.table("runs").get(id_field(run_id, "runId"))
    if not isinstance(raw, dict):
        raise NotFoundError(f"run {run_id!r} does not exist", field="runId")
    return raw


async def start_run(
    tx: Transaction,
    thread_id: str,
    submission_id: str | None,
    input: Any,
    snapshot: Any,
    clock: Clock = now_ms,
) -> dict[str, Any]:
    """Create a ``queued`` run holding the normalized input and the verified snapshot.

    Everything is validated before the first write, so a refused snapshot (a secret,
    a bad shape, too large) writes nothing; a thread being deleted refuses it
    (AdmissionError). ``tx`` must cover ``threads`` and ``runs``.
    """
    if submission_id is not None:
        id_field(submission_id, "submissionId")
    normalized = normalize_input(input)
    wire = make_snapshot(snapshot)
    thread = await tx.table("threads").get(id_field(thread_id, "threadId"))
    if thread is None:
        raise NotFoundError(f"thread {thread_id!r} does not exist", field="threadId")
    check_admission(thread)
    now = clock()
    run: dict[str, Any] = encode(
        Run(new_id(), thread_id, now, now, "queued", normalized, wire, submission_id)
    )
    await tx.table("runs").add(run)
    return run


async def _close_pending(tx: Transaction, run_id: str, reason: str, now: int) -> None:
    changes = {"status": "resolved", "resolvedAt": now, "closedReason": reason}
    for table in ("approvals", "interactions"):
        await (
            tx.table(table)
            .where("runId")
            .equals(run_id)
            .filter(lambda r: r.get("status") == "pending")
            .modify(changes)
        )


async def apply_transition(
    tx: Transaction,
    run: dict[str, Any],
    to: str,
    clock: Clock = now_ms,
    error: Any = None,
) -> dict[str, Any]:
    """Move ``run`` to ``to`` if :data:`TRANSITIONS` allows it (gated edges included).

    Entering ``preparing`` requires a stored snapshot that verifies; entering a terminal
    state closes the run's pending approvals and interactions. Returns the new record.
    """
    current = run.get("state")
    to = _state(to, "to")
    if to not in TRANSITIONS.get(str(current), frozenset()):
        allowed = sorted(TRANSITIONS.get(str(current), frozenset()))
        raise TransitionError(
            f"run {run.get('id')!r}: cannot go from {current!r} to {to!r}; allowed: {allowed}",
            field="to",
        )
    if to == "preparing":
        if run.get("snapshot") is None:
            raise MissingSnapshotError(
                f"run {run.get('id')!r} has no RunEnvironmentSnapshot and cannot be prepared",
                field="snapshot",
            )
        verify_snapshot(run["snapshot"])
    now = clock()
    updated = {**run, "state": to, "updatedAt": now}
    if error is not None:
        if to not in _ENDS:
            raise ValidationError("error: only a failed or cancelled run has one", field="error")
        updated["error"] = plain_json(error, "error")
        if len(canonical_json(updated["error"], "error")) > MAX_INPUT_BYTES:
            raise ValidationError(f"error: larger than {MAX_INPUT_BYTES} bytes", field="error")
    await tx.table("runs").put(updated)
    if to in TERMINAL_STATES:
        await _close_pending(tx, str(run["id"]), f"run_{to}", now)
    return updated


async def transition(
    tx: Transaction, run_id: str, to: str, clock: Clock = now_ms, error: Any = None
) -> dict[str, Any]:
    """Move a run to state ``to``; TransitionError if not allowed or approval-gated.

    ``tx`` must cover :data:`RUN_TABLES`. ``error`` (JSON) may accompany failed/cancelled.
    """
    run = await get_run(tx, run_id)
    edge = (str(run.get("state")), _state(to, "to"))
    if edge in GATED_TRANSITIONS:
        raise TransitionError(
            f"run {run_id!r}: {edge[0]} -> {edge[1]} happens only through an approval or "
            "interaction request or claim",
            field="to",
        )
    return await apply_transition(tx, run, to, clock, error)


async def runs_for_thread(
    db: Database, thread_id: str, state: str | None = None
) -> list[dict[str, Any]]:
    """A thread's runs (oldest first), optionally in one state, via ``[threadId+state]``."""
    table = db.table("runs")
    if state is None:
        rows = await table.where("threadId").equals(id_field(thread_id, "threadId")).to_list()
    else:
        key = [id_field(thread_id, "threadId"), _state(state, "state")]
        rows = await table.where("[threadId+state]").equals(key).to_list()
    return sorted(rows, key=lambda r: (r.get("createdAt", 0), r.get("id", "")))


async def run_by_submission(db: Database, submission_id: str) -> dict[str, Any] | None:
    """The newest run started by a submission, via the ``submissionId`` index, or None."""
    rows = (
        await db.table("runs")
        .where("submissionId")
        .equals(id_field(submission_id, "submissionId"))
        .to_list()
    )
    rows.sort(key=lambda r: (r.get("createdAt", 0), r.get("id", "")))
    return rows[-1] if rows else None


def _check_bindings(snap: RunEnvironmentSnapshot, current: Any) -> None:
    if not isinstance(current, dict):
        raise ValidationError("bindings: must be an object", field="bindings")
    conn, execution = current.get("connection"), current.get("executionBindings")
    if not isinstance(conn, dict):
        raise ValidationError("bindings.connection: must be an object", field="bindings.connection")
    if not isinstance(execution, dict):
        raise ValidationError(
            "bindings.executionBindings: must be an object", field="bindings.executionBindings"
        )
    pinned = encode(snap.connection)
    for name in _TRANSPORT:
        if conn.get(name) != pinned[name]:
            raise BindingDriftError(
                f"bindings.connection.{name}: is {conn.get(name)!r} now but the run's snapshot "
                f"pinned {pinned[name]!r}",
                field=f"bindings.connection.{name}",
            )
    was = snap.execution_bindings
    for key in sorted(set(was) | set(execution)):
        if (
            key not in was
            or key not in execution
            or canonical_json(was[key], "bindings") != canonical_json(execution[key], "bindings")
        ):
            raise BindingDriftError(
                f"bindings.executionBindings.{key}: differs from the run's snapshot",
                field=f"bindings.executionBindings.{key}",
            )


async def recover_run(db: Database, run_id: str, current_bindings: Any) -> RunEnvironmentSnapshot:
    """Return the verified snapshot of a run to resume it, or raise why it cannot resume.

    ``current_bindings`` is ``{"connection": {id, providerKind, baseUrl, credentialRef},
    "executionBindings": {...}}`` as resolved now; only the reference and non-secret
    transport fields are compared, so a rotated secret behind the same reference is
    accepted. Raises NotFoundError, MissingSnapshotError, SnapshotTooLargeError,
    SnapshotVersionError, SnapshotIntegrityError or BindingDriftError.
    """
    run = await db.transaction("r", ["runs"], lambda tx: get_run(tx, run_id))
    if run.get("snapshot") is None:
        raise MissingSnapshotError(
            f"run {run_id!r} was started without a RunEnvironmentSnapshot; it cannot be "
            "recovered (mutable settings are never re-read instead)",
            field="snapshot",
        )
    snap = verify_snapshot(run["snapshot"])
    _check_bindings(snap, current_bindings)
    return snap
