"""The memory core: IndexedDB's semantics in pure Python (CPython tests, tools, reference).

``core`` answers the core protocol; ``store`` holds one object store and its indexes.
"""

from panelot.idb.memory.core import MemoryFactory

__all__ = ["MemoryFactory"]
