"""IndexedDB keys: validation, the spec's comparison order, key ranges and key paths.

A key is a number (``int`` or ``float`` except NaN; ``bool`` is not a key), a
``datetime`` (a JS ``Date``), a ``str``, ``bytes`` (binary) or a list of keys. Keys
compare in the order number < date < string < binary < array, arrays element by
element, as the IndexedDB spec's "compare two keys" says.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cmp_to_key
from typing import Any, TypeAlias, cast

from panelot.idb.errors import DataError

__all__ = [
    "MAX_KEY",
    "MAX_SAFE_INTEGER",
    "MIN_KEY",
    "Key",
    "KeyPath",
    "KeyRange",
    "compare_keys",
    "evaluate_key_path",
    "hashable_key",
    "index_keys",
    "is_finite_number",
    "is_valid_key",
    "js_date",
    "key_path_value",
    "key_sort_key",
    "plain_string_keys",
    "signs_a_zero",
    "validate_key",
]

Key: TypeAlias = Any
"""A valid IndexedDB key (see the module docstring); checked at run time, not by type."""

KeyPath: TypeAlias = str | list[str] | None
"""A key path: one dotted path, a compound list of paths, or ``None`` for out-of-line keys."""

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer a JS number holds exactly; larger ints are refused as keys and values."""


def is_finite_number(value: int | float) -> bool:
    """Whether ``value`` is finite and a float can hold it (an int of 400 digits cannot).

    ``math.isfinite`` raises OverflowError for such an int; JSON (a backup or import
    file) can hold one anywhere a number goes.
    """
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


MIN_KEY: float = -math.inf
"""The lowest key, as Dexie's ``Dexie.minKey`` (``-Infinity``)."""

MAX_KEY: list[Any] = [[]]
"""A key above every number, date, string and binary key, as Dexie's ``Dexie.maxKey``."""

_NUMBER, _DATE, _STRING, _BINARY, _ARRAY = range(5)


def _type_rank(key: Any) -> int:
    if isinstance(key, bool):
        raise DataError(f"{key!r} is not a valid key: booleans are not keys")
    if isinstance(key, int | float):
        return _NUMBER
    if isinstance(key, datetime):
        return _DATE
    if isinstance(key, str):
        return _STRING
    if isinstance(key, bytes | bytearray | memoryview):
        return _BINARY
    if isinstance(key, list | tuple):
        return _ARRAY
    raise DataError(f"{key!r} is not a valid key")


def validate_key(value: Any, field: str = "key") -> Key:
    """Return ``value`` as a normalized key, or raise :class:`DataError` naming ``field``.

    Tuples become lists and bytearray/memoryview become ``bytes``.
    """
    if type(value) is str:  # the common case, without the walk's bookkeeping
        return value
    return _validate(value, field, set())


def _validate(value: Any, field: str, seen: set[int]) -> Key:
    if isinstance(value, bool) or value is None:
        raise DataError(f"{field}: {value!r} is not a valid key", field=field)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise DataError(f"{field}: {value} is beyond JS's safe integer range", field=field)
        return value
    if isinstance(value, float):
        if math.isnan(value):
            raise DataError(f"{field}: NaN is not a valid key", field=field)
        return 0.0 if value == 0 else value  # -0 is the key 0, as IndexedDB reads it back
    if isinstance(value, datetime):
        return js_date(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, list | tuple):
        if id(value) in seen:
            raise DataError(f"{field}: an array key may not contain itself", field=field)
        seen.add(id(value))
        out = [_validate(item, f"{field}[{i}]", seen) for i, item in enumerate(value)]
        seen.discard(id(value))
        return out
    raise DataError(
        f"{field}: a value of type {type(value).__name__} is not a valid key", field=field
    )


def js_date(value: datetime) -> datetime:
    """Return ``value`` as a JS ``Date`` holds it: UTC, whole milliseconds (naive means UTC)."""
    utc = (value if value.tzinfo is not None else value.replace(tzinfo=UTC)).astimezone(UTC)
    return utc.replace(microsecond=utc.microsecond // 1000 * 1000)


def is_valid_key(value: Any) -> bool:
    """Tell whether ``value`` is a valid key."""
    return _key_or_none(value) is not None


def compare_keys(a: Key, b: Key) -> int:
    """Compare two valid keys in IndexedDB order; return -1, 0 or 1."""
    ra, rb = _type_rank(a), _type_rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == _ARRAY:
        for x, y in zip(a, b, strict=False):
            c = compare_keys(x, y)
            if c:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    if ra == _BINARY:
        xa, xb = bytes(a), bytes(b)
        return int(xa > xb) - int(xa < xb)
    if ra == _STRING:
        # JS compares strings by UTF-16 code units, not by code points.
        ua, ub = a.encode("utf-16-be", "surrogatepass"), b.encode("utf-16-be", "surrogatepass")
        return int(ua > ub) - int(ua < ub)
    return int(a > b) - int(a < b)


def hashable_key(key: Key) -> Any:
    """Return a hashable stand-in for a key, equal exactly when the keys compare equal.

    Arrays become tagged tuples, binary keys tagged bytes, and ``-0.0`` is ``0`` (as a
    key it equals ``0``, and Python's float hash agrees).
    """
    if isinstance(key, list):
        return ("\0array", tuple(hashable_key(k) for k in key))
    if isinstance(key, bytes | bytearray | memoryview):
        return ("\0binary", bytes(key))
    return key


key_sort_key = cmp_to_key(compare_keys)
"""A ``sorted(..., key=...)`` adapter for IndexedDB key order."""


@dataclass(frozen=True, slots=True)
class KeyRange:
    """A key range as plain data, like Dexie's ``{lower, upper, lowerOpen, upperOpen}``.

    ``lower``/``upper`` of ``None`` mean unbounded on that side.
    """

    lower: Key = None
    upper: Key = None
    lower_open: bool = False
    upper_open: bool = False

    @classmethod
    def only(cls, key: Key) -> KeyRange:
        """Return the range holding exactly ``key``."""
        k = validate_key(key)
        return cls(k, k)

    @classmethod
    def bound(
        cls, lower: Key, upper: Key, lower_open: bool = False, upper_open: bool = False
    ) -> KeyRange:
        """Return a validated range between two keys; raise DataError if lower > upper."""
        lo, hi = validate_key(lower, "lower"), validate_key(upper, "upper")
        c = compare_keys(lo, hi)
        if c > 0 or (c == 0 and (lower_open or upper_open)):
            raise DataError("the lower bound of a key range is above its upper bound")
        return cls(lo, hi, lower_open, upper_open)

    @property
    def is_all(self) -> bool:
        """True when the range is unbounded on both sides."""
        return self.lower is None and self.upper is None

    def includes(self, key: Key) -> bool:
        """Tell whether ``key`` lies in the range."""
        if self.lower is not None:
            c = compare_keys(key, self.lower)
            if c < 0 or (c == 0 and self.lower_open):
                return False
        if self.upper is not None:
            c = compare_keys(key, self.upper)
            if c > 0 or (c == 0 and self.upper_open):
                return False
        return True

    def to_json(self) -> dict[str, Any]:
        """Return the range as Dexie-style plain data with camelCase names."""
        return {
            "lower": self.lower,
            "upper": self.upper,
            "lowerOpen": self.lower_open,
            "upperOpen": self.upper_open,
        }


_MISSING = object()


def _evaluate_one(value: Any, path: str) -> Any:
    if "." not in path:  # a plain field, the common case
        if path == "":
            return value
        return value[path] if isinstance(value, dict) and path in value else _MISSING
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return _MISSING
    return value


def _key_or_none(found: Any) -> Key | None:
    """``found`` as a normalized key, or ``None`` when it is not one.

    The common kinds are answered without raising: a record's booleans and nulls (a
    thread's ``archived``, say) are not keys, and an exception per index and write is
    costly, under Pyodide most of all.
    """
    kind = type(found)
    if kind is str:
        return cast("str", found)
    if kind is bool or found is None:
        return None
    if kind is int:
        return cast("int", found) if abs(found) <= MAX_SAFE_INTEGER else None
    if kind is float:
        if found != found:  # NaN
            return None
        return 0.0 if found == 0 else cast("float", found)
    try:
        return validate_key(found)
    except DataError:
        return None


def evaluate_key_path(value: Any, key_path: str | Sequence[str]) -> Key | None:
    """Return the valid key at ``key_path`` in ``value``, or ``None`` if missing or invalid.

    A compound (list) key path yields a list key only when every part is a valid key.
    """
    if isinstance(key_path, str):
        found = _evaluate_one(value, key_path)
        return None if found is _MISSING else _key_or_none(found)
    parts = []
    for path in key_path:
        found = _evaluate_one(value, path)
        key = None if found is _MISSING else _key_or_none(found)
        if key is None:
            return None
        parts.append(key)
    return parts


def plain_string_keys(values: Sequence[Any], key_path: Any) -> list[str] | None:
    """The keys at a plain field ``key_path`` of ``values``, when every one is a string.

    The cheap case of :func:`evaluate_key_path` over many records (a string needs no
    validation); ``None`` when the path is dotted or compound, or any value is not a
    dict or holds no string there: then evaluate each.
    """
    if not isinstance(key_path, str) or "." in key_path or not key_path:
        return None  # dotted, compound, or "" (the value itself: never a dict's field)
    keys = [value.get(key_path) if type(value) is dict else None for value in values]
    return cast("list[str]", keys) if all(type(key) is str for key in keys) else None


def key_path_value(value: Any, key_path: str) -> Any:
    """What ``value`` holds at a dotted ``key_path``, not yet a key (``None`` if missing)."""
    found = _evaluate_one(value, key_path)
    return None if found is _MISSING else found


def signs_a_zero(value: Any) -> bool:
    """Whether ``value`` is ``-0.0`` or an array holding one at any depth."""
    if isinstance(value, float):
        return value == 0 and math.copysign(1.0, value) < 0
    if isinstance(value, list | tuple):
        return any(signs_a_zero(item) for item in value)
    return False


def index_keys(value: Any, key_path: str | Sequence[str], multi_entry: bool) -> list[Key]:
    """Return the keys a record contributes to an index (none, one, or several for multiEntry)."""
    if multi_entry and isinstance(key_path, str):
        found = _evaluate_one(value, key_path)
        if isinstance(found, list):
            keys: list[Key] = []
            for item in found:
                if is_valid_key(item):
                    k = validate_key(item)
                    if not any(compare_keys(k, seen) == 0 for seen in keys):
                        keys.append(k)
            return keys
    key = evaluate_key_path(value, key_path)
    return [] if key is None else [key]
