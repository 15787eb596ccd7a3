"""Changing records by key path: Dexie's update specs, property modifications, ``modify``.

An update spec is ``{"key.path": new value}``; a value may be a
:class:`PropModification` made by :func:`add`, :func:`remove` or
:func:`replace_prefix`, which computes the new value from the old one as Dexie's do.
Key paths are set as Dexie's ``setByKeyPath`` sets them: a missing or empty step is
created as an object, and a path through a value that is not an object (a number, a
string) leaves the record unchanged.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from panelot.idb.casing import to_units
from panelot.idb.core import GetMany, Mutate
from panelot.idb.errors import ArgumentTypeError, DataError, ModifyError, PanelotError
from panelot.idb.jsvalues import js_number, js_sort, same_value_zero
from panelot.idb.keys import MAX_SAFE_INTEGER, Key, compare_keys, hashable_key
from panelot.idb.plan import rows
from panelot.idb.schema import TableSpec
from panelot.idb.sorting import MISSING as _MISSING
from panelot.idb.state import CollectionState
from panelot.idb.values import clone_value, resolve_primary_key

__all__ = [
    "ModifyContext",
    "Prepare",
    "PropModification",
    "add",
    "apply_changes",
    "delete_rows",
    "get_by_key_path",
    "js_falsy",
    "modifier",
    "modify_rows",
    "remove",
    "replace_prefix",
    "set_by_key_path",
]

Prepare: TypeAlias = Callable[[Sequence[Any], Sequence[Key | None] | None], Mutate]
"""Builds the ``put`` of values (with explicit out-of-line keys) into the table being
changed: the table's :func:`~panelot.idb.writes.prepare_write`."""


class PropModification:
    """A change computed from a field's current value (Dexie's ``PropModification``)."""

    __slots__ = ("kind", "term")

    def __init__(self, kind: str, term: Any) -> None:
        self.kind = kind
        self.term = term

    def __repr__(self) -> str:
        return f"{self.kind}({self.term!r})"

    def execute(self, value: Any) -> Any:
        """The new value for a field holding ``value`` (``_MISSING`` when absent)."""
        term = self.term
        if self.kind == "add":
            if isinstance(term, list):
                return js_sort([*(value if isinstance(value, list) else []), *term])
            return _js_sum((_or_zero(js_number(value))) + term)
        if self.kind == "remove":
            if isinstance(term, list):
                if not isinstance(value, list):
                    return []
                return js_sort([x for x in value if not any(same_value_zero(x, t) for t in term)])
            return _js_sum(js_number(value) - term)
        prefix, new = term
        if prefix and isinstance(value, str) and to_units(value).startswith(to_units(prefix)):
            return new + value[len(prefix) :]
        return value


def _js_sum(n: float) -> float:
    """A sum as a JS number: an int beyond 2**53 is the float JS arithmetic gives."""
    if isinstance(n, int) and abs(n) > MAX_SAFE_INTEGER:
        return float(n)
    return n


def _or_zero(n: float) -> float:
    return 0 if math.isnan(n) or n == 0 else n


def _number_or_list(method: str, term: Any) -> Any:
    if isinstance(term, list):
        return clone_value(term, method)
    if isinstance(term, int | float) and not isinstance(term, bool):
        return term
    raise ArgumentTypeError(f"{method}() takes a number or a list, not {term!r}", field=method)


def add(term: int | float | list[Any]) -> PropModification:
    """Add a number to a numeric field, or append a list's items to a list field (sorted)."""
    return PropModification("add", _number_or_list("add", term))


def remove(term: int | float | list[Any]) -> PropModification:
    """Subtract a number from a numeric field, or remove a list's items from a list field."""
    return PropModification("remove", _number_or_list("remove", term))


def replace_prefix(prefix: str, new: str) -> PropModification:
    """Replace the prefix of a string field (fields not starting with it stay as they are)."""
    if not isinstance(prefix, str) or not isinstance(new, str):
        raise ArgumentTypeError("replace_prefix() takes two strings", field="replace_prefix")
    return PropModification("replacePrefix", (prefix, new))


def get_by_key_path(obj: Any, key_path: str) -> Any:
    """Dexie's ``getByKeyPath``: the value at a dotted path, or ``_MISSING``."""
    if isinstance(obj, dict) and key_path in obj:
        return obj[key_path]
    if not key_path:
        return obj
    head, dot, rest = key_path.partition(".")
    if not dot:
        return _MISSING
    inner = obj.get(head, _MISSING) if isinstance(obj, dict) else _MISSING
    if inner is None or inner is _MISSING:
        return _MISSING
    return get_by_key_path(inner, rest)


def delete_by_key_path(obj: Any, key_path: str) -> None:
    """Dexie's ``setByKeyPath(obj, path, undefined)``: remove the field, if the path leads there."""
    head, dot, rest = key_path.partition(".")
    if dot and rest:
        inner = obj.get(head) if isinstance(obj, dict) else None
        if isinstance(inner, dict | list):
            delete_by_key_path(inner, rest)
    elif isinstance(obj, dict):
        obj.pop(head, None)


def js_falsy(x: Any) -> bool:
    """Whether JS takes ``x`` for false: null, false, "", 0, NaN (and a missing value)."""
    if x is _MISSING or x is None or x is False or x == "":
        return True
    return isinstance(x, int | float) and not isinstance(x, bool) and (x == 0 or math.isnan(x))


def set_by_key_path(obj: Any, key_path: str, value: Any) -> None:
    """Dexie's ``setByKeyPath``; a step through a non-object value changes nothing."""
    if not isinstance(obj, dict | list):
        return  # a JS primitive is frozen: Dexie's assignment is a no-op
    head, dot, rest = key_path.partition(".")
    if dot and rest:
        inner = _item(obj, head)
        if js_falsy(inner) or not _has(obj, head):
            inner = {}
            _assign(obj, head, inner)
        set_by_key_path(inner, rest, value)
    else:
        _assign(obj, head, value)


def _has(obj: dict[str, Any] | list[Any], key: str) -> bool:
    if isinstance(obj, dict):
        return key in obj
    return key.isdigit() and int(key) < len(obj)


def _item(obj: dict[str, Any] | list[Any], key: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, _MISSING)
    return obj[int(key)] if _has(obj, key) else _MISSING


def _assign(obj: dict[str, Any] | list[Any], key: str, value: Any) -> None:
    if isinstance(obj, dict):
        obj[key] = value
    elif key.isdigit() and int(key) < len(obj):
        obj[int(key)] = value
    elif key.isdigit() and int(key) == len(obj):
        obj.append(value)
    # Other properties of an array are not kept by a stored list: nothing to set.


def apply_changes(value: Any, changes: dict[str, Any], field: str = "changes") -> bool:
    """Apply a Dexie update spec to ``value`` in place; return whether anything changed."""
    changed = False
    for path, new in changes.items():
        old = get_by_key_path(value, path)
        if isinstance(new, PropModification):
            result = new.execute(old)
            if result is _MISSING:  # replace_prefix of an absent field: it stays absent
                delete_by_key_path(value, path)
            else:
                set_by_key_path(value, path, clone_value(result, f"{field}.{path}"))
            changed = True
        elif old is _MISSING or old is not new and not _same_plain(old, new):
            set_by_key_path(value, path, clone_value(new, f"{field}.{path}"))
            changed = True
    return changed


def _same_plain(a: Any, b: Any) -> bool:
    """JS ``===``: primitives by value (NaN is not itself), objects never equal a new one."""
    if isinstance(a, dict | list | bytes | bytearray) or isinstance(
        b, dict | list | bytes | bytearray
    ):
        return False
    return same_value_zero(a, b) and not (isinstance(a, float) and math.isnan(a))


def check_changes(changes: Any) -> None:
    """Refuse an update spec that is not a dict of key paths."""
    if not isinstance(changes, dict) or not all(isinstance(k, str) and k for k in changes):
        raise DataError("changes must be a dict of key paths to values", field="changes")


class ModifyContext:
    """What a modify function may use and change: ``value`` (``None`` deletes), ``primary_key``."""

    __slots__ = ("primary_key", "value")

    def __init__(self, value: Any, primary_key: Key) -> None:
        self.value = value
        self.primary_key = primary_key


def modifier(changes: Any) -> Callable[[ModifyContext], bool]:
    """What :func:`modify_rows` does to each record: ``changes`` checked and made a function.

    Raises at once for an update spec it cannot apply (before any transaction).
    """
    if callable(changes):
        two = _arity(changes) >= 2

        def run(ctx: ModifyContext) -> bool:
            out = changes(ctx.value, ctx) if two else changes(ctx.value)
            return out is not False

        return run
    check_changes(changes)

    def run_spec(ctx: ModifyContext) -> bool:
        if ctx.value is None:  # a stored null: Dexie's TypeError (a number is left as it is)
            raise ArgumentTypeError(
                f"modify(): the record under {ctx.primary_key!r} is null: "
                "key paths cannot be set in it",
                field="changes",
            )
        return apply_changes(ctx.value, changes)

    return run_spec


def _arity(fn: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return 2
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


async def modify_rows(
    state: CollectionState,
    modify: Callable[[ModifyContext], bool],
    spec: TableSpec,
    prepare: Prepare,
) -> int:
    """Apply ``modify`` to every record of ``state``; return how many records matched.

    Runs inside a read-write transaction body over ``spec``'s table; ``modify`` is
    :func:`modifier` of an update spec or of a function of the record (optionally also
    of a :class:`ModifyContext`) that changes it in place; it returns ``False`` to leave
    a record alone, or sets ``ctx.value = None`` to delete it. A record whose primary
    key the change moves is added under the new key and deleted under the old. Each
    record is changed once, also when a multiEntry index lists it several times
    (Dexie changes it once per entry). Any failure raises :class:`ModifyError` and
    aborts the transaction: nothing is written (Dexie keeps what succeeded).
    """
    keys = _distinct(await rows(state, "primaryKeys"))
    if not keys:
        return 0
    values = await GetMany(spec.name, keys)
    inline = spec.primary_key.key_path is not None
    plan = _Plan()
    for pkey, value in zip(keys, values, strict=True):
        # The keys were just read in this transaction: a None is a stored null.
        ctx = ModifyContext(value, pkey)
        if not modify(ctx):
            continue
        if ctx.value is None:
            plan.deletes.append(pkey)
        elif inline and compare_keys(resolve_primary_key(spec, ctx.value, None), pkey):
            plan.adds.append((pkey, ctx.value))
            plan.deletes.append(pkey)
        else:
            plan.puts.append((pkey, ctx.value))
    await plan.write(spec.name, prepare, inline)
    return len(keys)


class _Plan:
    """What a modify writes: deletes first (so a record may move onto a freed key)."""

    def __init__(self) -> None:
        self.deletes: list[Key] = []
        self.adds: list[tuple[Key, Any]] = []  # (old primary key, moved record)
        self.puts: list[tuple[Key, Any]] = []

    async def write(self, table: str, prepare: Prepare, inline: bool) -> None:
        failures: list[PanelotError] = []
        failed: list[Key] = []
        if self.deletes:
            await Mutate(table, "delete", keys=list(self.deletes))
        for items, kind in ((self.adds, "add"), (self.puts, "put")):
            if not items:
                continue
            values = [v for _, v in items]
            req = prepare(values, None if inline else [k for k, _ in items])
            req.kind = kind  # type: ignore[assignment]
            result = await req
            for pos, err in sorted(result.failures.items()):
                failures.append(err)
                failed.append(items[pos][0])
        if failures:
            moved = len(self.adds) + len(self.puts)
            records = moved + len(self.deletes) - len(self.adds)
            raise ModifyError(
                f"modify(): {len(failures)} of {records} records failed "
                f"(first: {failures[0].name}: {failures[0].message}); nothing was written",
                failures,
                records - len(failures),
                failed,
            )


def _distinct(keys: list[Key]) -> list[Key]:
    seen: set[Any] = set()
    out = []
    for k in keys:
        h = hashable_key(k)
        if h not in seen:
            seen.add(h)
            out.append(k)
    return out


async def delete_rows(state: CollectionState) -> int:
    """Delete the records of ``state`` (only those it holds, also for ``order_by(index)``).

    Runs inside a read-write transaction body; returns how many were deleted.
    """
    keys = _distinct(await rows(state, "primaryKeys"))
    if keys:
        await Mutate(state.table, "delete", keys=keys)
    return len(keys)
