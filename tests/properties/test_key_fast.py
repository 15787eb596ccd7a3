"""The key checks' quick answers agree with the full validation.

``panelot.idb.keys`` answers the common kinds of value (strings, exact ints and floats,
booleans, null) without raising; every other value goes through :func:`validate_key`.
For any value, ``is_valid_key`` must say whether ``validate_key`` accepts it, and
``evaluate_key_path`` must give what ``validate_key`` returns, or ``None`` when it raises.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hypothesis_support import examples
from panelot.idb.errors import DataError
from panelot.idb.keys import (
    MAX_SAFE_INTEGER,
    evaluate_key_path,
    is_valid_key,
    plain_string_keys,
    validate_key,
)

scalars = st.one_of(
    st.text(max_size=4),
    st.integers(-(2**60), 2**60),
    st.sampled_from([MAX_SAFE_INTEGER, MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-0.0, True, False, None, b"ab", bytearray(b"c")]),
    st.datetimes(min_value=dt.datetime(1970, 1, 1), max_value=dt.datetime(2100, 1, 1)),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=6)


def _checked(value: Any) -> tuple[bool, Any]:
    try:
        return True, validate_key(value)
    except DataError:
        return False, None


@settings(max_examples=examples(500), deadline=None)
@given(values)
@example(True)
@example(math.nan)
@example(-0.0)
@example(MAX_SAFE_INTEGER + 1)
@example([1, None])
def test_quick_key_checks_agree_with_validation(value: Any) -> None:
    ok, key = _checked(value)
    assert is_valid_key(value) is ok
    found = evaluate_key_path({"a": {"b": value}}, "a.b")
    assert found == key and type(found) is type(key)
    if isinstance(key, float) and key == 0:
        assert math.copysign(1.0, found) == 1.0  # -0 is the key 0
    compound = evaluate_key_path({"x": "k", "y": value}, ["x", "y"])
    assert compound == (["k", key] if ok else None)


records = st.lists(
    st.one_of(
        st.dictionaries(st.sampled_from(["id", "x", ""]), scalars, max_size=2),
        scalars,
    ),
    max_size=4,
)


@settings(max_examples=examples(300), deadline=None)
@given(records, st.sampled_from(["id", "a.b", "", ["id"]]))
@example([{"id": "a"}, {"id": "b"}], "id")
@example([{"id": "a"}, {"id": 1}], "id")
@example([{"id": "a"}, "id"], "id")
@example([{"": "a"}], "")
def test_plain_string_keys_answer_only_when_every_key_is_a_string(
    values: list[Any], path: Any
) -> None:
    # prepare_write takes these keys without checking each record: when it answers, it
    # must give exactly what evaluating the path on each record would.
    plain = plain_string_keys(values, path)
    evaluated = [evaluate_key_path(v, path) if isinstance(v, dict) else None for v in values]
    if plain is not None:
        assert all(isinstance(v, dict) for v in values)
        assert plain == evaluated and all(type(k) is str for k in plain)
    elif isinstance(path, str) and "." not in path and path:
        assert not all(type(k) is str for k in evaluated) or not all(
            isinstance(v, dict) for v in values
        )
