"""Properties of the change feed's range sets and their wire format.

A :class:`RangeSet` is checked against the plainest model: the raw list of intervals
it was given. Two sets overlap when some pair of their intervals does; a key is in a
set when some interval holds it. The wire format (Dexie's tree, as JSON) must give
back the same set, and a tree must be balanced as Dexie's are.
"""

from __future__ import annotations

import math
from datetime import UTC
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hypothesis_support import examples
from panelot.idb.keys import compare_keys
from panelot.idb.observe import RangeSet, decode_set, encode_set, sets_overlap
from panelot.idb.observe.ranges import order

KEYS: st.SearchStrategy[Any] = st.recursive(
    st.one_of(
        st.integers(-5, 5),
        st.sampled_from([-math.inf, math.inf, 0.5, -2.25]),
        st.text(alphabet="ab\u00e9\uffff\U0001f600\ud800", max_size=3),
        st.binary(max_size=2),
        st.datetimes(timezones=st.just(UTC)),
    ),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=4,
)


@st.composite
def interval(draw: st.DrawFn) -> tuple[Any, Any]:
    a, b = draw(KEYS), draw(KEYS)
    return (a, b) if compare_keys(a, b) <= 0 else (b, a)


INTERVALS = st.lists(interval(), max_size=12)


def holds(ranges: list[tuple[Any, Any]], key: Any) -> bool:
    return any(compare_keys(lo, key) <= 0 <= compare_keys(hi, key) for lo, hi in ranges)


def meet(a: list[tuple[Any, Any]], b: list[tuple[Any, Any]]) -> bool:
    return any(
        compare_keys(alo, bhi) <= 0 and compare_keys(blo, ahi) <= 0
        for alo, ahi in a
        for blo, bhi in b
    )


def on_wire(key: Any) -> bool:
    if isinstance(key, list):
        return all(on_wire(k) for k in key)
    return isinstance(key, str | int | float)


def height(node: Any) -> int:
    return (
        0 if node is None or "from" not in node else 1 + max(height(node["l"]), height(node["r"]))
    )


@settings(max_examples=examples(300))
@given(INTERVALS, INTERVALS, st.lists(KEYS, max_size=6))
def test_range_sets_agree_with_their_raw_intervals(
    a: list[tuple[Any, Any]], b: list[tuple[Any, Any]], keys: list[Any]
) -> None:
    sa, sb = RangeSet(a), RangeSet(b)
    assert sa.overlaps(sb) == meet(a, b) == sb.overlaps(sa)
    for key in keys + [lo for lo, _ in a]:
        assert sa.has_key(key) == holds(a, key)
    merged = sa.intervals()
    for (_, hi), (lo, _) in zip(merged, merged[1:], strict=False):
        assert compare_keys(hi, lo) < 0, "intervals must be disjoint and in order"
    assert bool(sa) == bool(a)


@settings(max_examples=examples(200))
@given(INTERVALS)
def test_trees_are_balanced_and_read_back(a: list[tuple[Any, Any]]) -> None:
    rs = RangeSet(a)
    tree = rs.to_tree()
    n = len(rs)
    assert height(tree) <= math.ceil(math.log2(n + 1))
    assert tree.get("d", 0) == height(tree)
    assert RangeSet.from_tree(tree) == rs


@example({"idb://d/t/": [([[], b""], [[0]])]})  # above maxKey: widened must still cover it
@settings(max_examples=examples(200))
@given(
    st.dictionaries(
        st.sampled_from(["idb://d/t/", "idb://d/t/:dels", "idb://d/t/[a+b]"]), INTERVALS
    )
)
def test_wire_format_round_trips(parts: dict[str, list[tuple[Any, Any]]]) -> None:
    changes = {part: RangeSet(ranges) for part, ranges in parts.items()}
    back = decode_set(encode_set(changes))
    # A date or binary key cannot travel as JSON: its part widens to every key.
    assert back == {
        part: rs if all(on_wire(k) for r in rs for k in r) else RangeSet.full()
        for part, rs in changes.items()
        if rs
    }
    other = {part: RangeSet(ranges) for part, ranges in parts.items()}
    assert sets_overlap(back, other) == any(bool(r) for r in changes.values())


@settings(max_examples=examples(300))
@given(KEYS, KEYS)
def test_the_sort_key_agrees_with_compare_keys(a: Any, b: Any) -> None:
    c = compare_keys(a, b)
    assert (order(a) < order(b)) == (c < 0)
    assert (order(a) == order(b)) == (c == 0)
