"""The debugging console: preloaded helpers and a REPL session on Pyodide's console.

``web/console.mjs`` creates one :class:`ConsoleSession` and talks to it in strings only
(JSON in, JSON out), so no Python object crosses into JavaScript per line. The
session wraps ``pyodide.console.PyodideConsole`` (multi-line input, top-level
``await``, ``rlcompleter`` completion) and adds four conveniences:
calls of the helpers are awaited where they are written (:mod:`panelot.autoawait`: so
``tree(threads()[0]["id"])`` works as typed), a result that is still awaitable is awaited,
tracebacks show only the typed code and the error (:mod:`panelot.usertraceback`), and
results print with :func:`pprint.pformat`, or verbatim when they are :class:`Text`.

Helpers (see :data:`HELP`) read through the open store of :mod:`panelot.runtime`, the
same database the side panel uses. They only read; writes go through ``store.command``
like every other client. Secrets are never shown: :func:`settings` masks any field
whose name looks like a secret, and credentials are listed by reference only.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pprint
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from panelot.autoawait import await_helpers
from panelot.idb import MAX_KEY, MIN_KEY
from panelot.runtime import store as _store
from panelot.store import PanelotStore
from panelot.usertraceback import format_error

__all__ = [
    "HELP",
    "HELPERS",
    "ConsoleSession",
    "banner",
    "Rows",
    "Text",
    "check",
    "context",
    "describe",
    "export",
    "mask_secrets",
    "namespace",
    "receipts",
    "render_tree",
    "settings",
    "threads",
    "tree",
]

HELP = """Panelot debugging console: Python {version} on Pyodide, database {db}.
Preloaded helpers (each returns its result directly):
  store                 the open PanelotStore (await store.query(name, args), store.command(...))
  threads(archived=False)  the thread list, pinned first       threads()[0]["id"]
  tree(thread_id)       ASCII tree: branches, tombstones (x), seq, * = visible path, leaf
  context(thread_id)    the provider-neutral session context of the leaf
  check(thread_id)      integrity report (repairs nothing)
  export(thread_id, format="json"|"markdown")
  receipts(client_id=None, limit=20)   newest command receipts
  describe()            the real IndexedDB structure: stores, keys, indexes
  settings()            setting groups and credential references, secrets masked
A thread id may be given as any unique prefix. Up/Down: history, Tab: completion,
Enter runs a complete statement (Shift+Enter: newline), Ctrl+L clears."""


class Text(str):
    """A string the console prints verbatim (no quotes, real newlines)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


class Rows(list[dict[str, Any]]):
    """A list of records that prints as an aligned table of ``columns``."""

    def __init__(self, rows: list[dict[str, Any]], columns: list[str]) -> None:
        super().__init__(rows)
        self.columns = columns

    def __repr__(self) -> str:
        if not self:
            return "(none)"
        cells = [[_cell(row.get(col)) for col in self.columns] for row in self]
        widths = [
            max(len(col), *(len(line[i]) for line in cells)) for i, col in enumerate(self.columns)
        ]
        lines = ["  ".join(col.ljust(w) for col, w in zip(self.columns, widths, strict=True))]
        lines.append("  ".join("-" * w for w in widths))
        lines += [
            "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in cells
        ]
        return "\n".join(lines)


def _cell(value: Any, limit: int = 40) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _time(ms: Any) -> str:
    if not isinstance(ms, int | float):
        return ""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")


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
        row["updated"] = _time(row.get("updatedAt"))
        row["turns"] = (row.get("shown") or {}).get("turns")
        row["written"] = (row.get("stats") or {}).get("turns")
    columns = ["id", "title", "updated", "pinned", "archived", "tags", "turns", "written"]
    return Rows(rows, columns)


def _summary(node: dict[str, Any], limit: int = 48) -> str:
    payload = node.get("payload") or {}
    kind = node.get("type")
    if kind == "tool_call":
        text = f"{payload.get('toolName')}({_cell(payload.get('params'), limit)})"
    elif kind == "tool_result":
        text = f"ok={payload.get('ok')} " + _blocks_text(payload.get("contentForLlm"))
    elif kind == "system_notice":
        text = str(payload.get("text", ""))
    else:
        text = _blocks_text(payload.get("content"))
    text = " ".join(text.split())
    return json.dumps(text if len(text) <= limit else text[: limit - 1] + "…", ensure_ascii=False)


def _blocks_text(blocks: Any) -> str:
    if not isinstance(blocks, list):
        return ""
    parts = []
    for block in blocks:
        if isinstance(block, dict):
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(
                    f"[{block.get('type')}: {block.get('name') or block.get('attachmentId')}]"
                )
    return " ".join(parts)


def render_tree(nodes: list[dict[str, Any]], leaf_id: str | None) -> str:
    """ASCII tree of a thread's nodes: seq, type, text, tombstones (x), path (*) and leaf."""
    by_id = {n["id"]: n for n in nodes}
    kids: dict[str | None, list[dict[str, Any]]] = {}
    for node in nodes:
        parent = node.get("parentId")
        kids.setdefault(parent if parent in by_id else None, []).append(node)
    for group in kids.values():
        group.sort(key=lambda n: n["seq"])
    path: set[str] = set()
    cursor = leaf_id
    while cursor is not None and cursor in by_id and cursor not in path:
        path.add(cursor)
        cursor = by_id[cursor].get("parentId")
    lines: list[str] = []

    def walk(node: dict[str, Any], prefix: str, last: bool, top: bool) -> None:
        mark = "*" if node["id"] in path else " "
        dead = " x deleted" if (node.get("payload") or {}).get("deleted") else ""
        leaf = "   <- leaf" if node["id"] == leaf_id else ""
        branch = "" if top else ("└─ " if last else "├─ ")
        lines.append(
            f"{mark} {prefix}{branch}#{node['seq']} {node['type']} {_summary(node)}"
            f"  [{node['id'][:8]}]{dead}{leaf}"
        )
        children = kids.get(node["id"], [])
        inner = prefix if top else prefix + ("   " if last else "│  ")
        for i, child in enumerate(children):
            walk(child, inner, i == len(children) - 1, False)

    roots = kids.get(None, [])
    for root in roots:
        walk(root, "", True, True)
    return "\n".join(lines) if lines else "(empty thread)"


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
        row["created"] = _time(row.get("createdAt"))
    return Rows(rows, ["clientId", "submissionId", "commandType", "status", "created"])


async def describe() -> Any:
    """The database's real structure (``db.describe``)."""
    return await _store().query("db.describe")


_SECRET_NAME = re.compile(r"(secret|api_?key|password|token|authorization)$", re.I)


def mask_secrets(value: Any) -> Any:
    """A copy of ``value`` with every string under a secret-looking key masked."""
    if isinstance(value, dict):
        return {
            k: (
                "••••"
                if isinstance(v, str) and v and _SECRET_NAME.search(str(k))
                else mask_secrets(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [mask_secrets(v) for v in value]
    return value


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


def namespace() -> dict[str, Any]:
    """The console's globals: the store and the helpers."""
    return {
        "__name__": "__console__",
        "__doc__": None,
        "store": _store(),
        **{fn.__name__: fn for fn in HELPERS.values()},
        "help_panelot": lambda: Text(banner()),
    }


def banner() -> str:
    """The help banner."""
    import sys

    version = ".".join(map(str, sys.version_info[:3]))
    return HELP.format(version=version, db=_store().db.name)


def _format(value: Any) -> str:
    if isinstance(value, Text):
        return str(value)
    if isinstance(value, Rows):
        return repr(value)
    if isinstance(value, dict | list | tuple):
        return pprint.pformat(value, width=100, sort_dicts=False)
    return repr(value)


class ConsoleSession:
    """One REPL: lines in, JSON out. ``out``/``err`` receive printed text as it comes."""

    def __init__(self, out: Callable[[str], Any], err: Callable[[str], Any]) -> None:
        module = importlib.import_module("pyodide.console")
        self.globals = namespace()
        helpers = frozenset(HELPERS)

        class _Console(module.PyodideConsole):  # type: ignore[name-defined,misc]
            """Pyodide's console, with calls of the helpers awaited (see panelot.autoawait)."""

            def runsource(self, source: str, filename: str = "<console>") -> Any:
                return super().runsource(await_helpers(source, helpers), filename)

            def formattraceback(self, e: BaseException) -> str:
                return format_error(e)  # ConsoleSession.result formats with the typed lines

        self.console = _Console(self.globals, stdout_callback=out, stderr_callback=err)
        self._futures: dict[int, tuple[Any, str]] = {}
        self._next = 0

    def banner(self) -> str:
        """The help banner."""
        return banner()

    def push(self, line: str) -> str:
        """Push one line; JSON ``{status, id?, error?}`` (status: complete, incomplete, ...)."""
        typed = "\n".join([*self.console.buffer, line])
        fut = self.console.push(line)
        status = str(fut.syntax_check)
        if status == "syntax-error":
            return json.dumps({"status": status, "error": fut.formatted_error or ""})
        if status == "incomplete":
            return json.dumps({"status": status})
        self._next += 1
        self._futures[self._next] = (fut, typed)
        return json.dumps({"status": status, "id": self._next})

    async def result(self, ident: int) -> str:
        """Wait for a pushed statement; JSON ``{value: repr | null}`` or ``{error: traceback}``."""
        fut, typed = self._futures.pop(ident)
        try:
            value = await fut
            if inspect.isawaitable(value):
                value = await value
        except BaseException as exc:  # report everything, KeyboardInterrupt included
            return json.dumps({"error": format_error(exc, typed)})
        if value is None:
            return json.dumps({"value": None})
        self.globals["_"] = value
        return json.dumps({"value": _format(value)})

    def complete(self, source: str) -> str:
        """Tab completion: JSON ``[completions, start]``."""
        completions, start = self.console.complete(source)
        return json.dumps([list(completions), start])

    def reset_buffer(self) -> None:
        """Drop a half-typed multi-line statement."""
        self.console.buffer.clear()
