"""One object store of the memory core: records, sorted indexes and a key generator.

Keys are kept in IndexedDB order with :mod:`bisect` over wrappers that compare with
:func:`~panelot.idb.keys.compare_keys`. Every change returns an undo closure so the
transaction can roll back completely on abort.
"""

from __future__ import annotations

import bisect
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from panelot.idb.errors import ConstraintError
from panelot.idb.keys import (
    MAX_SAFE_INTEGER,
    Key,
    KeyRange,
    compare_keys,
    hashable_key,
    index_keys,
)
from panelot.idb.schema import IndexSpec

__all__ = ["MemoryStore", "Undo", "hashable_key"]

Undo = Callable[[], None]

GENERATOR_LIMIT = 2**53
"""The largest key a key generator gives (IndexedDB's limit)."""


class _K:
    """A key wrapper ordered by IndexedDB key comparison."""

    __slots__ = ("key",)

    def __init__(self, key: Key) -> None:
        self.key = key

    def __lt__(self, other: _K) -> bool:
        return compare_keys(self.key, other.key) < 0


@dataclass(slots=True)
class _Entry:
    """One index entry: (index key, primary key), ordered by both."""

    ikey: Key
    pkey: Key

    def __lt__(self, other: _Entry) -> bool:
        c = compare_keys(self.ikey, other.ikey)
        return c < 0 if c else compare_keys(self.pkey, other.pkey) < 0


@dataclass(slots=True)
class _Index:
    spec: IndexSpec
    entries: list[_Entry] = field(default_factory=list)


def _bounds(items: list[Any], rng: KeyRange, key: Callable[[Any], Key]) -> tuple[int, int]:
    lo, hi = 0, len(items)
    wrap: Callable[[Any], _K] = lambda item: _K(key(item))  # noqa: E731
    if rng.lower is not None:
        side = bisect.bisect_right if rng.lower_open else bisect.bisect_left
        lo = side(items, _K(rng.lower), key=wrap)
    if rng.upper is not None:
        side = bisect.bisect_left if rng.upper_open else bisect.bisect_right
        hi = side(items, _K(rng.upper), key=wrap)
    return lo, max(lo, hi)


class MemoryStore:
    """Records of one object store with IndexedDB semantics."""

    def __init__(self, key_path: Any, auto_increment: bool) -> None:
        self.key_path = key_path
        self.auto_increment = auto_increment
        self.generator = 1
        self.records: dict[Any, tuple[Key, Any]] = {}
        self.order: list[_K] = []
        self.indexes: dict[str, _Index] = {}

    def add_index(self, spec: IndexSpec) -> None:
        """Create an index and fill it from the existing records."""
        index = _Index(spec)
        for pkey, value in self.records.values():
            for ikey in index_keys(value, spec.key_path or "", spec.multi_entry):
                index.entries.append(_Entry(ikey, pkey))
        index.entries.sort()
        if spec.unique:
            for a, b in zip(index.entries, index.entries[1:], strict=False):
                if compare_keys(a.ikey, b.ikey) == 0:
                    raise ConstraintError(f"index {spec.name}: existing records break uniqueness")
        self.indexes[spec.name] = index

    def get(self, key: Key) -> Any:
        """Return a copy of the record under ``key``, or ``None``."""
        found = self.records.get(hashable_key(key))
        return None if found is None else copy.deepcopy(found[1])

    def next_key(self) -> int | float:
        """Take the next generated key, as IndexedDB's generator gives it.

        Keys go up to 2**53: that last one is the float it is in JS (an int beyond
        2**53 - 1 is no key here), and past it the generator is spent
        (``ConstraintError``, as IndexedDB fails the add).
        """
        key = self.generator
        if key > GENERATOR_LIMIT:
            raise ConstraintError(
                f"the key generator is spent: its next key would pass 2**53 ({key})"
            )
        self.generator += 1
        return key if key <= MAX_SAFE_INTEGER else float(key)

    def bump_generator(self, key: Key) -> Undo | None:
        """Raise the key generator above an explicit numeric key, as IndexedDB does."""
        if isinstance(key, int | float) and not isinstance(key, bool) and key >= self.generator:
            before = self.generator
            self.generator = int(min(key, GENERATOR_LIMIT)) + 1
            return lambda: setattr(self, "generator", before)
        return None

    def check_unique(self, pkey: Key, value: Any) -> None:
        """Raise ConstraintError if ``value`` would break a unique index."""
        for index in self.indexes.values():
            if not index.spec.unique:
                continue
            for ikey in index_keys(value, index.spec.key_path or "", index.spec.multi_entry):
                for entry in self._range(index, KeyRange(ikey, ikey)):
                    if compare_keys(entry.pkey, pkey) != 0:
                        raise ConstraintError(
                            f"unique index {index.spec.name!r} already holds key {ikey!r}"
                        )

    def write(self, pkey: Key, value: Any) -> Undo:
        """Store ``value`` under ``pkey`` (replacing any record); return its undo."""
        hk = hashable_key(pkey)
        old = self.records.get(hk)
        if old is not None:
            self._unindex(old[0], old[1])
        else:
            bisect.insort(self.order, _K(pkey))
        self.records[hk] = (pkey, value)
        self._index(pkey, value)

        def undo() -> None:
            self.remove(pkey)
            if old is not None:
                self.write(*old)

        return undo

    def remove(self, pkey: Key) -> Undo | None:
        """Delete the record under ``pkey``; return its undo, or ``None`` if it was absent."""
        old = self.records.pop(hashable_key(pkey), None)
        if old is None:
            return None
        self._unindex(old[0], old[1])
        i = bisect.bisect_left(self.order, _K(pkey))
        del self.order[i]

        def undo() -> None:
            self.write(*old)

        return undo

    def _index(self, pkey: Key, value: Any) -> None:
        for index in self.indexes.values():
            for ikey in index_keys(value, index.spec.key_path or "", index.spec.multi_entry):
                bisect.insort(index.entries, _Entry(ikey, pkey))

    def _unindex(self, pkey: Key, value: Any) -> None:
        for index in self.indexes.values():
            for ikey in index_keys(value, index.spec.key_path or "", index.spec.multi_entry):
                entry = _Entry(ikey, pkey)
                i = bisect.bisect_left(index.entries, entry)
                del index.entries[i]

    def _range(self, index: _Index, rng: KeyRange) -> list[_Entry]:
        lo, hi = _bounds(index.entries, rng, lambda e: e.ikey)
        return index.entries[lo:hi]

    def scan(self, index_name: str | None, rng: KeyRange) -> Iterator[tuple[Key, Key]]:
        """Yield ``(index key, primary key)`` pairs in key order within ``rng``."""
        if index_name is None:
            lo, hi = _bounds(self.order, rng, lambda k: k.key)
            for k in self.order[lo:hi]:
                yield k.key, k.key
        else:
            for e in self._range(self.indexes[index_name], rng):
                yield e.ikey, e.pkey

    def value(self, pkey: Key) -> Any:
        """Return a copy of the stored value of an existing record."""
        return copy.deepcopy(self.records[hashable_key(pkey)][1])
