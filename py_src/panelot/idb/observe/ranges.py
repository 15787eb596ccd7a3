"""``RangeSet``: a set of closed key intervals, as Dexie's ``RangeSet``.

Kept as a sorted list of disjoint ``(from, to)`` intervals ordered by
:func:`order` (IndexedDB key order as a native sort key); added intervals are merged
lazily, when the set is next read. :meth:`RangeSet.to_tree` and
:meth:`RangeSet.from_tree` convert to and from the shape Dexie sends: a balanced binary
tree of nodes ``{from, to, d, l, r}`` (``d`` the height), or ``{d: 0}`` for the empty set.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from datetime import datetime
from operator import itemgetter
from typing import Any

from panelot.idb.keys import MIN_KEY, Key, is_valid_key

__all__ = ["FULL", "MAX_NODES", "TOP", "RangeSet", "order"]


class _Top:
    """Above every key: IndexedDB has no greatest key (arrays nest without end)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "TOP"


TOP: Any = _Top()
"""The upper end of every range that has none (above Dexie's ``maxKey``, ``[[]]``, too).
Dexie is sent ``maxKey`` in its place; other Python contexts get it as ``{"$top": 1}``."""

FULL: tuple[Key, Key] = (MIN_KEY, TOP)
"""Every key."""

MAX_NODES = 100_000
"""A received tree with more nodes than this is refused as malformed."""


def order(key: Key) -> Any:
    """A native sort key in IndexedDB key order (number < date < string < binary < array).

    Strings compare by UTF-16 code units, as in JS; arrays element by element, a
    prefix first. Sorting with it is several times faster than with
    :func:`~panelot.idb.keys.compare_keys`, which it agrees with.
    """
    kind = type(key)
    if key is TOP:
        return (5,)
    if kind is str:
        return (2, key.encode("utf-16-be", "surrogatepass"))
    if kind is int or kind is float:
        return (0, key)
    if kind is list:
        return (4, tuple(order(k) for k in key))
    if isinstance(key, datetime):
        return (1, key.timestamp())
    if isinstance(key, bytes | bytearray | memoryview):
        return (3, bytes(key))
    return (0, key)  # an int or float subclass


class RangeSet:
    """Closed intervals of IndexedDB keys; answers whether two sets share a key."""

    __slots__ = ("_dirty", "_his", "_los", "_ranges")

    def __init__(self, ranges: Iterable[tuple[Key, Key]] = ()) -> None:
        self._ranges: list[tuple[Key, Key]] = []
        self._los: list[Any] = []
        self._his: list[Any] = []
        self._dirty = False
        for lo, hi in ranges:
            self.add_range(lo, hi)

    @classmethod
    def full(cls) -> RangeSet:
        """The set of every key."""
        return cls([FULL])

    def add_range(self, lo: Key, hi: Key) -> RangeSet:
        """Add the keys from ``lo`` to ``hi``, both included; ``lo > hi`` is a ValueError."""
        if order(lo) > order(hi):
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
            self._ranges, self._los, self._his = _merged(self._ranges)
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
        self.intervals()
        other.intervals()
        return self._los == other._los and self._his == other._his

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        """``RangeSet([(from, to), ...])``."""
        return f"RangeSet({self.intervals()!r})"

    def has_key(self, key: Key) -> bool:
        """True if ``key`` lies in one of the intervals."""
        self.intervals()
        k = order(key)
        i = bisect.bisect_left(self._his, k)  # the first interval not ending before key
        return i < len(self._los) and self._los[i] <= k

    def overlaps(self, other: RangeSet) -> bool:
        """True if some key lies in both sets (a bisection per interval of the smaller)."""
        self.intervals()
        other.intervals()
        small, large = (self, other) if len(self._los) <= len(other._los) else (other, self)
        los, his = large._los, large._his
        n = len(los)
        for lo, hi in zip(small._los, small._his, strict=True):
            i = bisect.bisect_left(his, lo)  # the first interval of large ending at or after lo
            if i < n and los[i] <= hi:
                return True
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
            if not ((lo is TOP or is_valid_key(lo)) and (hi is TOP or is_valid_key(hi))):
                raise ValueError(f"a range's bounds must be keys, not {lo!r} and {hi!r}")
            out.add_range(lo, hi)
            stack.append(node.get("l"))
            stack.append(node.get("r"))
        return out


def _holds(key: Any, marker: object) -> bool:
    if key is marker:
        return True
    return isinstance(key, list) and any(_holds(k, marker) for k in key)


def _merged(
    ranges: list[tuple[Key, Key]],
) -> tuple[list[tuple[Key, Key]], list[Any], list[Any]]:
    """Sort intervals by start and merge the overlapping ones; also their sort keys."""
    if len(ranges) == 1:  # the common case of a small write: one key, or one range
        lo, hi = ranges[0]
        olo = order(lo)
        return list(ranges), [olo], [olo if hi is lo else order(hi)]
    keyed = sorted([(order(lo), lo, hi) for lo, hi in ranges], key=itemgetter(0))
    out: list[tuple[Key, Key]] = []
    los: list[Any] = []
    his: list[Any] = []
    for olo, lo, hi in keyed:
        ohi = olo if hi is lo else order(hi)
        if out and olo <= his[-1]:
            if ohi > his[-1]:
                out[-1] = (out[-1][0], hi)
                his[-1] = ohi
        else:
            out.append((lo, hi))
            los.append(olo)
            his.append(ohi)
    return out, los, his
