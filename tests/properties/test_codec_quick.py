"""The codec's quick checks change nothing: same records, same errors, as the full decode.

:mod:`panelot.codec` lets a field's value through without building its path when a
quick check (``_quick``) says the decoder would return it unchanged. Here every record
is decoded twice, with the quick checks and with them turned off (every field through
its decoder, as before they existed), from valid records of each kind with hostile
values put in at random places, fields dropped and unknown keys added: the outcomes
must be equal, the dataclass read or the error (its class, message and ``field``).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hypothesis_support import examples
from json_paths import paths, set_at
from panelot import codec
from panelot.api.rescue import CutRecord, OverflowArgs
from panelot.bus.receipts import Receipt
from panelot.idb.errors import PanelotError
from panelot.tree.records import node_from_wire, thread_from_wire

ID = "0f3c9a2e-7d1b-4c8e-9a6f-2b5d8e1c4a70"
TEXT = [{"type": "text", "text": "hello"}]
IMAGE = {"type": "image", "attachmentId": "a1", "mime": "image/png", "w": 3, "h": 4}
FILE = {"type": "file", "attachmentId": "a2", "name": "f.txt", "size": 9, "evicted": False}
PAYLOADS: dict[str, dict[str, Any]] = {
    "user_message": {
        "content": [*TEXT, IMAGE, FILE],
        "attachedContext": [{"type": "page", "url": "https://e", "title": "t", "text": "x"}],
        "deleted": False,
    },
    "assistant_message": {
        "content": TEXT,
        "model": "m",
        "connectionId": "c",
        "reasoning": "r",
        "usage": {"inputTokens": 5, "outputTokens": 2, "cacheReadTokens": 0, "costUsd": 0.5},
        "interrupted": "stopped",
    },
    "tool_call": {"itemId": "i", "toolName": "t", "params": {"q": [1, 2.5]}, "level": "L1"},
    "tool_result": {"itemId": "i", "ok": True, "contentForLlm": TEXT, "details": {"a": None}},
    "approval_decision": {"approvalId": "p", "request": {}, "decision": "approved", "ts": 1},
    "interaction_response": {
        "interactionId": "n",
        "request": {"k": "v"},
        "response": [True],
        "respondedAt": 2,
    },
    "turn_context": {
        "turnId": "u",
        "model": "m",
        "permissionPolicy": {"mode": "ask"},
        "activeSkills": ["s"],
    },
    "system_notice": {"text": "x", "level": "info", "code": "c", "deleted": True},
}
THREAD = {
    "id": ID,
    "title": "t",
    "createdAt": 1,
    "updatedAt": 2,
    "leafId": None,
    "tags": ["a"],
    "pinned": True,
    "folderId": "f",
    "stats": {"turns": 1, "totalTokens": 2, "costUsd": 0.25},
    "shown": {"leafId": ID, "turns": 1, "messages": 2},
    "requestCut": {"model": "m", "itemKeys": ["k"], "contextBudget": 10, "at": 3},
}
RECEIPT = {
    "id": "r",
    "clientId": "c",
    "submissionId": "s",
    "commandType": "thread.update",
    "status": "completed",
    "response": {"any": ["thing"]},
    "requestFingerprint": "f",
    "createdAt": 1,
    "expiresAt": 2,
    "extra": "read past",
}


def _node(kind: str) -> dict[str, Any]:
    return {
        "id": ID,
        "threadId": "t",
        "parentId": None,
        "seq": 1,
        "ts": 2,
        "type": kind,
        "payload": copy.deepcopy(PAYLOADS[kind]),
    }


Read = Callable[[Any], Any]
READS: dict[str, tuple[Read, Any]] = {
    **{
        f"node:{kind}": (lambda data: node_from_wire(data, "nodes[3]"), _node(kind))
        for kind in PAYLOADS
    },
    "thread": (lambda data: thread_from_wire(data, "threads[0]"), THREAD),
    "receipt": (lambda data: codec.decode(Receipt, data), RECEIPT),
    "cut": (
        lambda data: codec.decode_args(CutRecord, data),
        {"itemKeys": ["a"], "contextBudget": 5},
    ),
    "overflow": (
        lambda data: codec.decode_args(OverflowArgs, data),
        {"status": 400, "message": "m", "code": {"x": 1}},
    ),
}

texts = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=8)
#: The values at the edges of the quick checks: ids of 0, 200 and 201 characters, lone
#: surrogates, the largest safe integers, floats that are not finite, literals' words.
edges = st.sampled_from(
    [
        *("", "\ud800", "a\udc00", "x" * 200, "x" * 201, "é", "é" * 201, ID),
        *(None, True, False, 0, 1, -1, 2**53 - 1, 2**53, -(2**53 - 1), -(2**53), 10**400),
        *(0.0, -0.0, 1.5, 1e300, math.nan, math.inf, -math.inf),
        *("text", "image", "L1", "info", "approved", "stopped", "page", "user_message"),
        *([], {}, ["x"], [1], {"type": "text"}),
    ]
).map(copy.deepcopy)  # a fresh list or dict each time: a change must not reach the next
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**60), 2**60), st.floats(), texts)
values = st.one_of(
    edges,
    st.recursive(
        scalars | edges,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(["type", "text", "k", ""]) | texts, inner, max_size=3),
        ),
        max_leaves=6,
    ),
)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, Any]:
    """A record kind and a valid record of it changed in one to three places."""
    name = draw(st.sampled_from(sorted(READS)))
    data = copy.deepcopy(READS[name][1])
    for _ in range(draw(st.integers(1, 3))):
        place = draw(st.sampled_from(paths(data)))
        if not place:
            if draw(st.booleans()):
                data = draw(values)
            continue
        parent = data
        try:
            for step in place[:-1]:
                parent = parent[step]
            action = draw(st.sampled_from(["edge", "edge", "replace", "drop", "add"]))
            if action == "edge":
                parent[place[-1]] = draw(edges)
            elif action == "replace":
                parent[place[-1]] = draw(values)
            elif action == "drop" and isinstance(parent, dict):
                del parent[place[-1]]
            elif isinstance(parent, dict):
                parent[draw(st.sampled_from(["unknown", "", "Type"]) | texts)] = draw(values)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change moved this place
    return name, data


def _changed(name: str, place: tuple[str, ...], value: Any) -> tuple[str, Any]:
    """The sample record of ``name`` with ``value`` at ``place`` (an edge each check meets)."""
    return name, set_at(copy.deepcopy(READS[name][1]), place, value)


def _outcome(read: Read, data: Any) -> tuple[Any, ...]:
    try:
        return ("read", read(copy.deepcopy(data)))
    except PanelotError as exc:
        return ("refused", type(exc).__name__, exc.message, exc.field)
    except Exception as exc:  # noqa: BLE001 - compared, not hidden
        return ("raised", type(exc).__name__, str(exc))


@contextmanager
def _without_quick_checks() -> Iterator[None]:
    """Decoders built afresh with no quick checks (every field through its decoder)."""
    quick = codec._quick
    codec._decoder.cache_clear()
    codec._quick = lambda tp: None
    try:
        yield
    finally:
        codec._quick = quick
        codec._decoder.cache_clear()


@settings(
    max_examples=examples(1000),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(mutated())
@example(_changed("receipt", ("createdAt",), -1))
@example(_changed("cut", ("contextBudget",), True))
@example(_changed("thread", ("id",), "x" * 201))
@example(_changed("thread", ("leafId",), "\ud800"))
@example(_changed("thread", ("pinned",), 1))
@example(_changed("node:tool_call", ("payload", "level"), "zz"))
@example(_changed("node:tool_call", ("seq",), 2**53))
@example(_changed("node:assistant_message", ("payload", "usage", "costUsd"), math.nan))
@example(_changed("node:assistant_message", ("payload", "usage", "costUsd"), 10**400))
@example(_changed("node:system_notice", ("payload", "text"), None))
def test_quick_checks_read_as_the_full_decode(case: tuple[str, Any]) -> None:
    name, data = case
    read = READS[name][0]
    quick = _outcome(read, data)
    with _without_quick_checks():
        full = _outcome(read, data)
    assert quick == full


def test_the_valid_samples_read() -> None:
    for name, (read, data) in READS.items():
        assert _outcome(read, data)[0] == "read", name


def test_quick_checks_are_used() -> None:
    """The records above go through the quick checks (else this file proves nothing)."""
    assert codec._quick(str) is not None
    assert codec._quick(codec.Id | None) is not None
    assert codec._quick(codec.Natural) is not None
    assert codec._quick(codec.Raw) is not None
