"""Fuzzing ``thread.import``: the boundary where untrusted data enters.

Mutations of a valid export (and arbitrary JSON) must end in either a clean import
that passes the integrity check, or a failed envelope with one of the project's
errors and a message; on failure nothing is written.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hypothesis_support import examples
from json_paths import paths, set_at
from loops import closed_at_end, run_async
from panelot.idb import MemoryFactory
from panelot.store import PanelotStore

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
KNOWN_ERRORS = {"ImportError", "ValidationError"}


async def _base() -> tuple[PanelotStore, dict[str, Any]]:
    store = closed_at_end(await PanelotStore.open(MemoryFactory()))
    tid = await store.create_thread("fuzz")
    u = await store.append(tid, "user_message", {"content": [{"type": "text", "text": "q"}]})
    await store.append(
        tid,
        "assistant_message",
        {
            "content": [{"type": "text", "text": "a"}],
            "model": "m",
            "connectionId": "c",
            "usage": {"inputTokens": 1, "outputTokens": 2},
        },
    )
    await store.append(
        tid, "tool_call", {"itemId": "i", "toolName": "t", "params": {"x": [1]}, "level": "L1"}
    )
    await store.command(
        "message.edit",
        {
            "threadId": tid,
            "nodeId": u["nodeId"],
            "payload": {"content": [{"type": "text", "text": "q2"}]},
        },
    )
    data = (await store.query("thread.export", {"threadId": tid}))["data"]
    return store, data


async def _attempt(data: Any) -> None:
    store, _ = await _base()
    nodes_before = await store.db.table("nodes").count()
    threads_before = await store.db.table("threads").count()
    out = await store.send(
        {
            "type": "thread.import",
            "clientId": "fuzz",
            "submissionId": "s",
            "payload": {"data": data},
        }
    )
    if out["status"] == "completed":
        report = await store.query("thread.check", {"threadId": out["response"]["threadId"]})
        assert report["ok"], report
        return
    assert out["error"]["name"] in KNOWN_ERRORS, out["error"]
    assert out["error"]["message"]
    assert await store.db.table("nodes").count() == nodes_before
    assert await store.db.table("threads").count() == threads_before


BASE = run_async(_base())[1]
PATHS = paths(BASE)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), json_values), min_size=1, max_size=3))
def test_mutated_exports_fail_cleanly_or_import_soundly(
    mutations: list[tuple[tuple[Any, ...], Any]],
) -> None:
    data = copy.deepcopy(BASE)
    for path, new in mutations:
        try:
            data = set_at(data, path, new)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed this path
    run_async(_attempt(data))


@settings(max_examples=examples(100), deadline=None)
@given(json_values)
def test_arbitrary_json_fails_cleanly(data: Any) -> None:
    run_async(_attempt(data))


def test_oversized_imports_are_refused() -> None:
    data = copy.deepcopy(BASE)
    big = copy.deepcopy(data["nodes"][0])
    data["nodes"] = [dict(big, id=f"n{i}", seq=i + 1, parentId=None) for i in range(20_001)]
    run_async(_attempt(data))
    deep: Any = "x"
    for _ in range(100):
        deep = {"d": deep}
    data = copy.deepcopy(BASE)
    data["nodes"][2]["payload"]["params"] = deep
    run_async(_attempt(data))


def test_unsafe_integers_are_refused_by_the_precheck() -> None:
    """Found by the fuzzer: a seq of 2**53 once escaped as a storage error."""
    data = copy.deepcopy(BASE)
    data["nodes"][1]["seq"] = 2**53
    run_async(_attempt(data))
