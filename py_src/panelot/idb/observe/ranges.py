"""``RangeSet``: a set of closed key intervals, as Dexie's ``RangeSet``.

Kept as a sorted list of disjoint ``(from, to)`` intervals ordered by
:func:`~panelot.idb.keys.compare_keys`; added intervals are merged lazily, when the set
is next read. :meth:`RangeSet.to_tree` and :meth:`RangeSet.from_tree` convert to and
from the shape Dexie sends: a balanced binary tree of nodes ``{from, to, d, l, r}``
(``d`` the height), or ``{d: 0}`` for the empty set.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cmp_to_key
from typing import Any

from panelot.idb.keys import MAX_KEY, MIN_KEY, Key, compare_keys, is_valid_key

__all__ = ["FULL", "MAX_NODES", "RangeSet"]

FULL: tuple[Key, Key] = (MIN_KEY, MAX_KEY)
"""Every key (Dexie's ``FULL_RANGE``: ``minKey`` to ``maxKey``)."""

MAX_NODES = 100_000
"""A received tree with more nodes than this is refused as malformed."""


def _compare_starts(a: tuple[Key, Key], b: tuple[Key, Key]) -> int:
    return compare_keys(a[0], b[0])


_by_start = cmp_to_key(_compare_starts)


class RangeSet:
    """Closed intervals of IndexedDB keys; answers whether two sets share a key."""

    __slots__ = ("_dirty", "_ranges")

    def __init__(self, ranges: Iterable[tuple[Key, Key]] = ()) -> None:
        self._ranges: list[tuple[Key, Key]] = []
        self._dirty = False
        for lo, hi in ranges:
            self.add_range(lo, hi)

    @classmethod
    def full(cls) -> RangeSet:
        """The set of every key."""
        return cls([FULL])

    def add_range(self, lo: Key, hi: Key) -> RangeSet:
        """Add the keys from ``lo`` to ``hi``, both included; ``lo > hi`` is a ValueError."""
        if compare_keys(lo, hi) > 0:
            raise ValueError(f"a range's start {lo!r} is above its end {hi!r}")
        self._ranges.append((lo, hi))
        self._dirty = True
        return self

    def add_key(self, key: Key) -> RangeSet:
        """Add one key."""
        self._ranges.append((key, key))
        self._dirty = True
        return self

    def add_keys(self, keys: Iterable[Key]) -> RangeSet:
        """Add several keys."""
        self._ranges.extend((k, k) for k in keys)
        self._dirty = True
        return self

    def update(self, other: RangeSet) -> RangeSet:
        """Add every interval of ``other``."""
        if other._ranges:
            self._ranges.extend(other._ranges)
            self._dirty = True
        return self

    def intervals(self) -> list[tuple[Key, Key]]:
        """The disjoint intervals, in key order."""
        if self._dirty:
            self._ranges = _merged(self._ranges)
            self._dirty = False
        return self._ranges

    def __iter__(self) -> Iterator[tuple[Key, Key]]:
        """Iterate over the disjoint intervals in key order."""
        return iter(self.intervals())

    def __len__(self) -> int:
        """The number of disjoint intervals."""
        return len(self.intervals())

    def __bool__(self) -> bool:
        """False for the empty set."""
        return bool(self._ranges)

    def __eq__(self, other: object) -> bool:
        """Equal when both hold the same keys (the same merged intervals)."""
        if not isinstance(other, RangeSet):
            return NotImplemented
        a, b = self.intervals(), other.intervals()
        return len(a) == len(b) and all(
            compare_keys(x[0], y[0]) == 0 and compare_keys(x[1], y[1]) == 0
            for x, y in zip(a, b, strict=True)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        """``RangeSet([(from, to), ...])``."""
        return f"RangeSet({self.intervals()!r})"

    def has_key(self, key: Key) -> bool:
        """True if ``key`` lies in one of the intervals."""
        return any(
            compare_keys(lo, key) <= 0 <= compare_keys(hi, key) for lo, hi in self.intervals()
        )

    def overlaps(self, other: RangeSet) -> bool:
        """True if some key lies in both sets."""
        a, b = self.intervals(), other.intervals()
        i = j = 0
        while i < len(a) and j < len(b):
            (alo, ahi), (blo, bhi) = a[i], b[j]
            if compare_keys(alo, bhi) <= 0 and compare_keys(blo, ahi) <= 0:
                return True
            if compare_keys(ahi, bhi) < 0:
                i += 1
            else:
                j += 1
        return False

    # -- Dexie's tree shape -------------------------------------------------------------

    def to_tree(self, key: Any = None) -> dict[str, Any]:
        """The set as Dexie's balanced interval tree; ``key(k)`` converts each key."""
        convert = key or (lambda k: k)
        ranges = self.intervals()

        def build(lo: int, hi: int) -> dict[str, Any] | None:
            if lo >= hi:
                return None
            mid = (lo + hi) // 2
            left, right = build(lo, mid), build(mid + 1, hi)
            depth = 1 + max(left["d"] if left else 0, right["d"] if right else 0)
            start, end = ranges[mid]
            return {"from": convert(start), "to": convert(end), "d": depth, "l": left, "r": right}

        return build(0, len(ranges)) or {"d": 0}

    @classmethod
    def from_tree(cls, tree: Any, wide: object = None) -> RangeSet:
        """Read Dexie's tree (any shape, balanced or not); raise ValueError if malformed.

        A bound that is, or holds, the ``wide`` marker (a key the wire could not carry)
        makes the result every key.
        """
        if not isinstance(tree, dict):
            raise ValueError("a range set must be an object")
        out = cls()
        if "from" not in tree:
            return out  # Dexie's empty set: {d: 0}
        stack: list[Any] = [tree]
        seen = 0
        while stack:
            node = stack.pop()
            if node is None:
                continue
            seen += 1
            if not isinstance(node, dict) or seen > MAX_NODES:
                raise ValueError("a range set node must be an object, and nodes be few")
            lo, hi = node.get("from"), node.get("to")
            if wide is not None and (_holds(lo, wide) or _holds(hi, wide)):
                return cls.full()
            if not (is_valid_key(lo) and is_valid_key(hi)):
                raise ValueError(f"a range's bounds must be keys, not {lo!r} and {hi!r}")
            out.add_range(lo, hi)
            stack.append(node.get("l"))
            stack.append(node.get("r"))
        return out


def _holds(key: Any, marker: object) -> bool:
    if key is marker:
        return True
    return isinstance(key, list) and any(_holds(k, marker) for k in key)


def _merged(ranges: list[tuple[Key, Key]]) -> list[tuple[Key, Key]]:
    """Sort intervals by start and merge the overlapping ones."""
    ordered = sorted(ranges, key=_by_start)
    out: list[tuple[Key, Key]] = []
    for lo, hi in ordered:
        if out and compare_keys(lo, out[-1][1]) <= 0:
            if compare_keys(hi, out[-1][1]) > 0:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out
