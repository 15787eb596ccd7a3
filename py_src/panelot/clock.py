"""The store's clock and ids: what every section stamps its records with."""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["Clock", "new_id", "now_ms", "stamp_from"]

Clock = Callable[[], int]
"""Milliseconds since the epoch; a store takes one so tests can control time."""


def now_ms() -> int:
    """Milliseconds since the epoch: the store's timestamps."""
    return int(time.time() * 1000)


def new_id() -> str:
    """A new UUID string."""
    return str(uuid.uuid4())


def stamp_from(value: Any) -> int | None:
    """``value`` as a stored time, or None when it cannot be one.

    A time is a whole number of milliseconds since the epoch, from 0 up to the largest
    integer a JS number holds exactly (2**53 - 1). JSON has one kind of number, so an
    integral float counts (``1.7e12``); a fraction, NaN, infinity, a negative number, a
    bool, a string or anything else does not.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    stamp = int(value)
    return stamp if 0 <= stamp <= 2**53 - 1 else None
