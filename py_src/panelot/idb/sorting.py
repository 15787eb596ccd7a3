"""Dexie's ``cmp`` for any values, and ``Collection.sortBy`` built on it.

Dexie's ``cmp`` orders keys as IndexedDB does (number < date < string < binary <
array) and answers ``NaN`` for anything that is not a key (``null``, a boolean, an
object, a missing field), also inside arrays. ``sortBy`` sorts with it in V8's
``Array.prototype.sort``, whose comparisons read a ``NaN`` as equal (the spec's
SortCompare). When every value compares, any stable sort gives V8's order, so
Python's is used. When some do not, "equal" is no longer transitive and the order
depends on the algorithm's steps. The browser core asks V8 itself (``native``). Else,
for fewer than 64 values V8 sorts with one run and a binary insertion sort, which
:func:`v8_sort` repeats step for step; for longer lists V8 merges runs, which is not
repeated here, and the order of such values can differ from V8's (README, known
limits).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from functools import cmp_to_key
from typing import Any

from panelot.idb.errors import ArgumentTypeError
from panelot.idb.keys import compare_keys, key_sort_key

__all__ = ["MISSING", "NativeSort", "dexie_cmp", "sort_by_path", "tag_for_js", "v8_sort"]

MISSING: Any = object()
"""A field that is absent (JS ``undefined``)."""

_NUMBER, _DATE, _STRING, _BINARY, _ARRAY = range(5)


def _rank(x: Any) -> int | None:
    if isinstance(x, bool) or x is None or x is MISSING:
        return None
    if isinstance(x, int | float):
        return _NUMBER
    if isinstance(x, datetime):
        return _DATE
    if isinstance(x, str):
        return _STRING
    if isinstance(x, bytes | bytearray | memoryview):
        return _BINARY
    if isinstance(x, list):
        return _ARRAY
    return None


def _tag(x: Any) -> str:
    """Dexie's ``type(x)``: ``typeof``, or the object's tag (``Array``, ``Date``, ...)."""
    if x is MISSING:
        return "undefined"
    if x is None:
        return "Null"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, int | float):
        return "number"
    if isinstance(x, str):
        return "string"
    if isinstance(x, list):
        return "Array"
    if isinstance(x, bytes | bytearray | memoryview):
        return "binary"
    if isinstance(x, datetime):
        return "Date"
    return "Object"


def dexie_cmp(a: Any, b: Any) -> float:
    """Dexie's ``cmp(a, b)``, check for check: -1, 0, 1, or ``nan``.

    Values of different types: an array is greater than anything, then binary, then a
    string, then a date; a number against a non-key (``null``, a boolean, an object, a
    missing field) is ``nan``. Two values of one type: numbers, dates and strings by
    ``<``/``>`` (so a NaN number equals every number), binary by bytes, arrays item by
    item; two non-keys are ``nan``.
    """
    ta, tb = _tag(a), _tag(b)
    if ta != tb:
        for tag in ("Array", "binary", "string", "Date"):
            if ta == tag:
                return 1
            if tb == tag:
                return -1
        return math.nan
    if ta in ("number", "Date"):
        return 1 if a > b else -1 if a < b else 0
    if ta in ("string", "binary"):
        return compare_keys(a, b)
    if ta == "Array":
        for x, y in zip(a, b, strict=False):
            c = dexie_cmp(x, y)
            if c != 0:  # NaN included, as Dexie's compareArrays returns it
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    return math.nan


def _get(value: Any, part: str) -> Any:
    """``value[part]`` as JS reads it; reading a field of null or undefined is a TypeError."""
    if value is None or value is MISSING:
        raise ArgumentTypeError(
            f"sort_by(): cannot read {part!r} of {'null' if value is None else 'undefined'}"
        )
    if isinstance(value, dict):
        return value.get(part, MISSING)
    if isinstance(value, list | str) and part.isdigit():
        i = int(part)
        return value[i] if i < len(value) else MISSING
    if isinstance(value, list | str) and part == "length":
        return len(value)
    return MISSING


NativeSort = Callable[[list[Any], bool], list[int]]
"""A core's own sort (the browser core asks V8): the order of the sort values."""


def sort_by_path(
    values: list[Any], key_path: str, reverse: bool, native: NativeSort | None = None
) -> list[Any]:
    """Sort ``values`` by the value at ``key_path`` as Dexie's ``sortBy`` does.

    ``native``, when the core has one, sorts values that do not all compare the way V8
    does, exactly (the browser core's ``sort_order``).
    """
    parts = key_path.split(".")
    order = -1 if reverse else 1

    def at(value: Any) -> Any:
        for part in parts:
            value = _get(value, part)
        return value

    if len(values) < 2:  # V8 compares nothing: Dexie's getval never runs, nor fails
        return list(values)
    # Dexie reads the path inside the comparator: with two or more values every one is
    # compared, so a path through null or undefined is its TypeError.
    keyed = [(at(v), v) for v in values]
    if all(_rank(k) is not None and not _has_nan(k) for k, _ in keyed):
        keyed.sort(key=lambda kv: key_sort_key(kv[0]), reverse=reverse)  # stable either way
        return [v for _, v in keyed]

    if native is not None:
        order_of = native([k for k, _ in keyed], reverse)
        return [keyed[i][1] for i in order_of]

    def compare(x: tuple[Any, Any], y: tuple[Any, Any]) -> float:
        c = dexie_cmp(x[0], y[0]) * order
        return 0 if math.isnan(c) else c  # the spec's SortCompare: NaN is +0

    if len(keyed) < 64:
        return [v for _, v in v8_sort(keyed, compare)]

    def less(x: tuple[Any, Any], y: tuple[Any, Any]) -> int:
        return -1 if compare(x, y) < 0 else 0

    keyed.sort(key=cmp_to_key(less))
    return [v for _, v in keyed]


def _has_nan(k: Any) -> bool:
    if isinstance(k, list):
        return any(_rank(x) is None or _has_nan(x) for x in k)
    return isinstance(k, float) and math.isnan(k)


def v8_sort(items: list[Any], compare: Callable[[Any, Any], float]) -> list[Any]:
    """V8's ``Array.prototype.sort`` for fewer than 64 items (one run, then insertion).

    ``compare`` may return ``nan``; each test is V8's own (``< 0`` or ``>= 0``).
    """
    a = list(items)
    n = len(a)
    if n < 2:
        return a
    run = _count_and_make_run(a, 0, n, compare)
    if run < n:
        _binary_insertion_sort(a, 0, run, n, compare)
    return a


def _count_and_make_run(
    a: list[Any], low_arg: int, high: int, compare: Callable[[Any, Any], float]
) -> int:
    low = low_arg + 1
    if low == high:
        return 1
    run = 2
    descending = compare(a[low], a[low - 1]) < 0
    previous = a[low]
    for idx in range(low + 1, high):
        current = a[idx]
        order = compare(current, previous)
        if (order >= 0) if descending else (order < 0):
            break
        previous = current
        run += 1
    if descending:
        a[low_arg : low_arg + run] = a[low_arg : low_arg + run][::-1]
    return run


def _binary_insertion_sort(
    a: list[Any], low: int, start: int, high: int, compare: Callable[[Any, Any], float]
) -> None:
    for i in range(start + 1 if low == start else start, high):
        pivot = a[i]
        left, right = low, i
        while left < right:
            mid = left + ((right - left) >> 1)
            if compare(pivot, a[mid]) < 0:
                right = mid
            else:
                left = mid + 1
        a[left + 1 : i + 1] = a[left:i]
        a[left] = pivot


def tag_for_js(value: Any) -> Any:
    """A sort value as JSON data for the browser core's ``sortOrder`` (see wiring.mjs)."""
    if value is MISSING:
        return {"\0": "u"}
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return {
                "\0": "n",
                "v": "NaN" if math.isnan(value) else str(value).replace("inf", "Infinity"),
            }
        return value
    if isinstance(value, list):
        return [tag_for_js(v) for v in value]
    if isinstance(value, datetime):
        return {"\0": "d", "v": value.timestamp() * 1000}
    if isinstance(value, bytes | bytearray | memoryview):
        return {"\0": "b", "v": bytes(value).hex()}
    return {"\0": "o"}
