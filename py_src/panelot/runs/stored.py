"""The records of the ``runs``, ``approvals`` and ``interactions`` tables.

Each is a dataclass read through :mod:`panelot.codec`; the tables hold their camelCase
wire form, which Dexie code reads too. Dexie code may add keys of its own: the readers
read past them, and updates keep them (they change the stored object, never rebuild it
from the dataclass). The run states are spelled once, in :data:`RunState`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

from panelot.codec import Id, Natural, Raw, decode, open_record
from panelot.runs.snapshot import verify_snapshot

__all__ = [
    "RUN_STATES",
    "Approval",
    "Interaction",
    "Run",
    "RunState",
    "WaitStatus",
    "approval_from_record",
    "interaction_from_record",
    "run_from_record",
]

RunState: TypeAlias = Literal[
    "queued",
    "preparing",
    "running",
    "awaiting_approval",
    "awaiting_interaction",
    "completed",
    "failed",
    "cancelled",
]
"""A run's state (transitions: :data:`panelot.runs.records.TRANSITIONS`)."""

RUN_STATES: tuple[str, ...] = get_args(RunState)
"""Every run state, in :data:`RunState`'s order."""

WaitStatus: TypeAlias = Literal["pending", "resolved"]
"""An approval's or an interaction's status."""


@open_record
@dataclass(slots=True)
class Run:
    """A stored run.

    ``{id, threadId, submissionId?, createdAt, updatedAt, state, input, snapshot, error?}``.
    ``input`` is the normalized user message body, ``snapshot`` the versioned
    RunEnvironmentSnapshot (verified by :func:`run_from_record`: one missing is a
    SnapshotIntegrityError, as any snapshot that does not verify), ``error`` the JSON a
    failed or cancelled run may carry.
    """

    id: Id
    thread_id: Id
    created_at: Natural
    updated_at: Natural
    state: RunState
    input: dict[str, Raw]
    snapshot: Raw = None
    submission_id: Id | None = None
    error: Raw = None


@open_record
@dataclass(slots=True)
class _Waiting:
    """What approvals and interactions share."""

    id: Id
    thread_id: Id
    run_id: Id
    status: WaitStatus
    requested_at: Natural
    request: Raw = None
    resolved_at: Natural | None = None
    node_id: Id | None = None
    closed_reason: str | None = None


@open_record
@dataclass(slots=True)
class Approval(_Waiting):
    """A stored approval.

    ``{id, threadId, runId, status, requestedAt, request, resolvedAt?, nodeId?,
    closedReason?, decision?}``.
    """

    decision: Literal["approved", "denied"] | None = None


@open_record
@dataclass(slots=True)
class Interaction(_Waiting):
    """A stored interaction.

    ``{id, threadId, runId, status, requestedAt, request, resolvedAt?, nodeId?,
    closedReason?, response?}`` (``response`` any JSON).
    """

    response: Raw = None


def run_from_record(value: Any, where: str = "run") -> Run:
    """Read a stored run, its snapshot verified; errors name the field under ``where``."""
    run = decode(Run, value, where)
    verify_snapshot(run.snapshot, f"{where}.snapshot")
    return run


def approval_from_record(value: Any, where: str = "approval") -> Approval:
    """Read a stored approval; errors name the field under ``where``."""
    return decode(Approval, value, where)


def interaction_from_record(value: Any, where: str = "interaction") -> Interaction:
    """Read a stored interaction; errors name the field under ``where``."""
    return decode(Interaction, value, where)
