"""``Collection``: the result of a where-clause or ``order_by``, refined before it runs.

Refining methods (``reverse``, ``offset``, ``limit``, ``filter``) return a new
collection; the async methods run it. Without a filter, a limit is pushed down to
the native ``getAll`` (plus the offset, which IndexedDB cannot skip for us). Several
ranges (``any_of``) are issued together and, being sorted and disjoint, concatenate
in key order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from panelot.idb.core import Batch, Count, Mutate, Query, QueryWant
from panelot.idb.errors import DataError
from panelot.idb.keys import Key, KeyRange, compare_keys
from panelot.idb.values import resolve_primary_key

if TYPE_CHECKING:
    from panelot.idb.table import Table

__all__ = ["Collection"]


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


@dataclass(frozen=True, slots=True)
class Collection:
    """Records of one table within key ranges of one index, in index order."""

    table: Table
    index: str | None
    ranges: tuple[KeyRange, ...]
    reversed_: bool = False
    skip: int = 0
    max_count: int | None = None
    filters: tuple[Callable[[Any], bool], ...] = ()
    fields: tuple[str, ...] | None = None
    omitted: bool = False

    # -- refining -----------------------------------------------------------------------

    def reverse(self) -> Collection:
        """Reverse the order."""
        return replace(self, reversed_=not self.reversed_)

    def offset(self, n: int) -> Collection:
        """Skip the first ``n`` results (after filters)."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise DataError("offset must be a non-negative integer", field="offset")
        return replace(self, skip=self.skip + n)

    def limit(self, n: int) -> Collection:
        """Return at most ``n`` results (after offset and filters)."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise DataError("limit must be a non-negative integer", field="limit")
        return replace(self, max_count=n if self.max_count is None else min(n, self.max_count))

    def filter(self, fn: Callable[[Any], bool]) -> Collection:
        """Keep only records for which ``fn(record)`` is true."""
        return replace(self, filters=(*self.filters, fn))

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
        return replace(self, fields=fields, omitted=False)

    def omit(self, *fields: str) -> Collection:
        """Read every top-level field of each record *but* these (a panelot extension).

        The counterpart of :meth:`pick`, with the same reach: the fields are dropped
        before the records cross into Python, so reading attachment metadata without
        its Blob (``omit("bytes")``) stays plain data.
        """
        _check_fields("omit", fields, dotted=False)
        return replace(self, fields=fields, omitted=True)

    # -- running ------------------------------------------------------------------------

    def _queries(self, want: QueryWant, fields: tuple[str, ...] | None = None) -> list[Query]:
        ranges = reversed(self.ranges) if self.reversed_ else self.ranges
        limit = None
        if not self.filters and self.max_count is not None:
            limit = self.skip + self.max_count
        omit = fields is not None and self.omitted
        return [
            Query(self.table.name, self.index, r, want, self.reversed_, limit, fields, omit)
            for r in ranges
        ]

    async def _fetch(self, table: Table, want: QueryWant, picked: bool = False) -> list[Any]:
        if not self.ranges or self.max_count == 0:
            return []
        fetch_want: QueryWant = "records" if self.filters else want
        queries = self._queries(fetch_want, self.fields if picked else None)
        if len(queries) == 1:
            rows: list[Any] = await queries[0]
        else:
            rows = [row for part in await Batch(queries) for row in part]
        if self.filters:
            rows = [r for r in rows if all(f(r[2]) for f in self.filters)]
        if self.skip or self.max_count is not None:
            end = None if self.max_count is None else self.skip + self.max_count
            rows = rows[self.skip : end]
        if self.filters and want != "records":
            rows = [r[2] if want == "values" else r[1] for r in rows]
        return rows

    async def to_list(self) -> list[Any]:
        """Return the records."""
        return await self.table.run("r", lambda t: self._fetch(t, "values", True))

    async def primary_keys(self) -> list[Key]:
        """Return the primary keys of the records."""
        return await self.table.run("r", lambda t: self._fetch(t, "primaryKeys"))

    async def keys(self) -> list[Key]:
        """Return the index keys of the records (one per index entry)."""
        rows = await self.table.run("r", lambda t: self._fetch(t, "records"))
        return [r[0] for r in rows]

    async def first(self) -> Any:
        """Return the first record, or ``None``."""
        rows = await self.limit(1).to_list()
        return rows[0] if rows else None

    async def last(self) -> Any:
        """Return the last record, or ``None``."""
        return await self.reverse().first()

    async def count(self) -> int:
        """Count the records (after filters, offset and limit)."""

        async def body(t: Table) -> int:
            if self.filters:
                return len(await self._fetch(t, "primaryKeys"))
            if not self.ranges:
                return 0
            counts: list[int] = await Batch([Count(t.name, self.index, r) for r in self.ranges])
            n = max(sum(counts) - self.skip, 0)
            return n if self.max_count is None else min(n, self.max_count)

        return await self.table.run("r", body)

    async def modify(self, changes: dict[str, Any] | Callable[[Any], None]) -> int:
        """Change every record, by ``{"key.path": value}`` or a function mutating it in place.

        Returns how many records were written. The primary key may not change.
        """
        from panelot.idb.table import _keys_or_raise, apply_changes

        async def body(t: Table) -> int:
            rows = await self._fetch(t, "records")
            if not rows:
                return 0
            inline = t.spec.primary_key.key_path is not None
            values, keys = [], []
            for _, pkey, value in rows:
                if callable(changes):
                    changes(value)
                else:
                    apply_changes(value, changes)
                if inline and compare_keys(resolve_primary_key(t.spec, value, None), pkey):
                    raise DataError("modify() cannot change the primary key", field="changes")
                values.append(value)
                keys.append(pkey)
            req = t._prepare(values, None if inline else keys)
            _keys_or_raise("modify", await req, len(values))
            return len(values)

        return await self.table.run("rw", body)

    async def delete(self) -> int:
        """Delete every record of the collection; return how many were deleted."""

        async def body(t: Table) -> int:
            pkeys = await self._fetch(t, "primaryKeys")
            if pkeys:
                await Mutate(t.name, "delete", keys=list(pkeys))
            return len(pkeys)

        return await self.table.run("rw", body)
