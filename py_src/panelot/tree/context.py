"""Derived views of a loaded thread: model context, UI snapshot, Markdown.

All three are pure functions of a :class:`~panelot.tree.loading.LoadedThread`, sharing the
same leaf→root path and its bounds; none of them reads storage or changes it.
"""

from __future__ import annotations

from typing import Any

from panelot.tree.descent import is_shown, versions_in
from panelot.tree.loading import LoadedThread
from panelot.tree.tool_steps import ToolSteps

__all__ = ["session_context", "thread_markdown", "ui_entry", "ui_snapshot", "visible_ids"]


def _visible(loaded: LoadedThread) -> list[dict[str, Any]]:
    """Nodes of the path that are not tombstones, root first."""
    nodes = loaded.index.nodes
    return [n for n in map(nodes.__getitem__, loaded.path) if not n["payload"].get("deleted")]


def _content(payload: dict[str, Any], key: str = "content") -> list[Any]:
    blocks = payload.get(key)
    return list(blocks) if isinstance(blocks, list) else []


def _is_evicted(block: Any) -> bool:
    return isinstance(block, dict) and bool(block.get("evicted"))


def _placeholder(block: dict[str, Any]) -> dict[str, Any]:
    name = block.get("name") or block.get("attachmentId")
    return {
        "type": "text",
        "text": f"[{block.get('type')} evicted: {name}]",
        "evicted": True,
        "attachmentId": block.get("attachmentId"),
    }


def _for_model(payload: dict[str, Any], key: str = "content") -> list[Any]:
    """The payload's blocks under ``key``, as a new list.

    Evicted image/file blocks become a text placeholder naming what was there.
    """
    blocks = payload.get(key)
    if not isinstance(blocks, list):
        return []
    for block in blocks:  # a plain loop: this runs for every message of a long thread
        if isinstance(block, dict) and block.get("evicted"):
            return [_placeholder(b) if _is_evicted(b) else b for b in blocks]
    return blocks[:]


def _for_ui(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with each evicted block tagged ``state: "evicted"`` (the UI's cue)."""
    if not any(_is_evicted(b) for k in ("content", "contentForLlm") for b in _content(payload, k)):
        return payload
    out = dict(payload)
    for key in ("content", "contentForLlm"):
        if key in out:
            out[key] = [
                {**b, "state": "evicted"} if _is_evicted(b) else b for b in _content(out, key)
            ]
    return out


def visible_ids(loaded: LoadedThread) -> list[str]:
    """The ids of the path's nodes that are not tombstones, root first."""
    nodes = loaded.index.nodes
    return [i for i in loaded.path if not nodes[i]["payload"].get("deleted")]


def session_context(
    loaded: LoadedThread, start: int = 0, visible: list[str] | None = None
) -> dict[str, Any]:
    """Provider-neutral messages, the latest turn context, the visible path, pending calls.

    Tombstones are skipped (their children follow the nearest visible ancestor), and
    system notices, turn contexts, approval decisions and interaction responses stay
    out of the messages. A tool call rides on the assistant message before it as
    ``toolCalls``; a tool result is a ``tool`` message with its ``itemId``. Calls and
    results are paired as providers require (:mod:`panelot.tree.tool_steps`): calls still
    waiting at the end of the path are left out of the messages and listed in
    ``pendingCalls``.

    ``start`` > 0 builds the messages from the ``start``-th visible node on (a user
    message, so the cut falls between turns; see :mod:`panelot.request.history`);
    ``path`` and ``turnContext`` still cover the whole path. ``visible``: the path's
    :func:`visible_ids`, when the caller has them.
    """
    # This runs for every node of a long thread: one pass, and only the last turn
    # context is copied.
    messages: list[dict[str, Any]] = []
    steps = ToolSteps(messages)
    path = visible_ids(loaded) if visible is None else list(visible)
    latest_turn: dict[str, Any] | None = None
    nodes = loaded.index.nodes
    for node_id in path[start:] if start else path:
        node = nodes[node_id]
        payload = node["payload"]
        kind = node["type"]
        # System notices, approval decisions, interaction responses: no message.
        if kind == "user_message":
            msg: dict[str, Any] = {"role": "user", "content": _for_model(payload)}
            if payload.get("attachedContext"):
                msg["attachedContext"] = payload["attachedContext"]
            steps.message(msg)
        elif kind == "assistant_message":
            content = _for_model(payload)
            msg = {"role": "assistant", "content": content, "model": payload.get("model")}
            reasoning, state = payload.get("reasoning"), payload.get("providerState")
            if reasoning is not None:
                msg["reasoning"] = reasoning
            if state is not None:
                msg["providerState"] = state
            steps.message(msg)
        elif kind == "tool_call":
            steps.call(
                {
                    "itemId": payload.get("itemId"),
                    "toolName": payload.get("toolName"),
                    "params": payload.get("params"),
                }
            )
        elif kind == "tool_result":
            steps.result(
                {
                    "role": "tool",
                    "itemId": payload.get("itemId"),
                    "ok": payload.get("ok"),
                    "content": _for_model(payload, "contentForLlm"),
                }
            )
        elif kind == "turn_context":
            latest_turn = payload
    pending = steps.pending()
    if latest_turn is None and start:  # the latest turn context may be in the part left out
        for node_id in reversed(path[:start]):
            if nodes[node_id]["type"] == "turn_context":
                latest_turn = nodes[node_id]["payload"]
                break
    turn_context = None
    if latest_turn is not None:
        turn_context = {k: v for k, v in latest_turn.items() if k != "deleted"}
    return {
        "messages": messages,
        "turnContext": turn_context,
        "path": path,
        "pendingCalls": pending,
    }


def ui_snapshot(loaded: LoadedThread) -> dict[str, Any]:
    """The shown nodes of the path, each with its ``n/m`` position among its versions.

    ``siblingCount`` counts the live versions at the node's place (see
    :mod:`panelot.tree.descent`) and ``siblingIndex`` is the node's 1-based position among them
    by seq; when there are several, ``siblings`` lists their ids in that order, the
    targets of ``branch.switch``.
    """
    out = []
    nodes = loaded.index.nodes
    shown_parent: str | None = None
    for node_id in loaded.path:
        node = nodes[node_id]
        if not is_shown(node):
            continue
        out.append(ui_entry(node, [v["id"] for v in versions_in(loaded.index, shown_parent)]))
        shown_parent = node_id
    return {"threadId": loaded.thread.id, "leafId": loaded.thread.leaf_id, "nodes": out}


def ui_entry(node: dict[str, Any], versions: list[str]) -> dict[str, Any]:
    """A shown node as the UI snapshot lists it; ``versions``: the ids at its place, by seq."""
    node_id = node["id"]
    entry = {
        "id": node_id,
        "type": node["type"],
        "payload": _for_ui(node["payload"]),
        "seq": node["seq"],
        "parentId": node["parentId"],
        "siblingIndex": versions.index(node_id) + 1 if node_id in versions else 1,
        "siblingCount": max(len(versions), 1),
    }
    if len(versions) > 1:
        entry["siblings"] = versions
    return entry


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    if block.get("type") == "text":
        return str(block.get("text", ""))
    label = block.get("name") or block.get("attachmentId") or "attachment"
    state = " (evicted)" if block.get("evicted") else ""
    return f"[{block.get('type')}: {label}{state}]"


#: How the Markdown export marks a reply that ended early (the node's ``interrupted``).
_INTERRUPTED = {"stopped": "stopped", "cut_off": "cut off"}


def thread_markdown(loaded: LoadedThread) -> str:
    """Markdown of the visible path: a title, then each message under a role heading."""
    lines = [f"# {loaded.thread.title or 'Untitled'}", ""]
    for node in _visible(loaded):
        kind, payload = node["type"], node["payload"]
        if kind in ("user_message", "assistant_message"):
            role = "User" if kind == "user_message" else "Assistant"
            ended = _INTERRUPTED.get(str(payload.get("interrupted")))
            heading = f"## {role} ({ended})" if ended else f"## {role}"
            body = "\n\n".join(_block_text(b) for b in _content(payload))
            lines += [heading, "", body, ""]
        elif kind == "tool_call":
            lines += [f"**Tool call** `{payload.get('toolName')}` ({payload.get('itemId')})", ""]
        elif kind == "tool_result":
            body = "\n\n".join(_block_text(b) for b in _content(payload, "contentForLlm"))
            status = "ok" if payload.get("ok") else "failed"
            lines += [f"**Tool result** ({status})", "", body, ""]
        elif kind == "system_notice":
            lines += [f"> {payload.get('text', '')}", ""]
    return "\n".join(lines).rstrip() + "\n"
