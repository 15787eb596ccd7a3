"""``WhereClause``: Dexie's where-clause vocabulary, each method making a :class:`Collection`.

A clause over one key range makes a plain collection. The others carry Dexie's
algorithm (:class:`~panelot.idb.state.Algo`): ``any_of``, ``none_of``,
``not_equal``, ``in_any_range`` and ``starts_with_any_of`` accept exactly the keys of
a few ranges; the ignore-case clauses walk as Dexie's do (:mod:`panelot.idb.casing`).
Errors are raised at the call, with the names Dexie rejects with: a one-key clause given
``None`` (or a string clause given something else) is an :class:`ArgumentTypeError`
(Dexie's ``TypeError``), a value that is no key a :class:`DataError` (IndexedDB's, for
``any_of`` as for the one-key clauses), a malformed range list an
:class:`InvalidArgumentError`, and so is a value that is no key in ``none_of`` or
``not_equal``, whose ranges Dexie checks with its ``cmp`` before IndexedDB sees a key.
Each message names the argument and the value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from panelot.idb.casing import MAX_STRING, CaseMatch, CaseRun, case_hull
from panelot.idb.collection import Collection
from panelot.idb.errors import ArgumentTypeError, DataError, InvalidArgumentError, SchemaError
from panelot.idb.keys import (
    MAX_KEY,
    MIN_KEY,
    Key,
    KeyRange,
    compare_keys,
    is_valid_key,
    key_sort_key,
)
from panelot.idb.keys import validate_key as _validate
from panelot.idb.modify import get_by_key_path
from panelot.idb.sorting import dexie_cmp, v8_sort
from panelot.idb.state import Algo, CollectionState
from panelot.idb.walk import AnyOfRun, RangesRun, merge_ranges

if TYPE_CHECKING:
    from panelot.idb.table import IndexRef, Table

__all__ = ["WhereClause", "criteria_collection"]

_EMPTY_HULL = KeyRange("", "")


class _Never:
    """The algorithm of an empty clause: it accepts nothing (Dexie's ``emptyCollection``)."""

    def step(self, key: Key) -> bool:
        return False


def _key(value: Any, field: str) -> Key:
    if value is None:
        raise ArgumentTypeError(f"{field}: None is not a key", field=field)
    return _validate(value, field)


def _keys(values: Sequence[Any], field: str) -> list[Key]:
    """Each value as a key; one that is no key (``None`` too) is a :class:`DataError`."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise ArgumentTypeError(f"{field} must be a list", field=field)
    return [_validate(v, f"{field}[{i}]") for i, v in enumerate(values)]


def _excluded(values: list[Any], field: str, method: str) -> list[Key]:
    """The keys ``none_of``/``not_equal`` exclude, refused as Dexie refuses them.

    Dexie sorts them with its ``cmp`` and checks the ranges between them
    (``[-Infinity, k0], [k0, k1], ..., [kn, maxKey]``) as ``inAnyRange`` does: a range
    that its ``cmp`` cannot order, as around ``None``, a boolean or an object, is an
    :class:`InvalidArgumentError`. A NaN passes that check (a NaN number equals every
    number there) and is refused as no key, a :class:`DataError`.
    """
    if all(map(is_valid_key, values)):
        bounds = []  # only a value that is no key can be refused here (and keys sort fast)
    else:
        bounds = [MIN_KEY, *v8_sort(values, dexie_cmp), MAX_KEY]
    for r, (lo, hi) in enumerate(zip(bounds, bounds[1:], strict=False)):
        if not dexie_cmp(lo, hi) <= 0:
            bad = lo if not is_valid_key(lo) else hi
            if is_valid_key(bad):
                # Both keys: one above Dexie's maxKey. Dexie's inAnyRange refuses that
                # range before IndexedDB sees any key, so no key is checked first.
                raise InvalidArgumentError(
                    f"range {r} of the clause has its upper bound below its lower bound "
                    f"({method}() makes key ranges of its keys, and {lo!r} is above "
                    "Dexie's maxKey)",
                    field=f"ranges[{r}]",
                )
            i = next(i for i, v in enumerate(values) if v is bad)
            name = f"{field}[{i}]" if field == "keys" else field
            raise InvalidArgumentError(
                f"{name}: {bad!r} is not a valid key ({method}() makes key ranges of its "
                "keys, and Dexie refuses a range it cannot order)",
                field=name,
            )
    if field == "keys":
        return _keys(values, field)
    return [_validate(values[0], field)]


def _strings(values: Sequence[Any], field: str, method: str) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise ArgumentTypeError(f"{method}() takes a list of strings", field=field)
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise ArgumentTypeError(
                f"{method}() only works with strings: {field}[{i}] is {v!r}",
                field=f"{field}[{i}]",
            )
    return list(values)


def _pad(key: Key, fill: Key, n: int) -> list[Key]:
    return [*(key if isinstance(key, list) else [key]), *([fill] * n)]


class WhereClause:
    """A pending ``where(index)``: each method returns a :class:`Collection`."""

    def __init__(self, table: Table, ref: IndexRef, or_prev: Collection | None = None) -> None:
        self.table = table
        self.ref = ref
        self.or_prev = or_prev

    @property
    def index(self) -> str | None:
        """The native index the clause reads (``None``: the primary key)."""
        return self.ref.native

    # -- building ------------------------------------------------------------------------

    def _native(self, r: KeyRange) -> KeyRange:
        """A range of the clause's keys as a range of the native index (Dexie's virtual index)."""
        v = self.ref.virtual
        if v is None:
            return r
        tail = v[1]
        lower = (
            None if r.lower is None else _pad(r.lower, MAX_KEY if r.lower_open else MIN_KEY, tail)
        )
        upper = (
            None if r.upper is None else _pad(r.upper, MIN_KEY if r.upper_open else MAX_KEY, tail)
        )
        return KeyRange(lower, upper, lower is not None, upper is not None)

    def _collection(self, ranges: tuple[KeyRange, ...], algo: Algo | None = None) -> Collection:
        if algo is not None:
            algo = Algo(algo.kind, self._native(algo.hull), algo.make)
        state = CollectionState(
            self.table.name,
            self.ref.native,
            tuple(self._native(r) for r in ranges),
            algo,
            or_prev=None if self.or_prev is None else self.or_prev.state,
            virtual=self.ref.virtual,
            multi_entry=self.ref.multi_entry,
        )
        return Collection(self.table, state)

    def _range(self, r: KeyRange) -> Collection:
        return self._collection((r,))

    def _never(self) -> Collection:
        return self._collection((), Algo("never", _EMPTY_HULL, lambda reverse: _Never()))

    # -- one range -----------------------------------------------------------------------

    def equals(self, key: Key) -> Collection:
        """Records whose index key equals ``key``."""
        k = _key(key, "key")
        return self._range(KeyRange(k, k))

    def above(self, key: Key) -> Collection:
        """Records whose index key is greater than ``key``."""
        return self._range(KeyRange(_key(key, "key"), None, True, False))

    def above_or_equal(self, key: Key) -> Collection:
        """Records whose index key is at least ``key``."""
        return self._range(KeyRange(_key(key, "key"), None, False, False))

    def below(self, key: Key) -> Collection:
        """Records whose index key is less than ``key``."""
        return self._range(KeyRange(None, _key(key, "key"), False, True))

    def below_or_equal(self, key: Key) -> Collection:
        """Records whose index key is at most ``key``."""
        return self._range(KeyRange(None, _key(key, "key"), False, False))

    def between(
        self, lower: Key, upper: Key, include_lower: bool = True, include_upper: bool = False
    ) -> Collection:
        """Records between two keys; by default the lower bound is in, the upper out (Dexie).

        Reversed bounds, or equal bounds with exactly one of them included, give no
        records; equal bounds with neither included are a :class:`DataError`, as the
        native key range Dexie makes of them.
        """
        # Dexie orders the bounds with its cmp before IndexedDB sees them: reversed bounds
        # are no records even when one of them is no key.
        c = dexie_cmp(lower, upper)
        if c > 0 or (c == 0 and include_lower != include_upper):
            return self._never()
        lo, hi = _validate(lower, "lower"), _validate(upper, "upper")
        if c == 0 and not include_lower:
            raise DataError("between(x, x) with neither bound included is no key range")
        return self._range(KeyRange(lo, hi, not include_lower, not include_upper))

    def starts_with(self, prefix: str) -> Collection:
        """Records whose string index key starts with ``prefix``."""
        if not isinstance(prefix, str):
            raise ArgumentTypeError("starts_with() needs a string", field="prefix")
        return self._range(KeyRange(prefix, prefix + MAX_STRING, False, False))

    def all(self) -> Collection:
        """Every record, in index order."""
        return self._range(KeyRange())

    # -- sets of keys and ranges ---------------------------------------------------------

    def any_of(self, *keys: Any) -> Collection:
        """Records whose index key is any of ``keys`` (a list, or several arguments)."""
        ks = _keys(_one_list(keys), "keys")
        if not ks:
            return self._never()
        ordered = sorted(ks, key=key_sort_key)
        distinct = [k for i, k in enumerate(ordered) if i == 0 or compare_keys(ordered[i - 1], k)]
        algo = Algo("set", KeyRange(ordered[0], ordered[-1]), lambda rev: AnyOfRun(ks, rev))
        return self._collection(tuple(KeyRange(k, k) for k in distinct), algo)

    def in_any_range(
        self,
        ranges: Sequence[Sequence[Key]],
        include_lowers: bool = True,
        include_uppers: bool = False,
    ) -> Collection:
        """Records whose index key lies in any of ``ranges`` (``[lower, upper]`` pairs).

        By default each lower bound is in and each upper bound out, as in Dexie.
        """
        if isinstance(ranges, str) or not isinstance(ranges, Sequence):
            raise InvalidArgumentError(
                "in_any_range() takes a list of [lower, upper]", field="ranges"
            )
        pairs: list[tuple[Key, Key]] = []
        # Dexie checks every pair with its cmp first: a pair it cannot order (NaN, as
        # for a value that is no key) or a reversed one is an InvalidArgumentError; the
        # keys are checked after (a DataError).
        for i, r in enumerate(ranges):
            if isinstance(r, str) or not isinstance(r, Sequence) or len(r) != 2:
                raise InvalidArgumentError(
                    f"ranges[{i}] must be a [lower, upper] pair", field=f"ranges[{i}]"
                )
            if not dexie_cmp(r[0], r[1]) <= 0:
                raise InvalidArgumentError(
                    f"ranges[{i}] {list(r)!r}: the upper bound must not be lower than the "
                    "lower bound (and both must be keys)",
                    field=f"ranges[{i}]",
                )
        for i, r in enumerate(ranges):
            lo, hi = _validate(r[0], f"ranges[{i}][0]"), _validate(r[1], f"ranges[{i}][1]")
            pairs.append((lo, hi))
        if not pairs:
            return self._never()
        return self._ranges(pairs, bool(include_lowers), bool(include_uppers))

    def _ranges(self, pairs: list[tuple[Key, Key]], lowers: bool, uppers: bool) -> Collection:
        for i, (lo, hi) in enumerate(pairs):  # Dexie's inAnyRange check, for its callers too
            if not dexie_cmp(lo, hi) <= 0:  # (not_equal([[1]]) is above MAX_KEY: refused)
                raise InvalidArgumentError(
                    f"range {i} of the clause has its upper bound below its lower bound",
                    field=f"ranges[{i}]",
                )
        merged = merge_ranges(pairs)
        hull = KeyRange.bound(merged[0][0], merged[-1][1], not lowers, not uppers)
        # Dexie's walk accepts exactly the union of disjoint, non-empty ranges; empty or
        # overlapping ones (a repeated none_of value, not_equal(-Infinity)) make it jump
        # past keys, so then the walk itself is repeated over the range's keys.
        kind: Literal["set", "walk"] = "set" if _clean(merged, lowers, uppers) else "walk"
        algo = Algo(kind, hull, lambda rev: RangesRun(merged, lowers, uppers, rev))
        return self._collection(_union(merged, lowers, uppers) if kind == "set" else (), algo)

    def none_of(self, *keys: Any) -> Collection:
        """Records whose index key is none of ``keys`` (keys that are no index key of a record)."""
        ks = sorted(_excluded(_one_list(keys), "keys", "none_of"), key=key_sort_key)
        if not ks:
            return self.all()
        bounds = [MIN_KEY, *ks, MAX_KEY]
        return self._ranges(
            [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)], False, False
        )

    def not_equal(self, key: Key) -> Collection:
        """Records whose index key is not ``key`` (as Dexie's, not ``-Infinity`` either)."""
        (k,) = _excluded([key], "key", "not_equal")
        return self._ranges([(MIN_KEY, k), (k, MAX_KEY)], False, False)

    def starts_with_any_of(self, *prefixes: Any) -> Collection:
        """Records whose string index key starts with any of ``prefixes``."""
        ps = _strings(_one_list(prefixes), "prefixes", "starts_with_any_of")
        if not ps:
            return self._never()
        return self._ranges([(p, p + MAX_STRING) for p in ps], True, False)

    # -- ignoring case -------------------------------------------------------------------

    def _case(self, match: CaseMatch, needles: list[str], suffix: str) -> Collection:
        lo, hi = case_hull(needles, suffix)
        hull = KeyRange.bound(lo, hi)
        make: Callable[[bool], CaseRun] = lambda rev: CaseRun(match, needles, suffix, rev)  # noqa: E731
        return self._collection((), Algo("case", hull, make))

    def equals_ignore_case(self, s: str) -> Collection:
        """Records whose string index key equals ``s`` ignoring case, as Dexie folds it."""
        (s,) = _strings([s], "s", "equals_ignore_case")
        return self._case("equals", [s], "")

    def starts_with_ignore_case(self, prefix: str) -> Collection:
        """Records whose string index key starts with ``prefix`` ignoring case."""
        (prefix,) = _strings([prefix], "prefix", "starts_with_ignore_case")
        if prefix == "":
            return self.starts_with("")
        return self._case("startsWith", [prefix], MAX_STRING)

    def any_of_ignore_case(self, *strings: Any) -> Collection:
        """Records whose string index key equals any of ``strings`` ignoring case."""
        ss = _strings(_one_list(strings), "strings", "any_of_ignore_case")
        if not ss:
            return self._never()
        return self._case("anyOf", ss, "")

    def starts_with_any_of_ignore_case(self, *prefixes: Any) -> Collection:
        """Records whose string index key starts with any of ``prefixes`` ignoring case."""
        ps = _strings(_one_list(prefixes), "prefixes", "starts_with_any_of_ignore_case")
        if not ps:
            return self._never()
        return self._case("startsWithAnyOf", ps, MAX_STRING)


def _one_list(args: tuple[Any, ...]) -> Any:
    """Dexie's ``getArrayOf``: one list argument is the list, else the arguments are."""
    if len(args) == 1 and isinstance(args[0], list | tuple):
        return list(args[0])
    return list(args)


def _clean(pairs: list[tuple[Key, Key]], lowers: bool, uppers: bool) -> bool:
    """Sorted ranges, none empty, each ending before the next begins (none shared)."""
    for i, (lo, hi) in enumerate(pairs):
        c = compare_keys(lo, hi)
        if c > 0 or (c == 0 and not (lowers and uppers)):
            return False
        if i + 1 < len(pairs):
            gap = compare_keys(hi, pairs[i + 1][0])
            if gap > 0 or (gap == 0 and lowers and uppers):
                return False
    return True


def _union(pairs: list[tuple[Key, Key]], lowers: bool, uppers: bool) -> tuple[KeyRange, ...]:
    """Disjoint key ranges, in key order, holding exactly the keys of any of the pairs."""
    out: list[list[Key]] = []
    for lo, hi in sorted(pairs, key=lambda p: key_sort_key(p[0])):
        if compare_keys(lo, hi) == 0 and not (lowers and uppers):
            continue  # an empty range
        if out:
            c = compare_keys(lo, out[-1][1])
            if c < 0 or (c == 0 and lowers and uppers):
                if compare_keys(hi, out[-1][1]) > 0:
                    out[-1][1] = hi
                continue
        out.append([lo, hi])
    return tuple(KeyRange(lo, hi, not lowers, not uppers) for lo, hi in out)


def criteria_collection(table: Table, criteria: dict[str, Any]) -> Collection:
    """Dexie's ``where({...})``: equality on several fields, served as Dexie serves it.

    A compound index whose first parts are exactly the fields serves it (the shortest
    such index); else the first field with an index of its own, with a filter for
    the others; a field no index serves at all is a :class:`SchemaError`.
    """
    if not isinstance(criteria, dict) or not criteria:
        raise DataError("where() criteria must be a non-empty dict", field="criteria")
    paths = list(criteria)
    if not all(isinstance(p, str) and p for p in paths):
        raise DataError("where() criteria are field names or key paths", field="criteria")
    if len(paths) == 1:
        return table.where(paths[0]).equals(criteria[paths[0]])
    spec = table.spec
    compound = [
        ix
        for ix in (*spec.indexes, spec.primary_key)
        if isinstance(ix.key_path, list)
        and all(p in ix.key_path for p in paths)
        and all(kp in paths for kp in ix.key_path[: len(paths)])
    ]
    if compound:
        best = min(compound, key=lambda ix: len(ix.key_path or []))  # first of the shortest
        assert isinstance(best.key_path, list)
        head = best.key_path[: len(paths)]
        return table.where(head).equals([criteria[p] for p in head])
    index_path: str | None = None
    checks: list[Callable[[Any], bool]] = []
    for path in paths:
        ix = spec.index(path)
        if index_path is None and ix is not None:
            index_path = path
            continue
        checks.append(_equal_check(path, criteria[path], ix is not None and ix.multi_entry))
    if index_path is None:
        raise SchemaError(
            f"{table.name}: no index serves {'+'.join(paths)}", field="[" + "+".join(paths) + "]"
        )
    return (
        table.where(index_path)
        .equals(criteria[index_path])
        .filter(lambda value: all(check(value) for check in checks))
    )


def _equal_check(path: str, want: Any, multi: bool) -> Callable[[Any], bool]:
    if multi:
        return lambda v: (
            isinstance(got := get_by_key_path(v, path), list)
            and any(dexie_cmp(want, item) == 0 for item in got)
        )
    return lambda v: dexie_cmp(want, get_by_key_path(v, path)) == 0
