"""Dexie's cursor iteration, replayed over rows already read: the order of a collection.

Dexie runs a collection as a cursor walk. At each entry the cursor lands on, it asks
the where-clause's *algorithm* (``anyOf``, ``inAnyRange``, the ignore-case ones),
then the *filters* (``filter``, ``until``, ``distinct``) in the order they were
called, then the *replay filters* (``offset``, ``limit``) in the order they were
called; the first that says no ends the entry's turn. Each of them may change how
the cursor moves on: continue to a key, advance several entries, or stop. That is
why ``limit(10).offset(50)`` is empty, and why an ``offset`` of a plain range made
before a ``filter`` jumps over entries the filter never sees. ``or`` runs one cursor
per part in the same transaction; IndexedDB answers their requests in turn, so the
parts' entries interleave, each cursor taking one step per turn.

:func:`walk` replays exactly that over lists of rows read in bulk, so a query takes a
few ``getAll``-style round trips instead of one per entry and still answers as Dexie.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from panelot.idb.errors import DataError
from panelot.idb.keys import Key, compare_keys, hashable_key, key_sort_key

__all__ = [
    "AnyOfRun",
    "Control",
    "Cursor",
    "RangesRun",
    "Row",
    "accept",
    "merge_ranges",
    "run_stages",
    "Stage",
    "Step",
    "walk",
]

Row: TypeAlias = tuple[Key, Key, Any]
"""What a cursor lands on: ``(index key, primary key, value)``."""

_CONTINUE, _ADVANCE, _SEEK, _STOP = range(4)


class Control:
    """How the cursor moves on after an entry: the last call wins, as in Dexie."""

    __slots__ = ("action", "arg")

    def __init__(self) -> None:
        self.action = _CONTINUE
        self.arg: Any = None

    def stop(self) -> None:
        """Stop this cursor after the entry (Dexie's ``advance(resolve)``)."""
        self.action, self.arg = _STOP, None

    def advance(self, n: int) -> None:
        """Move the cursor ``n`` entries on (``cursor.advance(n)``)."""
        self.action, self.arg = _ADVANCE, n

    def seek(self, key: Key) -> None:
        """Continue the cursor at the first entry at or past ``key`` (``cursor.continue(key)``)."""
        self.action, self.arg = _SEEK, key


Stage: TypeAlias = Callable[[Row, Control], bool]
"""A filter or replay filter of one run: keep the row or not, perhaps moving the cursor."""


class Algorithm(Protocol):
    """A where-clause's algorithm for one run (its state lives in the object)."""

    def step(self, key: Key) -> bool | Key | None:
        """``True``: the key matches; ``False``: go on; a key: continue there; ``None``: stop."""
        ...


@dataclass(frozen=True, slots=True)
class Step:
    """A refinement as it was called: a filter (``filter``, ``until``, ``distinct``) or a replay.

    ``kind`` is ``filter``, ``until``, ``distinct``, ``offset`` or ``limit``. An offset
    made while the collection was a plain key range is ``plain``: Dexie advances the
    cursor over the skipped entries instead of counting them.
    """

    kind: Literal["filter", "until", "distinct", "offset", "limit"]
    fn: Callable[[Any], Any] | None = None
    n: int = 0
    include: bool = False
    plain: bool = False

    def stage(self) -> Stage:
        """A fresh stage for one run (offsets and limits count down from here)."""
        fn = self.fn
        if self.kind == "filter":
            assert fn is not None
            return lambda row, ctl: bool(fn(row[2]))
        if self.kind == "until":
            assert fn is not None
            include = self.include

            def until(row: Row, ctl: Control) -> bool:
                if fn(row[2]):
                    ctl.stop()
                    return include
                return True

            return until
        if self.kind == "distinct":
            seen: set[Any] = set()

            def distinct(row: Row, ctl: Control) -> bool:
                k = hashable_key(row[1])
                if k in seen:
                    return False
                seen.add(k)
                return True

            return distinct
        if self.kind == "limit":
            left = [self.n]

            def limit(row: Row, ctl: Control) -> bool:
                left[0] -= 1
                if left[0] <= 0:
                    ctl.stop()
                return left[0] >= 0

            return limit
        return _plain_offset(self.n) if self.plain else _counted_offset(self.n)


def _plain_offset(n: int) -> Stage:
    left = [n]

    def offset(row: Row, ctl: Control) -> bool:
        if left[0] == 0:
            return True
        if left[0] == 1:
            left[0] = 0
            return False
        ctl.advance(left[0])
        left[0] = 0
        return False

    return offset


def _counted_offset(n: int) -> Stage:
    left = [n]

    def offset(row: Row, ctl: Control) -> bool:
        left[0] -= 1
        return left[0] < 0

    return offset


Sink: TypeAlias = Callable[[Row, Control], None]


@dataclass(slots=True)
class Cursor:
    """One cursor of a run: its rows in walking order, its algorithm, stages and sink."""

    rows: Sequence[Row]
    reverse: bool
    stages: list[Stage]
    sink: Sink
    algorithm: Algorithm | None = None
    seek_key: Callable[[Key], Key] | None = None
    """Turns an algorithm's key into a key of the real index (a virtual index pads it)."""
    pos: int = 0
    done: bool = False
    _order: list[Any] | None = field(default=None, repr=False)

    def turn(self) -> None:
        """Take one step: land on the current row, run it through, move on."""
        if self.pos >= len(self.rows):
            self.done = True
            return
        row = self.rows[self.pos]
        ctl = Control()
        keep = True
        if self.algorithm is not None:
            verdict = self.algorithm.step(row[0])
            if verdict is not True:
                keep = False
                if verdict is None:
                    ctl.stop()
                elif verdict is not False:
                    ctl.seek(verdict)
        if keep:
            for stage in self.stages:
                if not stage(row, ctl):
                    keep = False
                    break
        if keep:
            self.sink(row, ctl)
        self._move(ctl, row)

    def _move(self, ctl: Control, row: Row) -> None:
        if ctl.action == _CONTINUE:
            self.pos += 1
        elif ctl.action == _ADVANCE:
            self.pos += ctl.arg
        elif ctl.action == _STOP:
            self.done = True
        else:
            target = ctl.arg if self.seek_key is None else self.seek_key(ctl.arg)
            here = compare_keys(target, row[0])
            if (here >= 0) if self.reverse else (here <= 0):
                raise DataError(
                    "a cursor was continued to a key at or before its position "
                    f"({target!r}); IndexedDB refuses that"
                )
            self.pos = self._find(target)
        if self.pos >= len(self.rows):
            self.done = True

    def _find(self, target: Key) -> int:
        if self._order is None:
            self._order = [key_sort_key(r[0]) for r in self.rows]
        t = key_sort_key(target)
        if not self.reverse:
            return max(self.pos + 1, bisect_left(self._order, t))
        # Descending rows: the first whose key is at or below the target.
        lo, hi = self.pos + 1, len(self.rows)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._order[mid] > t:
                lo = mid + 1
            else:
                hi = mid
        return lo


def run_stages(rows: Sequence[Row], stages: list[Stage]) -> list[Row]:
    """One cursor with no algorithm: :func:`walk`'s answer, in a tighter loop."""
    if not stages:
        return list(rows)
    out: list[Row] = []
    pos, n = 0, len(rows)
    ctl = Control()
    while pos < n:
        row = rows[pos]
        ctl.action = _CONTINUE
        for stage in stages:
            if not stage(row, ctl):
                break
        else:
            out.append(row)
        action = ctl.action
        if action == _CONTINUE:
            pos += 1
        elif action == _ADVANCE:
            pos += ctl.arg
        else:  # a stop; no stage seeks
            break
    return out


def accept(rows: Sequence[Row], reverse: bool, algorithm: Algorithm) -> list[Row]:
    """The rows an algorithm alone accepts in one walk (seeking as it asks)."""
    out: list[Row] = []
    cursor = Cursor(rows, reverse, [], lambda row, ctl: None, algorithm)
    pos, n = 0, len(rows)
    while pos < n:
        row = rows[pos]
        verdict = algorithm.step(row[0])
        if verdict is True:
            out.append(row)
            pos += 1
        elif verdict is False:
            pos += 1
        elif verdict is None:
            break
        else:
            cursor.pos = pos
            ctl = Control()
            ctl.seek(verdict)
            cursor._move(ctl, row)
            pos = cursor.pos
    return out


def walk(cursors: Sequence[Cursor]) -> None:
    """Run the cursors to the end, one step each in turn, in the order they were opened."""
    queue = deque(c for c in cursors if c.rows)
    for c in cursors:
        if not c.rows:
            c.done = True
    while queue:
        c = queue.popleft()
        c.turn()
        if not c.done:
            queue.append(c)


def _cmp_in(reverse: bool) -> Callable[[Key, Key], int]:
    if reverse:
        return lambda a, b: compare_keys(b, a)
    return compare_keys


class AnyOfRun:
    """Dexie's ``anyOf`` algorithm: walk a sorted set, continuing to the next member."""

    __slots__ = ("_cmp", "_i", "_set")

    def __init__(self, keys: Sequence[Key], reverse: bool) -> None:
        self._set = sorted(keys, key=key_sort_key, reverse=reverse)
        self._cmp = _cmp_in(reverse)
        self._i = 0

    def step(self, key: Key) -> bool | Key | None:
        """The algorithm's verdict on the cursor's key."""
        while self._cmp(key, self._set[self._i]) > 0:
            self._i += 1
            if self._i == len(self._set):
                return None
        if self._cmp(key, self._set[self._i]) == 0:
            return True
        return self._set[self._i]


class RangesRun:
    """Dexie's ``inAnyRange`` algorithm over its merged ranges ``[lower, upper]``."""

    __slots__ = ("_asc", "_lowers", "_pos", "_reverse", "_set", "_uppers")

    def __init__(
        self, ranges: Sequence[tuple[Key, Key]], lowers: bool, uppers: bool, reverse: bool
    ) -> None:
        self._set = sorted(ranges, key=lambda r: key_sort_key(r[0]), reverse=reverse)
        self._lowers, self._uppers, self._reverse = lowers, uppers, reverse
        self._pos = 0

    def _beyond(self, key: Key) -> bool:
        c = compare_keys(key, self._set[self._pos][1])
        return c > 0 if self._uppers else c >= 0

    def _before(self, key: Key) -> bool:
        c = compare_keys(self._set[self._pos][0], key)
        return c > 0 if self._lowers else c >= 0

    def step(self, key: Key) -> bool | Key | None:
        """The algorithm's verdict on the cursor's key."""
        check = self._before if self._reverse else self._beyond
        while check(key):
            self._pos += 1
            if self._pos == len(self._set):
                return None
        lo, hi = self._set[self._pos]
        if not self._beyond(key) and not self._before(key):
            return True
        if compare_keys(key, hi) == 0 or compare_keys(key, lo) == 0:
            return False
        return hi if self._reverse else lo


def merge_ranges(ranges: Sequence[tuple[Key, Key]]) -> list[tuple[Key, Key]]:
    """Dexie's ``inAnyRange`` merge: each range joins the first one it overlaps, once."""
    merged: list[list[Key]] = []
    for lo, hi in ranges:
        for r in merged:
            if compare_keys(lo, r[1]) < 0 and compare_keys(hi, r[0]) > 0:
                r[0] = lo if compare_keys(lo, r[0]) < 0 else r[0]
                r[1] = hi if compare_keys(hi, r[1]) > 0 else r[1]
                break
        else:
            merged.append([lo, hi])
    merged.sort(key=lambda r: key_sort_key(r[0]))
    return [(r[0], r[1]) for r in merged]
