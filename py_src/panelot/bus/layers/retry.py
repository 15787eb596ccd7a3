"""The retry after a version change: a command whose connection closed under it runs again.

Another context's upgrade closes this context's connection (``versionchange``); the
database reopens on the next transaction, and the command runs once more. Its receipt
makes this safe: if the first attempt committed, the retry finds the receipt and
returns the stored response, writing nothing.
"""

from __future__ import annotations

from typing import Any

from panelot.bus.layer import Layer, Run, Submission
from panelot.idb import Database
from panelot.idb.errors import (
    AbortError,
    DatabaseClosedError,
    PanelotError,
    TransactionInactiveError,
)

__all__ = ["RETRY"]

_LOST = (DatabaseClosedError, AbortError, TransactionInactiveError)
"""What a transaction raises when its connection was closed under it."""


def _connection_lost(db: Database, exc: PanelotError, reopened: int) -> bool:
    """Whether ``exc`` came from a connection another context closed (``versionchange``)."""
    if not isinstance(exc, _LOST):
        return False
    try:
        return db.reopened != reopened or db.core.versionchanged
    except PanelotError:  # closed on purpose (db.close()): not for a retry
        return False


def _create(down: Run) -> Run:
    async def retry(sub: Submission) -> Any:
        db = sub.env.db
        reopened = db.reopened
        try:
            return await down(sub)
        except PanelotError as exc:
            if not _connection_lost(db, exc, reopened):
                raise
        return await down(sub)

    return retry


RETRY = Layer(name="retry", command=_create)
"""Runs a command once more when another context's upgrade closed its connection."""
