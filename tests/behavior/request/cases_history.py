"""The context budget: a request keeps the newest whole turns within a character budget."""

from __future__ import annotations

from typing import Any

from behavior import Ctx, raises
from behavior.payloads import answer, text
from behavior.request.cases_slimming import NO_SEEN, img, put, user
from panelot.idb.errors import ValidationError
from panelot.request.history import (
    DEFAULT_CONTEXT_BUDGET,
    NODE_OVERHEAD,
    STUB_CHARS,
    history_start,
    node_chars,
)
from panelot.store import PanelotStore

TURN = 2 * (100 + NODE_OVERHEAD)
"""The characters of one turn of :func:`turns`: a question and an answer of 100 each."""


def words(label: str) -> str:
    """100 characters starting with ``label``."""
    return label.ljust(100, ".")


async def turns(store: PanelotStore, tid: str, first: int, count: int) -> None:
    for i in range(first, first + count):
        await store.append(tid, "user_message", text(words(f"q{i}")))
        await store.append(tid, "assistant_message", answer(words(f"a{i}")))


def first_text(out: dict[str, Any]) -> str:
    return str(out["messages"][0]["content"][0]["text"])


def chars(out: dict[str, Any]) -> int:
    """The characters of the messages sent (text only: these cases send no tools)."""
    return sum(NODE_OVERHEAD + len(b["text"]) for m in out["messages"] for b in m["content"])


async def case_a_path_within_the_budget_is_sent_whole(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("short")
    await turns(store, tid, 0, 3)
    out = await store.query("thread.request", {"threadId": tid})
    assert len(out["messages"]) == 6 and first_text(out) == words("q0")
    first = out["path"][0]
    assert out["history"] == {
        "contextBudget": DEFAULT_CONTEXT_BUDGET,
        "droppedNodes": 0,
        "firstNodeId": first,
    }
    exact = await store.query("thread.request", {"threadId": tid, "contextBudget": 3 * TURN})
    assert exact["history"]["droppedNodes"] == 0 and exact["messages"] == out["messages"]
    less = await store.query("thread.request", {"threadId": tid, "contextBudget": 3 * TURN - 1})
    # One character over: the threshold rounds up to half the budget, so two turns go.
    assert less["history"]["droppedNodes"] == 4


async def case_a_long_path_keeps_the_newest_whole_turns(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("long")
    await turns(store, tid, 0, 10)
    budget = 4 * TURN
    out = await store.query("thread.request", {"threadId": tid, "contextBudget": budget})
    dropped = out["history"]["droppedNodes"]
    assert dropped > 0 and dropped % 2 == 0  # cut at a question, never inside a turn
    assert out["messages"][0]["role"] == "user"
    assert first_text(out) == words(f"q{dropped // 2}")
    assert out["messages"][-1]["content"][0]["text"] == words("a9")
    assert budget // 2 <= chars(out) <= budget
    full_path = (await store.context(tid))["path"]
    assert len(out["messages"]) + dropped == 20 and out["path"] == full_path[dropped:]
    assert out["history"]["firstNodeId"] == out["path"][0]
    same = await store.request_context(tid, context_budget=budget)
    assert same["messages"] == out["messages"]
    whole = await store.query("thread.request", {"threadId": tid, "contextBudget": None})
    assert len(whole["messages"]) == 20 and whole["history"]["droppedNodes"] == 0
    assert whole["history"]["contextBudget"] is None
    context = await store.query("thread.context", {"threadId": tid})
    assert "history" not in context and context["messages"] == whole["messages"]


async def case_the_start_moves_in_steps_not_with_every_turn(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("stable")
    budget = 6 * TURN
    firsts: list[str] = []
    for i in range(24):
        await turns(store, tid, i, 1)
        out = await store.request_context(tid, context_budget=budget)
        assert chars(out) <= budget and out["messages"][-1]["content"][0]["text"] == words(f"a{i}")
        firsts.append(first_text(out))
    # The first message sent changes once per half a budget of new text (3 turns), so
    # most turns send the same opening as the turn before (a provider's cache holds).
    changes = sum(a != b for a, b in zip(firsts, firsts[1:], strict=False))
    assert 5 <= changes <= 7, firsts
    assert firsts[-1] != firsts[0]


async def case_the_newest_turn_is_kept_even_over_the_budget(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("big")
    await turns(store, tid, 0, 3)
    await store.append(tid, "user_message", text("x" * 5_000))
    out = await store.query("thread.request", {"threadId": tid, "contextBudget": 0})
    assert [m["role"] for m in out["messages"]] == ["user"]
    assert out["messages"][0]["content"][0]["text"] == "x" * 5_000
    assert out["history"]["droppedNodes"] == 6


async def case_tool_steps_stay_with_their_turn(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("tools")
    await turns(store, tid, 0, 3)
    await store.append(tid, "user_message", text(words("q-tool")))
    call = {"itemId": "i1", "toolName": "search", "params": {"q": "p" * 300}, "level": "L0"}
    await store.append(tid, "tool_call", call)
    result = {"itemId": "i1", "ok": True, "contentForLlm": [{"type": "text", "text": "r" * 300}]}
    await store.append(tid, "tool_result", result)
    await store.append(tid, "assistant_message", answer(words("done")))
    out = await store.request_context(tid, context_budget=700)
    roles = [m["role"] for m in out["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"], roles
    assert out["messages"][1]["toolCalls"][0]["itemId"] == out["messages"][2]["itemId"] == "i1"


async def case_attachments_of_dropped_turns_are_not_sent(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("images")
    old = await put(store, tid, b"o" * 64)
    new = await put(store, tid, b"n" * 64)
    await store.append(tid, "user_message", user(img(old, "old.png")))
    await store.append(tid, "assistant_message", answer("seen"))
    await turns(store, tid, 0, 6)
    await store.append(tid, "user_message", user(img(new, "new.png")))
    whole = await store.request_context(tid, options=NO_SEEN, context_budget=None)
    assert set(whole["attachments"]) == {old, new}
    out = await store.request_context(tid, options=NO_SEEN, context_budget=3 * TURN)
    assert out["history"]["droppedNodes"] > 2
    assert set(out["attachments"]) == {new}
    assert out["slimming"]["unseenImageBytes"] == 64
    seen = await store.request_context(tid, context_budget=3 * TURN)
    assert seen["slimming"]["seenImages"] == [] and set(seen["attachments"]) == {new}
    all_seen = await store.request_context(tid, context_budget=None)
    assert all_seen["slimming"]["seenImages"] == [old]


async def case_a_bad_budget_is_refused_naming_the_field(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("bad")
    await turns(store, tid, 0, 1)
    for bad in (-1, "10", 1.5, True):
        args = {"threadId": tid, "contextBudget": bad}
        error = await raises(ValidationError, store.query("thread.request", args))
        assert getattr(error, "field", None) == "contextBudget", (bad, error)
    await raises(ValidationError, store.request_context(tid, context_budget=-5))


async def case_the_latest_turn_context_is_kept_when_its_turn_is_left_out(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("turn context")
    await turns(store, tid, 0, 1)
    turn = {"turnId": "t1", "model": "m1", "permissionPolicy": "ask", "activeSkills": []}
    await store.append(tid, "turn_context", turn)
    await turns(store, tid, 1, 8)
    out = await store.request_context(tid, context_budget=2 * TURN)
    assert out["history"]["droppedNodes"] > 3
    assert out["turnContext"] == turn


async def case_page_text_that_will_be_stubbed_counts_as_a_stub(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("pages")
    page = {"type": "page", "url": "https://example.com/", "title": "Ex", "text": "p" * 20_000}
    for i in range(6):
        question = {**text(words(f"q{i}")), "attachedContext": [page]}
        await store.append(tid, "user_message", question)
        await store.append(tid, "assistant_message", answer(words(f"a{i}")))
    # 6 x 20,000 characters of page text, each counted as a stub: all six turns fit.
    out = await store.request_context(tid, context_budget=6 * (TURN + STUB_CHARS))
    assert out["history"]["droppedNodes"] == 0 and out["slimming"]["staleStubs"] == 3


async def case_the_cut_is_a_pure_function_of_the_nodes(ctx: Ctx) -> None:
    del ctx  # pure: no storage

    def node(kind: str, **payload: Any) -> dict[str, Any]:
        return {"type": kind, "payload": payload}

    say = [node("user_message", content=[{"type": "text", "text": "q"}])]
    reply = [node("assistant_message", content=[{"type": "text", "text": "a"}])]
    assert history_start([], 0) == 0
    assert history_start(reply * 5, 0) == 0  # no question to cut at: whole
    assert history_start((say + reply) * 5, None) == 0
    assert history_start((say + reply) * 5, 0) == 8  # only the newest turn
    call = node("tool_call", toolName="t", params=[1])
    assert node_chars(call) == NODE_OVERHEAD + 1 + 3
    result = node("tool_result", contentForLlm=[{"type": "text", "text": "xy"}])
    assert node_chars(result) == NODE_OVERHEAD + 2
    entries = [{"text": "z" * 9_000}, {"text": "short"}]
    asked = node("user_message", content=[], attachedContext=entries)
    assert node_chars(asked) == NODE_OVERHEAD + STUB_CHARS + 5
