"""The derived views of a stored thread: model context, UI snapshot and Markdown.

Each loads the thread (repairing its leaf when it must, see :mod:`.loading`) and
derives the view with the pure functions of :mod:`.context`.
"""

from __future__ import annotations

from typing import Any

from panelot.clock import Clock, now_ms
from panelot.idb import Database
from panelot.idb.errors import NotFoundError
from panelot.tree.context import session_context, thread_markdown, ui_snapshot
from panelot.tree.loading import load_thread

__all__ = ["context_of", "markdown_of", "snapshot_of"]


async def context_of(
    db: Database, thread_id: str, leaf_id: str | None = None, clock: Clock = now_ms
) -> dict[str, Any]:
    """``build_session_context``: provider-neutral messages, turn context, path, pending calls.

    An explicit ``leaf_id`` that does not reach a root is a NotFoundError on ``leafId``.
    """
    loaded = await load_thread(db, thread_id, leaf_id, clock)
    if loaded.problem:
        raise NotFoundError(f"leafId: {loaded.problem}", field="leafId")
    return session_context(loaded)


async def snapshot_of(db: Database, thread_id: str, clock: Clock = now_ms) -> dict[str, Any]:
    """The UI snapshot of the thread's current leaf."""
    return ui_snapshot(await load_thread(db, thread_id, None, clock))


async def markdown_of(db: Database, thread_id: str, clock: Clock = now_ms) -> str:
    """The Markdown of the visible path."""
    return thread_markdown(await load_thread(db, thread_id, None, clock))
