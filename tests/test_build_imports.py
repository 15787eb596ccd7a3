"""Every import of extension/ and web/ resolves in the source tree and in dist/.

dist/extension holds extension/ and web/ side by side at its root, so the panel imports
``./runtime.mjs``; extension/ links each web/ file its own code imports
(``extension/runtime.mjs -> ../web/runtime.mjs``), so the same path resolves in the
source tree, and a reader follows a click in the panel into the runtime without knowing
the build's rules. The folders the build makes (build.py ``BUILT_DIRS``: Pyodide, the
wheels, the snapshot, the vendored libraries) are the only names that are not source
files; they must resolve in dist/.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from browser_harness import DIST_EXTENSION, DIST_WEB, require_dist
from test_fresh_setup import ROOT, load_build

#: Static imports and re-exports (``from "x"``), side-effect imports and ``import("x")``.
IMPORT = re.compile(r"""(?<![\w.$])(?:from|import)\s*\(?\s*["']([^"'\s]+)["']""")
#: What an HTML page loads: module scripts, stylesheets, preloads.
HTML_REF = re.compile(r"""<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)\"""")
SUFFIXES = {".mjs", ".js", ".html"}
SOURCES = {"extension": ROOT / "extension", "web": ROOT / "web"}
BUILT_DIRS = set(load_build().BUILT_DIRS)


def references(path: Path) -> list[str]:
    """The specifiers a source file imports (or, for a page, loads)."""
    text = path.read_text()
    return (HTML_REF if path.suffix == ".html" else IMPORT).findall(text)


def own_files(folder: Path) -> list[Path]:
    """The files of a source folder that imports are read from (not links to web/)."""
    return sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES and not p.is_symlink())


def resolve(base: Path, specifier: str) -> Path:
    """Where a relative specifier of a file in ``base`` points (no link followed)."""
    return Path(os.path.normpath(base / specifier))


def test_the_scan_finds_the_imports_that_cross_from_the_panel_to_the_runtime() -> None:
    found = {(p.name, s) for p in own_files(SOURCES["extension"]) for s in references(p)}
    assert {
        ("sidepanel.mjs", "./runtime.mjs"),
        ("sw.js", "./runtime.mjs"),
        ("sw.js", "./pyodide/pyodide.asm.mjs"),
        ("panel_chat.mjs", "./presence.mjs"),
        ("panel_markdown.mjs", "./vendor/marked.esm.js"),
        ("sidepanel.html", "sidepanel.mjs"),
    } <= found
    found = {(p.name, s) for p in own_files(SOURCES["web"]) for s in references(p)}
    assert {("runtime.mjs", "./pyodide/pyodide.mjs"), ("wiring.mjs", "./changes.mjs")} <= found


@pytest.mark.parametrize("folder", sorted(SOURCES))
def test_every_import_resolves_in_the_source_tree(folder: str) -> None:
    source = SOURCES[folder]
    unresolved = []
    for path in own_files(source):
        for specifier in references(path):
            target = resolve(source, specifier)
            built = target.relative_to(source).parts[0] in BUILT_DIRS
            if specifier.startswith("/") or ":" in specifier or not (target.exists() or built):
                unresolved.append(f"{path.name}: {specifier}")
    assert unresolved == []


def test_the_links_of_extension_name_the_web_files_of_their_names() -> None:
    links = sorted(p for p in SOURCES["extension"].iterdir() if p.is_symlink())
    assert [p.name for p in links] == ["presence.mjs", "runtime.mjs"]
    for link in links:
        assert os.readlink(link) == f"../web/{link.name}"
        assert link.resolve() == (SOURCES["web"] / link.name).resolve()


@pytest.mark.parametrize(
    ("dist", "folders"),
    [(DIST_EXTENSION, ["extension", "web"]), (DIST_WEB, ["web"])],
    ids=["extension", "web"],
)
def test_every_import_resolves_in_dist(dist: Path, folders: list[str]) -> None:
    root = require_dist(dist)
    unresolved = []
    for folder in folders:
        for path in own_files(SOURCES[folder]):
            assert (root / path.name).read_bytes() == path.read_bytes(), path
            for specifier in references(root / path.name):
                if not resolve(root, specifier).is_file():
                    unresolved.append(f"{folder}/{path.name}: {specifier}")
    assert unresolved == []


def test_dist_extension_holds_the_source_folders_and_the_built_dirs() -> None:
    root = require_dist(DIST_EXTENSION)
    names = {p.name for p in root.iterdir()}
    sources = {p.name for folder in SOURCES.values() for p in folder.iterdir()}
    assert names - sources <= BUILT_DIRS
    assert sources <= names


def test_the_build_copies_a_link_as_its_web_file_and_refuses_any_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = load_build()
    monkeypatch.setattr(build, "ROOT", tmp_path)
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "a.mjs").write_text("export const a = 1;\n")
    (tmp_path / "extension").mkdir()
    (tmp_path / "extension" / "a.mjs").symlink_to("../web/a.mjs")
    plan = build.extension_plan()
    assert plan["a.mjs"] == (tmp_path / "web" / "a.mjs").resolve()
    (tmp_path / "extension" / "b.mjs").symlink_to("../web/a.mjs")
    with pytest.raises(SystemExit, match="extension/b.mjs must link to the web/ file of its name"):
        build.extension_plan()
