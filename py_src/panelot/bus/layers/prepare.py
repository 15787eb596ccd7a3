"""A handler's ``prepare`` step before its transaction, and its ``undo`` if that fails.

``prepare`` runs outside the command's transaction (steps that must finish before it,
like stopping a thread's executions, or work in ``chrome.storage.local``); what it
returns reaches the handler as ``call.prepared``. If the transaction then fails,
``undo`` reverses it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from panelot.bus.layer import Layer, Run, Submission
from panelot.idb.errors import PanelotError

__all__ = ["PREPARE"]


def _create(down: Run) -> Run:
    async def prepare(sub: Submission) -> Any:
        handler = sub.handler
        if handler.prepare is None:
            return await down(sub)
        prepared = await handler.prepare(sub.env, sub.payload)
        try:
            return await down(dataclasses.replace(sub, prepared=prepared))
        except PanelotError:
            if handler.undo is not None:
                await handler.undo(sub.env, sub.payload)
            raise

    return prepare


PREPARE = Layer(name="prepare", command=_create)
"""Runs a handler's ``prepare`` before its transaction and its ``undo`` if that fails."""
