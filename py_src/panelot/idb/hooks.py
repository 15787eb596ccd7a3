"""Table hooks (``creating``, ``reading``, ``updating``, ``deleting``), as Dexie builds them.

``creating``, ``updating`` and ``deleting`` are a middleware over the core protocol
(:mod:`panelot.idb.middleware`), as Dexie's hooks middleware is: before a write it
reads the records the write replaces or deletes, calls the hooks, and writes what
they made of the values. ``reading`` is not a middleware in Dexie either: it maps
the records a ``get`` or a collection returns (filters see them unmapped), and
``Collection.raw()`` skips it.

The signatures are Dexie's, with a :class:`HookContext` for its ``this``:

* ``creating(primary_key, value, ctx)``: may change ``value`` in place; a return
  value other than ``None`` is the primary key of a record that had none;
* ``updating(modifications, primary_key, old_value, ctx)``: ``modifications`` maps
  each changed key path to its new value (:data:`MISSING` for a removed field); a
  returned dict holds more changes to make;
* ``deleting(primary_key, value, ctx)``: ``value`` is :data:`MISSING` if there was
  no record;
* ``reading(value)``: returns the value to give the caller.

``ctx.on_success`` and ``ctx.on_error`` may be set to functions called once the
write's outcome is known, as Dexie's ``this.onsuccess`` and ``this.onerror``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

from panelot.idb.core import GetMany, Mutate, MutateResult, Query, Request
from panelot.idb.errors import DataError
from panelot.idb.keys import KeyRange
from panelot.idb.modify import set_by_key_path
from panelot.idb.schema import TableSpec
from panelot.idb.sorting import MISSING
from panelot.idb.writes import WritingDb, prepare_write

if TYPE_CHECKING:
    from panelot.idb.middleware import Handler

__all__ = ["EVENTS", "HookContext", "HookedDb", "Hooks", "hooks_middleware", "object_diff"]

Event: TypeAlias = Literal["creating", "reading", "updating", "deleting"]
EVENTS: tuple[Event, ...] = ("creating", "reading", "updating", "deleting")
HOOKS_LEVEL = 2
"""The hooks middleware's level: under user middleware (level 10 by default)."""


class HookContext:
    """A hook's ``this``: set ``on_success``/``on_error`` to hear the write's outcome."""

    __slots__ = ("on_error", "on_success")

    def __init__(self) -> None:
        self.on_success: Callable[[Any], Any] | None = None
        self.on_error: Callable[[BaseException], Any] | None = None


class Hooks:
    """Every table's hooks, by table and event, in subscription order."""

    def __init__(self) -> None:
        self._by: dict[tuple[str, str], list[Callable[..., Any]]] = {}

    def add(self, table: str, event: str, fn: Callable[..., Any]) -> None:
        """Subscribe ``fn`` to ``event`` of ``table``."""
        if event not in EVENTS:
            raise DataError(f"unknown hook {event!r}; hooks are {', '.join(EVENTS)}", field="event")
        if not callable(fn):
            raise DataError("a hook is a function", field="fn")
        self._by.setdefault((table, event), []).append(fn)

    def remove(self, table: str, event: str, fn: Callable[..., Any]) -> None:
        """Unsubscribe ``fn`` (no error if it was not subscribed)."""
        fns = self._by.get((table, event), [])
        if fn in fns:
            fns.remove(fn)

    def of(self, table: str, event: str) -> list[Callable[..., Any]]:
        """The functions subscribed to ``event`` of ``table``."""
        return self._by.get((table, event), [])

    def writing(self) -> bool:
        """Whether any table has a creating, updating or deleting hook."""
        return any(fns for (_, ev), fns in self._by.items() if ev != "reading")

    def reader(self, table: str) -> Callable[[Any], Any] | None:
        """The reading hooks of ``table`` as one function, or ``None`` if it has none."""
        fns = self.of(table, "reading")
        if not fns:
            return None

        def read(value: Any) -> Any:
            for fn in fns:
                value = fn(value)
            return value

        return read

    # -- firing, by Dexie's chaining rules ------------------------------------------------

    def creating(self, table: str, key: Any, value: Any, ctx: HookContext) -> Any:
        """Fire ``creating``; a hook's returned key is passed on to the next (Dexie's chain)."""
        found = None
        for fn in self.of(table, "creating"):
            out = fn(key, value, ctx)
            if out is not None:
                key = found = out
        return found

    def updating(
        self, table: str, mods: dict[str, Any], key: Any, old: Any, ctx: HookContext
    ) -> dict[str, Any] | None:
        """Fire ``updating``; the returned changes of every hook are merged."""
        merged: dict[str, Any] | None = None
        for fn in self.of(table, "updating"):
            out = fn(mods, key, old, ctx)
            if out is not None:
                if not isinstance(out, dict):
                    raise DataError("an updating hook returns a dict of changes or None")
                mods.update(out)
                merged = {**(merged or {}), **out}
        return merged

    def deleting(self, table: str, key: Any, value: Any, ctx: HookContext) -> None:
        """Fire ``deleting``."""
        for fn in self.of(table, "deleting"):
            fn(key, value, ctx)


def object_diff(a: Any, b: Any, prefix: str = "") -> dict[str, Any]:
    """Dexie's ``getObjectDiff``: the key paths where ``b`` differs from ``a``.

    Nested objects are compared field by field; other objects (lists, binary) are
    always a change unless they are the same object, as JS's ``!==`` has it.
    """
    out: dict[str, Any] = {}
    for k, av in a.items():
        if k not in b:
            out[prefix + k] = MISSING
            continue
        bv = b[k]
        if isinstance(av, dict) and isinstance(bv, dict):
            out.update(object_diff(av, bv, f"{prefix}{k}."))
        elif _objectish(av) or _objectish(bv):
            if av is not bv:
                out[prefix + k] = bv
        elif type(av) is not type(bv) or av != bv:
            out[prefix + k] = bv
    for k, bv in b.items():
        if k not in a:
            out[prefix + k] = bv
    return out


class HookedDb(WritingDb, Protocol):
    """What the hooks middleware needs of its database: a write's needs, hooks, specs."""

    @property
    def hooks(self) -> Hooks:
        """The tables' hooks."""
        ...

    def spec(self, name: str) -> TableSpec:
        """The declared spec of table ``name``."""
        ...


def _objectish(v: Any) -> bool:
    return isinstance(v, dict | list | bytes | bytearray) or hasattr(v, "isoformat")


def hooks_middleware(db: HookedDb) -> Callable[[Handler], Handler]:
    """The middleware that fires the creating, updating and deleting hooks."""

    def create(down: Handler) -> Handler:
        async def handle(req: Request) -> Any:
            if type(req) is not Mutate:
                return await down(req)
            h, t = db.hooks, req.table
            kind = req.kind
            if kind == "add" and not h.of(t, "creating"):
                return await down(req)
            if kind == "put" and not (h.of(t, "creating") or h.of(t, "updating")):
                return await down(req)
            if kind in ("delete", "deleteRange") and not h.of(t, "deleting"):
                return await down(req)
            if kind == "deleteRange":
                keys = await down(Query(t, None, req.range or KeyRange(), "primaryKeys"))
                if keys:
                    await _hooked(db, down, Mutate(t, "delete", keys=list(keys)))
                return MutateResult([])
            return await _hooked(db, down, req)

        return handle

    return create


async def _hooked(db: HookedDb, down: Handler, req: Mutate) -> MutateResult:
    h, t = db.hooks, req.table
    spec = db.spec(t)
    inline = spec.primary_key.key_path
    if req.kind == "delete":
        keys: list[Any] = list(req.keys or [])
        values: list[Any] = []
    else:
        values = list(req.source if req.source is not None else [])
        if len(values) != len(req.values or []):
            raise DataError("a hooked write needs the values it was made from")
        explicit = req.keys
        resolved = req.resolved or [None] * len(values)
        keys = [
            explicit[i] if explicit and explicit[i] is not None else resolved[i]
            for i in range(len(values))
        ]
    existing: list[Any] = [MISSING] * len(keys)
    if req.kind != "add":
        known = [k for k in keys if k is not None]
        found = iter(await down(GetMany(t, known)) if known else [])
        existing = [MISSING if k is None else _missing(next(found)) for k in keys]
    contexts = []
    for i, key in enumerate(keys):
        ctx = HookContext()
        if req.kind == "delete":
            h.deleting(t, key, existing[i], ctx)
        elif req.kind == "add" or existing[i] is MISSING:
            new_key = h.creating(t, key, values[i], ctx)
            if key is None and new_key is not None:
                keys[i] = new_key
                if isinstance(inline, str):
                    set_by_key_path(values[i], inline, new_key)
        else:
            more = h.updating(t, object_diff(existing[i], values[i]), key, existing[i], ctx)
            for path, v in (more or {}).items():
                if isinstance(values[i], dict) and path in values[i]:
                    values[i][path] = v
                else:
                    set_by_key_path(values[i], path, v)
        contexts.append(ctx)
    if req.kind == "delete":
        out: MutateResult = await down(req)
    else:
        remade = prepare_write(db, spec, values, None if inline is not None else keys)
        remade.kind = req.kind
        out = await down(remade)
    for i, ctx in enumerate(contexts):
        if i in out.failures:
            if ctx.on_error is not None:
                ctx.on_error(out.failures[i])
        elif ctx.on_success is not None:
            replaced = req.kind == "put" and existing[i] is not MISSING
            ctx.on_success(values[i] if replaced else out.keys[i])
    return out


def _missing(v: Any) -> Any:
    return MISSING if v is None else v
