"""The command bus: commands with receipts, admission, and what handlers are handed.

A section's API module declares :class:`Handler` and :class:`Query` objects; the
registry (:mod:`panelot.api.registry`) hands them to :class:`CommandBus` and the store.
"""

from panelot.bus.bus import CommandBus
from panelot.bus.env import Env
from panelot.bus.handler import Call, Handler, Query, Staged

__all__ = ["Call", "CommandBus", "Env", "Handler", "Query", "Staged"]
