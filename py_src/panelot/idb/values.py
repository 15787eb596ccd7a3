"""Plain record values: what may be stored, deep copies, and primary-key resolution.

A storable value is plain data: ``dict`` with ``str`` keys, ``list``/``tuple``, ``str``,
``int``, ``float``, ``bool``, ``None``, ``bytes`` (stored as ``Uint8Array``) and
``datetime`` (stored as ``Date``). In the browser a JS ``Blob`` handle may also be
stored; :data:`EXTRA_STORABLE` lets the browser core register its type. Anything else
is refused with :class:`DataCloneError`, as the browser's structured clone would.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from .errors import DataCloneError, DataError
from .keys import MAX_SAFE_INTEGER, Key, evaluate_key_path, js_date, validate_key
from .schema import TableSpec

__all__ = ["EXTRA_STORABLE", "clone_value", "resolve_primary_key", "set_key_path"]

EXTRA_STORABLE: list[type] = []
"""Further leaf types stored as they are (the browser core adds its JS Blob proxy type)."""

_MAX_DEPTH = 200


def clone_value(value: Any, field: str = "value") -> Any:
    """Return a deep copy of ``value`` as plain data, or raise :class:`DataCloneError`.

    Tuples become lists and bytearray/memoryview become ``bytes``. ``field`` names the
    path of the offending part in the error message.
    """
    return _clone(value, field, 0)


def _clone(value: Any, field: str, depth: int) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise DataCloneError(
                f"{field}: {value} is beyond JS's safe integer range and would lose precision",
                field=field,
            )
        return value
    if isinstance(value, float):
        return value  # NaN and infinities are storable values (not keys)
    if depth > _MAX_DEPTH:
        raise DataCloneError(f"{field}: value nested deeper than {_MAX_DEPTH} levels", field=field)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise DataCloneError(
                    f"{field}: object keys must be strings, got {type(k).__name__}", field=field
                )
            out[k] = _clone(v, f"{field}.{k}", depth + 1)
        return out
    if isinstance(value, list | tuple):
        return [_clone(v, f"{field}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, datetime):
        return js_date(value)
    if any(isinstance(value, t) for t in EXTRA_STORABLE):
        return value
    raise DataCloneError(
        f"{field}: a value of type {type(value).__name__} cannot be stored", field=field
    )


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


def is_number_key(key: Key) -> bool:
    """True for a finite or infinite number key (what bumps a key generator)."""
    return isinstance(key, int | float) and not isinstance(key, bool) and not math.isnan(key)
