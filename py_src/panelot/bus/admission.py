"""Admission: a thread that is being deleted accepts no new commands.

``thread.delete`` marks the thread record ``deleting: true`` before it stops the
thread's executions; every command for that thread is then refused, in every
context, until the cascade deletes it (or a failed cascade lifts the mark).
"""

from __future__ import annotations

from typing import Any

from panelot.errors import AdmissionError

__all__ = ["check_admission"]


def check_admission(thread: Any) -> None:
    """Refuse a command for a thread that is being deleted."""
    if isinstance(thread, dict) and thread.get("deleting"):
        raise AdmissionError(
            f"thread {thread.get('id')!r} is being deleted; it accepts no new commands",
            field="threadId",
        )
