"""The debugging console: preloaded helpers and a REPL session on Pyodide's console.

``web/console.mjs`` imports this package and creates one :class:`ConsoleSession`
(:mod:`~panelot.console.session`), which it talks to in strings only (JSON in, JSON out).
The session wraps ``pyodide.console.PyodideConsole`` (multi-line input, top-level
``await``, ``rlcompleter`` completion) and adds four conveniences: calls of the helpers
are awaited where they are written (:mod:`~panelot.console.autoawait`: so
``tree(threads()[0]["id"])`` works as typed), a result that is still awaitable is awaited,
tracebacks show only the typed code and the error (:mod:`~panelot.console.tracebacks`),
and results print with :func:`pprint.pformat`, or verbatim when they are :class:`Text`.

Helpers (:mod:`~panelot.console.helpers`, listed in :data:`HELP`) read through the open
store of :mod:`panelot.runtime`, the same database the side panel uses. They only read;
writes go through ``store.command`` like every other client. Secrets are never shown:
:func:`settings` masks any field whose name looks like a secret, and credentials are
listed by reference only. :mod:`~panelot.console.views` renders their results (tables,
thread trees, masked secrets).
"""

from __future__ import annotations

from panelot.console.helpers import (
    HELPERS,
    check,
    context,
    describe,
    export,
    receipts,
    settings,
    threads,
    tree,
)
from panelot.console.session import HELP, ConsoleSession, banner, namespace
from panelot.console.views import Rows, Text, mask_secrets, render_tree

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
