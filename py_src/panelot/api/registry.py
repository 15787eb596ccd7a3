"""Every command and query, from each section's API module: the only file naming them all.

Merging refuses a name declared twice, so two sections can never claim one command.
:data:`LAYERS` is the stack of layers the store's bus runs each command through.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from panelot.api import (
    attachments,
    backup,
    legacy,
    library,
    messages,
    requests,
    rescue,
    runs,
    search,
    send,
    settings,
    summaries,
    sync,
    threads,
)
from panelot.bus import Handler, Layer, Query
from panelot.bus.layers import BUS_LAYERS
from panelot.tree.admission import ADMISSION

__all__ = ["COMMANDS", "LAYERS", "QUERIES", "merge"]

T = TypeVar("T")

_SECTIONS = (
    threads,
    messages,
    send,
    runs,
    attachments,
    library,
    settings,
    legacy,
    requests,
    rescue,
    summaries,
    backup,
    search,
    sync,
)


def merge(kind: str, tables: list[Mapping[str, T]]) -> dict[str, T]:
    """One table of ``kind`` from many; a name in two of them is a ``ValueError``."""
    merged: dict[str, T] = {}
    for table in tables:
        clash = sorted(merged.keys() & table.keys())
        if clash:
            raise ValueError(f"{kind} declared twice: {clash}")
        merged.update(table)
    return merged


COMMANDS: dict[str, Handler[Any]] = merge(
    "commands", [getattr(m, "COMMANDS", {}) for m in _SECTIONS]
)
"""Every command type and its handler."""

QUERIES: dict[str, Query[Any]] = merge("queries", [getattr(m, "QUERIES", {}) for m in _SECTIONS])
"""Every named query."""

LAYERS: tuple[Layer, ...] = (*BUS_LAYERS, ADMISSION)
"""The bus's layers, top first: retry, receipts, prepare/undo, then admission (a thread
being deleted accepts no command), below the receipt so a replay still answers."""
