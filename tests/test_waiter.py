"""The Waiter future (panelot.idb.waiter): immediate wake-up outside tasks, asyncio otherwise.

The browser core's transactions resolve a Waiter from IndexedDB event handlers; these
tests drive the same protocol with CPython's asyncio (the real event handlers run in
every browser test, since every transaction awaits one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest

from loops import run_async
from panelot.idb.waiter import Waiter

T = TypeVar("T")


def run(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``main()`` on a loop of its own (see :func:`loops.run_async`)."""
    return run_async(main())


def test_resolved_outside_a_task_the_waiting_task_runs_at_once() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        waiter: Waiter[int] = Waiter(loop)
        log: list[str] = []

        async def waiting() -> None:
            log.append(f"got {await waiter}")

        task = asyncio.ensure_future(waiting())
        await asyncio.sleep(0)  # the task now waits on the waiter

        def event_handler() -> None:  # like an IndexedDB event: no task is running
            waiter.set_result(7)
            log.append("after set_result")

        loop.call_soon(event_handler)
        await task
        return log

    assert run(main) == ["got 7", "after set_result"]


def test_resolved_inside_a_task_the_wake_up_is_scheduled() -> None:
    async def main() -> list[str]:
        waiter: Waiter[int] = Waiter(asyncio.get_running_loop())
        log: list[str] = []

        async def waiting() -> None:
            log.append(f"got {await waiter}")

        task = asyncio.ensure_future(waiting())
        await asyncio.sleep(0)
        waiter.set_result(3)  # inside this task: must not run the other one re-entrantly
        log.append("after set_result")
        await task
        return log

    assert run(main) == ["after set_result", "got 3"]


def test_exceptions_reach_the_waiting_task() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        waiter: Waiter[int] = Waiter(loop)
        loop.call_soon(waiter.set_exception, KeyError("gone"))
        with pytest.raises(KeyError):
            await waiter
        assert waiter.done() and isinstance(waiter.exception(), KeyError)

    run(main)


def test_cancelling_the_waiting_task_cancels_the_waiter() -> None:
    async def main() -> None:
        waiter: Waiter[int] = Waiter(asyncio.get_running_loop())

        async def waiting() -> int:
            return await waiter

        task = asyncio.ensure_future(waiting())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert waiter.cancelled() and waiter.done()
        with pytest.raises(asyncio.InvalidStateError):
            waiter.set_result(1)

    run(main)


def test_already_resolved_waiters_do_not_suspend_and_late_callbacks_are_scheduled() -> None:
    async def main() -> list[object]:
        waiter: Waiter[str] = Waiter(asyncio.get_running_loop())
        waiter.set_result("ready")
        assert await waiter == "ready"
        seen: list[object] = []
        waiter.add_done_callback(seen.append)
        assert seen == []  # scheduled, not called in place
        await asyncio.sleep(0)
        assert waiter.remove_done_callback(seen.append) == 0
        return seen

    seen = run(main)
    assert len(seen) == 1 and isinstance(seen[0], Waiter)


def test_unresolved_results_are_refused() -> None:
    waiter: Waiter[int] = Waiter(asyncio.new_event_loop())
    with pytest.raises(asyncio.InvalidStateError):
        waiter.result()
    with pytest.raises(asyncio.InvalidStateError):
        waiter.exception()
    waiter.get_loop().close()
