"""A collection's state: the frozen value that says which records it holds, and how.

:class:`~panelot.idb.collection.Collection` is Dexie's API over one of these and the
table it reads; running it (:mod:`panelot.idb.plan`) and changing or deleting its
records (:mod:`panelot.idb.modify`) take only the state, so they need neither the
collection nor the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from panelot.idb.keys import KeyRange
from panelot.idb.walk import Algorithm, Step

__all__ = ["Algo", "CollectionState"]


@dataclass(frozen=True, slots=True)
class Algo:
    """A where-clause that is not one key range: how Dexie's cursor walks it.

    ``kind`` is ``set`` (the keys it accepts are exactly the collection's ``ranges``:
    ``anyOf``, ``inAnyRange`` and the clauses built on them), ``case`` (the
    ignore-case clauses, whose jumps decide what matches), ``walk`` (ranges whose
    jumps decide it too) or ``never`` (an empty clause). ``hull`` is the key range
    Dexie's cursor walks; ``make`` starts one walk's algorithm for a direction
    (``True``: backwards).
    """

    kind: Literal["set", "case", "walk", "never"]
    hull: KeyRange
    make: Callable[[bool], Algorithm]


@dataclass(frozen=True, slots=True)
class CollectionState:
    """Records of one table within key ranges of one index, in index order.

    The refinements as they were called: ``filters`` (filter, until, distinct) and
    ``replays`` (offsets and limits) in call order, the previous part of an ``or_``,
    the fields picked or omitted.
    """

    table: str
    """The table's name."""
    index: str | None
    ranges: tuple[KeyRange, ...]
    algo: Algo | None = None
    reversed_: bool = False
    filters: tuple[Step, ...] = ()
    replays: tuple[Step, ...] = ()
    or_prev: CollectionState | None = None
    fields: tuple[str, ...] | None = None
    omitted: bool = False
    virtual: tuple[int, int] | None = None
    """For an index served by a longer compound index: (key length, parts dropped)."""
    unique: bool = False
    multi_entry: bool = False
    raw_: bool = False
