"""Running a collection's state: the reads it takes, then Dexie's walk over what they returned.

What runs is the :class:`~panelot.idb.state.CollectionState`, not the collection: its
table's name, index, ranges and refinements are all a run needs.

A plain key range (no algorithm, filter or ``or``) is one read with its offsets and
limits pushed down. Otherwise the rows the cursor would land on are read in bulk
and :func:`panelot.idb.walk.walk` replays Dexie's iteration over them:

* without ``or``, rows an algorithm turns away are never seen by the filters, so
  only the rows it accepts are read: one read per range of an ``anyOf``-like
  clause, or the keys of the range an ignore-case clause walks, then the values of
  the keys it accepts;
* with ``or``, each part's cursor takes turns with the others, rejected rows
  included, so each part reads its whole range and runs its algorithm in the walk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from panelot.idb.core import Batch, Count, GetMany, Query, QueryWant
from panelot.idb.keys import KeyRange, compare_keys, hashable_key, key_sort_key
from panelot.idb.state import CollectionState
from panelot.idb.values import project
from panelot.idb.walk import Control, Cursor, Row, Stage, accept, run_stages, walk

__all__ = ["Want", "count_rows", "rows", "walked", "window"]


def window(steps: Sequence[Any]) -> tuple[int, int | None]:
    """Offsets and limits in call order as one ``(start, length)`` slice of the stream."""
    start, length = 0, None
    for s in steps:
        if s.kind == "offset":
            start += s.n
            length = None if length is None else max(length - s.n, 0)
        else:
            length = s.n if length is None else min(length, s.n)
    return start, length


def _plain(c: CollectionState) -> bool:
    """Rows are exactly the reads of ``c.ranges`` in order: no walk needed.

    True without filters, ``or`` or unique keys, when the clause is one range or a
    set of ranges (whose algorithm accepts exactly their keys, and whose offsets and
    limits then count the same rows as a slice does).
    """
    return (
        (c.algo is None or c.algo.kind in ("set", "never"))
        and not c.filters
        and c.or_prev is None
        and not c.unique
    )


def _view(c: CollectionState, rows: list[Any], want: QueryWant) -> list[Row]:
    """Rows as ``(key, primary key, value)``, keys as the (virtual) index gives them."""
    if want == "entries":
        out: list[Row] = [(k, p, None) for k, p in rows]
    else:
        out = [tuple(r) for r in rows]
    if c.virtual is not None:
        n = c.virtual[0]
        out = [(k[0] if n == 1 else k[:n], p, v) for k, p, v in out]
    if c.unique:
        out = _unique(out)
    return out


def _unique(rows: list[Row]) -> list[Row]:
    """What a ``nextunique``/``prevunique`` cursor lands on: one row per key, lowest primary key.

    Rows in walking order hold equal keys together, primary keys ascending (forwards)
    or descending (backwards); both directions keep the lowest primary key.
    """
    out: list[Row] = []
    last: Any = object()
    for row in rows:
        k = hashable_key(row[0])
        if out and k == last:
            if row[1] is not None and _lower_pk(row, out[-1]):
                out[-1] = row
            continue
        last = k
        out.append(row)
    return out


def _lower_pk(a: Row, b: Row) -> bool:
    return compare_keys(a[1], b[1]) < 0


def _query(c: CollectionState, rng: KeyRange, want: QueryWant, limit: int | None = None) -> Query:
    fields = c.fields if want in ("values", "records") else None
    omit = fields is not None and c.omitted
    return Query(c.table, c.index, rng, want, c.reversed_, limit, fields, omit)


async def _read(c: CollectionState, ranges: Sequence[KeyRange], want: QueryWant) -> list[Row]:
    if not ranges:
        return []
    order = list(reversed(ranges)) if c.reversed_ else list(ranges)
    if len(order) == 1:
        found: list[Any] = await _query(c, order[0], want)
    else:
        found = [row for part in await Batch([_query(c, r, want) for r in order]) for row in part]
    return _view(c, found, want)


async def _accepted(c: CollectionState, values: bool) -> list[Row]:
    """The rows the collection's own algorithm accepts, in walking order (no ``or``)."""
    want: QueryWant = "records" if values else "entries"
    algo = c.algo
    if algo is None or algo.kind in ("set", "never"):
        return await _read(c, c.ranges, want)
    rows = await _read(c, (algo.hull,), "entries")
    accepted = accept(rows, c.reversed_, algo.make(c.reversed_))
    if not values or not accepted:
        return accepted
    found = await GetMany(c.table, [r[1] for r in accepted])
    if c.fields is not None:
        found = [project(v, c.fields, c.omitted) for v in found]
    return [(k, p, v) for (k, p, _), v in zip(accepted, found, strict=True)]


Want = Literal["values", "primaryKeys", "keys"]


async def rows(c: CollectionState, want: Want) -> list[Any]:
    """What the collection yields, in Dexie's order: its values, primary keys or keys."""
    if _plain(c):
        start, length = window(c.replays)
        if length == 0 or not c.ranges:
            return []
        limit = None if length is None else start + length
        order = list(reversed(c.ranges)) if c.reversed_ else list(c.ranges)
        query_want: QueryWant = "entries" if want == "keys" else want
        if len(order) == 1:
            parts = [await _query(c, order[0], query_want, limit)]
        else:
            parts = await Batch([_query(c, r, query_want, limit) for r in order])
        found: list[Any] = [x for part in parts for x in part]
        if want == "keys":
            found = [r[0] for r in _view(c, found, "entries")]
        return found[start : None if length is None else start + length]
    pick = 2 if want == "values" else 1 if want == "primaryKeys" else 0
    return [r[pick] for r in await walked(c, want == "values")]


async def walked(c: CollectionState, values: bool) -> list[Row]:
    """The rows a collection that is not a plain range yields, walked as Dexie walks."""
    out: list[Row] = []

    def collect(row: Row, ctl: Control) -> None:
        out.append(row)

    if c.or_prev is None:
        own = await _accepted(c, values or bool(c.filters))
        return run_stages(own, [s.stage() for s in (*c.filters, *c.replays)])
    parts: list[CollectionState] = []
    part: CollectionState | None = c
    while part is not None:
        parts.append(part)
        part = part.or_prev
    # The walk needs values only for filters; else the delivered rows' are read after.
    need = any(p.filters for p in parts)
    raw = {id(p): await _whole(p, need) for p in parts}
    cursors: list[Cursor] = []
    _build(c, collect, cursors, raw)
    walk(cursors)
    if values and not need and out:
        found = await GetMany(c.table, [r[1] for r in out])
        if c.fields is not None:
            found = [project(v, c.fields, c.omitted) for v in found]
        return [(k, p, v) for (k, p, _), v in zip(out, found, strict=True)]
    return out


async def _whole(c: CollectionState, values: bool) -> list[Row]:
    """The rows a part's cursor may land on: its range, or its algorithm's whole range.

    A set of disjoint ranges (``set``) lands only on the rows of its ranges, on the
    rows at an excluded bound (its algorithm steps over those one by one), and on the
    first row past each range (where it then seeks on): those are read instead of the
    whole range between them.
    """
    want: QueryWant = "records" if values else "entries"
    algo = c.algo
    if algo is None:
        return await _read(c, c.ranges, want)
    if algo.kind != "set" or c.unique or not c.ranges:
        return await _read(c, (algo.hull,), want)
    order = list(reversed(c.ranges)) if c.reversed_ else list(c.ranges)
    beyond = [b for b in (_beyond(r, algo.hull, c.reversed_) for r in order) if b is not None]
    ends = [r.lower for r in order if r.lower_open and r.lower is not None]
    ends += [r.upper for r in order if r.upper_open and r.upper is not None]
    bounds = [KeyRange(k, k) for k in ends if algo.hull.includes(k)]  # not past the hull
    reads = [_query(c, r, want) for r in (*order, *bounds)]
    reads += [_query(c, b, want, 1) for b in beyond]
    parts = await Batch(reads)
    seen: set[Any] = set()
    rows: list[Any] = []
    for row in (x for part in parts for x in part):
        k = (hashable_key(row[0]), hashable_key(row[1]))
        if k not in seen:
            seen.add(k)
            rows.append(row)
    rows.sort(key=lambda r: (key_sort_key(r[0]), key_sort_key(r[1])), reverse=c.reversed_)
    return _view(c, rows, want)


def _beyond(r: KeyRange, hull: KeyRange, reverse: bool) -> KeyRange | None:
    """The part of ``hull`` strictly past ``r``'s end in walking order (``None``: none)."""
    if reverse:
        if r.lower is None:
            return None
        lo, lo_open, hi, hi_open = hull.lower, hull.lower_open, r.lower, True
    else:
        if r.upper is None:
            return None
        lo, lo_open, hi, hi_open = r.upper, True, hull.upper, hull.upper_open
    if lo is not None and hi is not None:
        c = compare_keys(lo, hi)
        if c > 0 or (c == 0 and (lo_open or hi_open)):
            return None
    return KeyRange(lo, hi, lo_open, hi_open)


def _build(
    c: CollectionState,
    sink: Any,
    cursors: list[Cursor],
    raw: dict[int, list[Row]],
) -> None:
    """Open the cursors of ``c`` and the parts before it, as Dexie's ``iter`` does."""
    stages: list[Stage] = [s.stage() for s in (*c.filters, *c.replays)]
    algorithm = None if c.algo is None else c.algo.make(c.reversed_)
    if c.or_prev is None:
        cursors.append(Cursor(raw[id(c)], c.reversed_, stages, sink, algorithm))
        return
    seen: set[Any] = set()

    def union(row: Row, ctl: Control) -> None:
        for stage in stages:
            if not stage(row, ctl):
                return
        k = hashable_key(row[1])
        if k not in seen:
            seen.add(k)
            sink(row, ctl)

    _build(c.or_prev, union, cursors, raw)
    cursors.append(Cursor(raw[id(c)], c.reversed_, [], union, algorithm))


async def count_rows(c: CollectionState) -> int | None:
    """A count without reading rows, when the collection is a plain range (else ``None``)."""
    if not _plain(c):
        return None
    if not c.ranges or window(c.replays)[1] == 0:
        return 0
    counts: list[int] = await Batch([Count(c.table, c.index, r) for r in c.ranges])
    n = sum(counts)
    for s in c.replays:
        n = max(n - s.n, 0) if s.kind == "offset" else min(n, s.n)
    return n
