"""The docs are true to the code.

Every command and query is documented, every public name of the facade has a
docstring, and every module and file the front door names exists.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

import panelot
from panelot.api.registry import COMMANDS, QUERIES

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
API = (ROOT / "docs" / "api.md").read_text()
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_is_documented(name: str) -> None:
    assert f"`{name}`" in API, f"docs/api.md does not document the command {name!r}"


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_query_is_documented(name: str) -> None:
    assert f"`{name}`" in API, f"docs/api.md does not document the query {name!r}"


@pytest.mark.parametrize("name", sorted(panelot.__all__))
def test_every_public_name_of_the_facade_has_a_docstring(name: str) -> None:
    value = getattr(panelot, name)
    if name == "__version__":
        return
    doc = getattr(value, "__doc__", None)
    assert doc and doc.strip(), f"panelot.{name} has no docstring"


def _resolves(dotted: str) -> bool:
    """Whether ``panelot.a.b[.name]`` is a module, or a name in one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            spec = None
        if spec is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        try:
            value: object = importlib.import_module(module)
        except ImportError:  # a module that runs only under Pyodide
            return True
        for name in rest:
            if not hasattr(value, name):
                return False
            value = getattr(value, name)
        return True
    return False


def _named(text: str) -> list[str]:
    return sorted(set(re.findall(r"\bpanelot(?:\.[A-Za-z_][A-Za-z_0-9]*)+", text)))


@pytest.mark.parametrize("doc", ["README.md", "docs/architecture.md"])
def test_the_modules_the_docs_name_exist(doc: str) -> None:
    text = (ROOT / doc).read_text()
    missing = [d for d in _named(text) if not _resolves(d.rstrip("."))]
    assert not missing, f"{doc} names what does not exist: {missing}"


@pytest.mark.parametrize("doc", ["README.md", "docs/architecture.md"])
def test_the_files_the_docs_name_exist(doc: str) -> None:
    text = (ROOT / doc).read_text()
    paths = set(re.findall(r"\b((?:py_src|web|extension|tests|tools|bench)/[\w./-]+\.\w+)", text))
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"{doc} names files that do not exist: {missing}"


def test_the_readme_is_a_front_door() -> None:
    assert len(README.splitlines()) <= 320, "README.md is the front door: reference goes to docs/"
    for page in re.findall(r"\]\((docs/[\w./-]+)\)", README):
        assert (ROOT / page).exists(), f"README.md links to a missing page: {page}"
