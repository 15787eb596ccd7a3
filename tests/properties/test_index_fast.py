"""The quick index of sound records agrees with the record-by-record checked path.

``panelot.tree.integrity`` indexes a thread's records in one pass when every record is sound
and falls back to checking them one by one otherwise. For any list of records, sound or
not, in order or not, with ties on seq, the result must be the one the checked path
gives: the same nodes in the same order, and no problems.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hypothesis_support import examples
from panelot.tree.integrity import _index_checked, _index_sound, index_nodes

TID = "t-1"

# Sound values, and for each field the ways it can be wrong.
SOUND = {
    "id": st.sampled_from([f"n{i}" for i in range(12)]),
    "parentId": st.one_of(st.none(), st.sampled_from(["n0", "n1", "n5"])),
    "seq": st.one_of(st.integers(-3, 8), st.sampled_from([0.5, 2.0, -1.5])),
    "threadId": st.just(TID),
    "type": st.just("user_message"),
    "payload": st.just({"content": []}),
}
WRONG = {
    "id": st.sampled_from([7, None, ["n1"]]),
    "parentId": st.sampled_from([3, ["n0"], {"a": 1}]),
    "seq": st.sampled_from([math.nan, math.inf, -math.inf, True, "2", None, [1]]),
    "threadId": st.sampled_from(["t-2", None, ["t-1"]]),
    "type": st.sampled_from([1, None]),
    "payload": st.sampled_from([[], None, "p"]),
}


@st.composite
def record(draw: st.DrawFn) -> Any:
    """A sound record; one time in eight with one field wrong or missing."""
    if draw(st.integers(0, 60)) == 0:
        return draw(st.sampled_from([None, "node", ["id"], 5]))
    raw = {name: draw(values) for name, values in SOUND.items()}
    if draw(st.integers(0, 7)) == 0:
        name = draw(st.sampled_from(sorted(SOUND)))
        if draw(st.booleans()):
            del raw[name]
        else:
            raw[name] = draw(WRONG[name])
    return raw


def _sound(raw: Any) -> bool:
    if not isinstance(raw, dict) or set(raw) != {
        "id",
        "parentId",
        "seq",
        "threadId",
        "type",
        "payload",
    }:
        return False
    seq = raw["seq"]
    return (
        type(raw["id"]) is str
        and (raw["parentId"] is None or type(raw["parentId"]) is str)
        and (type(seq) is int or (type(seq) is float and math.isfinite(seq)))
        and raw["threadId"] == TID
        and type(raw["type"]) is str
        and type(raw["payload"]) is dict
    )


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(record(), max_size=14))
def test_the_fast_index_agrees_with_the_checked_one(rows: list[Any]) -> None:
    fast = _index_sound(TID, rows)
    checked = _index_checked(TID, rows)
    if all(_sound(r) for r in rows):
        assert fast is not None
        assert list(fast.nodes.items()) == list(checked.nodes.items())
        assert fast.problems == checked.problems == []
    else:
        assert fast is None
    got = index_nodes(TID, rows)
    assert list(got.nodes.items()) == list(checked.nodes.items())
    assert got.problems == checked.problems
