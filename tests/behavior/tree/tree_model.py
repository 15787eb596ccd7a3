"""Random conversations for property tests, and the invariants every one must keep.

A conversation is a list of plain-data operations (appends of every kind, edits,
regenerations, branch switches, deletes, and the UI's own selector use), so hypothesis
can generate it in CPython and the same list runs on the memory core and, copied into
the page, on real IndexedDB. :func:`check_tree` then reports every broken invariant:

* the leaf is live whenever the thread has a live node;
* every node the UI shows is reachable from the current view through the branch
  selectors alone (each version a selector offers, switched to, shows up);
* the UI shows exactly the shown nodes of the context's path, and that path is the
  leaf's path without tombstones;
* the context's tool calls and results are paired as providers require;
* the thread's ``shown`` counts (live user messages, shown nodes) are the snapshot's;
* every window of the UI snapshot (``thread.snapshot`` with ``limit``, paged up with
  ``before``) is exactly the full snapshot's entries at those places, in every view.
"""

from __future__ import annotations

from typing import Any

from panelot.idb import PanelotError
from panelot.store import PanelotStore
from panelot.tree.descent import is_shown, is_tombstone

__all__ = ["check_pairing", "check_tree", "run_tree_ops"]


def _text(words: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": words}]}


def _reply(words: str) -> dict[str, Any]:
    return {**_text(words), "model": "m", "connectionId": "c"}


def _payload(kind: str, n: int) -> dict[str, Any]:
    if kind == "user_message":
        return _text(f"u{n}")
    if kind == "assistant_message":
        return _reply(f"a{n}")
    if kind == "tool_call":
        return {"itemId": f"i{n % 4}", "toolName": "t", "params": {}, "level": "L0"}
    if kind == "tool_result":
        return {"itemId": f"i{n % 4}", "ok": True, "contentForLlm": _text("r")["content"]}
    return {"text": f"notice {n}"}


async def _shown_view(store: PanelotStore, tid: str) -> list[dict[str, Any]]:
    return list((await store.snapshot(tid))["nodes"])


async def _apply(store: PanelotStore, tid: str, made: list[str], op: dict[str, Any]) -> None:
    kind, pick = op["op"], op.get("node", 0)
    target = made[pick % len(made)] if made else None
    if kind == "append":
        extra: dict[str, Any] = {}
        if op.get("under") and target is not None:  # an explicit parent, else the leaf
            extra["parentId"] = target
        out = await store.append(tid, op["type"], _payload(op["type"], len(made)), **extra)
        made.append(out["nodeId"])
    elif kind == "turn":  # a turn context and the reply that follows it
        first = await store.append(tid, "turn_context", {
            "turnId": f"t{len(made)}", "model": "m", "permissionPolicy": "ask", "activeSkills": [],
        })  # fmt: skip
        made.append(first["nodeId"])
        made.append((await store.append(tid, "assistant_message", _reply("turn")))["nodeId"])
    elif kind in ("edit", "regenerate", "switch", "delete") and target is not None:
        command = {
            "edit": ("message.edit", {"nodeId": target, "payload": _text("edited")}),
            "regenerate": ("message.regenerate", {"userNodeId": target, "payload": _reply("re")}),
            "switch": ("branch.switch", {"nodeId": target}),
            "delete": ("message.delete", {"nodeId": target}),
        }[kind]
        out = await store.send(
            {
                "type": command[0],
                "clientId": "prop",
                "submissionId": f"s{len(made)}-{op.get('n', 0)}-{kind}",
                "payload": {"threadId": tid, **command[1]},
            }
        )
        if out["status"] == "completed" and "nodeId" in out["response"]:
            made.append(out["response"]["nodeId"])
    elif kind == "select":  # what the panel's ‹ › buttons do
        view = [n for n in await _shown_view(store, tid) if n.get("siblings")]
        if view:
            node = view[op.get("pos", 0) % len(view)]
            choice = node["siblings"][op.get("version", 0) % len(node["siblings"])]
            await store.command("branch.switch", {"threadId": tid, "nodeId": choice})


async def run_tree_ops(store: PanelotStore, ops: list[dict[str, Any]]) -> str:
    """Run a conversation in a new thread of ``store``; return the thread's id."""
    tid = await store.create_thread("prop")
    made: list[str] = []
    for n, op in enumerate(ops):
        try:
            await _apply(store, tid, made, {**op, "n": n})
        except PanelotError as exc:  # refusals are part of the game; crashes are not
            if exc.name not in ("ValidationError", "NotFoundError"):
                raise
    return tid


def check_pairing(messages: list[dict[str, Any]]) -> list[str]:
    """What breaks the provider rule: every call answered once, right after its turn."""
    problems: list[str] = []
    used: set[Any] = set()
    open_calls: set[Any] = set()
    for i, msg in enumerate(messages):
        if msg["role"] == "tool":
            if msg.get("itemId") not in open_calls:
                problems.append(f"message {i}: result {msg.get('itemId')!r} answers no open call")
            open_calls.discard(msg.get("itemId"))
            continue
        if open_calls:
            problems.append(f"message {i}: calls {sorted(open_calls)} left unanswered")
            open_calls = set()
        calls = [c["itemId"] for c in msg.get("toolCalls", [])]
        if "toolCalls" in msg and not calls:
            problems.append(f"message {i}: an empty toolCalls list")
        for item in calls:
            if item in used:
                problems.append(f"message {i}: call {item!r} sent twice")
            used.add(item)
        open_calls = set(calls)
    if open_calls:
        problems.append(f"end: calls {sorted(open_calls)} left unanswered")
    return problems


async def check_windows(store: PanelotStore, tid: str) -> list[str]:
    """How the windows of the current view differ from the full snapshot's slices."""
    problems: list[str] = []
    full = list((await store.snapshot(tid))["nodes"])
    shown = (await store.query("thread.get", {"threadId": tid})).get("shown")
    turns = sum(1 for n in full if n["type"] == "user_message")
    if shown is None or (shown["turns"], shown["messages"]) != (turns, len(full)):
        problems.append(f"shown {shown} is not {turns} turns, {len(full)} messages")
    for limit in sorted({0, 1, 2, 3, len(full) - 1, len(full), len(full) + 1} - {-1}):
        window = await store.query("thread.snapshot", {"threadId": tid, "limit": limit})
        expected = full[max(len(full) - limit, 0) :]
        if window["nodes"] != expected:
            problems.append(f"the window of {limit} is not the full snapshot's last {limit}")
        if window["hasMore"] != (len(expected) < len(full)):
            problems.append(f"the window of {limit} says hasMore={window['hasMore']}")
    for size in (1, 2, 5):  # paging up from the leaf, as the panel scrolls
        pages: list[dict[str, Any]] = []
        args: dict[str, Any] = {"threadId": tid, "limit": size}
        while True:
            window = await store.query("thread.snapshot", args)
            pages[:0] = window["nodes"]
            if not window["hasMore"] or not window["nodes"]:
                break
            args = {**args, "before": window["nodes"][0]["id"]}
        if pages != full:
            problems.append(f"pages of {size} do not add up to the full snapshot")
    return problems


async def _reachable(store: PanelotStore, tid: str, problems: list[str] | None = None) -> set[str]:
    """Every node id shown in any view reached from this one through the selectors.

    With ``problems``, the windows of every view reached are checked into it.
    """
    shown: set[str] = set()
    tried: set[str] = set()
    queue: list[str] = []
    view = await _shown_view(store, tid)
    while True:
        if problems is not None:
            problems += await check_windows(store, tid)
        for node in view:
            shown.add(node["id"])
            for version in node.get("siblings", []):
                if version not in tried:
                    tried.add(version)
                    queue.append(version)
        if not queue:
            return shown
        await store.command("branch.switch", {"threadId": tid, "nodeId": queue.pop()})
        view = await _shown_view(store, tid)


async def check_tree(store: PanelotStore, tid: str) -> list[str]:
    """Every invariant the thread breaks (see the module); empty when it keeps them all."""
    problems: list[str] = []
    records = {
        n["id"]: n for n in await store.db.table("nodes").where("threadId").equals(tid).to_list()
    }
    snap = await store.snapshot(tid)
    leaf = snap["leafId"]
    if any(not is_tombstone(n) for n in records.values()) and (
        leaf is None or is_tombstone(records[leaf])
    ):
        problems.append(f"the leaf {leaf!r} is not live though live nodes exist")
    context = await store.context(tid)
    walk: list[str] = []
    current = leaf
    while current is not None:
        walk.append(current)
        current = records[current]["parentId"]
    walk.reverse()
    if context["path"] != [n for n in walk if not is_tombstone(records[n])]:
        problems.append("the context's path is not the leaf's path without tombstones")
    if [n["id"] for n in snap["nodes"]] != [n for n in context["path"] if is_shown(records[n])]:
        problems.append("the UI does not show the shown nodes of the context's path")
    problems += check_pairing(context["messages"])
    expected = {n for n, r in records.items() if is_shown(r)}
    missing = expected - await _reachable(store, tid, problems)
    if missing:
        problems.append(f"shown nodes the selectors cannot reach: {sorted(missing)}")
    return problems
