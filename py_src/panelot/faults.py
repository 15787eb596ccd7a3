"""Named fault-injection points, for tests that must fail an operation half-way.

Production code calls :meth:`Faults.hit` at a few points inside long transactions;
nothing happens unless a test armed that point. An armed point raises
:class:`InjectedFault` on its ``after + 1``-th hit, once.
"""

from __future__ import annotations

from panelot.idb.errors import PanelotError

__all__ = ["FAULTS", "Faults", "InjectedFault"]


class InjectedFault(PanelotError):
    """A failure injected on purpose by a test."""

    name = "InjectedFault"


class Faults:
    """Armed fault points and how many hits each lets pass first."""

    def __init__(self) -> None:
        self._armed: dict[str, int] = {}

    def arm(self, point: str, after: int = 0) -> None:
        """Make ``point`` fail once, after letting ``after`` hits pass."""
        self._armed[point] = after

    def disarm(self) -> None:
        """Forget every armed point."""
        self._armed.clear()

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
