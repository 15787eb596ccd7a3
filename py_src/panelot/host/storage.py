"""A store's own attachment state: its budget and what its clean-ups freed.

Each :class:`~panelot.host.Host` holds one :class:`StorageState`, made fresh with it,
so two stores on two hosts never share a budget or a freed ledger. The rules that use
them are the attachments section's: the budget in :mod:`panelot.attachments.eviction`,
the ledger in :mod:`panelot.attachments.quota`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_BUDGET", "FreedLedger", "StorageState", "check_budget"]

DEFAULT_BUDGET = 200 * 1024 * 1024
"""The default attachment budget: 200 MiB."""


def check_budget(budget: int) -> int:
    """``budget`` if it is a whole number of bytes, at least 0; ``ValueError`` otherwise."""
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 0:
        raise ValueError("the attachment budget must be a whole number of bytes, at least 0")
    return budget


@dataclass(slots=True)
class FreedLedger:
    """Bytes this store's clean-ups freed that the browser's reported usage may not show yet.

    Kept by :func:`~panelot.attachments.quota.note_freed` and read by
    :func:`~panelot.attachments.quota.reconcile`.
    """

    baseline: int = 0
    """The reported usage just before the clean-ups counted in ``freed``."""
    freed: int = 0
    at: float = 0.0
    """When (``time.monotonic()``) the last clean-up was recorded."""


class StorageState:
    """A store's attachment budget (set with :meth:`set_budget`) and its freed ledger."""

    __slots__ = ("_budget", "ledger")

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        """A fresh state: ``budget`` bytes (200 MiB by default) and an empty ledger."""
        self._budget = check_budget(budget)
        self.ledger = FreedLedger()
        """What this store's clean-ups freed that the browser may still count."""

    def __repr__(self) -> str:
        return f"StorageState(budget={self._budget}, ledger={self.ledger!r})"

    @property
    def budget(self) -> int:
        """The attachment budget in bytes."""
        return self._budget

    def set_budget(self, budget: int) -> None:
        """Set the attachment budget in bytes (a setting; the default is 200 MiB)."""
        self._budget = check_budget(budget)
