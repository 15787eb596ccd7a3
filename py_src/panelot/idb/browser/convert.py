"""Python ⇄ JS conversion of keys, key ranges and record values (browser core only).

Records must reach IndexedDB as plain JS objects with ``null`` for ``None`` (Pyodide's
``to_js`` would make ``undefined``), so Dexie code reads them unchanged. The fast path
is one ``JSON.parse`` of ``json.dumps``; values holding ``bytes`` (→ ``Uint8Array``),
``datetime`` (→ ``Date``), a JS handle such as a Blob, or a non-finite float take a
slower path that builds the JS value piece by piece; values a write's snapshot already
built in JS (:class:`JsValues`, made by :mod:`~panelot.idb.browser.pack`) pass as they
are. On the way back, ``to_py`` is followed by a walk that turns ``jsnull`` into
``None``, typed arrays into ``bytes`` and ``Date`` into ``datetime``.
"""

from __future__ import annotations

import json
import marshal
import math
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from json.scanner import make_scanner
from typing import Any, overload

import js
from pyodide.ffi import JsException, JsProxy, jsnull, to_js

from panelot.idb.errors import DataCloneError, InvalidStateError, PanelotError, error_from_name
from panelot.idb.keys import Key, KeyRange, js_date

__all__ = [
    "MANY_GETS",
    "JsValues",
    "decode_json",
    "decode_marshal",
    "js_error",
    "key_arg",
    "key_range_to_js",
    "key_to_js",
    "keys_to_js",
    "many_keys_json",
    "query_arg",
    "range_spec",
    "value_from_js",
    "values_to_js",
    "loaded_helper",
    "wiring_helper",
]

_scan_json: Callable[[str, int], tuple[Any, int]] = make_scanner(
    json.JSONDecoder()  # type: ignore[arg-type]  # typeshed types it as a class of itself
)


def decode_json(text: str) -> Any:
    """Decode JSON text made by ``JSON.stringify`` (no surrounding whitespace).

    The decoder's scanner alone: ``json.loads`` adds two regular-expression matches and
    checks that cost more than the decoding of a small record under Pyodide.
    """
    try:
        return _scan_json(text, 0)[0]
    except StopIteration:
        raise ValueError("not JSON text") from None


def decode_marshal(data: Any) -> Any:
    """Decode a large plain result the JS helper wrote as marshal data (a ``Uint8Array``).

    The helper writes only the codes of plain values (see ``web/wiring.mjs``), with
    numbers mapped as JSON text maps them; ``marshal.loads`` builds the objects several
    times faster than the JSON scanner does under Pyodide.
    """
    return marshal.loads(data.to_bytes())


_Object = js.Object
_Array = js.Array
_Uint8Array = js.Uint8Array
_Date = js.Date
_IDBKeyRange = js.IDBKeyRange
_Reflect = js.Reflect


def js_error(err: Any, fallback: str = "UnknownError") -> PanelotError:
    """Map a JS error (DOMException, JsException, or ``None``) to the project's error."""
    if isinstance(err, PanelotError):
        return err
    if err is None or err is jsnull:
        return error_from_name(fallback, "the browser reported no detail")
    name = str(getattr(err, "name", "") or fallback)
    message = str(getattr(err, "message", "") or err)
    if name == "Error" and "DataCloneError" in message:
        name = "DataCloneError"
    return error_from_name(name, message)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def _date_to_js(value: datetime) -> Any:
    # Whole milliseconds, computed exactly: a float timestamp * 1000 can land just below.
    return _Date.new((js_date(value) - _EPOCH) // _MS)


def key_to_js(key: Key) -> Any:
    """Convert a validated key to JS (numbers, strings, Dates, Uint8Arrays, arrays)."""
    if isinstance(key, list):
        arr = _Array.new()
        for k in key:
            arr.push(key_to_js(k))
        return arr
    if isinstance(key, bytes):
        return to_js(key)
    if isinstance(key, datetime):
        return _date_to_js(key)
    return _number(key) if isinstance(key, int) else key


def _number(value: int) -> int | float:
    # Pyodide turns ints near 2**53 into BigInt, which is no key; a float stays a number.
    return value if -(2**31) <= value < 2**31 else float(value)


def key_range_to_js(rng: KeyRange) -> Any:
    """Convert a :class:`KeyRange` to an ``IDBKeyRange`` (``None`` for the whole store)."""
    if rng.lower is None and rng.upper is None:
        return None
    if rng.upper is None:
        return _IDBKeyRange.lowerBound(key_to_js(rng.lower), rng.lower_open)
    if rng.lower is None:
        return _IDBKeyRange.upperBound(key_to_js(rng.upper), rng.upper_open)
    return _IDBKeyRange.bound(
        key_to_js(rng.lower), key_to_js(rng.upper), rng.lower_open, rng.upper_open
    )


def _slow_to_js(value: Any) -> Any:
    if value is None:
        return jsnull
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return _number(value)
    if isinstance(value, float):
        return value  # NaN/Infinity survive as JS numbers
    if isinstance(value, dict):
        obj = _Object.new()
        for k, v in value.items():
            _Reflect.set(obj, k, _slow_to_js(v))
        return obj
    if isinstance(value, list):
        arr = _Array.new()
        for v in value:
            arr.push(_slow_to_js(v))
        return arr
    if isinstance(value, bytes):
        return to_js(value)
    if isinstance(value, datetime):
        return _date_to_js(value)
    if isinstance(value, JsProxy):
        return value
    raise DataCloneError(f"a value of type {type(value).__name__} cannot be stored")


def values_to_js(values: Sequence[Any]) -> Any:
    """Already-validated plain values for the JS helper: JSON text, or a built JS array.

    Values the snapshot already built in JS (:class:`JsValues`) are passed as they are.
    Otherwise JSON text (parsed on the JS side) is the fast path; values holding bytes,
    dates, JS handles or non-finite numbers are built piece by piece instead.
    """
    if type(values) is JsValues:
        return values.js
    if type(values) is not list:
        values = list(values)
    try:
        return json.dumps(values, allow_nan=False, ensure_ascii=False, check_circular=False)
    except (TypeError, ValueError):
        pass
    with_handles = _with_handles(values)
    if with_handles is not None:
        return with_handles
    arr = _Array.new()
    for v in values:
        arr.push(_slow_to_js(v))
    return arr


def _with_handles(values: list[Any]) -> Any:
    """Records whose only non-JSON values are top-level JS handles (an attachment's Blob).

    They cross as JSON text with ``null`` in the handles' places, and the handles as
    arguments of one helper call that puts them back: building the record piece by piece
    costs one FFI call per field (measured ~1.5 ms per attachment record, against
    ~0.1 ms). ``None`` when the values hold anything else JSON cannot carry.
    """
    places: list[tuple[int, str]] = []
    handles: list[Any] = []
    plain = values
    for i, value in enumerate(values):
        if type(value) is not dict:
            continue
        found = [k for k, v in value.items() if isinstance(v, _HANDLE) and type(k) is str]
        if found:
            if plain is values:
                plain = list(values)
            plain[i] = {**value, **dict.fromkeys(found)}
            places += [(i, k) for k in found]
            handles += [value[k] for k in found]
    if not handles:
        return None
    try:
        text = json.dumps(plain, allow_nan=False, ensure_ascii=False, check_circular=False)
    except (TypeError, ValueError):
        return None
    return wiring_helper().parseWithHandles(text, json.dumps(places), *handles)


_HANDLE = (JsProxy,)
_NESTED = (dict, list, memoryview, JsProxy)  # a tuple: a union is built on every call
_TO_STRING: list[Any] = []  # Object.prototype.toString, read once (not at import: the
# start-up snapshot cannot hold references to JS objects other than globals)


def _type_tag(value: Any) -> str:
    if not _TO_STRING:
        _TO_STRING.append(_Object.prototype.toString)
    return str(_TO_STRING[0].call(value))


def _fix(value: Any) -> Any:
    if value is jsnull:
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            if v is jsnull or isinstance(v, _NESTED):
                value[k] = _fix(v)
        return value
    if isinstance(value, list):
        for i, v in enumerate(value):
            if v is jsnull or isinstance(v, _NESTED):
                value[i] = _fix(v)
        return value
    if isinstance(value, memoryview):
        return value.tobytes()
    if isinstance(value, _HANDLE):
        tag = _type_tag(value)
        if tag == "[object Date]":
            ms = value.getTime()
            return None if math.isnan(ms) else _EPOCH + int(ms) * _MS
        if tag == "[object ArrayBuffer]":
            return bytes(_Uint8Array.new(value).to_py())
        if tag == "[object Map]":
            raise DataCloneError("a stored Map cannot be read as plain data")
        return value  # a Blob or other platform object: handed over as a JS handle
    return value


MAX_DIRECT_INT = 2**31 - 1
"""Integers up to this size cross the FFI as JS numbers (larger ones may become BigInts)."""


def _jsonable_key(key: Key) -> Any:
    """A key as JSON data for the helper (infinities tagged), or raise TypeError."""
    if isinstance(key, str) or (isinstance(key, int) and not isinstance(key, bool)):
        return key
    if isinstance(key, float):
        return key if math.isfinite(key) else {"$inf": 1 if key > 0 else -1}
    if isinstance(key, list):
        return [_jsonable_key(k) for k in key]
    raise TypeError("not a JSON key")


def range_spec(rng: KeyRange) -> Any:
    """Describe a range for the JS helper: JSON text when possible, else an IDBKeyRange."""
    if rng.is_all:
        return None
    try:
        bounds = [
            None if rng.lower is None else _jsonable_key(rng.lower),
            None if rng.upper is None else _jsonable_key(rng.upper),
        ]
    except TypeError:
        return key_range_to_js(rng)
    return json.dumps([*bounds, rng.lower_open, rng.upper_open])


MANY_GETS = 8
"""A ``GetMany`` of at least this many keys is issued as one helper call (``getMany``)."""


def many_keys_json(keys: list[Key]) -> str | None:
    """The keys as one JSON array for the helper's ``getMany``, or ``None``.

    ``None`` when JSON cannot carry one of them (a date or binary key): those keys go
    one by one.
    """
    try:
        return json.dumps([_jsonable_key(k) for k in keys])
    except TypeError:
        return None


def key_arg(key: Key) -> tuple[Any, bool]:
    """One key for the JS helper, and whether it is JSON text (else a key as it is).

    An ASCII string, or a 32-bit integer, goes as it is (the common
    case); other strings go as JSON, which carries lone surrogates exactly.
    """
    kind = type(key)
    if (kind is str and key.isascii()) or (
        kind is int and -MAX_DIRECT_INT <= key <= MAX_DIRECT_INT
    ):
        return key, False
    try:
        return json.dumps(_jsonable_key(key)), True
    except TypeError:
        return key_to_js(key), False


def query_arg(rng: KeyRange, ranges_only: bool = False) -> tuple[Any, str]:
    """A query for the JS helper and its mode (``key``, ``keyJSON`` or ``range``).

    A range holding exactly one key (``equals``) goes as that key, which IndexedDB
    treats as the same range, unless ``ranges_only``; any other as :func:`range_spec`.
    """
    lower = rng.lower
    if (
        not ranges_only
        and lower is not None
        and not rng.lower_open
        and not rng.upper_open
        and type(lower) is type(rng.upper)
        and lower == rng.upper
    ):
        value, as_json = key_arg(lower)
        return value, "keyJSON" if as_json else "key"
    return range_spec(rng), "range"


def keys_to_js(keys: list[Key | None]) -> Any:
    """Explicit keys of a bulk call (``None``: no key for that item), as JSON text if possible.

    Keys travel as JSON because Pyodide may turn a large integral number into a BigInt,
    which is no valid key; JSON numbers always arrive as JS numbers.
    """
    try:
        return json.dumps([None if k is None else _jsonable_key(k) for k in keys])
    except TypeError:
        pass
    arr = _Array.new()
    for k in keys:
        arr.push(None if k is None else key_to_js(k))  # None arrives as undefined: no key
    return arr


def wiring_helper() -> Any:
    """The ``panelot_js`` module registered by ``web/runtime.mjs``; required by the core."""
    if _ENCODER is None:
        raise InvalidStateError(
            "the browser core needs the panelot_js helper; load the runtime with "
            "web/runtime.mjs, which registers it"
        )
    return _ENCODER


def loaded_helper() -> Any | None:
    """The ``panelot_js`` module if this page registered it, else ``None`` (no error)."""
    return _ENCODER


def _load_encoder() -> Any:
    try:
        import panelot_js  # registered by web/runtime.mjs; absent on other pages

        return panelot_js
    except ImportError:
        return None


_ENCODER = _load_encoder()


class JsValues(Sequence[Any]):
    """A write's values, already built as a JS array (passed to the helper as they are)."""

    __slots__ = ("_count", "js")

    def __init__(self, js: JsProxy, count: int) -> None:
        self.js = js
        self._count = count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        """A value converted back to Python (for inspection; the write path never does)."""
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if not -self._count <= index < self._count:
            raise IndexError(index)
        return value_from_js(self.js[index % self._count])

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self._count))


def value_from_js(value: Any) -> Any:
    """Convert a raw JS value read from IndexedDB to plain Python data.

    The wiring helper sends plain JSON data as text, marshal or bytes, so a raw value is
    one JSON cannot carry (a Blob, a Date, binary): it goes through ``to_py()`` and a
    fix-up walk, without checking for plain JSON again.
    """
    if value is None or value is jsnull:
        return None
    if not isinstance(value, JsProxy):
        return value  # numbers, strings and booleans arrive converted
    try:
        converted = value.to_py()
    except JsException as exc:  # pragma: no cover - defensive
        raise js_error(exc) from None
    return _fix(converted)
