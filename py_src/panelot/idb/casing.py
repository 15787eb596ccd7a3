"""Dexie's case-insensitive where-clauses, step for step, on UTF-16 code units.

Dexie does not fold case by a rule of its own: ``equalsIgnoreCase`` and its kin walk
an index with a cursor, compare ``key.toLowerCase()`` with the lower-cased needles,
and jump over keys that cannot match to the next casing that could (``nextCasing``).
Walking backwards it folds to upper case instead. With non-ASCII text (``ß``, ``İ``,
final sigma, letters whose cases sort the other way) the jumps decide which keys are
ever looked at, so the only way to give Dexie's answers is to take Dexie's steps.

This module does that. JS strings are sequences of UTF-16 code units, indexed and
sliced by unit, so a string is handled here as a *unit string*: a Python ``str`` with
one character per code unit (astral characters as two surrogates), which also
compares like a JS string. JS's case mappings and Python's are both Unicode's full
mappings (``"ß".upper() == "SS"``, final sigma in ``lower``). Where Dexie reaches past
the end of a string it gets ``undefined``; that is kept too (``"ab" + undefined`` is
``"abundefined"``), as is its comparison of a string with ``null``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from panelot.idb.jsvalues import number_from_text

__all__ = ["CaseMatch", "CaseRun", "case_hull", "from_units", "to_units"]

CaseMatch: TypeAlias = Literal["equals", "startsWith", "anyOf", "startsWithAnyOf"]

MAX_STRING = "\uffff"
"""Dexie's ``maxString``: the suffix that turns a prefix into a range's upper bound."""


def to_units(s: str) -> str:
    """The unit string of ``s``: one character per UTF-16 code unit."""
    if s.isascii():
        return s
    data = s.encode("utf-16-le", "surrogatepass")
    return "".join(chr(data[i] | data[i + 1] << 8) for i in range(0, len(data), 2))


def from_units(u: str) -> str:
    """The Python string a unit string stands for (surrogate pairs joined)."""
    if u.isascii():
        return u
    return u.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _upper(u: str) -> str:
    return to_units(from_units(u).upper())


def _lower(u: str) -> str:
    return to_units(from_units(u).lower())


Unit: TypeAlias = str | None
"""One code unit, or ``None`` for JS's ``undefined`` past the end of a string."""


def _at(u: str, i: int) -> Unit:
    return u[i] if i < len(u) else None


def _text(unit: Unit) -> str:
    return "undefined" if unit is None else unit


def _cmp(a: Unit, b: Unit, reverse: bool) -> int:
    """Dexie's ``simpleCompare`` (or its reverse) on code units; ``undefined`` is never less."""
    if a is None or b is None:
        return 1
    if reverse:
        return -1 if a > b else 0 if a == b else 1
    return -1 if a < b else 0 if a == b else 1


def _cmp_null(a: str, reverse: bool) -> int:
    """``simpleCompare(string, null)``: JS compares ``Number(string)`` with ``0``."""
    n = number_from_text(a)
    return -1 if (n > 0 if reverse else n < 0) else 1


def _next_casing(
    key: str, lower_key: str, upper_needle: str, lower_needle: str, reverse: bool
) -> str | None:
    """Dexie's ``nextCasing``: the next key in walking order that could still match."""
    length = min(len(key), len(lower_needle))
    llp = -1
    for i in range(length):
        lwr = _at(lower_key, i)
        if lwr != lower_needle[i]:
            if _cmp(key[i], _at(upper_needle, i), reverse) < 0:
                return key[:i] + _text(_at(upper_needle, i)) + upper_needle[i + 1 :]
            if _cmp(key[i], lower_needle[i], reverse) < 0:
                return key[:i] + lower_needle[i] + upper_needle[i + 1 :]
            if llp >= 0:
                return key[:llp] + _text(_at(lower_key, llp)) + upper_needle[llp + 1 :]
            return None
        if _cmp(key[i], lwr, reverse) < 0:
            llp = i
    if length < len(lower_needle) and not reverse:
        return key + upper_needle[len(key) :]
    if length < len(key) and reverse:
        return key[: len(upper_needle)]
    if llp < 0:
        return None
    return key[:llp] + lower_needle[llp] + upper_needle[llp + 1 :]


_MATCH: dict[CaseMatch, Callable[[str, Sequence[str]], bool]] = {
    "equals": lambda x, a: x == a[0],
    "startsWith": lambda x, a: x.startswith(a[0]),
    "anyOf": lambda x, a: x in a,
    "startsWithAnyOf": lambda x, a: any(x.startswith(n) for n in a),
}


def _bounds(needles: Sequence[str], reverse: bool) -> tuple[list[str], list[str]]:
    """The needles' (upper, lower) foldings for a walking direction, sorted as Dexie sorts."""
    up, low = (_lower, _upper) if reverse else (_upper, _lower)
    pairs = [(low(to_units(n)), up(to_units(n))) for n in needles]
    pairs.sort(key=lambda p: p[0], reverse=reverse)  # a stable sort, as V8's
    return [p[1] for p in pairs], [p[0] for p in pairs]


def case_hull(needles: Sequence[str], suffix: str) -> tuple[str, str]:
    """The key range Dexie's cursor walks: upper of the first needle to lower of the last."""
    uppers, lowers = _bounds(needles, reverse=False)
    return from_units(uppers[0]), from_units(lowers[-1] + suffix)


@dataclass(slots=True)
class CaseRun:
    """One walk of a case-insensitive where-clause, with its state (Dexie's closure).

    :meth:`step` takes each key the cursor lands on and returns ``True`` (a match),
    ``False`` (go on to the next key), a string (continue the cursor at that key), or
    ``None`` (stop: no key further on can match).
    """

    match: CaseMatch
    needles: Sequence[str]
    suffix: str
    reverse: bool
    _uppers: list[str] | None = None
    _lowers: list[str] | None = None
    _first: int = 0

    def step(self, key: object) -> bool | str | None:
        """Dexie's algorithm for the cursor at ``key``."""
        if not isinstance(key, str):
            return False
        if self._uppers is None:
            self._uppers, self._lowers = _bounds(self.needles, self.reverse)
        uppers, lowers = self._uppers, self._lowers
        assert lowers is not None
        ukey = to_units(key)
        lower_key = (_upper if self.reverse else _lower)(ukey)
        if _MATCH[self.match](lower_key, lowers):
            return True
        lowest: str | None = None
        for i in range(self._first, len(lowers)):
            casing = _next_casing(ukey, lower_key, uppers[i], lowers[i], self.reverse)
            if casing is None and lowest is None:
                self._first = i + 1
            elif lowest is None:
                lowest = casing
            elif casing is None:
                if _cmp_null(lowest, self.reverse) > 0:
                    lowest = None
            elif _str_cmp(lowest, casing, self.reverse) > 0:
                lowest = casing
        if lowest is None:
            return None
        return from_units(lowest + (self.suffix if self.reverse else ""))


def _str_cmp(a: str, b: str, reverse: bool) -> int:
    if reverse:
        return -1 if a > b else 0 if a == b else 1
    return -1 if a < b else 0 if a == b else 1
