"""Bounds on what ``legacy.import`` accepts, so a hostile layout cannot exhaust memory.

The browsa layout is read from ``chrome.storage.local``, which any earlier extension
version (or a bug) may have filled with anything. Before a thread is planned, each
history is checked against these limits, and a breach refuses the whole import with a
:class:`~panelot.idb.errors.ValidationError` whose ``field`` names the storage key and
entry (``history[12]``, ``session_abc[3]``, ``savedSessions``). Nothing is written then.
"""

from __future__ import annotations

import json
from typing import Any

from panelot.idb.errors import ValidationError

__all__ = [
    "MAX_LEGACY_CHARS",
    "MAX_LEGACY_DEPTH",
    "MAX_LEGACY_ENTRIES",
    "MAX_LEGACY_ENTRY_CHARS",
    "MAX_LEGACY_SESSIONS",
    "Budget",
    "check_history",
    "check_sessions",
]

MAX_LEGACY_SESSIONS = 10_000
"""Most entries ``savedSessions`` may list."""
MAX_LEGACY_ENTRIES = 20_000
"""Most entries one history (the global one or a session's) may hold."""
MAX_LEGACY_ENTRY_CHARS = 16_000_000
"""Largest JSON size of one history entry (an inline image data URL counts)."""
MAX_LEGACY_CHARS = 128_000_000
"""Largest JSON size of everything one import reads."""
MAX_LEGACY_DEPTH = 32
"""Deepest nesting of lists and objects within one history entry."""


class Budget:
    """The characters one import may still read (shared by every history it checks)."""

    def __init__(self, limit: int = MAX_LEGACY_CHARS) -> None:
        self.left = limit


def _too_deep(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit``; iterative, so no recursion limit."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _refuse(where: str, why: str) -> ValidationError:
    return ValidationError(f"{where}: {why}; the legacy import was refused", field=where)


def check_sessions(index: list[Any]) -> None:
    """Refuse a ``savedSessions`` index with more than :data:`MAX_LEGACY_SESSIONS` entries."""
    if len(index) > MAX_LEGACY_SESSIONS:
        raise _refuse("savedSessions", f"{len(index)} sessions, more than {MAX_LEGACY_SESSIONS}")


def check_history(history: list[Any], key: str, budget: Budget) -> None:
    """Check one history against every limit; ``key`` is its storage key, for the field."""
    if len(history) > MAX_LEGACY_ENTRIES:
        raise _refuse(key, f"{len(history)} entries, more than {MAX_LEGACY_ENTRIES}")
    for i, entry in enumerate(history):
        where = f"{key}[{i}]"
        if _too_deep(entry, MAX_LEGACY_DEPTH):
            raise _refuse(where, f"nested deeper than {MAX_LEGACY_DEPTH} levels")
        try:
            size = len(json.dumps(entry))
        except (TypeError, ValueError) as exc:
            raise _refuse(where, f"not JSON data ({exc})") from None
        if size > MAX_LEGACY_ENTRY_CHARS:
            raise _refuse(where, f"{size} characters, more than {MAX_LEGACY_ENTRY_CHARS}")
        budget.left -= size
        if budget.left < 0:
            raise _refuse(where, f"the import reads more than {MAX_LEGACY_CHARS} characters")
