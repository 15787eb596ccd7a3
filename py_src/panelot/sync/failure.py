"""The last failure of a sync nobody pressed a button for, kept for every context.

A continuous loop's failure (in whichever panel holds the lock) and a background sync's
(the service worker's alarm) happen where no user sees them. They go to the meta row
``failure`` of ``panelot_sync_v1`` (:func:`record`): ``{source, name, message, field?,
at, nextTry}``, ``source`` being ``loop`` or ``background`` and ``nextTry`` the
loop's next try (ms; ``None`` for the worker, whose alarm comes every 5 minutes), so
``sync.status`` in any context says what failed, where and when. The next success
anywhere (a loop's round, a ``sync.now``, a push or pull asked for) clears it
(:func:`clear`: a read, and a write only when there is a row).
"""

from __future__ import annotations

from typing import Any

from panelot.idb import Database, PanelotError, Transaction
from panelot.sync.state import read_meta, write_meta

__all__ = ["BACKGROUND", "KEY", "LOOP", "clear", "error_json", "record", "shown"]

KEY = "failure"
"""The meta key of the last failure."""

LOOP = "loop"
"""The source of a continuous loop's failure."""

BACKGROUND = "background"
"""The source of a background sync's failure (the service worker's alarm)."""


def error_json(error: BaseException) -> dict[str, Any]:
    """``{name, message, field?}`` of ``error``, as the bridge sends a failure."""
    if isinstance(error, PanelotError):
        return error.to_json()
    return {"name": type(error).__name__, "message": str(error) or type(error).__name__}


async def record(
    state: Database, source: str, error: BaseException, at: int, next_try: int | None
) -> None:
    """Keep ``error`` as the last failure of ``source`` (at ``at``; the next try)."""
    row = {"source": source, **error_json(error), "at": at, "nextTry": next_try}

    async def write(tx: Transaction) -> None:
        await write_meta(tx, KEY, row)

    await state.transaction("rw", ["meta"], write)


async def clear(state: Database) -> None:
    """Forget the last failure (a sync succeeded); writes only when there is one."""

    async def there(tx: Transaction) -> Any:
        return await read_meta(tx, KEY)

    if await state.transaction("r", ["meta"], there) is None:
        return

    async def drop(tx: Transaction) -> None:
        await tx.table("meta").delete(KEY)

    await state.transaction("rw", ["meta"], drop)


def shown(value: Any) -> dict[str, Any] | None:
    """The failure row as ``sync.status`` gives it (``None``: no failure)."""
    if not isinstance(value, dict) or not isinstance(value.get("message"), str):
        return None
    keys = ("source", "name", "message", "field", "at", "nextTry")
    return {k: value.get(k) for k in keys if k != "field" or k in value}
