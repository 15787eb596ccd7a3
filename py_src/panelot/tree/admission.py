"""Admission: a thread that is being deleted accepts no new commands.

``thread.delete`` marks the thread record ``deleting: true`` before it stops the
thread's executions; every command for that thread is then refused, in every
context, until the cascade deletes it (or a failed cascade lifts the mark).

:data:`ADMISSION` is the bus layer that applies the rule to every command whose
payload names a ``threadId`` and whose transaction holds ``threads`` (unless the
handler skips it: ``thread.delete``). It reads the thread ahead, in the round trip of
the receipt lookup, and hands the record to the handler (:func:`read_thread`). Runs
and approvals apply :func:`check_admission` themselves where a thread is reached
another way.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from panelot.bus import Call
from panelot.bus.layer import Layer, Submission, TxRun
from panelot.errors import AdmissionError
from panelot.idb import Transaction

__all__ = ["ADMISSION", "check_admission", "read_thread"]

_NAME = "admission"


def check_admission(thread: Any) -> None:
    """Refuse a command for a thread that is being deleted."""
    if isinstance(thread, dict) and thread.get("deleting"):
        raise AdmissionError(
            f"thread {thread.get('id')!r} is being deleted; it accepts no new commands",
            field="threadId",
        )


def _read(tx: Transaction, sub: Submission) -> Awaitable[Any] | None:
    handler = sub.handler
    thread_id = getattr(sub.payload, "thread_id", None)
    if not isinstance(thread_id, str) or "threads" not in handler.tables:
        return None
    if _NAME in handler.skips:
        return None
    result: Awaitable[Any] = tx.table("threads").get(thread_id)
    return result


def _create(down: TxRun) -> TxRun:
    async def admission(tx: Transaction, sub: Submission) -> Any:
        if _NAME in sub.found:
            check_admission(sub.found[_NAME])
        return await down(tx, sub)

    return admission


async def read_thread(tx: Transaction, call: Call[Any], thread_id: str) -> Any:
    """The thread record: as the admission layer read it in this transaction, or read now."""
    if _NAME in call.found:
        return call.found[_NAME]
    return await tx.table("threads").get(thread_id)


ADMISSION = Layer(name=_NAME, transaction=_create, read=_read)
"""Refuses a command for a thread being deleted (below the receipt: a replay still answers)."""
