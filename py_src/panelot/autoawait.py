"""The console's calls to its async helpers, awaited without writing ``await``.

The debugging console's helpers (``threads()``, ``tree(tid)``...) are coroutines. The
page runs Pyodide without WebAssembly stack switching (see ``web/stack_switching.mjs``),
so no helper can wait for its result synchronously; instead each complete statement is
rewritten before it runs: a call of a helper by name, at the top level of the statement
(not inside a ``def``, ``lambda`` or ``class``), becomes ``await helper(...)``. So
``threads()[0]["id"]`` works as typed. Statements without such a call, and input that
does not parse yet (the console then waits for more lines), run exactly as typed.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

__all__ = ["await_helpers"]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class _Awaiter(ast.NodeTransformer):
    """Wraps calls of the named helpers in ``await``, outside nested scopes."""

    def __init__(self, names: Collection[str]) -> None:
        self.names = names
        self.changed = False

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, _SCOPES):
            return node  # ``await`` would not be allowed there
        if isinstance(node, ast.Await):
            return node  # awaited already: ``await threads()`` stays as typed
        node = self.generic_visit(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in self.names:
                self.changed = True
                return ast.copy_location(ast.Await(value=node), node)
        return node


def await_helpers(source: str, names: Collection[str]) -> str:
    """``source`` with every top-level call of ``names`` awaited (unchanged if none)."""
    try:
        flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        tree = compile(source, "<console>", "exec", flags, dont_inherit=True)
    except (SyntaxError, ValueError):
        return source  # incomplete or invalid: the console reports it as typed
    awaiter = _Awaiter(names)
    tree = awaiter.visit(tree)
    if not awaiter.changed:
        return source
    # The trailing newlines are kept: they tell the console a compound statement is done.
    ending = source[len(source.rstrip("\n")) :]
    return ast.unparse(ast.fix_missing_locations(tree)) + ending
