"""The console's preloaded helpers: read-only views of the open store, by thread id prefix.

Each helper is a coroutine over the store of :mod:`panelot.runtime` (the database the side
panel uses); :data:`HELPERS` names them, and the session awaits every call of one
(:mod:`panelot.console.autoawait`). They only read: writes go through ``store.command``.
Secrets are never shown: :func:`settings` masks any field whose name looks like a secret,
and credentials are listed by reference only.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from panelot.console.views import Rows, Text, format_time, mask_secrets, render_tree
from panelot.idb import MAX_KEY, MIN_KEY
from panelot.runtime import store as _store
from panelot.store import PanelotStore

__all__ = [
    "HELPERS",
    "check",
    "context",
    "describe",
    "export",
    "receipts",
    "settings",
    "threads",
    "tree",
]


async def _thread_id(s: PanelotStore, thread_id: str) -> str:
    """Resolve a full id or a unique prefix of one."""
    ids = [str(t["id"]) for t in await s.query("thread.list", {"archived": None})]
    if thread_id in ids:
        return thread_id
    matches = [i for i in ids if i.startswith(thread_id)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise LookupError(f"no thread {thread_id!r}: no thread id is or starts with it")
    raise LookupError(f"{thread_id!r} is ambiguous: {matches}")


async def threads(archived: bool | None = False) -> Rows:
    """The thread list (``archived=None``: all), pinned first, then newest activity.

    ``turns``: those the current branch shows (``shown``; empty while not counted);
    ``written``: every reply ever written (``stats.turns``).
    """
    rows = await _store().query("thread.list", {"archived": archived})
    for row in rows:
        row["updated"] = format_time(row.get("updatedAt"))
        row["turns"] = (row.get("shown") or {}).get("turns")
        row["written"] = (row.get("stats") or {}).get("turns")
    columns = ["id", "title", "updated", "pinned", "archived", "tags", "turns", "written"]
    return Rows(rows, columns)


async def tree(thread_id: str) -> Text:
    """ASCII tree of every node of a thread, tombstones included."""
    s = _store()
    tid = await _thread_id(s, thread_id)
    meta = await s.query("thread.get", {"threadId": tid})
    nodes = await (
        s.db.table("nodes")
        .where("[threadId+seq]")
        .between([tid, MIN_KEY], [tid, MAX_KEY])
        .to_list()
    )
    head = f"thread {tid} {json.dumps(meta.get('title') or '', ensure_ascii=False)}: "
    head += f"{len(nodes)} nodes, leaf {meta.get('leafId')}"
    return Text(head + "\n" + render_tree(nodes, meta.get("leafId")))


async def context(thread_id: str, leaf_id: str | None = None) -> Any:
    """The provider-neutral session context (``thread.context``)."""
    s = _store()
    return await s.context(await _thread_id(s, thread_id), leaf_id)


async def check(thread_id: str) -> Any:
    """The integrity report of a thread (``thread.check``)."""
    s = _store()
    return await s.query("thread.check", {"threadId": await _thread_id(s, thread_id)})


async def export(thread_id: str, format: str = "json") -> Any:
    """``thread.export`` as JSON data, or Markdown text."""
    s = _store()
    out = await s.query(
        "thread.export", {"threadId": await _thread_id(s, thread_id), "format": format}
    )
    return Text(out["markdown"]) if format == "markdown" else out["data"]


async def receipts(client_id: str | None = None, limit: int = 20) -> Rows:
    """Newest command receipts (of one client, if given)."""
    rows = await _store().query("receipts.list", {"clientId": client_id, "limit": limit})
    for row in rows:
        row["created"] = format_time(row.get("createdAt"))
    return Rows(rows, ["clientId", "submissionId", "commandType", "status", "created"])


async def describe() -> Any:
    """The database's real structure (``db.describe``)."""
    return await _store().query("db.describe")


async def settings() -> Any:
    """Every setting group and the credential references; secrets masked."""
    s = _store()
    out: dict[str, Any] = mask_secrets(await s.query("settings.all"))
    try:
        out["credentials"] = await s.query("credential.list")
    except Exception as exc:  # no credential store in this context
        out["credentials"] = f"unavailable: {exc}"
    return out


HELPERS: dict[str, Callable[..., Awaitable[Any]]] = {
    fn.__name__: fn for fn in (threads, tree, context, check, export, receipts, describe, settings)
}
"""The preloaded helpers, by name; the console awaits each call of one."""
