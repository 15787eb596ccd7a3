"""Running a coroutine from a CPython test in a session that also drives Playwright."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_async(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` with ``asyncio.run`` on a thread of its own; return its result.

    Playwright's sync API, used by the browser tests of the same session, keeps a loop
    running on the main thread, where ``asyncio.run`` would refuse to start.
    """
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, main).result()
