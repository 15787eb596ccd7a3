"""Observability sets: what a transaction changed or a query read, part by part.

An :data:`ObsSet` maps a part, ``idb://<db>/<table>/<part>``, to a
:class:`~panelot.idb.observe.ranges.RangeSet`; the part is ``""`` for primary keys,
``":dels"`` for deleted keys, or an index name. A set holding the part ``all`` overlaps
every set (Dexie sends one when a page comes back from the back/forward cache).

On the wire (between contexts, and to Dexie), a set is JSON text of
``{part: tree}`` in Dexie's tree shape, with ``{"$inf": 1}`` / ``{"$inf": -1}`` for
the infinities and ``{"$top": 1}`` for the top of an open range (:data:`TOP`, above every
key; Dexie is handed its ``maxKey`` instead). A key JSON cannot carry (a date, binary)
widens its part to every key, in both directions: never a missed change, at worst an extra re-run.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, TypeAlias

from panelot.idb.observe.ranges import TOP, RangeSet

__all__ = [
    "ALL",
    "DELS",
    "PRIMARY",
    "ObsSet",
    "decode_set",
    "encode_set",
    "merge_sets",
    "part_name",
    "sets_overlap",
]

ObsSet: TypeAlias = dict[str, RangeSet]
"""``{"idb://db/table/part": RangeSet}``: Dexie's ObservabilitySet."""

PRIMARY = ""
"""The part of primary keys."""
DELS = ":dels"
"""The part of deleted (or possibly overwritten) primary keys."""
ALL = "all"
"""The part that overlaps everything."""

MAX_TEXT = 4 * 1024 * 1024
"""A received message longer than this is refused as malformed."""

MAX_DEPTH = 100
"""A received message nested deeper than this is refused (a tree of 100,000 intervals is
about 20 deep): decoding it must not exhaust the stack, which under Pyodide is small."""

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def part_name(db: str, table: str, part: str) -> str:
    """``idb://<db>/<table>/<part>``."""
    return f"idb://{db}/{table}/{part}"


def merge_sets(into: ObsSet, other: ObsSet) -> ObsSet:
    """Add every range of ``other`` to ``into``; return ``into``."""
    for part, ranges in other.items():
        mine = into.get(part)
        if mine is None:
            into[part] = RangeSet().update(ranges)
        else:
            mine.update(ranges)
    return into


def sets_overlap(changes: ObsSet, reads: ObsSet) -> bool:
    """True if a change in ``changes`` touches something in ``reads`` (Dexie's rule)."""
    if ALL in changes or ALL in reads:
        return True
    small, large = (changes, reads) if len(changes) <= len(reads) else (reads, changes)
    for part, ranges in small.items():
        other = large.get(part)
        if other is not None and ranges and other and ranges.overlaps(other):
            return True
    return False


# -- the wire ---------------------------------------------------------------------------


class _Wide(Exception):  # noqa: N818 - a signal, not an error
    """A key JSON cannot carry: the part becomes every key."""


_string: Callable[[str], str] = json.encoder.encode_basestring_ascii
_FULL_TREE = '{"from":{"$inf":-1},"to":{"$top":1},"d":1,"l":null,"r":null}'


def _key_text(key: Any) -> str:
    """A key's JSON text, as the ``json`` module writes it; :class:`_Wide` if JSON cannot.

    Written out by type, so a bound costs no encoder call.
    """
    kind = type(key)
    if kind is str:
        return _string(key)
    if kind is int:
        return int.__repr__(key)
    if kind is float:
        if math.isfinite(key):
            return float.__repr__(key)
        return '{"$inf":1}' if key > 0 else '{"$inf":-1}'
    if kind is list:
        return "[" + ",".join([_key_text(k) for k in key]) + "]"
    if key is TOP:
        return '{"$top":1}'
    if isinstance(key, int | float) and not isinstance(key, bool):  # a subclass
        return _key_text(int(key) if isinstance(key, int) else float(key))
    raise _Wide


def _tree_text(ranges: list[tuple[str, str]], lo: int, hi: int) -> tuple[str, int]:
    """Dexie's balanced tree of ``ranges[lo:hi]`` (bounds already JSON), and its height."""
    if lo >= hi:
        return "null", 0
    mid = (lo + hi) // 2
    left, dl = _tree_text(ranges, lo, mid)
    right, dr = _tree_text(ranges, mid + 1, hi)
    depth = 1 + (dl if dl > dr else dr)
    start, end = ranges[mid]
    return f'{{"from":{start},"to":{end},"d":{depth},"l":{left},"r":{right}}}', depth


def encode_set(changes: ObsSet) -> str:
    """The set as wire JSON (see the module docstring)."""
    parts: list[str] = []
    for part, ranges in changes.items():
        if not ranges:
            continue
        try:
            bounds = []
            for lo, hi in ranges.intervals():
                start = _key_text(lo)
                bounds.append((start, start if lo is hi else _key_text(hi)))
            tree = _tree_text(bounds, 0, len(bounds))[0]
        except _Wide:
            tree = _FULL_TREE
        parts.append(f"{_string(part)}:{tree}")
    return "{" + ",".join(parts) + "}"


_WIDE = object()
"""What ``{"$wide": 1}`` (a key the sender could not put on the wire) decodes to."""


def _revive(obj: dict[str, Any]) -> Any:
    if len(obj) == 1:
        if "$inf" in obj:
            sign = obj["$inf"]
            if sign not in (1, -1):
                raise ValueError("$inf must be 1 or -1")
            return sign * math.inf
        if "$wide" in obj:
            return _WIDE
        if "$top" in obj:
            return TOP
    return obj


def _check_depth(text: str) -> None:
    """Refuse text nested deeper than :data:`MAX_DEPTH` before any recursive decoding."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ValueError(f"a change message is nested deeper than {MAX_DEPTH}")
        elif token in "]}":
            depth -= 1


def decode_set(text: Any) -> ObsSet:
    """Read wire JSON into a set; raise ValueError for anything that is not one."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise ValueError("a change message must be JSON text of bounded size")
    _check_depth(text)
    try:
        data = json.loads(text, object_hook=_revive)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"a change message is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError("a change message must be an object of parts")
    out: ObsSet = {}
    for part, tree in data.items():
        if not (part == ALL or part.startswith("idb://")):
            raise ValueError(f"{part!r} is not a part name")
        try:
            out[part] = RangeSet.from_tree(tree, _WIDE)
        except ValueError as exc:
            raise ValueError(f"{part}: {exc}") from None
    return out
