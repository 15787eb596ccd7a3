"""The context budget: how much of a long thread's history one model request carries.

A thread's context is its whole visible path, and a long thread's path outgrows any
model's context window (10,000 messages are ~2.4 MB of text, ~600k tokens): sent
whole, the request is refused by the provider, and building and sending it makes every
turn cost more as the thread grows. :func:`history_start` picks the first node of the
visible path a request is built from, so that the characters of text it carries stay
within a budget (:data:`DEFAULT_CONTEXT_BUDGET`, or ``thread.request``'s
``contextBudget``; ``null``: no limit). Only the part kept is built and slimmed.

The rules:

* **Whole turns.** The kept part starts at a user message, so a tool call and its
  result, or a question and its answer, are kept or left out together, and the request
  opens with the user as providers expect.
* **The newest turn is always kept**, even alone over the budget; a path without a user
  message is kept whole (it cannot be cut at a turn).
* **A stable start.** The start does not slide with every turn: that would change the
  request's first message each time and defeat a provider's prompt cache. It is the
  first user message at or after a threshold counted from the root, in steps of half
  the budget, so it moves once per half a budget of new text, and the kept part holds
  between about half the budget and the budget.
* **What counts** (:func:`node_chars`): the text of a node's blocks (``content``, a tool
  result's ``contentForLlm``), its inline page context, a tool call's name and
  arguments as JSON, plus a small overhead per node. Images and attached files are
  references here, bounded by their own budgets (:mod:`panelot.request.slimming`,
  :mod:`panelot.request.file_text`). A page-context entry long enough to become a stub
  once stale (:data:`~panelot.request.slimming.STALE_CHARS`) counts as a stub
  (:data:`STUB_CHARS`): the older ones are sent so, and the entries of the newest
  turns, which are sent whole, can take the request over the budget by their length.

The choice is a pure function of the path's stored nodes, so the same path gives the
same request.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any

from panelot.idb.errors import ValidationError
from panelot.request.slimming import STALE_CHARS
from panelot.settings.groups import DEFAULT_CONTEXT_BUDGET

__all__ = [
    "DEFAULT_CONTEXT_BUDGET",
    "NODE_OVERHEAD",
    "PathChars",
    "STUB_CHARS",
    "check_budget",
    "history_start",
    "node_chars",
]


NODE_OVERHEAD = 16
"""Characters counted for each node besides its text (a message's role and framing)."""

STUB_CHARS = 300
"""What a page-context entry that becomes a stub once stale counts (a stub's most)."""


def check_budget(budget: object) -> int | None:
    """``budget`` if it is an integer >= 0 or ``None``; else a ValidationError on it."""
    if budget is None or (type(budget) is int and budget >= 0):
        return budget
    raise ValidationError(
        "contextBudget: must be an integer >= 0 (characters) or null (no limit)",
        field="contextBudget",
    )


def _text(items: object, stubbed: bool = False) -> int:
    """Characters of the ``text`` fields of a list of blocks or context entries."""
    total = 0
    if isinstance(items, list):
        for item in items:
            text = item.get("text") if isinstance(item, dict) else None
            if isinstance(text, str):
                total += STUB_CHARS if stubbed and len(text) >= STALE_CHARS else len(text)
    return total


def node_chars(node: dict[str, Any]) -> int:
    """The characters a node of the path counts against the budget (see the module)."""
    payload = node.get("payload")
    if not isinstance(payload, dict):
        return NODE_OVERHEAD
    kind = node.get("type")
    if kind == "tool_call":
        arguments = json.dumps(payload.get("params"), default=str)
        return NODE_OVERHEAD + len(str(payload.get("toolName") or "")) + len(arguments)
    key = "contentForLlm" if kind == "tool_result" else "content"
    total = NODE_OVERHEAD + _text(payload.get(key))
    if kind == "user_message" and payload.get("attachedContext"):
        total += _text(payload["attachedContext"], stubbed=True)
    return total


def _shared(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading ids two visible paths share.

    A path is its leaf's ancestors: paths holding the same id at one place agree up to
    it, so the places where they agree are a prefix, found by bisection.
    """
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[mid - 1] == b[mid - 1]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PathChars:
    """The characters before each node of the last visible path measured.

    A turn's path is the last one and the nodes the turn added, so measuring it adds
    those nodes only: a long thread's turn does not go over its whole path again. Valid
    while the nodes measured do not change (the thread cache's memo, dropped with its
    entry when a node is written).
    """

    __slots__ = ("_before", "_ids", "_users")

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._before = [0]
        """``_before[i]``: the characters of the path's nodes before node ``i``."""
        self._users: list[int] = []
        """The places of the path's user messages, in order."""

    def measure(
        self,
        ids: Sequence[str],
        nodes: Mapping[str, dict[str, Any]],
        sizes: dict[str, int] | None = None,
    ) -> None:
        """Make ``ids`` (a visible path, its records in ``nodes``) the path measured.

        ``sizes``: :func:`node_chars` of nodes by id, read and filled.
        """
        keep = _shared(self._ids, ids)
        del self._ids[keep:]
        del self._before[keep + 1 :]
        del self._users[bisect_left(self._users, keep) :]
        total = self._before[-1]
        for i in range(keep, len(ids)):
            node_id = ids[i]
            node = nodes[node_id]
            size = sizes.get(node_id) if sizes is not None else None
            if size is None:
                size = node_chars(node)
                if sizes is not None:
                    sizes[node_id] = size
            if node.get("type") == "user_message":
                self._users.append(i)
            self._ids.append(node_id)
            total += size
            self._before.append(total)

    def start(self, budget: int | None) -> int:
        """The place of the first node of the path measured that a request keeps."""
        total = self._before[-1]
        if budget is None or not self._ids or total <= budget:
            return 0
        step = max(budget // 2, 1)
        threshold = -(-(total - budget) // step) * step  # total - budget, rounded up to a step
        before = self._before
        found = bisect_left(self._users, threshold, key=lambda i: before[i])
        if found < len(self._users):
            return self._users[found]
        return self._users[-1] if self._users else 0


def history_start(
    nodes: Sequence[dict[str, Any]], budget: int | None, memo: dict[str, int] | None = None
) -> int:
    """The index of the first of ``nodes`` (a visible path) a request keeps within ``budget``.

    ``memo``: :func:`node_chars` of nodes by id, read and filled (valid while the nodes
    of those ids do not change).
    """
    if budget is None or not nodes:
        return 0
    # Without a memo the nodes need no ids: a fresh measure only needs keys of its own.
    keys = [n["id"] if memo is not None else str(i) for i, n in enumerate(nodes)]
    path = PathChars()
    path.measure(keys, dict(zip(keys, nodes, strict=True)), memo)
    return path.start(budget)
