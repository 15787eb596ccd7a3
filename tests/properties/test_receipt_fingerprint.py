r"""The receipt fingerprint: RFC 8785 byte for byte, and what a browser computes.

``receipts.fingerprint`` encodes plain payloads (ASCII keys, strings, booleans, null,
safe integers) with the C JSON encoder and everything else with ``rfc8785``. A stored
receipt's fingerprint must not change with the path taken, or replays of old
submissions would be refused as conflicts.

Lone surrogates (U+D800..U+DFFF unpaired) may be in any string a browser sends. RFC 8785
(and so both ``rfc8785`` and npm ``canonicalize`` 5) refuses them; the store writes
them as ``JSON.stringify`` does since ES2019 (``"\ud800"``, lowercase hex), so the
fingerprint of free text holding one is deterministic, never an error, and equal to
the SHA-256 (WebCrypto) of the canonical text a ``JSON.stringify``-based canonicalizer
builds in Chromium. That JS canonicalizer is first checked against npm
``canonicalize`` on well-formed payloads, where the latter is defined.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

import pytest
import rfc8785
from hypothesis import example, given, settings
from hypothesis import strategies as st
from playwright.sync_api import Page

from browser_harness import run_py
from hypothesis_support import examples
from panelot.bus.receipts import fingerprint
from panelot.canonical import _plain, canonical_json
from panelot.idb.errors import ValidationError

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
    assert _plain(plain, 0) and canonical_json(plain) == rfc8785.dumps(plain)
    assert not _plain({"payload": {"x": 1.5}}, 0)  # floats: ECMAScript formatting
    assert not _plain({"payload": {"é": 1, "z": 2}}, 0)  # non-ASCII keys
    assert not _plain({"payload": {"n": 2**53}}, 0)  # beyond the safe integers
    assert not _plain({"payload": ("a", "b")}, 0)  # tuples: the reference path
    assert _plain({"payload": {"s": "\ud800"}}, 0)  # a lone surrogate: escaped after


# ---- lone surrogates ------------------------------------------------------------------------

lone = st.characters(categories=["Cs"])
any_text = st.text(st.characters() | lone, max_size=8)
any_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(-1e30, 1e30)
    | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=examples(400), deadline=None)
@given(st.dictionaries(any_text, any_values, max_size=4))
@example({"s": "\ud800"})
@example({"\udc00": ["a\udbff", {"é\ud800": 1.5}]})
def test_lone_surrogates_are_escaped_as_json_stringify_does(payload: dict[str, Any]) -> None:
    """Valid UTF-8 always, meaning the same data; well-formed text is RFC 8785's bytes."""
    out = canonical_json(payload)
    text = out.decode("utf-8")  # strict: no surrogate left in the bytes
    as_floats = {"parse_int": float}  # RFC 8785 writes 1e16 as 10000000000000000
    assert json.loads(text, **as_floats) == json.loads(json.dumps(payload), **as_floats)
    try:
        assert out == rfc8785.dumps(payload)
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):
        pass  # a lone surrogate: RFC 8785 has no form for it


def test_lone_surrogate_escapes_and_key_order() -> None:
    assert canonical_json({"s": "a\ud800b"}) == b'{"s":"a\\ud800b"}'
    assert canonical_json({"s": "\udfff", "f": 0.5}) == b'{"f":0.5,"s":"\\udfff"}'
    # keys in UTF-16 code-unit order: U+D800 (a lone one) < U+D83D (a pair's lead) < U+E000
    got = canonical_json({"\ue000": 1, "😀": 2, "\ud800": 3, "é": 4})
    assert got == '{"é":4,"\\ud800":3,"😀":2,"\ue000":1}'.encode()
    # a high and a low surrogate held as two code points are one pair, as in JS
    assert canonical_json({"s": "\ud83d\ude00"}) == canonical_json({"s": "😀"})


def test_fingerprint_keeps_lone_surrogates_and_refuses_what_has_no_form() -> None:
    lone_fp = fingerprint({**TRANSPORT, "payload": {"s": "\ud800"}})
    assert lone_fp == hashlib.sha256(b'{"payload":{"s":"\\ud800"}}').hexdigest()
    assert lone_fp != fingerprint({**TRANSPORT, "payload": {"s": "\udc00"}})
    with pytest.raises(ValidationError) as big:
        fingerprint({**TRANSPORT, "payload": {"n": 2**60, "s": "\ud800"}})
    assert big.value.field == "payload"
    with pytest.raises(ValidationError) as nan:
        fingerprint({**TRANSPORT, "payload": {"x": float("nan"), "é\ud800": 1}})
    assert nan.value.field == "payload"


# ---- against JavaScript in Chromium ---------------------------------------------------------

JS_FINGERPRINTS = """async (text) => {
  const { default: canonicalize } = await import("/vendor/canonicalize.mjs");
  // RFC 8785 by its definition: JSON.stringify for every primitive, keys in UTF-16 order.
  const jcs = (v) => Array.isArray(v) ? "[" + v.map(jcs).join(",") + "]"
    : v !== null && typeof v === "object"
      ? "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + jcs(v[k])).join(",") + "}"
      : JSON.stringify(v);
  const hex = async (s) => Array.from(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s))),
    (b) => b.toString(16).padStart(2, "0")).join("");
  const wellFormed = (v) => typeof v === "string" ? v.isWellFormed()
    : Array.isArray(v) ? v.every(wellFormed)
    : v !== null && typeof v === "object"
      ? Object.entries(v).every(([k, x]) => k.isWellFormed() && wellFormed(x)) : true;
  const out = [];
  for (const c of JSON.parse(text)) {
    const { type, clientId, submissionId, ...rest } = c;
    let npm;
    try { npm = canonicalize(rest); } catch (error) { npm = null; }
    const own = jcs(rest);
    out.push({ npm: npm === null ? null : npm === own, wellFormed: wellFormed(rest),
               digest: await hex(own) });
  }
  return out;
}"""


def _random_text(rng: random.Random) -> str:
    pool = ["a", "é", "中", "😀", '"', "\\", "\n", "\x01", "\u2028", "\ue000"]
    pool += ["\ud800", "\udbff", "\udc00", "\udfff"]
    return "".join(rng.choice(pool) for _ in range(rng.randrange(0, 6)))


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 3 and roll < 0.2:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(0, 3))]
    if depth < 3 and roll < 0.4:
        return {_random_text(rng): _random_value(rng, depth + 1) for _ in range(rng.randrange(3))}
    scalar = rng.choice([None, True, 7, -2.5, 1e21, 5e-7, 0.1 + 0.2, 2**53 - 1])
    return _random_text(rng) if roll < 0.8 else scalar


def _commands() -> list[dict[str, Any]]:
    rng = random.Random(8785)
    fixed = [
        {"title": "\ud800"},
        {"patch": {"title": "a\udfffb", "tags": ["\udc00", "x\ud800"]}, "threadId": "t"},
        {"payload": {"content": [{"type": "text", "text": "😀\ud83d"}]}, "\udc00k": 1.5},
        {"é": "\ud800", "z": "é", "\ue000": [None, True, {"\ud800": 0.1}]},
    ]
    payloads = fixed + [_random_value(rng) for _ in range(200)]
    return [{**TRANSPORT, "payload": p} for p in payloads]


def test_fingerprints_of_lone_surrogates_match_javascript(harness_page: Page) -> None:
    commands = _commands()
    text = json.dumps(commands)  # ASCII: lone surrogates cross as \\u escapes
    js = harness_page.evaluate(JS_FINGERPRINTS, text)
    # the JS canonicalizer agrees with npm canonicalize wherever that one is defined ...
    assert all(r["npm"] is not False for r in js), js
    assert all(r["npm"] is True for r in js if r["wellFormed"])
    # ... which refuses every lone surrogate; enough examples hold one
    assert sum(r["npm"] is None for r in js) >= 50
    assert all(r["npm"] is None for r in js if not r["wellFormed"])
    expected = [r["digest"] for r in js]
    assert [fingerprint(c) for c in commands] == expected  # CPython
    in_pyodide = run_py(
        harness_page,
        f"""
import json
from panelot.bus.receipts import fingerprint
json.dumps([fingerprint(c) for c in json.loads({json.dumps(text)})])
""",
    )
    assert in_pyodide == expected
