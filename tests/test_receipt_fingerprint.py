"""The fast receipt fingerprint agrees with the RFC 8785 reference encoder, byte for byte.

``receipts.fingerprint`` encodes plain payloads (ASCII keys, strings, booleans, null,
safe integers) with the C JSON encoder and everything else with ``rfc8785``. A stored
receipt's fingerprint must not change with the path taken, or replays of old
submissions would be refused as conflicts.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from hypothesis_support import examples
from panelot.idb.errors import ValidationError
from panelot.receipts import _fast_canonical, fingerprint

TRANSPORT = {"type": "thread.update", "clientId": "c1", "submissionId": "s1"}


def reference(command: dict[str, Any]) -> str:
    rest = {k: v for k, v in command.items() if k not in TRANSPORT}
    return hashlib.sha256(rfc8785.dumps(rest)).hexdigest()


texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["", 'a"b\\c', "\x00\x1f\x7f\b\f\n\r\t", "é中😀", "\u2028\u2029", "\ue000\U0001f600"]
)
keys = texts | st.sampled_from(["threadId", "patch", "title", "a", "B", "_", "é", "😀", "\ue000"])
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=examples(400), deadline=None)
@given(st.dictionaries(keys, values, max_size=5))
def test_fingerprint_matches_the_reference_encoder(payload: dict[str, Any]) -> None:
    command = {**TRANSPORT, "payload": payload}
    assert fingerprint(command) == reference(command)


def test_plain_payloads_take_the_fast_path_and_others_do_not() -> None:
    plain = {"payload": {"threadId": "t", "patch": {"title": "é\n😀", "n": [1, True, None]}}}
    assert _fast_canonical(plain) == rfc8785.dumps(plain)
    assert _fast_canonical({"payload": {"x": 1.5}}) is None  # floats: ECMAScript formatting
    assert _fast_canonical({"payload": {"é": 1, "z": 2}}) is None  # non-ASCII keys
    assert _fast_canonical({"payload": {"n": 2**53}}) is None  # beyond the safe integers
    assert _fast_canonical({"payload": ("a", "b")}) is None  # tuples: the reference path
    assert _fast_canonical({"payload": {"s": "\ud800"}}) is None  # lone surrogate


def test_unencodable_payloads_are_still_refused() -> None:
    with pytest.raises(ValidationError) as lone:
        fingerprint({**TRANSPORT, "payload": {"s": "\ud800"}})
    assert lone.value.field == "payload"
    with pytest.raises(ValidationError) as big:
        fingerprint({**TRANSPORT, "payload": {"n": 2**60}})
    assert big.value.field == "payload"
