"""The console's REPL session on Pyodide's console, and its help banner.

``web/console.mjs`` creates one :class:`ConsoleSession` and talks to it in strings only
(JSON in, JSON out), so no Python object crosses into JavaScript per line.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pprint
from collections.abc import Callable
from typing import Any

from panelot.console.autoawait import await_helpers
from panelot.console.helpers import HELPERS
from panelot.console.tracebacks import format_error
from panelot.console.views import Rows, Text
from panelot.runtime import store as _store

__all__ = ["HELP", "ConsoleSession", "banner", "namespace"]

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
            """Pyodide's console, with calls of the helpers awaited (panelot.console.autoawait)."""

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
