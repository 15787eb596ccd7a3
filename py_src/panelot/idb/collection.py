"""``Collection``: the result of a where-clause or ``order_by``, refined before it runs.

Refining methods (``reverse``, ``offset``, ``limit``, ``filter``, ``until``,
``distinct``, ``or_``) return a new collection; the async methods run it. They
apply as Dexie applies them (:mod:`panelot.idb.walk`): the where-clause first, then
the filters in call order, then offsets and limits in call order, so
``limit(10).offset(50)`` is empty while ``offset(50).limit(10)`` is not. Unlike
Dexie's, a collection is never changed by a call: ``c.limit(1)`` leaves ``c`` as it
was (Dexie's ``clone()`` exists for that; here it is a plain copy). A collection is
its table and its state (:class:`~panelot.idb.state.CollectionState`), a frozen value
that running it (:mod:`panelot.idb.plan`) and changing its records
(:mod:`panelot.idb.modify`) take.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from panelot.idb.errors import DataError
from panelot.idb.keys import Key
from panelot.idb.modify import delete_rows, modifier, modify_rows
from panelot.idb.plan import count_rows, rows, walked
from panelot.idb.sorting import sort_by_path
from panelot.idb.state import Algo, CollectionState
from panelot.idb.walk import Step

if TYPE_CHECKING:
    from panelot.idb.table import Table
    from panelot.idb.where import WhereClause

__all__ = ["Algo", "Collection"]


def _check_fields(method: str, fields: tuple[str, ...], dotted: bool) -> None:
    if not fields or not all(isinstance(f, str) and f and "," not in f for f in fields):
        raise DataError(f"{method}() needs one or more field names (no commas)", field="fields")
    for f in fields:
        parts = f.split(".")
        if "." in f and (not dotted or not all(parts)):
            raise DataError(f"{method}(): {f!r} is not a field name it takes", field="fields")
        for other in fields:
            if other != f and other.startswith(f + "."):
                raise DataError(f"{method}(): {other!r} lies inside {f!r}", field="fields")


def _count_arg(name: str, n: Any) -> int:
    if not isinstance(n, int) or isinstance(n, bool):
        raise DataError(f"{name} must be an integer, not {n!r}", field=name)
    return n


@dataclass(frozen=True, slots=True)
class Collection:
    """Records of one table within key ranges of one index, in index order."""

    table: Table
    state: CollectionState
    """Which records, and how: what :mod:`panelot.idb.plan` runs."""

    # -- refining -----------------------------------------------------------------------

    def _with(self, **changes: Any) -> Collection:
        return Collection(self.table, replace(self.state, **changes))

    def _is_plain(self) -> bool:
        s = self.state
        return s.algo is None and not s.filters and s.or_prev is None

    def reverse(self) -> Collection:
        """Reverse the order (of this part only, after an ``or_``, as in Dexie)."""
        return self._with(reversed_=not self.state.reversed_)

    def desc(self) -> Collection:
        """The same as :meth:`reverse`."""
        return self.reverse()

    def offset(self, n: int) -> Collection:
        """Skip ``n`` results, at this point of the chain (see the module docstring).

        ``n`` of 0 or less skips nothing, as in Dexie.
        """
        _count_arg("offset", n)
        if n <= 0:
            return self
        replays = self.state.replays
        plain = self._is_plain() and not replays
        return self._with(replays=(*replays, Step("offset", n=n, plain=plain)))

    def limit(self, n: int) -> Collection:
        """Stop after ``n`` results, at this point of the chain (none if ``n`` <= 0)."""
        _count_arg("limit", n)
        return self._with(replays=(*self.state.replays, Step("limit", n=max(n, 0))))

    def filter(self, fn: Callable[[Any], Any]) -> Collection:
        """Keep only records for which ``fn(record)`` is true."""
        if not callable(fn):
            raise DataError("filter() needs a function of the record", field="fn")
        return self._with(filters=(*self.state.filters, Step("filter", fn)))

    def and_(self, fn: Callable[[Any], Any]) -> Collection:
        """The same as :meth:`filter` (Dexie's ``and``)."""
        return self.filter(fn)

    def until(self, fn: Callable[[Any], Any], include_stop_entry: bool = False) -> Collection:
        """Stop at the first record for which ``fn(record)`` is true (kept if asked)."""
        if not callable(fn):
            raise DataError("until() needs a function of the record", field="fn")
        step = Step("until", fn, include=bool(include_stop_entry))
        return self._with(filters=(*self.state.filters, step))

    def distinct(self) -> Collection:
        """On a multiEntry index, yield each record once (elsewhere records are unique)."""
        if not self.state.multi_entry:
            return self
        return self._with(filters=(*self.state.filters, Step("distinct")))

    def or_(self, index: str | list[str]) -> WhereClause:
        """A where-clause on another index whose records join these, each record once.

        The parts run as Dexie runs them: one cursor each, taking turns, so the records
        come interleaved, not sorted (use :meth:`sort_by` for an order). Refinements
        made after the ``or_`` apply to the records of every part.
        """
        return self.table._where(index, self)

    def clone(self) -> Collection:
        """An equal collection (refinements never change a collection here)."""
        return Collection(self.table, self.state)

    def raw(self) -> Collection:
        """The records as stored: the table's ``reading`` hooks are not applied."""
        return self._with(raw_=True)

    def _mapper(self) -> Callable[[Any], Any] | None:
        return None if self.state.raw_ else self.table.db.hooks.reader(self.table.name)

    def pick(self, *fields: str) -> Collection:
        """Read only these fields of each record (a panelot extension to Dexie).

        A field is a top-level name or a dotted key path (``"payload.deleted"``), which
        keeps just that value, nested as it was (``{"payload": {"deleted": True}}``); a
        path that does not resolve through objects is left out. Applies to
        :meth:`to_list`, :meth:`first` and :meth:`last`; filters see the picked fields.
        The fields are chosen before the records cross into Python, so totals over
        records that also hold Blobs or large payloads stay cheap.
        """
        _check_fields("pick", fields, dotted=True)
        return self._with(fields=fields, omitted=False)

    def omit(self, *fields: str) -> Collection:
        """Read every top-level field of each record *but* these (a panelot extension).

        The counterpart of :meth:`pick`, with the same reach: the fields are dropped
        before the records cross into Python, so reading attachment metadata without
        its Blob (``omit("bytes")``) stays plain data.
        """
        _check_fields("omit", fields, dotted=False)
        return self._with(fields=fields, omitted=True)

    # -- running ------------------------------------------------------------------------

    async def _read(self, want: Literal["values", "primaryKeys", "keys"]) -> list[Any]:
        # Requests name their table; whichever transaction runs the body answers them.
        return await self.table.run("r", lambda t: rows(self.state, want))

    async def to_list(self) -> list[Any]:
        """Return the records (through the table's ``reading`` hooks, unless :meth:`raw`)."""
        found = await self._read("values")
        read = self._mapper()
        return found if read is None else [read(v) for v in found]

    async def primary_keys(self) -> list[Key]:
        """Return the primary keys of the records."""
        return await self._read("primaryKeys")

    async def keys(self) -> list[Key]:
        """Return the index keys of the records (one per index entry)."""
        return await self._read("keys")

    async def unique_keys(self) -> list[Key]:
        """Return the distinct index keys, in index order."""
        return await self._with(unique=True)._read("keys")

    async def first(self) -> Any:
        """Return the first record, or ``None``."""
        found = await self.limit(1).to_list()
        return found[0] if found else None

    async def last(self) -> Any:
        """Return the last record, or ``None``."""
        return await self.reverse().first()

    async def first_key(self) -> Key | None:
        """Return the index key of the first record, or ``None``."""
        found = await self.limit(1).keys()
        return found[0] if found else None

    async def last_key(self) -> Key | None:
        """Return the index key of the last record, or ``None``."""
        return await self.reverse().first_key()

    async def count(self) -> int:
        """Count the records (after filters, offsets and limits)."""

        async def body(t: Table) -> int:
            n = await count_rows(self.state)
            return len(await walked(self.state, False)) if n is None else n

        return await self.table.run("r", body)

    async def each(self, fn: Callable[..., Any]) -> None:
        """Call ``fn(record, cursor)`` (or ``fn(record)``) for each record, in order.

        ``cursor`` carries ``key`` and ``primary_key``. The calls run inside the read's
        transaction; an exception from ``fn`` ends the read and is raised here.
        """
        await self._each(fn, 2, values=True)

    async def each_key(self, fn: Callable[..., Any]) -> None:
        """Call ``fn(key, cursor)`` (or ``fn(key)``) for each index key."""
        await self._each(fn, 0)

    async def each_primary_key(self, fn: Callable[..., Any]) -> None:
        """Call ``fn(primary_key, cursor)`` (or ``fn(primary_key)``) for each record."""
        await self._each(fn, 1)

    async def each_unique_key(self, fn: Callable[..., Any]) -> None:
        """Call ``fn(key, cursor)`` (or ``fn(key)``) for each distinct index key."""
        await self._with(unique=True)._each(fn, 0)

    async def _each(self, fn: Callable[..., Any], pick: int, values: bool = False) -> None:
        if not callable(fn):
            raise DataError("each() needs a function", field="fn")
        two = _takes_two(fn)
        read = self._mapper() if values else None

        async def body(t: Table) -> None:
            for row in await walked(self.state, values):
                item = row[pick] if read is None else read(row[pick])
                if two:
                    fn(item, EachCursor(row[0], row[1]))
                else:
                    fn(item)

        await self.table.run("r", body)

    async def sort_by(self, key_path: str) -> list[Any]:
        """Return the records sorted by ``key_path`` (descending if reversed), as Dexie's sortBy."""
        if not isinstance(key_path, str) or not key_path:
            raise DataError("sort_by() needs a key path", field="key_path")
        native = getattr(self.table.db.core, "sort_order", None)  # V8 itself, in the browser
        return sort_by_path(await self.to_list(), key_path, self.state.reversed_, native)

    async def modify(self, changes: Any) -> int:
        """Change every record, by ``{"key.path": value}`` or a function; return the count.

        See :func:`panelot.idb.modify.modify_rows` for the rules.
        """
        modify = modifier(changes)
        state = self.state
        return await self.table.run("rw", lambda t: modify_rows(state, modify, t.spec, t._prepare))

    async def delete(self) -> int:
        """Delete every record of the collection; return how many were deleted."""
        state = self.state
        return await self.table.run("rw", lambda t: delete_rows(state))


class EachCursor:
    """What :meth:`Collection.each` passes with each record: its keys."""

    __slots__ = ("key", "primary_key")

    def __init__(self, key: Key, primary_key: Key) -> None:
        self.key = key
        self.primary_key = primary_key


def _takes_two(fn: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)
