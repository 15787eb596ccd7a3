"""Loading a thread's nodes in parts gives what one read gives, for any seqs.

``panelot.tree.reading.load_thread_records`` reads the first ``FIRST_NODES`` nodes with the
thread, then the rest as parts split by a guess at the seqs, and falls back to a plain
``threadId`` read when the count says something was missed. With the sizes made small,
hypothesis tries seq layouts of every kind (ties, gaps, fractions, infinities, strings,
values that are no key) on the memory core: every record comes back once, in the order
of one read of the whole ``[threadId+seq]`` range, or in the plain read's order when
that range misses a record or a seq repeats across the first read's end. For distinct
numeric seqs the fallback must not be needed.
"""

from __future__ import annotations

import math
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from hypothesis_support import examples
from loops import run_async
from panelot.idb import MemoryFactory, Transaction
from panelot.schema import panelot_database
from panelot.tree import reading as tree
from panelot.tree.nodes import TREE_TABLES

TID = "t-1"

SEQ = st.one_of(
    st.integers(-5, 80),
    st.floats(-5, 80, allow_nan=False),
    st.sampled_from([math.inf, -math.inf, 10**15, 2.0**60, 1e300, 1.7976931348623157e308]),
    st.text(max_size=2),
    st.sampled_from([None, True, [1]]),  # no key, a boolean (no key), an array key
)


def _nodes(seqs: list[Any]) -> list[dict[str, Any]]:
    return [
        {"id": f"n{i:03d}", "threadId": TID, "parentId": None, "seq": s, "type": "x", "payload": {}}
        for i, s in enumerate(seqs)
    ]


async def _load(seqs: list[Any], reference: bool = True) -> tuple[list[Any], list[Any], list[Any]]:
    """The parts' result, one read of the whole range, and the plain threadId read."""
    factory = MemoryFactory()
    db = await panelot_database("parts").open(factory)
    try:
        await db.table("nodes").bulk_put(_nodes(seqs))

        async def body(tx: Any) -> tuple[list[Any], list[Any], list[Any]]:
            _, rows = await tree.load_thread_records(tx, TID)
            if not reference:
                return rows, [], []
            return rows, await tree._by_seq(tx, TID), await tree.load_nodes(tx, TID)

        return await db.transaction("r", TREE_TABLES, body)
    finally:
        db.close()
        await factory.delete("parts")


def _run(seqs: list[Any], reference: bool = True) -> tuple[list[Any], list[Any], list[Any]]:
    """:func:`_load` on a fresh event loop in a worker thread.

    Playwright's sync API may own this thread's loop when the whole suite runs.
    """
    return run_async(_load(seqs, reference))


def _small(first: int, part: int, parts: int) -> Any:
    return mock.patch.multiple(tree, FIRST_NODES=first, PART_NODES=part, MAX_PARTS=parts)


@settings(max_examples=examples(300), deadline=None)
@given(
    seqs=st.lists(SEQ, max_size=40),
    first=st.integers(1, 8),
    part=st.integers(1, 6),
    parts=st.integers(1, 5),
)
def test_parts_give_what_one_read_gives(seqs: list[Any], first: int, part: int, parts: int) -> None:
    with _small(first, part, parts):
        rows, whole, plain = _run(seqs)
    assert sorted(r["id"] for r in rows) == [n["id"] for n in _nodes(seqs)]  # each once
    if rows != whole:  # the plain read took over: something was missed, and it says so
        assert rows == plain
        tie = 0 < first < len(whole) and whole[first - 1]["seq"] == whole[first]["seq"]
        assert len(whole) < len(seqs) or tie


@settings(max_examples=examples(200), deadline=None)
@given(
    seqs=st.sets(
        st.one_of(st.integers(-50, 500), st.floats(-50, 500, allow_nan=False)), max_size=60
    ),
    first=st.integers(1, 8),
    part=st.integers(1, 6),
)
def test_distinct_numeric_seqs_need_no_fallback(seqs: set[Any], first: int, part: int) -> None:
    ordered = sorted(seqs)
    if len(set(ordered)) < len(ordered):  # 1 and 1.0 are one seq in a set already
        return
    with _small(first, part, 4), mock.patch.object(tree, "load_nodes", side_effect=AssertionError):
        try:
            _run(ordered, reference=False)
        except AssertionError:
            raise AssertionError(f"the fallback read ran for distinct seqs {ordered}") from None


def test_a_long_thread_is_read_in_parallel_parts() -> None:
    # 5 first, then 23 more as parts of about 4: six reads gathered in one round trip.
    gathered: list[int] = []
    real = Transaction.gather

    async def spy(self: Any, *ops: Any) -> list[Any]:
        gathered.append(len(ops))
        return await real(self, *ops)

    with _small(5, 4, 16), mock.patch.object(Transaction, "gather", spy):
        rows, whole, _ = _run(list(range(1, 29)))
    assert rows == whole and len(rows) == 28
    assert gathered == [3, 6]  # thread + first nodes + count, then the six parts


def test_seqs_too_large_to_step_through_take_one_open_read() -> None:
    # Past 2**53 adding a small step to a float seq leaves it unchanged; the parts would
    # all be empty but the last, which would take the first read's last record again.
    seqs = [2.0**60 + 256 * i for i in range(12)] + [1.7976931348623157e308]
    with _small(2, 1, 4), mock.patch.object(tree, "load_nodes", side_effect=AssertionError):
        rows, _, _ = _run(seqs, reference=False)
    assert [r["seq"] for r in rows] == seqs
