"""Recording what a transaction body touches, from the requests it issues.

:class:`Observed` wraps a body coroutine for the core: every request the body yields,
and the result it is resumed with, passes through a :class:`Recorder`, which adds to an
:data:`~panelot.idb.observe.changes.ObsSet` by Dexie's rules (its observability
middleware), so a set made here overlaps a set made by Dexie exactly when Dexie's own
would:

* writes: an ``add``/``put`` of fewer than :data:`EXACT_WRITES` values adds their
  primary keys to ``""`` and ``":dels"`` and their index keys to each index's part;
  a larger one adds every key to every part; a ``delete`` adds its keys, and a
  ``deleteRange`` its range, to ``""`` and ``":dels"``;
* reads: a ``get`` adds its keys to ``""``; a query over the primary key adds its
  range to ``""`` (to ``":dels"`` when it reads keys only); a query over an index adds
  its range to the index's part and the primary keys it returned to ``""`` (to
  ``":dels"`` for keys only: ``primaryKeys`` or ``entries``); a count over an index
  also watches ``":dels"`` entirely.
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from contextvars import ContextVar
from typing import Any

from panelot.idb.core import Batch, Count, GetMany, Mutate, MutateResult, Query, Request
from panelot.idb.errors import PanelotError
from panelot.idb.keys import (
    MIN_KEY,
    Key,
    KeyRange,
    compare_keys,
    evaluate_key_path,
    index_keys,
    plain_string_keys,
)
from panelot.idb.observe.changes import DELS, PRIMARY, ObsSet, part_name
from panelot.idb.observe.ranges import FULL, TOP, RangeSet
from panelot.idb.observe.reuse import Patch, Reuse
from panelot.idb.schema import TableSpec

__all__ = ["EXACT_WRITES", "Observed", "Recorder", "reading", "reusing"]

EXACT_WRITES = 50
"""Writes of fewer values are announced key by key; larger ones as every key (Dexie's)."""


class Recorder:
    """Adds what requests touch to ``into``: their writes, or their reads."""

    __slots__ = ("_db", "_old", "_parts", "_tables", "into", "reads")

    def __init__(
        self, db: str, tables: dict[str, TableSpec], reads: bool, into: ObsSet | None = None
    ) -> None:
        self._db = db
        self._tables = tables
        self._parts: dict[tuple[str, str], RangeSet] = {}
        self._old: dict[tuple[str, Any], dict[str, list[Key]] | None] = {}
        """Writes: the index keys of records this transaction read by key (None: absent)."""
        self.reads = reads
        self.into: ObsSet = {} if into is None else into

    def part(self, table: str, part: str) -> RangeSet:
        """The range set of one part, created on first use."""
        found = self._parts.get((table, part))
        if found is None:
            name = part_name(self._db, table, part)
            found = self.into.get(name)
            if found is None:
                found = self.into[name] = RangeSet()
            self._parts[(table, part)] = found
        return found

    def issued(self, req: Request) -> None:
        """Note a request as the body issues it."""
        kind = type(req)
        if kind is Batch:
            for sub in req.requests:  # type: ignore[attr-defined]
                self.issued(sub)
        elif kind is Mutate:
            if not self.reads:
                self._write(req)  # type: ignore[arg-type]
        elif self.reads:
            self._read(req)

    def answered(self, req: Request, result: Any) -> None:
        """Note a request's result (keys a query returned, keys a write generated)."""
        kind = type(req)
        if kind is Batch:
            if isinstance(result, list):
                for sub, out in zip(req.requests, result, strict=False):  # type: ignore[attr-defined]
                    if not isinstance(out, PanelotError):
                        self.answered(sub, out)
        elif kind is Query:
            if self.reads:
                self._query_result(req, result)  # type: ignore[arg-type]
        elif kind is GetMany:
            if not self.reads and isinstance(result, list):
                self._remember(req, result)  # type: ignore[arg-type]
        elif kind is Mutate and not self.reads and isinstance(result, MutateResult):
            given = req.resolved or req.keys  # type: ignore[attr-defined]
            if req.kind in ("add", "put") and (  # type: ignore[attr-defined]
                given is None or any(k is None for k in given)
            ):  # keys the store generated (the others were noted when issued)
                self.part(req.table, PRIMARY).add_keys(  # type: ignore[attr-defined]
                    k for k in result.keys if k is not None
                )

    # -- writes -------------------------------------------------------------------------

    def _write(self, req: Mutate) -> None:
        table = req.table
        if req.kind == "deleteRange":
            lo, hi = _bounds(req.range or KeyRange())
            self.part(table, PRIMARY).add_range(lo, hi)
            self.part(table, DELS).add_range(lo, hi)
            return
        if req.kind == "delete":
            keys = [k for k in req.keys or [] if k is not None]
            self.part(table, PRIMARY).add_keys(keys)
            for key in keys:
                old = self._old.pop((table, _hashable(key)), _UNKNOWN)
                if old is _UNKNOWN:
                    self.part(table, DELS).add_key(key)
                elif old is not None:
                    for index, index_keys in old.items():
                        self.part(table, index).add_keys(index_keys)
            return
        spec = self._tables.get(table)
        touched = req.index_keys
        if touched is None or spec is None:
            self._everything(table, spec)
            return
        keys = [k for k in req.resolved or req.keys or [] if k is not None]
        self.part(table, PRIMARY).add_keys(keys)
        if self._old:
            olds = [self._old.pop((table, _hashable(k)), _UNKNOWN) for k in keys]
        else:
            olds = [_UNKNOWN] * len(keys)
        if req.kind == "put" and any(o is _UNKNOWN for o in olds):
            # A put may replace a record this transaction never read: announce the key
            # as possibly deleted (Dexie's rule); an add replaces nothing.
            self.part(table, DELS).add_keys(
                k for k, o in zip(keys, olds, strict=True) if o is _UNKNOWN
            )
        known = [o for o in olds if o is not _UNKNOWN and o is not None]
        one = len(known) == len(keys) == 1
        for index, index_keys in touched.items():
            if one:
                before = known[0].get(index, [])
                if _same(before, index_keys):
                    continue  # the record stays where it was in this index
                self.part(table, index).add_keys(before).add_keys(index_keys)
                continue
            olds_here = [k for old in known for k in old.get(index, ())]
            if index_keys or olds_here:  # no part for an index the write leaves empty
                self.part(table, index).add_keys(olds_here).add_keys(index_keys)

    def _remember(self, req: GetMany, values: list[Any]) -> None:
        """Keep the index keys of records read by key, for a write of them that follows."""
        spec = self._tables.get(req.table)
        if spec is None or len(req.keys) >= EXACT_WRITES:
            return
        for key, value in zip(req.keys, values, strict=False):
            self._old[(req.table, _hashable(key))] = (
                None if value is None else _keys_of(spec, value)
            )

    def _everything(self, table: str, spec: TableSpec | None) -> None:
        self.part(table, PRIMARY).add_range(*FULL)
        self.part(table, DELS).add_range(*FULL)
        for index in spec.indexes if spec is not None else ():
            self.part(table, index.name).add_range(*FULL)

    # -- reads --------------------------------------------------------------------------

    def _read(self, req: Request) -> None:
        kind = type(req)
        if kind is GetMany:
            self.part(req.table, PRIMARY).add_keys(req.keys)  # type: ignore[attr-defined]
        elif kind is Query:
            assert isinstance(req, Query)
            lo, hi = _bounds(req.range)
            if req.index is None:
                part = DELS if req.want in ("primaryKeys", "entries") else PRIMARY
                self.part(req.table, part).add_range(lo, hi)
            else:
                self.part(req.table, req.index).add_range(lo, hi)
        elif kind is Count:
            assert isinstance(req, Count)
            lo, hi = _bounds(req.range)
            self.part(req.table, req.index or PRIMARY).add_range(lo, hi)
            if req.index is not None:
                self.part(req.table, DELS).add_range(*FULL)

    def _query_result(self, req: Query, result: Any) -> None:
        if req.index is None or not isinstance(result, list):
            return
        if req.want == "primaryKeys":
            self.part(req.table, DELS).add_keys(result)
            return
        if req.want == "entries":  # keys only, as a key cursor: watch their deletion
            self.part(req.table, DELS).add_keys(row[1] for row in result)
            return
        pks = self.part(req.table, PRIMARY)
        if req.want == "records":
            pks.add_keys(row[1] for row in result)
            return
        spec = self._tables.get(req.table)
        path = None if spec is None else spec.primary_key.key_path
        if path is None:  # out-of-line keys are not in the values: watch them all
            pks.add_range(*FULL)
            return
        keys = plain_string_keys(result, path)
        if keys is not None:
            pks.add_keys(keys)
            return
        for value in result:
            key = evaluate_key_path(value, path) if isinstance(value, dict) else None
            if key is None:  # a projection without the key: watch every key
                pks.add_range(*FULL)
                return
            pks.add_key(key)


_UNKNOWN: Any = object()


def _hashable(key: Key) -> Any:
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else (type(key), key)


def _same(a: list[Key], b: list[Key]) -> bool:
    if a == b:  # equal normalized keys are the same key (1 and 1.0 too)
        return True
    return len(a) == len(b) and all(compare_keys(x, y) == 0 for x, y in zip(a, b, strict=True))


def _keys_of(spec: TableSpec, value: Any) -> dict[str, list[Key]]:
    """The keys ``value`` gives each index of ``spec``."""
    return {
        index.name: index_keys(value, index.key_path, index.multi_entry)
        for index in spec.indexes
        if index.key_path is not None
    }


def _bounds(rng: KeyRange) -> tuple[Any, Any]:
    """A key range's closed bounds (open ends widened, as Dexie does)."""
    lo = MIN_KEY if rng.lower is None else rng.lower
    hi = TOP if rng.upper is None else rng.upper
    return lo, hi


class Observed(Coroutine[Any, Any, Any]):
    """A body coroutine whose requests and results pass through a :class:`Recorder`.

    With a :class:`~panelot.idb.observe.reuse.Reuse` (a live query's re-run), a query it
    can answer from the last run is not sent to the core: its patch's read is sent
    instead (or nothing), and the body is resumed with the patched result. The
    recorder notes the query and that result, as if the query had run.
    """

    __slots__ = ("_coro", "_last", "_patch", "_recorder", "_reuse")

    def __init__(
        self, coro: Coroutine[Any, Any, Any], recorder: Recorder, reuse: Reuse | None = None
    ) -> None:
        self._coro = coro
        self._recorder = recorder
        self._reuse = reuse
        self._last: Request | None = None
        self._patch: tuple[Query, Patch] | None = None

    def send(self, value: Any) -> Any:
        """Resume the body with a result; note the result and the next request."""
        patch = self._patch
        if patch is not None:
            self._patch = None
            query, step = patch
            value = step.finish(value)
            self._recorder.answered(query, value)
        else:
            last = self._last
            if last is not None:
                self._last = None
                self._recorder.answered(last, value)
                if self._reuse is not None and type(last) is Query:
                    self._reuse.keep(last, value)
        return self._issue(self._coro.send(value))

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        """Throw an error into the body; note the request it issues instead."""
        self._last = None
        self._patch = None
        yielded = (
            self._coro.throw(typ) if val is None and tb is None else self._coro.throw(typ, val, tb)
        )
        return self._issue(yielded)

    def _issue(self, yielded: Any) -> Any:
        """Note the request the body yielded; answer it from the last run if it can be."""
        reuse = self._reuse
        while isinstance(yielded, Request):
            if reuse is not None and type(yielded) is Query:
                step = reuse.plan(yielded)
                if step is not None:
                    self._recorder.issued(yielded)
                    if step.read is not None:
                        self._patch = (yielded, step)
                        return step.read
                    result = step.finish(None)
                    self._recorder.answered(yielded, result)
                    yielded = self._coro.send(result)
                    continue
            self._last = yielded
            self._recorder.issued(yielded)
            break
        return yielded

    def close(self) -> None:
        """Close the body."""
        self._coro.close()

    def __await__(self) -> Generator[Any, None, Any]:
        """Await the wrapped body (for callers that await it directly)."""
        return self._coro.__await__()


reading: ContextVar[ObsSet | None] = ContextVar("panelot_idb_reading", default=None)
"""The read set of the live query whose querier is running (``None`` outside one).

:meth:`~panelot.idb.database.Database.transaction` records the reads of every
transaction started while it is set, as Dexie's ``liveQuery`` does through its zone.
"""

reusing: ContextVar[Reuse | None] = ContextVar("panelot_idb_reusing", default=None)
"""The :class:`~panelot.idb.observe.reuse.Reuse` of the live query run in progress, set
with :data:`reading`: its transactions answer the queries they can from the last run."""
