"""No test waits with an async predicate: Playwright's ``wait_for_function`` does not await it.

``page.wait_for_function`` polls its predicate until it returns a truthy value, and a
promise is truthy: an ``async`` predicate (or one that returns an async function's
promise) passes on its first call, so the wait waits for nothing. A wait on something
only a promise answers polls ``page.evaluate`` from Python instead (docs/testing.md).
This scans every ``wait_for_function`` call of the tests, the benchmarks and the pytest
plugin: its predicate, written out or through a module-level constant or an f-string
naming one, must not be an async function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCANNED = [ROOT / "tests", ROOT / "bench", ROOT / "py_src" / "panelot" / "testing"]


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module's top-level ``NAME = "text"`` assignments (an annotated one too)."""
    found: dict[str, str] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = value.value
    return found


def _is_async(text: str) -> bool:
    return text.lstrip().startswith("async")


def _async_parts(arg: ast.expr, constants: dict[str, str]) -> list[str]:
    """What makes the predicate ``arg`` async: the texts found, empty when none."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value.strip()[:40]] if _is_async(arg.value) else []
    if isinstance(arg, ast.Name):
        text = constants.get(arg.id, "")
        return [arg.id] if _is_async(text) else []
    if isinstance(arg, ast.JoinedStr):
        parts = arg.values
        first = parts[0] if parts else None
        if isinstance(first, ast.Constant) and _is_async(str(first.value)):
            return ["an async f-string"]
        named = [
            p.value.id
            for p in parts
            if isinstance(p, ast.FormattedValue) and isinstance(p.value, ast.Name)
        ]
        return [name for name in named if _is_async(constants.get(name, ""))]
    return []


def async_waits(source: str) -> list[tuple[int, list[str]]]:
    """The ``wait_for_function`` calls of ``source`` with an async predicate: (line, why)."""
    tree = ast.parse(source)
    constants = _constants(tree)
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "wait_for_function"
            and node.args
        ):
            why = _async_parts(node.args[0], constants)
            if why:
                found.append((node.lineno, why))
    return found


@pytest.mark.parametrize(
    "source",
    [
        'page.wait_for_function("async () => false")',
        'P = """async () => 1"""\npage.wait_for_function(P, timeout=5)',
        'F = "async () => 1"\npage.wait_for_function(f"() => ({F})()")',
        'page.wait_for_function(f"async () => {x}")',
    ],
)
def test_an_async_predicate_is_found(source: str) -> None:
    assert async_waits(source)


def test_a_plain_predicate_passes() -> None:
    source = 'F = "() => 1"\npage.wait_for_function(f"() => ({F})() === 1", arg=2)'
    assert async_waits(source) == []


def test_no_wait_has_an_async_predicate() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} ({', '.join(why)})"
        for folder in SCANNED
        for path in sorted(folder.rglob("*.py"))
        for line, why in async_waits(path.read_text())
    ]
    assert offenders == []
