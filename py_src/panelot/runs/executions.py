"""Executions registered in this context, so ``thread.delete`` can wait for them to exit.

An engine running a turn registers it with ``async with registry.running(thread_id):``;
:meth:`ExecutionRegistry.wait_idle` returns once a thread has no registered
execution left. Cancellation is cooperative: ``cancelled(thread_id)`` tells a running
execution to stop at its next step.

The store holds this context's registry; a command that waits for executions reaches
it through :func:`executions_of`, since the bus's :class:`~panelot.bus.Env` names no
domain type.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol, runtime_checkable

__all__ = ["ExecutionRegistry", "Running", "executions_of"]


class ExecutionRegistry:
    """Counts running executions per thread and wakes waiters when one exits."""

    def __init__(self) -> None:
        self._running: dict[str, int] = {}
        self._cancelled: set[str] = set()
        self._idle: dict[str, asyncio.Event] = {}

    @asynccontextmanager
    async def running(self, thread_id: str) -> AsyncIterator[None]:
        """Register one execution for ``thread_id`` while the block runs."""
        self._running[thread_id] = self._running.get(thread_id, 0) + 1
        self._idle.setdefault(thread_id, asyncio.Event()).clear()
        try:
            yield
        finally:
            self._running[thread_id] -= 1
            if self._running[thread_id] == 0:
                del self._running[thread_id]
                self._idle[thread_id].set()

    def count(self, thread_id: str) -> int:
        """How many executions of ``thread_id`` are running."""
        return self._running.get(thread_id, 0)

    def cancel(self, thread_id: str) -> None:
        """Ask the thread's executions to stop."""
        self._cancelled.add(thread_id)

    def cancelled(self, thread_id: str) -> bool:
        """Tell a running execution whether it was asked to stop."""
        return thread_id in self._cancelled

    async def wait_idle(self, thread_id: str, timeout: float = 30.0) -> None:
        """Wait until no execution of ``thread_id`` runs (TimeoutError after ``timeout`` s)."""
        if self.count(thread_id) == 0:
            return
        await asyncio.wait_for(self._idle[thread_id].wait(), timeout)


@runtime_checkable
class Running(Protocol):
    """An env that holds its context's executions (the store is one)."""

    @property
    def executions(self) -> ExecutionRegistry:
        """The executions running in this context (``thread.delete`` waits for them)."""
        ...


def executions_of(env: object) -> ExecutionRegistry:
    """The execution registry of the context ``env`` stands for; TypeError without one."""
    if not isinstance(env, Running):
        raise TypeError(f"{type(env).__name__} holds no execution registry")
    return env.executions
