"""Checks on the build output in dist/ (no browser needed)."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from browser_harness import (
    DIST_EXTENSION,
    DIST_WEB,
    EXTENSION_ID,
    ROOT,
    extension_id_from_key,
    require_dist,
)
from snapshot_packing import unpack
from test_build_imports import references

CSP = "script-src 'self' 'wasm-unsafe-eval'; object-src 'self';"
#: A URL that could load something remote. A host under `.invalid` (RFC 2606: it never
#: resolves) is a name only, e.g. the cache key of web/local_copy.mjs.
URL = re.compile(r"https?://(?![a-z0-9.-]*\.invalid/)")
DEXIE_IMPORT = re.compile(r"""(?:from|import)\s*\(?\s*["'][^"']*dexie""", re.IGNORECASE)
TEXT_SUFFIXES = {".js", ".mjs", ".html", ".json", ".css"}
#: Pyodide's own code mentions CDN URLs it never uses with a bundled indexURL.
PYODIDE_CORE = {"pyodide/pyodide.mjs", "pyodide/pyodide.asm.mjs", "pyodide/pyodide-lock.json"}
#: The panel's vendored Markdown libraries name URLs in comments and messages (their
#: sites, XML namespaces), never to load from: tests/browser/test_e2e_markdown.py checks
#: that the panel requests nothing outside the extension.
PANEL_VENDOR = {"vendor/marked.esm.js", "vendor/purify.es.mjs", "vendor/highlight.min.js"}


@pytest.fixture(scope="module")
def extension() -> Path:
    return require_dist(DIST_EXTENSION)


@pytest.fixture(scope="module")
def manifest(extension: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((extension / "manifest.json").read_text())
    return result


def test_manifest_csp_is_exact(manifest: dict[str, Any]) -> None:
    assert manifest["manifest_version"] == 3
    assert manifest["content_security_policy"] == {"extension_pages": CSP}


def test_manifest_permissions_are_minimal(manifest: dict[str, Any]) -> None:
    assert sorted(manifest["permissions"]) == ["alarms", "sidePanel", "storage", "unlimitedStorage"]
    assert "host_permissions" not in manifest
    # Sync's server only, asked at run time for its one origin (docs/sync.md, Security):
    # https anywhere, http on loopback.
    assert manifest["optional_host_permissions"] == [
        "https://*/*",
        "http://127.0.0.1/*",
        "http://localhost/*",
    ]
    assert "web_accessible_resources" not in manifest


def test_manifest_key_gives_the_documented_id(manifest: dict[str, Any]) -> None:
    assert extension_id_from_key(manifest["key"]) == EXTENSION_ID


def test_extension_has_no_dexie(extension: Path) -> None:
    offenders = [p for p in extension.rglob("*") if "dexie" in p.name.lower()]
    assert offenders == []
    for path in [*extension.rglob("*.mjs"), *extension.rglob("*.js")]:
        assert not DEXIE_IMPORT.search(path.read_text(errors="replace")), path


def test_extension_has_no_minisearch(extension: Path) -> None:
    """MiniSearch is the search benchmark's reference engine, never part of the extension."""
    assert [p for p in extension.rglob("*") if "minisearch" in p.name.lower()] == []
    for path in [*extension.rglob("*.mjs"), *extension.rglob("*.js")]:
        assert "minisearch" not in path.read_text(errors="replace").lower(), path


def test_extension_has_no_pouchdb(extension: Path) -> None:
    """PouchDB and its server are the sync tests' (npm dev dependencies), never the extension's."""
    assert [p for p in extension.rglob("*") if "pouch" in p.name.lower()] == []
    for path in [*extension.rglob("*.mjs"), *extension.rglob("*.js"), *extension.rglob("*.html")]:
        assert "pouchdb" not in path.read_text(errors="replace").lower(), path


def test_extension_bundles_the_markdown_libraries(extension: Path) -> None:
    assert sorted(p.relative_to(extension).as_posix() for p in extension.glob("vendor/*")) == [
        "vendor/highlight.LICENSE",
        "vendor/highlight.min.js",
        "vendor/marked.LICENSE",
        "vendor/marked.esm.js",
        "vendor/purify.LICENSE",
        "vendor/purify.es.mjs",
    ]


def test_web_has_dexie() -> None:
    assert (require_dist(DIST_WEB) / "vendor" / "dexie.mjs").is_file()


def test_web_has_minisearch() -> None:
    assert (require_dist(DIST_WEB) / "vendor" / "minisearch.mjs").is_file()


def test_web_has_pouchdb() -> None:
    assert (require_dist(DIST_WEB) / "vendor" / "pouchdb.min.js").is_file()


def test_own_files_have_no_remote_urls(extension: Path) -> None:
    offenders = []
    for path in extension.rglob("*"):
        rel = path.relative_to(extension).as_posix()
        if path.suffix in TEXT_SUFFIXES and rel not in PYODIDE_CORE | PANEL_VENDOR:
            text = path.read_text(errors="replace")
            if rel == "manifest.json":  # match patterns the user grants, not URLs loaded
                manifest = json.loads(text)
                manifest.pop("optional_host_permissions", None)
                text = json.dumps(manifest)
            if URL.search(text):
                offenders.append(rel)
    assert offenders == []


@pytest.mark.parametrize("dist", [DIST_EXTENSION, DIST_WEB], ids=["extension", "web"])
def test_lock_hashes_match_bundled_wheels(dist: Path) -> None:
    pyodide = require_dist(dist) / "pyodide"
    lock = json.loads((pyodide / "pyodide-lock.json").read_text())
    for package in ("micropip", "packaging"):
        entry = lock["packages"][package]
        wheel = pyodide / entry["file_name"]
        assert wheel.is_file(), wheel
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == entry["sha256"]


@pytest.mark.parametrize("dist", [DIST_EXTENSION, DIST_WEB], ids=["extension", "web"])
def test_wheel_manifest_lists_bundled_wheels(dist: Path) -> None:
    wheels = require_dist(dist) / "wheels"
    names = json.loads((wheels / "manifest.json").read_text())["wheels"]
    assert names[0] == "panelot-0.1.0-py3-none-any.whl"
    assert any(name.startswith("rfc8785-") for name in names)
    assert sorted(names) == sorted(p.name for p in wheels.glob("*.whl"))


def test_the_bundled_wheel_leaves_out_the_host_side_test_plugin() -> None:
    wheel = require_dist(DIST_EXTENSION) / "wheels" / "panelot-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    assert "panelot/store.py" in names
    assert not [n for n in names if n.startswith("panelot/testing/")]


@pytest.mark.parametrize("dist", [DIST_EXTENSION, DIST_WEB], ids=["extension", "web"])
def test_snapshot_matches_the_bundled_pyodide_and_wheels(dist: Path) -> None:
    root = require_dist(dist)
    wheels = json.loads((root / "wheels" / "manifest.json").read_text())
    for name in wheels["wheels"]:
        assert (
            hashlib.sha256((root / "wheels" / name).read_bytes()).hexdigest()
            == (wheels["sha256"][name])
        )
    snapshot = json.loads((root / "snapshot" / "manifest.json").read_text())
    version = json.loads(
        (DIST_EXTENSION.parents[1] / "node_modules" / "pyodide" / "package.json").read_text()
    )
    assert snapshot["pyodide"] == version["version"]
    assert snapshot["wheels"] == wheels["sha256"]
    data = unpack((root / "snapshot" / snapshot["file"]).read_bytes())
    # Pyodide's snapshot header: magic number, then the offset where the 30 MiB heap starts.
    magic, heap_offset = int.from_bytes(data[:4], "little"), int.from_bytes(data[4:8], "little")
    assert magic == 0x706E7300 and len(data) - heap_offset == 30 * 1024 * 1024


def _import_graph(root: Path, entry: str) -> list[str]:
    """The modules of ``root`` that ``entry`` imports, directly or not, in the order first met."""
    found: list[str] = []
    todo = [entry]
    while todo:
        for specifier in references(root / todo.pop(0)):
            name = specifier.removeprefix("./")
            if specifier.startswith("./") and name not in found and name != entry:
                found.append(name)
                todo.append(name)
    return found


def test_panel_preloads_the_first_paints_modules_then_pyodides_only(extension: Path) -> None:
    # The first paint's modules are preloaded ahead of the rest, so they load at once and
    # not level by level (a stale list would load a module twice, or one late); then
    # Pyodide's module script (a stale name would load it twice: once preloaded, unused;
    # once imported). Preloading the snapshot and the wasm beside the page's modules
    # delayed the first paint and the ready store (measured A/B in docs/performance.md),
    # so neither is preloaded, nor are the page's other modules.
    html = (extension / "sidepanel.html").read_text()
    preloaded = re.findall(r'<link rel="(?:module)?preload" href="([^"]+)"', html)
    snapshot = json.loads((extension / "snapshot" / "manifest.json").read_text())
    paint = _import_graph(extension, "sidepanel_paint.mjs")
    assert len(paint) >= 5, paint  # the pattern still finds the imports
    assert sorted(preloaded[:-1]) == sorted(paint), preloaded
    assert preloaded[-1] == "pyodide/pyodide.asm.mjs", preloaded
    assert html.index('src="sidepanel_paint.mjs"') < html.index('href="pyodide/pyodide.asm.mjs"')
    assert f"snapshot/{snapshot['file']}" not in preloaded
    assert all((extension / name).is_file() for name in preloaded), preloaded


def test_the_sync_test_server_and_pouchdb_are_pinned_dev_dependencies() -> None:
    """`npm ci` (build.py setup) installs the sync tests' server and PouchDB, exact versions."""
    package = json.loads((ROOT / "package.json").read_text())
    lock = json.loads((ROOT / "package-lock.json").read_text())
    pins = {"express-pouchdb": "4.2.0", "pouchdb": "9.0.0", "pouchdb-core": "9.0.0"}
    pins |= {"pouchdb-adapter-memory": "9.0.0", "pouchdb-adapter-http": "9.0.0"}
    pins |= {"pouchdb-mapreduce": "9.0.0", "pouchdb-replication": "9.0.0"}
    dev = package["devDependencies"]
    assert {name: dev.get(name) for name in pins} == pins
    assert re.fullmatch(r"4\.\d+\.\d+", dev["express"]), dev["express"]  # exact, Express 4
    for name, version in {**pins, "express": dev["express"]}.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version, name
        assert name not in package.get("dependencies", {}), name  # never shipped
