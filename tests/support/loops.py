"""Running a coroutine from a CPython test in a session that also drives Playwright."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Closable(Protocol):
    """Anything with a ``close()``: a store, a database."""

    def close(self) -> None:
        """Close it."""


C = TypeVar("C", bound=Closable)

_OPENED: ContextVar[list[Closable] | None] = ContextVar("_OPENED", default=None)


async def _closing(main: Coroutine[Any, Any, T]) -> T:
    opened: list[Closable] = []
    _OPENED.set(opened)
    try:
        return await main
    finally:
        for each in reversed(opened):
            each.close()


def run_async(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` with ``asyncio.run`` on a thread of its own; return its result.

    Playwright's sync API, used by the browser tests of the same session, keeps a loop
    running on the main thread, where ``asyncio.run`` would refuse to start. What ``main``
    handed to :func:`closed_at_end` is closed before its loop ends.
    """
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _closing(main)).result()


def closed_at_end(thing: C) -> C:
    """Close ``thing`` when the :func:`run_async` call running this ends; return it.

    A store left open when its loop ends keeps its search indexer's batch timer armed:
    a drain spawned in the loop's last step is never run, and Python warns
    (``coroutine 'Indexer._drain' was never awaited``) wherever the garbage collector
    then happens to free it.
    """
    opened = _OPENED.get()
    if opened is not None:
        opened.append(thing)
    return thing
