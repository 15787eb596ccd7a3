"""The command bus: commands with receipts, run through layers, and what handlers are handed.

A section's API module declares :class:`Handler` and :class:`Query` objects; the
registry (:mod:`panelot.api.registry`) hands them, with the stack of :class:`Layer`
objects, to :class:`CommandBus` and the store.
"""

from panelot.bus.bus import CommandBus
from panelot.bus.env import Env
from panelot.bus.handler import Call, Handler, Query, Staged
from panelot.bus.layer import Layer

__all__ = ["Call", "CommandBus", "Env", "Handler", "Layer", "Query", "Staged"]
