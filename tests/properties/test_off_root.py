"""Property tests of the tree checks that name what is wrong with an imported tree.

For any parent links among a few nodes (some pointing outside the thread),
``nodes_off_root`` must hold exactly the nodes whose chain of parents never ends at a
root, and ``nodes_on_cycles`` exactly those whose chain comes back to themselves: the
same sets a plain walk from each node finds.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hypothesis_support import examples
from panelot.tree.integrity import index_nodes, nodes_off_root, nodes_on_cycles

# Each node's parent: None (a root), another node by position, or one outside the thread.
parents = st.lists(st.one_of(st.none(), st.integers(0, 11), st.just(-1)), min_size=1, max_size=12)


def _walk(links: dict[str, str | None], start: str) -> tuple[bool, bool]:
    """(reaches a root, comes back to ``start``) by following parent links one by one."""
    seen: set[str] = set()
    current: str | None = links[start]
    while current is not None and current in links and current not in seen:
        if current == start:
            return False, True
        seen.add(current)
        current = links[current]
    return current is None, False


@settings(max_examples=examples(300), deadline=None)
@given(parents)
def test_off_root_and_cycles_match_a_plain_walk(drawn: list[int | None]) -> None:
    links: dict[str, str | None] = {}
    for i, parent in enumerate(drawn):
        if parent is None:
            links[f"n{i}"] = None
        elif parent < 0 or parent >= len(drawn):
            links[f"n{i}"] = "outside"
        else:
            links[f"n{i}"] = f"n{parent}"
    nodes = [
        {
            "id": nid,
            "threadId": "t",
            "parentId": parent,
            "seq": i + 1,
            "type": "user_message",
            "payload": {},
        }
        for i, (nid, parent) in enumerate(links.items())
    ]
    index = index_nodes("t", nodes)
    off_root = nodes_off_root(index)
    walks = {nid: _walk(links, nid) for nid in links}
    assert off_root == {nid for nid, (reaches, _) in walks.items() if not reaches}
    assert nodes_on_cycles(index, off_root) == {nid for nid, (_, back) in walks.items() if back}
