"""The console's calls to its async helpers, awaited without writing ``await``.

The debugging console's helpers (``threads()``, ``tree(tid)``...) are coroutines. The
page runs Pyodide without WebAssembly stack switching (see ``web/stack_switching.mjs``),
so no helper can wait for its result synchronously; instead each complete statement is
rewritten before it runs: every call of a helper by name, at any depth of the statement
(inside other calls, subscripts, comprehensions, the argument of an ``await``, each of
several statements joined with ``;``), becomes ``(await helper(...))``. Calls inside a
``def``, ``lambda`` or ``class`` are left alone (``await`` is not allowed there), and so is
a call that is already awaited: nothing is awaited twice. So ``threads()[0]["id"]`` and
``tree(threads()[0]["id"])`` work as typed. A generator expression that would await
(beyond its first iterable, which runs outside it) would become an asynchronous
generator that ``sum()`` or ``list()`` cannot iterate, so it becomes a list
comprehension: ``sum(len(tree(t["id"])) for t in threads())`` works too, computed at once.

The rewrite only inserts text (``(await `` before a call, ``)`` after it, ``[``/``]``
inside a generator expression's parentheses), so comments, line numbers, a trailing
``;`` (which silences the result) and everything else typed stay as they were; the
inserted text is checked to parse to exactly the intended tree, and if it ever did not,
the intended tree is unparsed instead. Statements without such a call, and input that
does not parse yet (the console then waits for more lines), run exactly as typed.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

__all__ = ["await_helpers"]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

_OPEN = b"(await "
_CLOSE = b")"


class _Awaiter(ast.NodeTransformer):
    """Wraps calls of the named helpers in ``await``, outside nested scopes."""

    def __init__(self, names: Collection[str]) -> None:
        self.names = names
        self.wrapped: list[ast.Call] = []
        self.listed: list[ast.GeneratorExp] = []

    def _is_helper_call(self, node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in self.names
        )

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, _SCOPES):
            return node  # ``await`` would not be allowed there
        if isinstance(node, ast.Await):
            # ``await threads()`` stays as typed, but helpers in its arguments are
            # awaited: ``await store.query("thread.get", {"threadId": threads()[0]["id"]})``.
            self.generic_visit(node.value if self._is_helper_call(node.value) else node)
            return node
        if isinstance(node, ast.GeneratorExp):
            return self._generator(node)
        node = self.generic_visit(node)
        if isinstance(node, ast.Call) and self._is_helper_call(node):
            self.wrapped.append(node)
            return ast.copy_location(ast.Await(value=node), node)
        return node

    def _expr(self, node: ast.expr) -> ast.expr:
        out = self.visit(node)
        assert isinstance(out, ast.expr)
        return out

    def _generator(self, node: ast.GeneratorExp) -> ast.expr:
        """A generator expression; a list comprehension if it awaits a helper's call."""
        first = node.generators[0]
        first.iter = self._expr(first.iter)  # evaluated outside the generator
        outside = len(self.wrapped)
        node.elt = self._expr(node.elt)
        for i, gen in enumerate(node.generators):
            if i:
                gen.iter = self._expr(gen.iter)
            gen.ifs = [self._expr(cond) for cond in gen.ifs]
        if len(self.wrapped) == outside:
            return node
        self.listed.append(node)
        return ast.copy_location(ast.ListComp(elt=node.elt, generators=node.generators), node)


def _insert(source: str, calls: list[ast.Call], listed: list[ast.GeneratorExp]) -> str:
    """``source`` with the calls awaited and the generator expressions listed.

    ``(await `` and ``)`` go around each call, ``[`` and ``]`` just inside each listed
    generator expression's parentheses (its span includes them). Positions are UTF-8 bytes.
    """
    lines = source.encode().split(b"\n")
    # At one position, the edit applied last comes first: ``)`` then ``]`` then ``(await``.
    edits: list[tuple[int, int, int, bytes]] = []
    for call in calls:
        assert call.end_lineno is not None and call.end_col_offset is not None
        edits.append((call.lineno, call.col_offset, 2, _OPEN))
        edits.append((call.end_lineno, call.end_col_offset, 0, _CLOSE))
    for gen in listed:
        assert gen.end_lineno is not None and gen.end_col_offset is not None
        edits.append((gen.lineno, gen.col_offset + 1, 1, b"["))
        edits.append((gen.end_lineno, gen.end_col_offset - 1, 1, b"]"))
    for lineno, col, _, text in sorted(edits, reverse=True):
        line = lines[lineno - 1]
        lines[lineno - 1] = line[:col] + text + line[col:]
    return b"\n".join(lines).decode()


def await_helpers(source: str, names: Collection[str]) -> str:
    """``source`` with every call of ``names`` outside nested scopes awaited.

    Unchanged if there is none, or if ``source`` does not parse (yet).
    """
    try:
        tree = compile(source, "<console>", "exec", _FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError):
        return source  # incomplete or invalid: the console reports it as typed
    awaiter = _Awaiter(names)
    tree = awaiter.visit(tree)
    if not awaiter.wrapped:
        return source
    intended = ast.dump(tree)
    rewritten = _insert(source, awaiter.wrapped, awaiter.listed)
    try:
        inserted = compile(rewritten, "<console>", "exec", _FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError):
        inserted = None
    if inserted is not None and ast.dump(inserted) == intended:
        return rewritten
    # Not expected; kept as a safety net: the tree's own text, its statements joined with
    # ``;`` (several are simple statements) so that the console still compiles one.
    ending = source[len(source.rstrip("\n")) :]
    assert isinstance(tree, ast.Module)
    ast.fix_missing_locations(tree)
    return "; ".join(ast.unparse(stmt) for stmt in tree.body) + ending
