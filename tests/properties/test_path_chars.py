"""A request's cut measured from the last path agrees with one measured afresh.

``thread.request`` keeps one :class:`~panelot.request.history.PathChars` per cached
thread and measures each turn's path against it: only the nodes after the places the
last path shares are measured again. For any tree, any sequence of paths through it
(appends, branch switches, shorter and longer paths) and any budget, the start it
picks must be the rule's, scanned node by node over the whole path (:func:`scanned`).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hypothesis_support import examples
from panelot.request.history import PathChars, history_start, node_chars

KINDS = ["user_message", "assistant_message", "tool_call", "tool_result"]


@st.composite
def trees(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    """Nodes ``n0..`` each under an earlier one (or a root), of random kinds and sizes."""
    count = draw(st.integers(1, 40))
    nodes: dict[str, dict[str, Any]] = {}
    for i in range(count):
        parent = draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None
        kind = draw(st.sampled_from(KINDS))
        text = "x" * draw(st.integers(0, 300))
        payload: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
        if kind == "tool_call":
            payload = {"toolName": "t", "params": {"q": text}}
        nodes[f"n{i}"] = {
            "id": f"n{i}",
            "parentId": None if parent is None else f"n{parent}",
            "type": kind,
            "payload": payload,
        }
    return nodes


def path_to(nodes: dict[str, dict[str, Any]], leaf: str) -> list[str]:
    """The ids from the root to ``leaf``."""
    out: list[str] = []
    at: str | None = leaf
    while at is not None:
        out.append(at)
        at = nodes[at]["parentId"]
    return out[::-1]


def scanned(path: list[dict[str, Any]], budget: int | None) -> int:
    """The rule of :mod:`panelot.request.history`, one node after another."""
    sizes = [node_chars(n) for n in path]
    total = sum(sizes)
    if budget is None or total <= budget:
        return 0
    step = max(budget // 2, 1)
    threshold = -(-(total - budget) // step) * step
    before, last_user = 0, -1
    for i, node in enumerate(path):
        if node["type"] == "user_message":
            if before >= threshold:
                return i
            last_user = i
        before += sizes[i]
    return max(last_user, 0)


@settings(max_examples=examples(300), deadline=None)
@given(
    trees(),
    st.lists(st.integers(0, 39), min_size=1, max_size=8),
    st.one_of(st.none(), st.integers(0, 2_000)),
)
def test_an_incremental_measure_cuts_where_a_fresh_one_does(
    nodes: dict[str, dict[str, Any]], leaves: list[int], budget: int | None
) -> None:
    measured = PathChars()
    sizes: dict[str, int] = {}
    for leaf in leaves:
        ids = path_to(nodes, f"n{leaf % len(nodes)}")
        measured.measure(ids, nodes, sizes)
        path = [nodes[i] for i in ids]
        expected = scanned(path, budget)
        assert measured.start(budget) == expected, (ids, budget)
        assert history_start(path, budget) == expected
