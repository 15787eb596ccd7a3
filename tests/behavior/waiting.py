"""Waiting, in a case, for the state that proves its own action landed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from panelot.idb.observe import LiveQuery


async def until(
    check: Callable[[], object], timeout: float = 5.0, what: str = "it", poll: float = 0.005
) -> None:
    """Poll ``check()`` until it is truthy; fail naming ``what`` after ``timeout`` s."""
    loop = asyncio.get_event_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(poll)


async def result_where(
    live: LiveQuery[Any], check: Callable[[Any], bool], timeout: float = 5.0
) -> Any:
    """The first result of ``live`` for which ``check`` holds (newer ones supersede)."""

    async def scan() -> Any:
        async for result in live:
            if check(result):
                return result
        raise AssertionError("the live query closed")

    return await asyncio.wait_for(scan(), timeout)
