"""Pausing Python's cyclic garbage collector while large acyclic results are built.

Decoding 10,000 records, indexing them and deriving a thread's context each make tens
of thousands of containers. Every collection those allocations start traverses all of
them (they are young, and all survive), and under Pyodide such collections took a third
of the decode and up to half of the derivation (measured). These results hold no
cycles; they are freed by reference counting when dropped, so nothing waits on the
collector. The pause lasts only while the caller's synchronous work runs.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the ``with`` block (if it was enabled)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
