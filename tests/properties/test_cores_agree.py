"""Property tests: the memory core agrees with real IndexedDB in Chromium.

Key comparison is checked against the browser's own ``indexedDB.cmp``; random
operation sequences run on both cores must observe the same results.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from playwright.sync_api import Page

from behavior.idb.opseq import STORES, run_ops
from browser_harness import run_py
from hypothesis_support import examples
from loops import run_async
from panelot.idb import Database, MemoryFactory, SchemaVersion, compare_keys

# -- keys ----------------------------------------------------------------------------

scalar_keys = st.one_of(
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False),
    st.datetimes(
        min_value=datetime(1970, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
    ).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)),
    st.text(max_size=6),
    st.binary(max_size=4),
)
keys = st.recursive(scalar_keys, lambda inner: st.lists(inner, max_size=3), max_leaves=6)


def _tag(key: Any) -> Any:
    """Encode a key as JSON the page can rebuild (dates, bytes and floats tagged)."""
    if isinstance(key, list):
        return {"a": [_tag(k) for k in key]}
    if isinstance(key, datetime):
        return {"d": key.timestamp() * 1000}
    if isinstance(key, bytes):
        return {"b": base64.b64encode(key).decode()}
    if isinstance(key, float):
        return {"f": repr(key)}
    return key


JS_CMP = """(pairs) => {
  const un = (k) => {
    if (k === null || typeof k !== "object") return k;
    if ("a" in k) return k.a.map(un);
    if ("d" in k) return new Date(k.d);
    if ("b" in k) return Uint8Array.from(atob(k.b), (c) => c.charCodeAt(0));
    return Number(k.f === "inf" ? Infinity : k.f === "-inf" ? -Infinity : k.f);
  };
  return pairs.map(([a, b]) => indexedDB.cmp(un(a), un(b)));
}"""


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.tuples(keys, keys), min_size=1, max_size=40))
def test_key_order_matches_indexeddb_cmp(harness_page: Page, pairs: list[tuple[Any, Any]]) -> None:
    browser = harness_page.evaluate(JS_CMP, [[_tag(a), _tag(b)] for a, b in pairs])
    ours = [compare_keys(a, b) for a, b in pairs]
    assert ours == browser


@given(keys, keys, keys)
def test_key_order_is_a_total_order(a: Any, b: Any, c: Any) -> None:
    assert compare_keys(a, a) == 0
    assert compare_keys(a, b) == -compare_keys(b, a)
    if compare_keys(a, b) <= 0 and compare_keys(b, c) <= 0:
        assert compare_keys(a, c) <= 0


# -- operation sequences -------------------------------------------------------------

ids = st.sampled_from([f"i{n}" for n in range(8)])
groups = st.sampled_from(["a", "b", "c"])
nums = st.integers(min_value=0, max_value=5)
values = st.fixed_dictionaries(
    {"id": ids, "g": groups, "n": nums},
    optional={
        "tags": st.lists(st.sampled_from(["x", "y", "z"]), max_size=3),
        "email": st.sampled_from(["e1", "e2", "e3"]),
    },
)
index_keys = {"g": groups, "n": nums, "tags": st.sampled_from(["x", "y", "z"]), "id": ids}


@st.composite
def queries(draw: st.DrawFn) -> dict[str, Any]:
    index = draw(st.sampled_from(sorted(index_keys)))
    key = index_keys[index]
    return {
        "op": "query",
        "index": index,
        "how": draw(st.sampled_from(["between", "equals", "any_of"])),
        "lo": draw(key),
        "hi": draw(key),
        "incl_lo": draw(st.booleans()),
        "incl_hi": draw(st.booleans()),
        "keys": draw(st.lists(key, max_size=3)),
        "reverse": draw(st.booleans()),
        "offset": draw(st.integers(0, 3)),
        "limit": draw(st.one_of(st.none(), st.integers(0, 4))),
    }


ops = st.one_of(
    st.builds(lambda v: {"op": "put", "value": v}, values),
    st.builds(lambda v: {"op": "add", "value": v}, values),
    st.builds(lambda vs: {"op": "bulk_put", "values": vs}, st.lists(values, max_size=4)),
    st.builds(lambda i: {"op": "delete", "id": i}, ids),
    st.builds(lambda i, n: {"op": "update", "id": i, "changes": {"n": n}}, ids, nums),
    st.builds(lambda i: {"op": "get", "id": i}, ids),
    st.just({"op": "count"}),
    queries(),
    st.builds(lambda vs: {"op": "abort_tx", "values": vs}, st.lists(values, max_size=3)),
)


def _memory(seq: list[dict[str, Any]]) -> list[Any]:
    async def go() -> list[Any]:
        db = await Database("p", [SchemaVersion(1, STORES)]).open(MemoryFactory())
        return await run_ops(db, seq)

    # Playwright's sync API keeps an event loop on this thread; use a fresh one elsewhere.
    return run_async(go())


BROWSER_RUN = """
import json, uuid
from behavior.idb.opseq import STORES, run_ops
from panelot.idb import Database, SchemaVersion
from panelot.idb.browser import BrowserFactory
name = "prop-" + uuid.uuid4().hex[:8]
db = await Database(name, [SchemaVersion(1, STORES)]).open(BrowserFactory())
try:
    out = await run_ops(db, json.loads({ops}))
finally:
    db.close()
    await BrowserFactory().delete(name)
json.dumps(out)
"""


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(ops, min_size=1, max_size=25))
def test_random_operations_agree_with_indexeddb(
    behavior_page: Page, seq: list[dict[str, Any]]
) -> None:
    expected = json.loads(json.dumps(_memory(seq)))
    actual = run_py(behavior_page, BROWSER_RUN.format(ops=json.dumps(json.dumps(seq))))
    assert actual == expected
