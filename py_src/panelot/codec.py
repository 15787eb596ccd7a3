"""Typed records ⇄ wire dicts: snake_case dataclasses in Python, camelCase on the wire.

:func:`decode` validates a wire value against a dataclass's annotations and names the
offending field by its wire path (``payload.content[2].text``) in a
:class:`~panelot.idb.errors.ValidationError`. Supported annotations: ``str``, ``int``,
``float``, ``bool``, ``Any`` (plain JSON data), ``list[X]``, ``dict[str, X]``,
``Literal[...]``, ``X | None``, unions of dataclasses discriminated by a ``type``
literal, nested dataclasses, :data:`Id` (every id: :func:`id_field`'s rule),
:data:`Natural` (a count or a time in ms) and :data:`Raw` (passed on unchecked). A
field with a default is optional on the wire, and :func:`encode` leaves it out while it
holds ``None``. Unknown wire keys are refused, except in a record marked
:func:`open_record` (a stored record other code may extend), whose unknown keys are read
past.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeAlias, TypeVar, get_args, get_origin

from panelot.idb.errors import ValidationError
from panelot.idb.keys import is_finite_number
from panelot.surrogates import check_well_formed

__all__ = [
    "MAX_ID_CHARS",
    "Id",
    "Natural",
    "Raw",
    "camel",
    "decode",
    "decode_args",
    "encode",
    "id_field",
    "invalid",
    "open_record",
    "plain_json",
]

T = TypeVar("T")
_RAW = "raw: passed on as it is"
Raw: TypeAlias = Annotated[Any, _RAW]
"""A field the decoder passes on unchecked: the section that takes it validates it itself
(a node's payload, a run's snapshot), with its own bounds and its own errors."""
_ID = "id: 1 to MAX_ID_CHARS characters, no lone surrogates"
Id: TypeAlias = Annotated[str, _ID]
"""An id field (a record's ``id``, ``threadId``, ``runId``, ``nodeIds[i]`` ...): checked by
:func:`id_field`, the one rule for every id of the store."""
MAX_ID_CHARS = 200
"""Longest id (code points)."""
_NATURAL = "natural: a non-negative integer"
Natural: TypeAlias = Annotated[int, _NATURAL]
"""A size, a count or a time in ms: an integer (not a float, not a bool) from 0 up."""
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
    return typing.get_type_hints(cls, include_extras=True)


def invalid(path: str, message: str) -> ValidationError:
    """The ValidationError of the field at ``path``: ``"<path>: <message>"``, naming it."""
    return ValidationError(f"{path}: {message}", field=path)


def id_field(value: Any, name: str) -> str:
    """Check an id: a string of 1 to :data:`MAX_ID_CHARS` characters without lone surrogates.

    The one id rule of the store (:data:`Id` fields of records are read through it).
    """
    if type(value) is str and 0 < len(value) <= MAX_ID_CHARS and value.isascii():
        return value
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ID_CHARS:
        raise ValidationError(
            f"{name}: must be a string of 1 to {MAX_ID_CHARS} characters", field=name
        )
    return check_well_formed(value, name)


_OPEN = "__codec_open__"


def open_record(cls: type[T]) -> type[T]:
    """Mark a record dataclass whose stored form may hold keys it does not declare.

    Its decoder reads past unknown keys instead of refusing them (they are not kept in
    the dataclass). For tables Dexie code shares, where a hand-written check used to
    look only at the fields it knew.
    """
    setattr(cls, _OPEN, True)
    return cls


class _NotPlain(Exception):
    """Internal: the fast copy of plain JSON met something it must describe by path."""


def _copy_plain(value: Any, depth: int) -> Any:
    """Copy plain JSON without building paths; raise :class:`_NotPlain` on anything else."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        raise _NotPlain
    if kind is float:
        if math.isfinite(value):
            return value
        raise _NotPlain
    if depth >= MAX_JSON_DEPTH:
        raise _NotPlain
    if kind is list:
        return [_copy_plain(v, depth + 1) for v in value]
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise _NotPlain
            out[k] = _copy_plain(v, depth + 1)
        return out
    raise _NotPlain


def plain_json(value: Any, path: str, depth: int = 0) -> Any:
    """Check that ``value`` is plain, finite JSON data nested at most MAX_JSON_DEPTH deep.

    Returns a copy. The common case is one quick walk; only data that fails it is
    walked again, with paths, to name the offending place.
    """
    try:
        return _copy_plain(value, depth)
    except _NotPlain:
        return _plain_json_slow(value, path, depth)
    except RecursionError:
        raise invalid(path, f"nested deeper than {MAX_JSON_DEPTH} levels") from None


def _plain_json_slow(value: Any, path: str, depth: int = 0) -> Any:
    if depth > MAX_JSON_DEPTH:
        raise invalid(path, f"nested deeper than {MAX_JSON_DEPTH} levels")
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise invalid(path, "must be a safe integer (at most 2**53 - 1 in size)")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise invalid(path, "numbers must be finite")
        return value
    if isinstance(value, list):
        return [_plain_json_slow(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise invalid(path, "object keys must be strings")
            out[k] = _plain_json_slow(v, f"{path}.{k}", depth + 1)
        return out
    raise invalid(path, f"{type(value).__name__} is not JSON data")


Decoder = Callable[[Any, str], Any]


def decode(cls: type[T], data: Any, path: str = "") -> T:
    """Validate wire data against dataclass ``cls`` and return an instance."""
    return typing.cast(T, _decoder(typing.cast(Any, cls))(data, path or cls.__name__))


def decode_args(cls: type[T], data: Any) -> T:
    """:func:`decode` for a query's arguments: their fields are named bare (``threadId``)."""
    return typing.cast(T, _decoder(typing.cast(Any, cls))(data, ""))


def _join(path: str, name: str) -> str:
    """The path of field ``name`` under ``path``; an empty name is written ``""``.

    A field name comes from outside when it is an unknown key, and an error must name
    a field that can be read: ``payload.""`` rather than ``payload.`` (or nothing at all
    at the top of a query's arguments).
    """
    name = name or '""'
    return f"{path}.{name}" if path else name


def _passed_on(value: Any, path: str) -> Any:
    return value


def _decode_id(value: Any, path: str) -> Any:
    return id_field(value, path)


def _decode_natural(value: Any, path: str) -> Any:
    if type(value) is not int or value < 0:
        raise invalid(path, "must be a non-negative integer")
    return value


@functools.cache
def _decoder(tp: Any) -> Decoder:
    """A decoder compiled once per annotation: no type introspection per value."""
    origin = get_origin(tp)
    if origin is Annotated:
        if _RAW in tp.__metadata__:
            return _passed_on
        if _ID in tp.__metadata__:
            return _decode_id
        if _NATURAL in tp.__metadata__:
            return _decode_natural
        return _decoder(get_args(tp)[0])
    if tp is Any:
        return plain_json
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass_decoder(tp)
    if origin in (types.UnionType, typing.Union):
        return _union_decoder(get_args(tp))
    if origin is Literal:
        return _literal_decoder(get_args(tp))
    if origin is list:
        (item_tp,) = get_args(tp)
        items = _Later(item_tp)

        def list_decoder(value: Any, path: str) -> Any:
            if not isinstance(value, list):
                raise invalid(path, f"must be a list, got {type(value).__name__}")
            item = items.get()
            return [item(v, f"{path}[{i}]") for i, v in enumerate(value)]

        return list_decoder
    if origin is dict:
        _, item_tp = get_args(tp)
        values = _Later(item_tp)

        def dict_decoder(value: Any, path: str) -> Any:
            if not isinstance(value, dict):
                raise invalid(path, f"must be an object, got {type(value).__name__}")
            item = values.get()
            return {str(k): item(v, f"{path}.{k}") for k, v in value.items()}

        return dict_decoder
    if tp in _SCALARS:
        return _SCALARS[tp]
    raise TypeError(f"unsupported annotation {tp!r}")


class _Later:
    """The decoder of an annotation, looked up on first use and kept.

    Looking it up per value would hash the annotation each time (slow for ``typing``
    forms such as ``list[X] | None``); looking it up when the outer decoder is built
    would recurse forever on a record that refers to itself.
    """

    __slots__ = ("decoder", "tp")

    def __init__(self, tp: Any) -> None:
        self.tp = tp
        self.decoder: Decoder | None = None

    def get(self) -> Decoder:
        """The decoder (looked up the first time)."""
        if self.decoder is None:
            self.decoder = _decoder(self.tp)
        return self.decoder


def _literal_decoder(choices: tuple[Any, ...]) -> Decoder:
    is_bool = isinstance(choices[0], bool)

    def literal_decoder(value: Any, path: str) -> Any:
        if value not in choices or isinstance(value, bool) != is_bool:
            listed = ", ".join(repr(a) for a in choices)
            raise invalid(path, f"must be one of {listed}, got {value!r}")
        return value

    return literal_decoder


def _decode_str(value: Any, path: str) -> Any:
    if type(value) is str:
        return value
    return _decode_scalar(str, value, path)


def _decode_int(value: Any, path: str) -> Any:
    if type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return value
    return _decode_scalar(int, value, path)


def _decode_bool(value: Any, path: str) -> Any:
    if value is True or value is False:
        return value
    return _decode_scalar(bool, value, path)


def _decode_float(value: Any, path: str) -> Any:
    return _decode_scalar(float, value, path)


_SCALARS: dict[Any, Decoder] = {
    str: _decode_str,
    int: _decode_int,
    bool: _decode_bool,
    float: _decode_float,
}
"""The scalar decoders: a fast check of the common case, the full one otherwise."""


def _decode_scalar(tp: Any, value: Any, path: str) -> Any:
    if tp is bool:
        if not isinstance(value, bool):
            raise invalid(path, f"must be true or false, got {type(value).__name__}")
        return value
    if tp is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise invalid(path, f"must be an integer, got {type(value).__name__}")
        if abs(value) > MAX_SAFE_INTEGER:
            raise invalid(path, "must be a safe integer (at most 2**53 - 1 in size)")
        return value
    if tp is float:
        if (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or not is_finite_number(value)
        ):
            shown = repr(value)
            shown = shown if len(shown) <= 40 else f"{shown[:37]}..."
            raise invalid(path, f"must be a finite number, got {shown}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise invalid(path, f"must be a string, got {type(value).__name__}")
        return value
    raise TypeError(f"unsupported annotation {tp!r} at {path}")


def _union_decoder(options: tuple[Any, ...]) -> Decoder:
    nullable = type(None) in options
    candidates = [o for o in options if o is not type(None)]
    tagged: dict[Any, type] = {}
    for c in candidates:
        if isinstance(c, type) and dataclasses.is_dataclass(c):
            for tag in get_args(_hints(c).get("type", Literal[None])):
                tagged.setdefault(tag, c)

    later = [_Later(c) for c in candidates]
    by_tag = {tag: _Later(c) for tag, c in tagged.items()}

    def union_decoder(value: Any, path: str) -> Any:
        if value is None:
            if nullable:
                return None
            raise invalid(path, "must not be null")
        if len(later) == 1:
            return later[0].get()(value, path)
        if by_tag and isinstance(value, dict):
            tag = value.get("type")
            found = by_tag.get(tag) if isinstance(tag, str | int | bool) or tag is None else None
            if found is not None:
                return found.get()(value, path)
            kinds = sorted(k for k in by_tag if k is not None)
            raise invalid(f"{path}.type", f"must be one of {kinds}, got {tag!r}")
        errors = []
        for option in later:
            try:
                return option.get()(value, path)
            except ValidationError as exc:
                errors.append(exc.message)
        raise invalid(path, "matches none of the allowed shapes: " + "; ".join(errors))

    return union_decoder


_Quick = Callable[[Any], bool]
"""A check that a wire value decodes to itself: true lets a decoder keep it as it is."""
_Field = tuple[str, str, bool, Decoder, _Quick | None]
"""(wire name, Python name, required, decoder, quick check) of a dataclass field."""


def _is_str(value: Any) -> bool:
    return type(value) is str


def _is_bool(value: Any) -> bool:
    return value is True or value is False


def _is_safe_int(value: Any) -> bool:
    return type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def _is_natural(value: Any) -> bool:
    return type(value) is int and value >= 0


def _is_finite_float(value: Any) -> bool:
    return type(value) is float and math.isfinite(value)


def _is_id(value: Any) -> bool:
    return type(value) is str and 0 < len(value) <= MAX_ID_CHARS and value.isascii()


def _is_anything(value: Any) -> bool:
    return True


_QUICK_SCALARS: dict[Any, _Quick] = {
    str: _is_str,
    bool: _is_bool,
    int: _is_safe_int,
    float: _is_finite_float,
}


@functools.cache
def _quick(tp: Any) -> _Quick | None:
    """The quick check of annotation ``tp``, if its decoder returns some values unchanged.

    A value it accepts is one the decoder would return as it is, without an error, so
    the field's path is only built for the others (which the decoder then reads, and
    names in its errors exactly as before). None: every value goes to the decoder.
    """
    origin = get_origin(tp)
    if origin is Annotated:
        meta = tp.__metadata__
        if _RAW in meta:
            return _is_anything
        if _ID in meta:
            return _is_id
        if _NATURAL in meta:
            return _is_natural
        return _quick(get_args(tp)[0])
    if origin is Literal:
        choices = get_args(tp)
        if not all(type(c) is str for c in choices):
            return None
        allowed = frozenset(choices)
        return lambda value: type(value) is str and value in allowed
    if origin in (types.UnionType, typing.Union):
        options = [o for o in get_args(tp) if o is not type(None)]
        if len(options) != 1 or len(options) == len(get_args(tp)):
            return None
        inner = _quick(options[0])
        if inner is None:
            return None
        check = inner
        return lambda value: value is None or check(value)
    if isinstance(tp, type):
        return _QUICK_SCALARS.get(tp)
    return None


def _dataclass_decoder(cls: type) -> Decoder:
    specs: list[_Field] = []
    known: set[str] = set()
    closed = not getattr(cls, _OPEN, False)

    def dataclass_decoder(value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise invalid(path or "args", f"must be an object, got {type(value).__name__}")
        if not specs:  # compiled on first use, so self-referencing records work
            hints = _hints(cls)
            for f in dataclasses.fields(cls):
                required = (
                    f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                )
                # By now this record's own decoder is built (and cached), so a field of
                # its own type finds it instead of recursing.
                tp = hints[f.name]
                specs.append((camel(f.name), f.name, required, _decoder(tp), _quick(tp)))
                known.add(camel(f.name))
        if closed and not known.issuperset(value):
            unknown = sorted(str(k) for k in value if k not in known)
            raise invalid(_join(path, unknown[0]), "is not a known field")
        kwargs = {}
        for wire, name, required, field_decoder, quick in specs:
            if wire in value:
                item = value[wire]
                if quick is not None and quick(item):
                    kwargs[name] = item
                else:
                    kwargs[name] = field_decoder(item, _join(path, wire))
            elif required:
                raise invalid(_join(path, wire), "is required")
        return cls(**kwargs)

    return dataclass_decoder


@functools.cache
def _encode_fields(cls: type) -> tuple[tuple[str, str, bool], ...]:
    """(Python name, wire name, optional) of each field of a dataclass."""
    return tuple(
        (
            f.name,
            camel(f.name),
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
    )


def encode(obj: Any) -> Any:
    """Return the wire form of a record (camelCase keys, optional ``None`` fields left out)."""
    kind = type(obj)
    if kind is str or kind is int or kind is float or kind is bool or obj is None:
        return obj
    if kind is list:
        return [encode(v) for v in obj]
    if kind is dict:
        return {k: encode(v) for k, v in obj.items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for name, wire, optional in _encode_fields(typing.cast(Any, kind)):
            v = getattr(obj, name)
            if v is None and optional:
                continue
            out[wire] = encode(v)
        return out
    if isinstance(obj, list):
        return [encode(v) for v in obj]
    if isinstance(obj, dict):
        return {k: encode(v) for k, v in obj.items()}
    return obj
