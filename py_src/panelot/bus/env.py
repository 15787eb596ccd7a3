"""What handlers and queries are handed: the store's database, clock and host.

A handler never reaches for a module-level store or settings singleton: it works with
the :class:`Env` the bus passes it (a :class:`panelot.store.PanelotStore` is one). A
section that needs more of the store declares it above the bus (the executions
``thread.delete`` waits for: :class:`panelot.runs.executions.Running`).
"""

from __future__ import annotations

from typing import Protocol

from panelot.bus.inputs import StagedInputs
from panelot.clock import Clock
from panelot.host import Host
from panelot.idb import Database

__all__ = ["Env"]


class Env(Protocol):
    """The store a command or query runs against."""

    @property
    def db(self) -> Database:
        """The open ``panelot_v1`` database."""
        ...

    @property
    def clock(self) -> Clock:
        """The store's clock."""
        ...

    @property
    def host(self) -> Host:
        """Where the store runs: settings and credentials, thumbnailer, storage estimate."""
        ...

    @property
    def inputs(self) -> StagedInputs:
        """Inputs read ahead of a command, named in its payload by digest (a backup file)."""
        ...
