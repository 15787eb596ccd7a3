"""Plain record values: what may be stored, deep copies, and primary-key resolution.

A storable value is plain data: ``dict`` with ``str`` keys, ``list``/``tuple``, ``str``,
``int``, ``float``, ``bool``, ``None``, ``bytes`` (stored as ``Uint8Array``) and
``datetime`` (stored as ``Date``). In the browser a JS ``Blob`` handle may also be
stored; :data:`EXTRA_STORABLE` lets the browser core register its type. Anything else
is refused with :class:`DataCloneError`, as the browser's structured clone would.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from panelot.idb.errors import DataCloneError, DataError
from panelot.idb.keys import MAX_SAFE_INTEGER, Key, evaluate_key_path, js_date, validate_key
from panelot.idb.schema import TableSpec

__all__ = [
    "EXTRA_STORABLE",
    "clone_value",
    "clone_values",
    "project",
    "resolve_primary_key",
    "set_key_path",
]

EXTRA_STORABLE: list[type] = []
"""Further leaf types stored as they are (the browser core adds its JS Blob proxy type)."""

_MAX_DEPTH = 200


class _Refused(Exception):
    """Internal: why a value cannot be stored, with its path built on the way out."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


def clone_value(value: Any, field: str = "value") -> Any:
    """Return a deep copy of ``value`` as plain data, or raise :class:`DataCloneError`.

    Tuples become lists, bytearray/memoryview become ``bytes`` and datetimes are
    normalized to UTC milliseconds. ``field`` names the path of the offending part in
    the error message; the path is only built when something is refused.
    """
    try:
        return _clone(value, 0)
    except _Refused as refused:
        path = field + "".join(reversed(refused.path))
        raise DataCloneError(f"{path}: {refused.message}", field=path) from None


def clone_values(values: Sequence[Any]) -> list[Any]:
    """Deep copies of a write's values; the error names the value as ``values[i]``."""
    return [clone_value(v, f"values[{i}]") for i, v in enumerate(values)]


_PLAIN_LEAVES = frozenset({str, bool, float, type(None)})


def _clone(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind in _PLAIN_LEAVES:
        return value  # NaN and infinities are storable values (not keys)
    if kind is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        raise _Refused(f"{value} is beyond JS's safe integer range and would lose precision")
    if depth > _MAX_DEPTH:
        raise _Refused(f"value nested deeper than {_MAX_DEPTH} levels")
    if kind is dict:
        out: dict[str, Any] = {}
        for k, v in value.items():
            if type(k) is not str:
                raise _Refused(f"object keys must be strings, got {type(k).__name__}")
            try:
                out[k] = v if type(v) in _PLAIN_LEAVES else _clone(v, depth + 1)
            except _Refused as refused:
                refused.path.append(f".{k}")
                raise
        return out
    if kind is list or kind is tuple:
        items = []
        for i, v in enumerate(value):
            try:
                items.append(v if type(v) in _PLAIN_LEAVES else _clone(v, depth + 1))
            except _Refused as refused:
                refused.path.append(f"[{i}]")
                raise
        return items
    return _clone_other(value, depth)


def _clone_other(value: Any, depth: int) -> Any:
    """Subclasses of plain types, binary data, dates and registered handles."""
    if isinstance(value, str):
        return str(value)  # plain, as a JS string reads back
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        return _clone(int(value), depth)
    if isinstance(value, dict):
        return _clone(dict(value), depth)
    if isinstance(value, list | tuple):
        return _clone(list(value), depth)
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, datetime):
        return js_date(value)
    if any(isinstance(value, t) for t in EXTRA_STORABLE):
        return value
    raise _Refused(f"a value of type {type(value).__name__} cannot be stored")


def set_key_path(value: dict[str, Any], key_path: str, key: Key) -> None:
    """Write a generated key into ``value`` at a dotted in-line key path."""
    parts = key_path.split(".")
    target = value
    for part in parts[:-1]:
        nxt = target.setdefault(part, {})  # IndexedDB creates missing parents when injecting
        if not isinstance(nxt, dict):
            raise DataError(f"{key_path}: cannot set a generated key here", field=key_path)
        target = nxt
    target[parts[-1]] = key


def resolve_primary_key(spec: TableSpec, value: Any, key: Key | None) -> Key | None:
    """Return the record's primary key, or ``None`` when the store must generate it.

    Raises :class:`DataError` naming the field for a missing or invalid key, and for an
    explicit key given to a store with in-line keys, as IndexedDB does.
    """
    pk = spec.primary_key
    if pk.key_path is None:
        if key is None:
            if pk.auto_increment:
                return None
            raise DataError(f"{spec.name}: a key is required (out-of-line keys)", field="key")
        return validate_key(key, "key")
    if key is not None:
        raise DataError(f"{spec.name}: records carry their own key; do not pass one", field="key")
    if not isinstance(value, dict):
        raise DataError(f"{spec.name}: a record must be an object", field="value")
    found = evaluate_key_path(value, pk.key_path)
    if found is not None:
        return found
    path = pk.key_path if isinstance(pk.key_path, str) else "+".join(pk.key_path)
    if pk.auto_increment and _absent(value, path):
        return None
    raise DataError(f"{spec.name}: {path} is missing or not a valid key", field=path)


def _absent(value: dict[str, Any], path: str) -> bool:
    target: Any = value
    for part in path.split("."):
        if not isinstance(target, dict) or part not in target:
            return True
        target = target[part]
    return False


def project(value: Any, fields: Sequence[str], omit: bool = False) -> Any:
    """``value`` with only ``fields`` (or, with ``omit``, all top-level fields but them).

    A field is a top-level name or a dotted key path, kept nested as it was; a path
    that does not resolve through objects is left out, and so is an absent field.
    Values that are not objects come back as they are. The browser core's helper
    (``projector`` in ``web/wiring.mjs``) projects the same way in JS.
    """
    if not isinstance(value, dict):
        return value
    if omit:
        return {k: x for k, x in value.items() if k not in fields}
    out: dict[str, Any] = {}
    for field in fields:
        *steps, last = field.split(".")
        source: Any = value
        for step in steps:
            source = source.get(step) if isinstance(source, dict) else None
        if not isinstance(source, dict) or last not in source:
            continue
        target = out
        for step in steps:
            target = target.setdefault(step, {})
        target[last] = source[last]
    return out
