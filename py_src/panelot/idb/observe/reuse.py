"""A live query's re-run reads only what changed: the last run's query results, patched.

A live query runs its querier again after a relevant change, and most of what the
querier reads has not changed: a thread's 220 nodes when one was appended. A
:class:`Reuse` carries, from one run to the next, the results of the run's plain
queries (``values`` over the primary key or a single-valued index, no projection) and
the change sets heard since the last run began. When the next run issues the same
query, :class:`~panelot.idb.observe.track.Observed` asks :meth:`Reuse.plan` for a
:class:`Patch` instead of sending the query to the core:

* no part of the query's table changed: the last result is served again, with no
  request at all;
* the changes name at most :data:`MAX_KEYS` primary keys of the table (every part of
  the table is then announced key by key, as small writes are): only those keys are
  read, by one ``GetMany`` inside the run's transaction, and merged into the last
  result: a changed record leaves it, and comes back in key order if it is still in
  the query's range;
* anything else (a range of keys, a wide write, the ``all`` part, a limited query whose
  full window holds a changed record, another core after an upgrade): the query runs
  as it is and its result is kept for the next run.

Why this is exact. A result kept at run *n* is the database as its read-only
transaction saw it. Every commit after that transaction began is announced with the
primary keys it wrote, and the live query keeps every set it hears from the start of
run *n* until run *n + 1* begins; sets heard during run *n + 1* are kept for run
*n + 2*. A patch re-reads each named key as it is now, so each record of the result is
as current as the newest announcement of it. A commit that is announced late (from
another page, after run *n + 1*'s transaction began) is read by the run its
announcement causes, as a full re-run would also need. A write that is never announced
(raw IndexedDB code that speaks no Dexie protocol) is not seen until a wider change
makes the query read in full: the same limit as the change feed itself.

Results are held as ``marshal`` bytes, so what a consumer does to a result it was given
cannot change the next one; a result marshal cannot hold (a Blob handle) is not kept.
"""

from __future__ import annotations

import bisect
import marshal
from dataclasses import dataclass
from typing import Any

from panelot.idb.core import GetMany, Query
from panelot.idb.keys import Key, evaluate_key_path, hashable_key, plain_string_keys
from panelot.idb.observe.changes import ALL, ObsSet
from panelot.idb.observe.ranges import order
from panelot.idb.schema import TableSpec

__all__ = ["MAX_BYTES", "MAX_KEYS", "Patch", "Reuse"]

MAX_KEYS = 50
"""The most changed primary keys of a table a patch reads; more read the query in full."""

MAX_BYTES = 32 * 1024 * 1024
"""A query result larger than this (as marshal bytes) is not kept."""


@dataclass(slots=True)
class _Kept:
    """One query's last result, in ascending key order (reversed for a reverse query)."""

    blob: bytes
    """The values, as ``marshal`` bytes."""
    count: int
    """How many values."""


@dataclass(slots=True)
class _Shape:
    """What a patch needs of a query's table: its key paths."""

    pk_path: str | list[str]
    index_path: str | list[str] | None

    def place(self, row: dict[str, Any]) -> Any:
        """A kept row's sort key (its keys are valid: the query returned it)."""
        pk = _at(row, self.pk_path)
        return (order(pk if self.index_path is None else _at(row, self.index_path)), order(pk))

    def pks(self, rows: list[Any]) -> list[Any]:
        """Each row's primary key, as :func:`~panelot.idb.keys.hashable_key`."""
        keys = plain_string_keys(rows, self.pk_path)
        if keys is not None:
            return keys  # a string is its own hashable_key
        return [hashable_key(evaluate_key_path(row, self.pk_path)) for row in rows]


class Patch:
    """How one query of a run is answered from the last run's result.

    ``read`` is the request to send instead of the query (``None``: nothing to read);
    :meth:`finish` takes its result and returns the query's.
    """

    __slots__ = ("_keys", "_kept", "_query", "_reuse", "_rows", "_shape", "read")

    def __init__(
        self,
        reuse: Reuse,
        query: Query,
        shape: _Shape,
        kept: _Kept,
        keys: list[Key],
        rows: list[Any] | None,
    ) -> None:
        self._reuse = reuse
        self._query = query
        self._shape = shape
        self._kept = kept
        self._keys = keys
        self._rows = rows
        self.read: GetMany | None = GetMany(query.table, keys) if keys else None

    def finish(self, values: Any) -> list[Any]:
        """The query's result: the kept one, with the changed keys re-read from ``values``."""
        kept, query, shape = self._kept, self._query, self._shape
        rows: list[Any] = marshal.loads(kept.blob) if self._rows is None else self._rows
        if self.read is None:
            self._reuse.served += 1
            self._reuse.kept[_signature(query)] = kept
        else:
            changed = {hashable_key(k) for k in self._keys}
            pks = shape.pks(rows)
            rows = [row for row, pk in zip(rows, pks, strict=True) if pk not in changed]
            for value in values:
                sort = None if value is None else _sort_of(shape, query, value)
                if sort is None:
                    continue
                at = bisect.bisect_left(rows, sort, key=shape.place)
                rows.insert(at, value)
            limit = query.limit
            if limit is not None and len(rows) > limit:
                rows = rows[len(rows) - limit :] if query.reverse else rows[:limit]
            self._reuse.patched += 1
            try:
                self._reuse.kept[_signature(query)] = _Kept(marshal.dumps(rows), len(rows))
            except ValueError:  # a record now holds what marshal cannot: keep nothing
                pass
        if query.reverse:
            rows.reverse()
        return rows  # the reader's own objects: what is kept is the bytes


class Reuse:
    """One live query's reuse of query results, handed from each run to the next.

    :meth:`next_run` makes the next run's, with the changes heard since this run began;
    ``served`` and ``patched`` count the queries answered without running them.
    """

    __slots__ = (
        "_core",
        "_db",
        "_prior_core",
        "_tables",
        "kept",
        "patched",
        "prior",
        "served",
        "since",
    )

    def __init__(
        self,
        prior: dict[Any, _Kept] | None = None,
        since: ObsSet | None = None,
        core: object = None,
    ) -> None:
        self.prior: dict[Any, _Kept] = prior or {}
        """The last run's kept results, by query, read on ``core``."""
        self.since: ObsSet = since if since is not None else {}
        """The changes heard since the last run began."""
        self.kept: dict[Any, _Kept] = {}
        """This run's results, for the next run."""
        self._prior_core = core
        self._core: object = None
        self._db = ""
        self._tables: dict[str, TableSpec] = {}
        self.served = 0
        self.patched = 0

    def bind(self, core: object, db: str, tables: dict[str, TableSpec]) -> None:
        """Tie the run to a connection's core: results kept on another core are dropped."""
        if self._core is not core:
            self.kept.clear()  # a run across two cores (an upgrade between) keeps the second's
            if self._prior_core is not core:
                self.prior = {}
            self._core, self._db, self._tables = core, db, tables

    def next_run(self, since: ObsSet) -> Reuse:
        """The reuse of the run after this one, given the changes heard since this began."""
        return Reuse(self.kept, since, self._core)

    def plan(self, query: Query) -> Patch | None:
        """How to answer ``query`` from the last result, or ``None`` to run it."""
        shape = self._shape(query)
        if shape is None:
            return None
        kept = self.prior.get(_signature(query))
        if kept is None or ALL in self.since:
            return None
        keys = self._changed_keys(query.table)
        if keys is None:
            return None
        rows = None
        if keys and query.limit is not None and kept.count >= query.limit:
            rows = marshal.loads(kept.blob)  # a window: as many rows as the limit
            changed = {hashable_key(k) for k in keys}
            if any(pk in changed for pk in shape.pks(rows)):
                return None  # the window would have to grow past what was read
        return Patch(self, query, shape, kept, keys, rows)

    def keep(self, query: Query, result: Any) -> None:
        """Keep a query's result (the run sent it to the core) for the next run."""
        if self._shape(query) is None or not isinstance(result, list):
            return
        if not all(type(value) is dict for value in result):
            return  # a record the key paths cannot be read from as a plain object
        try:
            blob = marshal.dumps(result[::-1] if query.reverse else result)
        except ValueError:  # a value marshal cannot hold
            return
        if len(blob) <= MAX_BYTES:
            self.kept[_signature(query)] = _Kept(blob, len(result))

    def _shape(self, query: Query) -> _Shape | None:
        if query.want != "values" or query.fields is not None or query.omit:
            return None
        spec = self._tables.get(query.table)
        if spec is None or spec.primary_key.key_path is None:
            return None
        if query.index is None:
            return _Shape(spec.primary_key.key_path, None)
        index = spec.index(query.index)
        if index is None or index.multi_entry or index.key_path is None:
            return None
        return _Shape(spec.primary_key.key_path, index.key_path)

    def _changed_keys(self, table: str) -> list[Key] | None:
        """The primary keys of ``table`` the changes name (``None``: too many, or a range)."""
        prefix = f"idb://{self._db}/{table}/"
        keys: dict[Any, Key] = {}
        touched = False
        for part, ranges in self.since.items():
            if not part.startswith(prefix):
                continue
            touched = touched or bool(ranges)
            if part[len(prefix) :] not in ("", ":dels"):
                continue
            for lo, hi in ranges:
                if lo is not hi and order(lo) != order(hi):
                    return None  # a range, not a key (the full range ends at TOP)
                keys[hashable_key(lo)] = lo
                if len(keys) > MAX_KEYS:
                    return None
        if touched and not keys:
            return None  # only index parts: the keys are not named
        return list(keys.values())


def _signature(query: Query) -> tuple[Any, ...]:
    rng = query.range
    return (
        query.table,
        query.index,
        hashable_key(rng.lower) if rng.lower is not None else None,
        hashable_key(rng.upper) if rng.upper is not None else None,
        rng.lower_open,
        rng.upper_open,
        query.reverse,
        query.limit,
    )


def _sort_of(shape: _Shape, query: Query, value: Any) -> Any:
    """``value``'s place in the query's key order, or ``None`` if not in its range."""
    if not isinstance(value, dict):
        return None
    pk = evaluate_key_path(value, shape.pk_path)
    if pk is None:
        return None
    key = pk if shape.index_path is None else evaluate_key_path(value, shape.index_path)
    if key is None or not query.range.includes(key):
        return None
    return (order(key), order(pk))


def _at(row: dict[str, Any], path: str | list[str]) -> Key:
    """The key at ``path`` in a row whose keys are known to be valid."""
    if isinstance(path, str):
        if "." not in path:
            return row[path]
        return evaluate_key_path(row, path)
    return [_at(row, part) for part in path]
