"""The bus's own layers: the retry after a version change, receipts, prepare and undo.

:data:`BUS_LAYERS` is their stack, top first; the domain adds its layers below them
(:mod:`panelot.api.registry` composes the stack the store's bus runs).
"""

from panelot.bus.layers.prepare import PREPARE
from panelot.bus.layers.receipts import RECEIPTS
from panelot.bus.layers.retry import RETRY

__all__ = ["BUS_LAYERS", "PREPARE", "RECEIPTS", "RETRY"]

BUS_LAYERS = (RETRY, RECEIPTS, PREPARE)
"""The bus's layers, top first: a retry reruns the receipt's replay check and ``prepare``."""
