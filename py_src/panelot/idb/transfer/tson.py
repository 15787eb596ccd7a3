"""Typeson's JSON form of values JSON cannot carry, as ``dexie-export-import`` writes it.

A row of an export is a JSON value. When the stored value holds something JSON cannot
carry (a Blob, binary, a date, NaN or an infinity), the addon's Typeson replaces each
such part by a JSON stand-in and records its kind under ``$types``, keyed by the
part's key path (components joined by ``.``; ``~`` and ``.`` inside a name escaped as
``~0`` and ``~1``)::

    {"id": "a1", "bytes": {"type": "image/png", "data": "iVBORw0..."},
     "$types": {"bytes": "blob2"}}

A root that is not a plain object (an out-of-line row ``[key, value]``), or an object
that already has a ``$types`` field, is wrapped: ``{"$": value, "$types": {"$": {...}}}``,
or ``{"$": value, "$types": true}`` when nothing was replaced.

The kinds written here are the ones ``panelot.idb`` stores: ``blob2`` (``{type, data}``
with base64 data), ``uint8array2`` with its ``arraybuffer`` (``bytes``), ``date``
(milliseconds) and ``nan``/``infinity``/``negativeInfinity``. Reading also takes the
other kinds the addon writes where they have a Python form (``arraybuffer`` alone as
bytes, the registry's ``blob``, ``undef``, boxed primitives, ``#`` references) and
refuses the rest with a :class:`~panelot.idb.errors.ValidationError` naming the path.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from panelot.idb.errors import ValidationError
from panelot.idb.keys import is_finite_number

__all__ = [
    "BLOB_TYPE",
    "MakeBlob",
    "encapsulate",
    "escape_component",
    "revive",
    "unescape_component",
]

BLOB_TYPE = "blob2"
"""The addon's own Blob kind: ``{type, data}``, data in base64."""

MakeBlob = Callable[[bytes, str], Any]
"""Makes a storable Blob of ``(bytes, mime)`` for the database being imported into."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_DEPTH = 200
_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_FLOAT_KINDS = {"nan": "NaN", "infinity": "Infinity", "negativeInfinity": "-Infinity"}


def escape_component(name: str) -> str:
    """A key-path component as Typeson writes it (``~`` → ``~0``, ``.`` → ``~1``)."""
    return name.replace("~", "~0").replace(".", "~1")


def unescape_component(name: str) -> str:
    """The inverse of :func:`escape_component`."""
    return name.replace("~1", ".").replace("~0", "~")


def _join(path: str, name: str) -> str:
    return f"{path}.{escape_component(name)}" if path else escape_component(name)


def _ms(value: datetime) -> int | float:
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    ms = (aware - _EPOCH) // timedelta(milliseconds=1)
    return int(ms)


class _Encoder:
    """One row's walk: the JSON stand-ins and the ``$types`` map, in Typeson's order."""

    def __init__(self, is_blob: Callable[[Any], bool], blob_token: Callable[[Any], str]):
        self.is_blob = is_blob
        self.blob_token = blob_token
        self.types: dict[str, str] = {}

    def walk(self, value: Any, path: str, depth: int) -> Any:
        kind = type(value)
        if kind is str or kind is bool or kind is int or value is None:
            return value
        if kind is float:
            if math.isfinite(value):
                return value
            name = "nan" if math.isnan(value) else ("infinity" if value > 0 else "negativeInfinity")
            self.types[path] = name
            return _FLOAT_KINDS[name]
        if depth > _MAX_DEPTH:
            raise ValidationError(f"{path or 'value'}: nested deeper than {_MAX_DEPTH} levels")
        if kind is dict:
            return {k: self.walk(v, _join(path, k), depth + 1) for k, v in value.items()}
        if kind is list or kind is tuple:
            return [self.walk(v, _join(path, str(i)), depth + 1) for i, v in enumerate(value)]
        if kind is bytes or kind is bytearray or kind is memoryview:
            data = bytes(value)
            self.types[path] = "uint8array2"
            self.types[_join(path, "buffer")] = "arraybuffer"
            return {
                "buffer": base64.b64encode(data).decode("ascii"),
                "byteOffset": 0,
                "length": len(data),
            }
        if isinstance(value, datetime):
            self.types[path] = "date"
            return _ms(value)
        if self.is_blob(value):
            self.types[path] = BLOB_TYPE
            return {"type": str(value.type), "data": self.blob_token(value)}
        raise ValidationError(
            f"{path or 'value'}: a {kind.__name__} cannot be exported", field=path or None
        )


def encapsulate(
    value: Any,
    is_blob: Callable[[Any], bool],
    blob_token: Callable[[Any], str],
) -> Any:
    """``value`` as the addon's Typeson writes it: JSON data, with ``$types`` if needed.

    A Blob becomes ``{"type": mime, "data": blob_token(blob)}``: the caller puts the
    base64 of its contents where the token is (see :mod:`panelot.idb.transfer.export`).
    """
    encoder = _Encoder(is_blob, blob_token)
    out = encoder.walk(value, "", 0)
    types = encoder.types
    if types:
        if type(out) is dict and "$types" not in out:
            out["$types"] = types
            return out
        return {"$": out, "$types": {"$": types}}
    if type(out) is dict and "$types" in out:
        return {"$": out, "$types": True}
    return out


# --- reading ---------------------------------------------------------------------------


def _fail(where: str, path: str, message: str) -> ValidationError:
    field = f"{where}.{path}" if path else where
    return ValidationError(f"{field}: {message}", field=field)


def _split(path: str) -> list[str]:
    if "~" not in path:  # nothing escaped (the common case)
        return path.split(".") if path else []
    return [unescape_component(p) for p in path.split(".")]


def _locate(root: Any, parts: list[str], where: str, path: str) -> tuple[Any, Any]:
    """The container of the part at ``parts`` and its key in it; raises if absent."""
    node = root
    for i, name in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, dict):
            if name not in node:
                raise _fail(where, "$types", f"{path!r} points at nothing")
            if last:
                return node, name
            node = node[name]
        elif isinstance(node, list):
            if not name.isdigit() or int(name) >= len(node):
                raise _fail(where, "$types", f"{path!r} points at nothing")
            if last:
                return node, int(name)
            node = node[int(name)]
        else:
            raise _fail(where, "$types", f"{path!r} points at nothing")
    raise _fail(where, "$types", f"{path!r} points at nothing")


def _b64(text: Any, where: str, path: str) -> bytes:
    if not isinstance(text, str):
        raise _fail(where, path, "must be a base64 string")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise _fail(where, path, "is not valid base64") from None


def _int_field(spec: dict[str, Any], name: str, where: str, path: str) -> int:
    value = spec.get(name)
    if type(value) is not int or value < 0:
        raise _fail(where, f"{path}.{name}" if path else name, "must be a non-negative integer")
    return value


def _revive_one(kind: str, value: Any, make_blob: MakeBlob, where: str, path: str) -> Any:
    """The Python value of one replaced part (``_ABSENT`` removes it from its object)."""
    if kind == BLOB_TYPE:
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise _fail(where, path, "a blob2 must be {type, data}")
        return make_blob(_b64(value.get("data"), where, f"{path}.data"), value["type"])
    if kind == "blob":  # typeson-registry's own: contents as a binary string
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise _fail(where, path, "a blob must be {type, stringContents}")
        text = value.get("stringContents")
        if not isinstance(text, str) or any(ord(c) > 255 for c in text):
            raise _fail(where, f"{path}.stringContents", "must be a binary string")
        return make_blob(text.encode("latin-1"), value["type"])
    if kind == "arraybuffer":
        return value if isinstance(value, bytes) else _b64(value, where, path)
    if kind == "uint8array2":
        if not isinstance(value, dict):
            raise _fail(where, path, "a uint8array2 must be {buffer, byteOffset, length}")
        buffer = value.get("buffer")
        if not isinstance(buffer, bytes):
            buffer = _b64(buffer, where, f"{path}.buffer")
        start = _int_field(value, "byteOffset", where, path)
        length = _int_field(value, "length", where, path)
        if start + length > len(buffer):
            raise _fail(where, path, "byteOffset + length lies past the buffer's end")
        return buffer[start : start + length]
    if kind == "date":
        if value == "NaN":
            raise _fail(where, path, "an invalid Date cannot be imported")
        if type(value) not in (int, float) or not is_finite_number(value):
            raise _fail(where, path, "a date must be a number of milliseconds")
        try:
            return _EPOCH + timedelta(milliseconds=value)
        except OverflowError:
            raise _fail(where, path, "the date is out of range") from None
    if kind in _FLOAT_KINDS:
        return _SPECIAL_FLOATS[_FLOAT_KINDS[kind]]
    if kind == "arrayNonindexKeys":  # the registry marks every array so
        return value if isinstance(value, list) else _array_of(value, where, path)
    if kind in ("undef", "sparseUndefined"):
        return _ABSENT
    if kind in ("StringObject", "NumberObject", "BooleanObject", "userObject"):
        return value
    raise _fail(where, path, f"values of kind {kind!r} cannot be stored by panelot.idb")


def _array_of(value: Any, where: str, path: str) -> list[Any]:
    """An array Typeson wrote as an object (``{"0": a, "1": b, "length": 2}``)."""
    if not isinstance(value, dict) or type(value.get("length")) is not int:
        raise _fail(where, path, "an arrayNonindexKeys must be an array or {..., length}")
    length = value["length"]
    if not 0 <= length <= 2**24:
        raise _fail(where, path, "the array's length is out of range")
    out: list[Any] = [None] * length
    for key, item in value.items():
        if key == "length":
            continue
        if not key.isdigit() or int(key) >= length:
            raise _fail(where, f"{path}.{key}", "an array's named property cannot be stored")
        out[int(key)] = item
    return out


class _Absent:
    """Marks a part Typeson recorded as ``undefined``: it is left out."""


_ABSENT = _Absent()


def _depth_order(path: str) -> tuple[int, str]:
    """Typeson revives the deepest paths first (``a.buffer`` before ``a``)."""
    return (-path.count(".") - (1 if path else 0), path)


def revive(row: Any, make_blob: MakeBlob, where: str) -> Any:
    """The stored value of one exported row: ``$types`` undone.

    ``where`` names the row in errors (``nodes[17]``); a kind that cannot be stored,
    a ``$types`` entry pointing at nothing or a malformed stand-in raises
    :class:`~panelot.idb.errors.ValidationError` naming ``where`` and the path.
    """
    if not isinstance(row, dict) or "$types" not in row:
        return row
    types = row["$types"]
    if types is True:
        if set(row) != {"$", "$types"}:
            raise _fail(where, "$types", "true is only allowed beside '$'")
        return row["$"]
    if not isinstance(types, dict):
        raise _fail(where, "$types", "must be an object")
    nested = types.get("$")
    if isinstance(nested, dict):
        if set(row) != {"$", "$types"} or len(types) != 1:
            raise _fail(where, "$types", "a wrapped row must be exactly {$, $types: {$}}")
        root: Any = row["$"]
        types = nested
    else:
        root = {k: v for k, v in row.items() if k != "$types"}
    refs: list[tuple[str, str]] = []
    for path in sorted(types, key=_depth_order) if len(types) > 1 else list(types):
        kind = types[path]
        if not isinstance(path, str) or not isinstance(kind, str):
            raise _fail(where, "$types", f"entry {path!r} must name one kind as a string")
        if kind == "#":
            refs.append((path, path))
            continue
        parts = _split(path)
        if not parts:
            root = _revive_root(kind, root, make_blob, where)
            continue
        parent, key = _locate(root, parts, where, path)
        revived = _revive_one(kind, parent[key], make_blob, where, path)
        if revived is _ABSENT:
            if isinstance(parent, dict):
                del parent[key]
            else:
                parent[key] = None
        else:
            parent[key] = revived
    for path, _ in refs:
        root = _resolve_ref(root, path, where)
    return root


def _revive_root(kind: str, root: Any, make_blob: MakeBlob, where: str) -> Any:
    revived = _revive_one(kind, root, make_blob, where, "")
    if revived is _ABSENT:
        raise _fail(where, "", "an undefined row cannot be stored")
    return revived


def _resolve_ref(root: Any, path: str, where: str) -> Any:
    """A ``#`` entry: the part at ``path`` is the same object as the one it names."""
    parts = _split(path)
    parent, key = (None, None) if not parts else _locate(root, parts, where, path)
    marker = root if parent is None else parent[key]
    if not isinstance(marker, str) or not marker.startswith("#"):
        raise _fail(where, path, "a '#' reference must be '#<key path>'")
    target_parts = _split(marker[1:])
    if target_parts:
        tparent, tkey = _locate(root, target_parts, where, marker[1:])
        target = tparent[tkey]
    else:
        target = root
    if parent is None:
        raise _fail(where, path, "the row cannot refer to itself")
    parent[key] = target
    return root
