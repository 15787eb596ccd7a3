"""The store's clock and ids: what every section stamps its records with."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

__all__ = ["Clock", "new_id", "now_ms"]

Clock = Callable[[], int]
"""Milliseconds since the epoch; a store takes one so tests can control time."""


def now_ms() -> int:
    """Milliseconds since the epoch: the store's timestamps."""
    return int(time.time() * 1000)


def new_id() -> str:
    """A new UUID string."""
    return str(uuid.uuid4())
