"""The overflow rescue: the cut request, the recorded cut, and what a request leaves out."""

from __future__ import annotations

import json
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import answer, text
from behavior.request.cases_slimming import put
from panelot.attachments.records import read_bytes
from panelot.errors import AdmissionError
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.request.rescue import (
    HEAD_CHARS,
    RESCUE_ITEM_CHARS,
    TAIL_CHARS,
    Sources,
    apply_cuts,
    find_items,
    messages_chars,
)
from panelot.store import PanelotStore

PASTED = "".join(f"page {i:04d} of the report. " for i in range(1500))  # ~36,000 chars
NOTES = ("log line " * 6_000).encode()  # 54,000 bytes
PAGE = "a long article " * 1_000  # 15,000 chars, inline
STORED = ("stored page text " * 1_500).encode()  # 25,500 bytes


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


async def big_thread(store: PanelotStore) -> dict[str, Any]:
    """A thread whose first turn carries a pasted text, a text file and two page contexts."""
    tid = await store.create_thread("big")
    notes = await put(store, tid, NOTES, kind="file", mime="text/plain")
    stored = await put(store, tid, STORED, kind="page_text", mime="text/plain")
    first = {
        "content": [
            {"type": "text", "text": PASTED},
            {"type": "file", "attachmentId": notes, "name": "notes.txt"},
        ],
        "attachedContext": [
            {"type": "page", "title": "Article", "url": "https://example.org/a", "text": PAGE},
            {"type": "page_text", "attachmentId": stored, "title": "Stored"},
        ],
    }
    n1 = (await store.append(tid, "user_message", first))["nodeId"]
    await store.append(tid, "assistant_message", answer("read it"))
    n3 = (await store.append(tid, "user_message", text("and the summary?")))["nodeId"]
    return {"tid": tid, "notes": notes, "stored": stored, "first": n1, "last": n3}


def first_texts(out: dict[str, Any]) -> list[str]:
    message = out["messages"][0]
    blocks = [b["text"] for b in message["content"] if b.get("type") == "text"]
    return blocks + [e.get("text", "") for e in message.get("attachedContext", [])]


async def refused(store: PanelotStore, tid: str) -> int:
    """The JSON length of the request that was refused (as the panel measures it)."""
    plain = await store.query("thread.request", {"threadId": tid})
    return messages_chars(plain["messages"])


async def case_the_rescue_cuts_large_items_and_says_so(ctx: Ctx) -> None:
    store = await ctx.store()
    t = await big_thread(store)
    size = await refused(store, t["tid"])
    args = {"threadId": t["tid"], "model": "small-model", "rescue": {"refusedChars": size}}
    out = await store.query("thread.request", args)
    rescue = out["rescue"]
    pasted, page = f"{t['first']}#c0", f"{t['first']}#e0"
    keys = [i["key"] for i in rescue["items"]]
    assert keys == [pasted, t["notes"], page, t["stored"]]
    assert all(i["how"] == "cut" for i in rescue["items"])
    by_key = {i["key"]: i for i in rescue["items"]}
    assert by_key[pasted]["originalChars"] == len(PASTED)
    assert by_key[t["notes"]]["originalChars"] == len(NOTES)
    assert by_key[t["stored"]]["originalChars"] == len(STORED)
    assert by_key[t["notes"]]["attachmentId"] == t["notes"] and "attachmentId" not in by_key[page]
    for item in rescue["items"]:
        assert item["keptChars"] < HEAD_CHARS + TAIL_CHARS + 200 < item["originalChars"]
    blocks = first_texts(out)
    left = len(PASTED) - HEAD_CHARS - TAIL_CHARS
    assert blocks[0].startswith(PASTED[:HEAD_CHARS])
    assert f"[… {left:,} characters of this message left out …]" in blocks[0]
    assert blocks[0].endswith(PASTED[-TAIL_CHARS:])
    assert blocks[1].startswith("[file: notes.txt]\n")
    assert "characters of notes.txt left out …]" in blocks[1]
    assert "characters of Article — https://example.org/a left out" in blocks[2]
    assert "characters of Stored left out" in blocks[3]
    entries = out["messages"][0]["attachedContext"]
    assert entries[1]["type"] == "page_text" and entries[1]["cut"] is True
    assert "attachmentId" not in entries[1]  # nothing reads the original for the request
    # The items were enough: the history budget stays; the newest turn is whole.
    assert rescue["contextBudget"] is None and rescue["droppedNodes"] == 0
    assert out["messages"][-1]["content"] == [{"type": "text", "text": "and the summary?"}]
    assert messages_chars(out["messages"]) <= size // 2
    assert rescue["record"] == {"itemKeys": keys, "contextBudget": None}
    # Deterministic: the same stored state gives the same request, byte for byte.
    again = await store.query("thread.request", args)
    assert dumps(again) == dumps(out)


async def case_a_given_summary_is_used_instead_of_a_cut(ctx: Ctx) -> None:
    store = await ctx.store()
    t = await big_thread(store)
    plain = await store.query("thread.request", {"threadId": t["tid"]})
    sources = Sources(user=[t["first"], t["last"]])
    items = find_items(plain["messages"], sources, {t["stored"]: {"size": len(STORED)}})
    summaries = {t["notes"]: "Mostly log lines.", t["stored"]: "A page about storage."}
    plan = apply_cuts(plain["messages"], items, {}, summaries)
    hows = {i["key"]: i["how"] for i in plan.items}
    assert hows[t["notes"]] == "summary" and hows[t["stored"]] == "summary"
    assert hows[f"{t['first']}#c0"] == "cut"
    message = plan.messages[0]
    assert message["content"][1] == {
        "type": "text",
        "text": f"[file: notes.txt]\n[Summary of notes.txt ({len(NOTES):,} characters): "
        "Mostly log lines.]",
        "summary": True,
        "attachmentId": t["notes"],
        "file": True,
    }
    assert message["attachedContext"][1] == {
        "type": "page_text",
        "title": "Stored",
        "text": f"[Summary of Stored ({len(STORED):,} characters): A page about storage.]",
        "summary": True,
    }
    # The input was not changed, and the same inputs give the same plan.
    assert plain["messages"][0]["content"][0]["text"] == PASTED
    assert dumps(apply_cuts(plain["messages"], items, {}, summaries).messages) == dumps(
        plan.messages
    )


async def case_the_smaller_history_budget_only_when_needed(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("long")
    middle = "m" * (RESCUE_ITEM_CHARS - 100)  # under the item threshold: nothing to cut
    for i in range(12):
        await store.append(tid, "user_message", text(f"q{i} {middle}"))
        await store.append(tid, "assistant_message", answer(f"a{i}"))
    size = await refused(store, tid)
    args = {"threadId": tid, "model": "m", "rescue": {"refusedChars": size}}
    out = await store.query("thread.request", args)
    rescue = out["rescue"]
    assert rescue["items"] == []
    assert rescue["contextBudget"] == size // 4
    assert out["history"]["contextBudget"] == size // 4
    assert rescue["droppedNodes"] == out["history"]["droppedNodes"] > 0
    assert rescue["record"] == {"itemKeys": [], "contextBudget": size // 4}
    assert messages_chars(out["messages"]) <= size // 2
    assert out["messages"][-1]["content"][0]["text"] == "a11"
    # A big refused size: the cut is enough or nothing was over; no smaller budget.
    roomy = await store.query("thread.request", {**args, "rescue": {"refusedChars": 10 * size}})
    assert roomy["rescue"]["contextBudget"] is None and roomy["rescue"]["droppedNodes"] == 0


async def case_a_recorded_cut_applies_to_the_same_model_only(ctx: Ctx) -> None:
    store = await ctx.store()
    t = await big_thread(store)
    tid = t["tid"]
    size = await refused(store, tid)
    rescue = {"refusedChars": size}
    cut = await store.query("thread.request", {"threadId": tid, "model": "m", "rescue": rescue})
    done = await store.command(
        "thread.rescued", {"threadId": tid, "model": "m", "record": cut["rescue"]["record"]}
    )
    recorded = done["requestCut"]
    assert recorded["model"] == "m" and recorded["itemKeys"] == cut["rescue"]["record"]["itemKeys"]
    assert "contextBudget" not in recorded and isinstance(recorded["at"], int)
    thread = await store.query("thread.get", {"threadId": tid})
    assert thread["requestCut"] == recorded
    # The next turn with the same model starts from the cut: not refused first (an update
    # of the thread record keeps the field).
    await store.command("thread.update", {"threadId": tid, "patch": {"title": "renamed"}})
    await store.append(tid, "assistant_message", answer("here"))
    await store.append(tid, "user_message", text("thanks"))
    same = await store.query("thread.request", {"threadId": tid, "model": "m"})
    assert "rescue" not in same
    assert [i["key"] for i in same["cut"]["items"]] == recorded["itemKeys"]
    assert first_texts(same) == first_texts(cut)
    # Another model, or none, sends the items whole.
    other = await store.query("thread.request", {"threadId": tid, "model": "big-model"})
    plain = await store.query("thread.request", {"threadId": tid})
    assert "cut" not in other and dumps(other) == dumps(plain)
    assert first_texts(plain)[0] == PASTED
    # A second rescue for the same model merges its keys and keeps the smaller budget.
    again = await store.command(
        "thread.rescued",
        {"threadId": tid, "model": "m", "record": {"itemKeys": ["x#c0"], "contextBudget": 900}},
    )
    assert again["requestCut"]["itemKeys"] == [*recorded["itemKeys"], "x#c0"]
    assert again["requestCut"]["contextBudget"] == 900
    smaller = await store.query("thread.request", {"threadId": tid, "model": "m"})
    assert smaller["history"]["contextBudget"] == 900
    assert smaller["cut"]["contextBudget"] == 900
    # Another model's rescue replaces it.
    replaced = await store.command(
        "thread.rescued", {"threadId": tid, "model": "k", "record": {"itemKeys": []}}
    )
    assert replaced["requestCut"]["model"] == "k"
    back = await store.query("thread.request", {"threadId": tid, "model": "m"})
    assert "cut" not in back


async def case_the_rescue_leaves_the_attachments_unchanged(ctx: Ctx) -> None:
    store = await ctx.store()
    t = await big_thread(store)
    ids = [t["notes"], t["stored"]]
    before = [await read_bytes(store.db, i) for i in ids]
    records = [await store.query("attachment.get", {"attachmentId": i}) for i in ids]
    size = await refused(store, t["tid"])
    args = {"threadId": t["tid"], "model": "m", "rescue": {"refusedChars": size}}
    out = await store.query("thread.request", args)
    await store.command(
        "thread.rescued",
        {"threadId": t["tid"], "model": "m", "record": out["rescue"]["record"]},
    )
    await store.query("thread.request", {"threadId": t["tid"], "model": "m"})
    after = [await read_bytes(store.db, i) for i in ids]
    assert [b for _, b in after] == [NOTES, STORED]
    assert [dumps(m) for m, _ in after] == [dumps(m) for m, _ in before]
    again = [await store.query("attachment.get", {"attachmentId": i}) for i in ids]
    assert [dumps(r) for r in again] == [dumps(r) for r in records]
    # The stored message is unchanged too.
    context = await store.context(t["tid"])
    assert context["messages"][0]["content"][0]["text"] == PASTED


async def case_a_thread_being_deleted_refuses_the_recorded_cut(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    await store.db.table("threads").update(tid, {"deleting": True})
    payload = {"threadId": tid, "model": "m", "record": {"itemKeys": ["a"]}}
    err = await raises(AdmissionError, store.command("thread.rescued", payload))
    assert err.field == "payload.threadId"  # type: ignore[attr-defined]
    raw = await store.db.table("threads").get(tid)
    assert "requestCut" not in raw


async def case_bad_rescue_input_names_the_field(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    await store.append(tid, "user_message", text("hi"))
    for bad in (-1, "100", 1.5, True, None):
        args = {"threadId": tid, "rescue": {"refusedChars": bad}}
        err = await raises(ValidationError, store.query("thread.request", args))
        assert "refusedChars" in str(err.field), (bad, err)  # type: ignore[attr-defined]
    err = await raises(
        ValidationError, store.query("thread.request", {"threadId": tid, "rescue": {}})
    )
    assert "refusedChars" in str(err.field)  # type: ignore[attr-defined]
    err = await raises(
        ValidationError, store.query("thread.request", {"threadId": tid, "model": ""})
    )
    assert err.field == "model"  # type: ignore[attr-defined]
    missing = {"threadId": "nope", "model": "m", "rescue": {"refusedChars": 10}}
    await raises(NotFoundError, store.query("thread.request", missing))
    unknown = {"threadId": "nope", "model": "m", "record": {"itemKeys": []}}
    err = await raises(NotFoundError, store.command("thread.rescued", unknown))
    assert err.field == "payload.threadId"  # type: ignore[attr-defined]
    for record, field in (
        ({}, "itemKeys"),
        ({"itemKeys": "a"}, "itemKeys"),
        ({"itemKeys": [1]}, "itemKeys"),
        ({"itemKeys": [], "contextBudget": -1}, "contextBudget"),
        ({"itemKeys": [], "contextBudget": "5"}, "contextBudget"),
        ({"itemKeys": [], "extra": 1}, "extra"),
        ("keys", "record"),
    ):
        payload = {"threadId": tid, "model": "m", "record": record}
        err = await raises(ValidationError, store.command("thread.rescued", payload))
        assert field in str(err.field), (record, err)  # type: ignore[attr-defined]
    err = await raises(
        ValidationError,
        store.command("thread.rescued", {"threadId": tid, "model": "", "record": {"itemKeys": []}}),
    )
    assert "model" in str(err.field)  # type: ignore[attr-defined]
    # One rule for a model's name wherever it is given: a blank name, a lone surrogate or
    # 201 characters are refused by the rescue's commands and queries as by the summaries'.
    for model in ("   ", "m\ud800", "m" * 201):
        cut = {"threadId": tid, "model": model, "record": {"itemKeys": []}}
        err = await raises(ValidationError, store.command("thread.rescued", cut))
        assert err.field == "payload.model", (model, err)  # type: ignore[attr-defined]
        for name in ("thread.request", "thread.sent", "summary.candidates"):
            err = await raises(
                ValidationError, store.query(name, {"threadId": tid, "model": model})
            )
            assert err.field == "model", (name, model, err)  # type: ignore[attr-defined]
    assert "requestCut" not in await store.db.table("threads").get(tid)


async def case_thread_sent_says_what_the_next_request_leaves_out(ctx: Ctx) -> None:
    store = await ctx.store()
    t = await big_thread(store)
    tid = t["tid"]
    await store.append(tid, "assistant_message", answer("a"))
    later = {**text("q"), "attachedContext": [{"type": "selection", "text": "short"}]}
    await store.append(tid, "user_message", later)
    for i in range(3):  # the first turn's items become stale stubs
        await store.append(tid, "assistant_message", answer(f"a{i}"))
        await store.append(tid, "user_message", text(f"q{i}"))
    sent = await store.query("thread.sent", {"threadId": tid})
    assert sent["droppedNodes"] == 0 and sent["firstNodeId"] == t["first"]
    assert sent["contextBudget"] == 128_000
    assert sent["items"] == [
        {"key": t["notes"], "nodeId": t["first"], "how": "stub", "attachmentId": t["notes"]},
        {"key": f"{t['first']}#e0", "nodeId": t["first"], "how": "stub"},
        {"key": t["stored"], "nodeId": t["first"], "how": "stub", "attachmentId": t["stored"]},
    ]
    # A small budget leaves the oldest turns out.
    small = await store.query("thread.sent", {"threadId": tid, "contextBudget": 100})
    assert small["droppedNodes"] > 0 and small["items"] == []
    request = await store.query("thread.request", {"threadId": tid, "contextBudget": 100})
    assert small["firstNodeId"] == request["history"]["firstNodeId"]
    assert small["droppedNodes"] == request["history"]["droppedNodes"]
    # A recorded cut for the model: the pasted text is listed as cut, for that model only.
    record = {"itemKeys": [f"{t['first']}#c0"]}
    await store.command("thread.rescued", {"threadId": tid, "model": "m", "record": record})
    cut = await store.query("thread.sent", {"threadId": tid, "model": "m"})
    assert cut["items"][0] == {"key": f"{t['first']}#c0", "nodeId": t["first"], "how": "cut"}
    assert cut["items"][1:] == sent["items"]
    other = await store.query("thread.sent", {"threadId": tid, "model": "x"})
    assert other == sent
    await raises(NotFoundError, store.query("thread.sent", {"threadId": "nope"}))


async def case_a_large_tool_result_is_cut_by_its_node(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("tools")
    await store.append(tid, "user_message", text("fetch the page"))
    await store.append(tid, "assistant_message", answer("fetching"))
    call = {"itemId": "i1", "toolName": "fetch", "params": {"url": "x"}, "level": "L0"}
    await store.append(tid, "tool_call", call)
    body = "fetched text " * 2_000  # 26,000 chars
    result = {"itemId": "i1", "ok": True, "contentForLlm": [{"type": "text", "text": body}]}
    node = (await store.append(tid, "tool_result", result))["nodeId"]
    size = await refused(store, tid)
    args = {"threadId": tid, "model": "m", "rescue": {"refusedChars": size}}
    out = await store.query("thread.request", args)
    (item,) = out["rescue"]["items"]
    assert item["key"] == f"{node}#c0" and item["originalChars"] == len(body)
    (tool,) = [m for m in out["messages"] if m["role"] == "tool"]
    assert tool["itemId"] == "i1" and tool["content"][0]["cut"] is True
    assert "characters of this message left out" in tool["content"][0]["text"]
    await store.command(
        "thread.rescued", {"threadId": tid, "model": "m", "record": out["rescue"]["record"]}
    )
    sent = await store.query("thread.sent", {"threadId": tid, "model": "m"})
    assert sent["items"] == [{"key": f"{node}#c0", "nodeId": node, "how": "cut"}]


async def case_an_import_does_not_take_the_recorded_cut(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    await store.append(tid, "user_message", text("hi"))
    record = {"itemKeys": ["a"], "contextBudget": 500}
    await store.command("thread.rescued", {"threadId": tid, "model": "m", "record": record})
    data = (await store.query("thread.export", {"threadId": tid}))["data"]
    assert data["thread"]["requestCut"]["itemKeys"] == ["a"]
    copy = (await store.command("thread.import", {"data": data}))["threadId"]
    assert "requestCut" not in await store.query("thread.get", {"threadId": copy})


async def case_a_paste_in_the_newest_message_is_cut(ctx: Ctx) -> None:
    # The first example: a user pastes a long document and asks about it.
    store = await ctx.store()
    tid = await store.create_thread("paste")
    node = (await store.append(tid, "user_message", text(PASTED + "\nWhat does it say?")))["nodeId"]
    size = await refused(store, tid)
    args = {"threadId": tid, "model": "m", "rescue": {"refusedChars": size}}
    out = await store.query("thread.request", args)
    assert [i["key"] for i in out["rescue"]["items"]] == [f"{node}#c0"]
    sent = out["messages"][0]["content"][0]["text"]
    assert sent.startswith(PASTED[:HEAD_CHARS]) and sent.endswith("What does it say?")
    assert out["rescue"]["contextBudget"] is None and messages_chars(out["messages"]) < size // 2


async def case_the_rescue_uses_stored_summaries_and_sent_lists_them(ctx: Ctx) -> None:
    store = await ctx.store()
    t = await big_thread(store)
    for aid, summary in ((t["notes"], "Mostly log lines."), (t["stored"], "About storage.")):
        claimed = await store.command("summary.claim", {"attachmentId": aid, "model": "m"})
        assert claimed["claimed"] is True
        await store.command("summary.store", {"attachmentId": aid, "model": "m", "text": summary})
    size = await refused(store, t["tid"])
    args = {"threadId": t["tid"], "model": "m", "rescue": {"refusedChars": size}}
    out = await store.query("thread.request", args)
    hows = {i["key"]: i["how"] for i in out["rescue"]["items"]}
    assert hows == {
        f"{t['first']}#c0": "cut",
        t["notes"]: "summary",
        f"{t['first']}#e0": "cut",
        t["stored"]: "summary",
    }
    texts = first_texts(out)
    assert any("Mostly log lines." in x and "[Summary of notes.txt" in x for x in texts)
    assert any("About storage." in x for x in texts)
    # Recorded, the next request for the model starts from the cut, summaries included,
    # and thread.sent says which items go as a summary and which are cut.
    record = out["rescue"]["record"]
    await store.command("thread.rescued", {"threadId": t["tid"], "model": "m", "record": record})
    after = await store.query("thread.request", {"threadId": t["tid"], "model": "m"})
    assert dumps(after["messages"]) == dumps(out["messages"])
    sent = await store.query("thread.sent", {"threadId": t["tid"], "model": "m"})
    assert {i["key"]: i["how"] for i in sent["items"]} == hows
