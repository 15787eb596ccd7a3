"""Typed records ⇄ wire dicts: snake_case dataclasses in Python, camelCase on the wire.

:func:`decode` validates a wire value against a dataclass's annotations and names the
offending field by its wire path (``payload.content[2].text``) in a
:class:`~panelot.idb.errors.ValidationError`. Supported annotations: ``str``, ``int``,
``float``, ``bool``, ``Any`` (plain JSON data), ``list[X]``, ``dict[str, X]``,
``Literal[...]``, ``X | None``, unions of dataclasses discriminated by a ``type``
literal, and nested dataclasses. A field with a default is optional on the wire, and
:func:`encode` leaves it out while it holds ``None``. Unknown wire keys are refused.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from typing import Any, Literal, TypeVar, get_args, get_origin

from .idb.errors import ValidationError

__all__ = ["camel", "decode", "encode", "id_field", "plain_json"]

T = TypeVar("T")
MAX_SAFE_INTEGER = 2**53 - 1
"""Largest integer a JS number holds exactly; larger ones are refused."""
MAX_JSON_DEPTH = 32
"""Deepest nesting accepted in free-form (``Any``) JSON fields."""


@functools.cache
def camel(name: str) -> str:
    """Return the camelCase wire name of a snake_case field name."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _fail(path: str, message: str) -> ValidationError:
    return ValidationError(f"{path}: {message}", field=path)


def id_field(value: Any, name: str) -> str:
    """Check an id-like field: a string of 1 to 200 characters, or ValidationError naming it."""
    if not isinstance(value, str) or not 0 < len(value) <= 200:
        raise ValidationError(f"{name}: must be a string of 1 to 200 characters", field=name)
    return value


def plain_json(value: Any, path: str, depth: int = 0) -> Any:
    """Check that ``value`` is plain, finite JSON data nested at most MAX_JSON_DEPTH deep."""
    if depth > MAX_JSON_DEPTH:
        raise _fail(path, f"nested deeper than {MAX_JSON_DEPTH} levels")
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise _fail(path, "must be a safe integer (at most 2**53 - 1 in size)")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _fail(path, "numbers must be finite")
        return value
    if isinstance(value, list):
        return [plain_json(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _fail(path, "object keys must be strings")
            out[k] = plain_json(v, f"{path}.{k}", depth + 1)
        return out
    raise _fail(path, f"{type(value).__name__} is not JSON data")


def decode(cls: type[T], data: Any, path: str = "") -> T:
    """Validate wire data against dataclass ``cls`` and return an instance."""
    return typing.cast(T, _decode(cls, data, path or cls.__name__))


def _decode(tp: Any, value: Any, path: str) -> Any:
    origin = get_origin(tp)
    if tp is Any:
        return plain_json(value, path)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _decode_dataclass(tp, value, path)
    if origin in (types.UnionType, typing.Union):
        return _decode_union(get_args(tp), value, path)
    if origin is Literal:
        if value not in get_args(tp) or isinstance(value, bool) != isinstance(
            get_args(tp)[0], bool
        ):
            choices = ", ".join(repr(a) for a in get_args(tp))
            raise _fail(path, f"must be one of {choices}, got {value!r}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise _fail(path, f"must be a list, got {type(value).__name__}")
        (item,) = get_args(tp)
        return [_decode(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise _fail(path, f"must be an object, got {type(value).__name__}")
        _, item = get_args(tp)
        return {str(k): _decode(item, v, f"{path}.{k}") for k, v in value.items()}
    return _decode_scalar(tp, value, path)


def _decode_scalar(tp: Any, value: Any, path: str) -> Any:
    if tp is bool:
        if not isinstance(value, bool):
            raise _fail(path, f"must be true or false, got {type(value).__name__}")
        return value
    if tp is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise _fail(path, f"must be an integer, got {type(value).__name__}")
        if abs(value) > MAX_SAFE_INTEGER:
            raise _fail(path, "must be a safe integer (at most 2**53 - 1 in size)")
        return value
    if tp is float:
        if (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or not math.isfinite(value)
        ):
            raise _fail(path, f"must be a finite number, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise _fail(path, f"must be a string, got {type(value).__name__}")
        return value
    raise TypeError(f"unsupported annotation {tp!r} at {path}")


def _decode_union(options: tuple[Any, ...], value: Any, path: str) -> Any:
    if value is None:
        if type(None) in options:
            return None
        raise _fail(path, "must not be null")
    candidates = [o for o in options if o is not type(None)]
    if len(candidates) == 1:
        return _decode(candidates[0], value, path)
    tagged: list[type] = [
        c for c in candidates if isinstance(c, type) and dataclasses.is_dataclass(c)
    ]
    if tagged and isinstance(value, dict):
        for c in tagged:
            if value.get("type") in get_args(_hints(c).get("type", Literal[None])):
                return _decode(c, value, path)
        kinds = sorted(a for c in tagged for a in get_args(_hints(c)["type"]))
        raise _fail(f"{path}.type", f"must be one of {kinds}, got {value.get('type')!r}")
    errors = []
    for c in candidates:
        try:
            return _decode(c, value, path)
        except ValidationError as exc:
            errors.append(exc.message)
    raise _fail(path, "matches none of the allowed shapes: " + "; ".join(errors))


def _decode_dataclass(cls: type, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        raise _fail(path, f"must be an object, got {type(value).__name__}")
    hints = _hints(cls)
    fields = {camel(f.name): f for f in dataclasses.fields(cls)}
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise _fail(f"{path}.{unknown[0]}", "is not a known field")
    kwargs = {}
    for wire, f in fields.items():
        if wire not in value:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise _fail(f"{path}.{wire}", "is required")
            continue
        kwargs[f.name] = _decode(hints[f.name], value[wire], f"{path}.{wire}")
    return cls(**kwargs)


def encode(obj: Any) -> Any:
    """Return the wire form of a record (camelCase keys, optional ``None`` fields left out)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            optional = (
                f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            )
            if v is None and optional:
                continue
            out[camel(f.name)] = encode(v)
        return out
    if isinstance(obj, list):
        return [encode(v) for v in obj]
    if isinstance(obj, dict):
        return {k: encode(v) for k, v in obj.items()}
    return obj
