"""Named fault-injection points, for tests that must fail an operation half-way.

Production code calls :meth:`Faults.hit` at a few points inside long transactions;
nothing happens unless a test armed that point. An armed point raises
:class:`InjectedFault` on its ``after + 1``-th hit, once.

A few points outside transactions are pauses instead (``await FAULTS.gate(point)``): a
test that :meth:`Faults.hold` s one stops the first operation to reach it there, until
the test releases it, to make a race between contexts happen every time.
"""

from __future__ import annotations

import asyncio

from panelot.idb.errors import PanelotError

__all__ = ["FAULTS", "Faults", "Hold", "InjectedFault"]


class InjectedFault(PanelotError):
    """A failure injected on purpose by a test."""

    name = "InjectedFault"


class Hold:
    """A held pause point: ``reached`` is set once an operation waits there."""

    def __init__(self) -> None:
        self.reached = asyncio.Event()
        self._go = asyncio.Event()

    @property
    def waiting(self) -> bool:
        """Whether an operation is stopped at the point now."""
        return self.reached.is_set() and not self._go.is_set()

    def release(self) -> None:
        """Let the operation stopped at the point go on."""
        self._go.set()


class Faults:
    """Armed fault points and how many hits each lets pass first."""

    def __init__(self) -> None:
        self._armed: dict[str, int] = {}
        self._holds: dict[str, Hold] = {}

    def arm(self, point: str, after: int = 0) -> None:
        """Make ``point`` fail once, after letting ``after`` hits pass."""
        self._armed[point] = after

    def disarm(self) -> None:
        """Forget every armed point; let every held operation go on."""
        self._armed.clear()
        for hold in self._holds.values():
            hold.release()
        self._holds.clear()

    def hold(self, point: str) -> Hold:
        """Make the next operation that reaches the pause ``point`` wait there; return it."""
        hold = self._holds[point] = Hold()
        return hold

    async def gate(self, point: str) -> None:
        """A pause point: wait here if a test holds ``point`` (the first comer only)."""
        hold = self._holds.pop(point, None)
        if hold is None:
            return
        hold.reached.set()
        await hold._go.wait()

    def hit(self, point: str) -> None:
        """Raise InjectedFault if ``point`` is armed and due."""
        left = self._armed.get(point)
        if left is None:
            return
        if left > 0:
            self._armed[point] = left - 1
            return
        del self._armed[point]
        raise InjectedFault(f"fault injected at {point}")


FAULTS = Faults()
"""The fault points of this context."""
