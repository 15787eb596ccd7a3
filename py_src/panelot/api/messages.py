"""Commands of a thread's messages: append, edit, regenerate, delete, switch branch.

Commands (payload → response)::

    message.append     {threadId, type, payload, parentId?} → {nodeId, seq, leafId}
                       (parent: the leaf when absent, a root when null)
    message.edit       {threadId, nodeId, payload} → {nodeId, seq, leafId}
    message.regenerate {threadId, userNodeId, payload} → {nodeId, seq, leafId}
    message.delete     {threadId, nodeId} → {deleted: [ids], leafId}
    branch.switch      {threadId, nodeId} → {leafId}

A tool result's large ``details`` go to an attachment in the append's transaction
(:mod:`panelot.attachments.tool_details`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from panelot.attachments.tool_details import split_details, store_details
from panelot.bus import Call, Handler
from panelot.codec import Raw
from panelot.idb import Transaction
from panelot.tree.nodes import (
    LEAF,
    TREE_TABLES,
    append_node,
    edit_message,
    regenerate,
    switch_branch,
)
from panelot.tree.records import ThreadNode
from panelot.tree.tombstones import delete_message

__all__ = ["COMMANDS"]


class Appended(TypedDict):
    """The new node; it is the thread's leaf."""

    nodeId: str
    seq: float
    leafId: str


def _appended(node: ThreadNode) -> Appended:
    return {"nodeId": node.id, "seq": node.seq, "leafId": node.id}


@dataclass(frozen=True, slots=True)
class MessageAppend:
    """``message.append``: ``parentId`` absent means the leaf, null a root."""

    thread_id: str
    type: str
    payload: dict[str, Raw]
    parent_id: str | None = LEAF


def _append_tables(p: MessageAppend) -> tuple[str, ...]:
    return ("attachments",) if p.type == "tool_result" else ()


async def _append(tx: Transaction, call: Call[MessageAppend]) -> Appended:
    p = call.payload
    payload, offload = p.payload, None
    if p.type == "tool_result":  # large UI details go to an attachment
        payload, offload = split_details(payload)
    node = await append_node(tx, p.thread_id, p.type, payload, p.parent_id, call.clock)
    if offload is not None:
        await store_details(tx, offload, node, call.clock)
    return _appended(node)


@dataclass(frozen=True, slots=True)
class MessageEdit:
    """``message.edit``: a new version of a user message, under its parent."""

    thread_id: str
    node_id: str
    payload: dict[str, Raw]


async def _edit(tx: Transaction, call: Call[MessageEdit]) -> Appended:
    p = call.payload
    return _appended(await edit_message(tx, p.thread_id, p.node_id, p.payload, call.clock))


@dataclass(frozen=True, slots=True)
class MessageRegenerate:
    """``message.regenerate``: a new version of the reply to a user message."""

    thread_id: str
    user_node_id: str
    payload: dict[str, Raw]


async def _regenerate(tx: Transaction, call: Call[MessageRegenerate]) -> Appended:
    p = call.payload
    return _appended(await regenerate(tx, p.thread_id, p.user_node_id, p.payload, call.clock))


@dataclass(frozen=True, slots=True)
class NodeCommand:
    """A command about one node of a thread."""

    thread_id: str
    node_id: str


class Deleted(TypedDict):
    """What a delete tombstoned, and the thread's leaf after it."""

    deleted: list[str]
    leafId: str | None


async def _delete(tx: Transaction, call: Call[NodeCommand]) -> Deleted:
    out = await delete_message(tx, call.payload.thread_id, call.payload.node_id)
    return {"deleted": out["deleted"], "leafId": out["leafId"]}


class Switched(TypedDict):
    """The thread's leaf after the switch."""

    leafId: str


async def _switch(tx: Transaction, call: Call[NodeCommand]) -> Switched:
    p = call.payload
    return {"leafId": await switch_branch(tx, p.thread_id, p.node_id, call.clock)}


COMMANDS: dict[str, Handler[Any]] = {
    "message.append": Handler(
        payload=MessageAppend, tables=TREE_TABLES, run=_append, extra_tables=_append_tables
    ),
    "message.edit": Handler(payload=MessageEdit, tables=TREE_TABLES, run=_edit),
    "message.regenerate": Handler(payload=MessageRegenerate, tables=TREE_TABLES, run=_regenerate),
    "message.delete": Handler(payload=NodeCommand, tables=TREE_TABLES, run=_delete),
    "branch.switch": Handler(payload=NodeCommand, tables=TREE_TABLES, run=_switch),
}
"""The message commands."""
