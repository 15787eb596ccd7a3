"""Every command and query, from each section's API module: the only file naming them all.

Merging refuses a name declared twice, so two sections can never claim one command.
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
    runs,
    send,
    settings,
    threads,
)
from panelot.bus import Handler, Query

__all__ = ["COMMANDS", "QUERIES", "merge"]

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
    backup,
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
