"""`build.py setup` on a machine whose Node.js is missing or too old.

The main test runs the real ``build.py setup`` in a scratch copy of the project's setup
inputs (build.py, package.json, package-lock.json, tools/compile_pyc.mjs, the cached
Pyodide wheels and a requirements file with nothing in it, so that only the Node.js wheel
is installed) with a PATH holding every program of this machine's PATH except node, npm
and npx. Setup must install the pinned Node.js into the scratch ``.venv``, run ``npm ci``
with it from the lock file, and the scratch ``build.add_bytecode`` must compile a wheel's
modules with that Node and the freshly installed Pyodide.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from browser_harness import ROOT

HIDDEN = {"node", "nodejs", "npm", "npx", "corepack"}
SETUP_INPUTS = ("build.py", "package.json", "package-lock.json", "tools/compile_pyc.mjs")


def load_build() -> ModuleType:
    """The project's build.py as a module (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("panelot_build_script", ROOT / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def path_without_node(bin_dir: Path) -> str:
    """A PATH of one directory linking every program on PATH except Node.js's."""
    bin_dir.mkdir()
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in sorted(Path(directory).iterdir()):
            link = bin_dir / entry.name
            if entry.name in HIDDEN or link.exists() or not os.access(entry, os.X_OK):
                continue
            link.symlink_to(entry)
    return str(bin_dir)


def scratch_project(dest: Path) -> Path:
    """Copy what setup reads into ``dest``; return it."""
    for rel in SETUP_INPUTS:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    (dest / "requirements-dev.txt").write_text("# only the Node.js wheel, which setup adds\n")
    cached = ROOT / ".cache" / "wheels"  # saves setup the download, when there
    if cached.is_dir():
        shutil.copytree(cached, dest / ".cache" / "wheels")
    return dest


def tiny_wheel(path: Path) -> Path:
    """A wheel holding one module and its RECORD, as add_bytecode expects."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("demo/__init__.py", "VALUE = 42\n")
        zf.writestr("demo-0.dist-info/RECORD", "demo/__init__.py,,\ndemo-0.dist-info/RECORD,,\n")
    return path


def run_in(project: Path, path: str, *args: str) -> str:
    """Run the host Python in ``project`` with PATH=``path``; return its output (must pass)."""
    proc = subprocess.run(
        [sys.executable, *args],
        cwd=project,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    return output


def test_setup_brings_its_own_node_when_path_has_none(tmp_path: Path) -> None:
    project = scratch_project(tmp_path / "project")
    path = path_without_node(tmp_path / "bin")
    assert all(shutil.which(name, path=path) is None for name in HIDDEN)

    out = run_in(project, path, "build.py", "setup")
    build = load_build()
    assert f"node: no node on PATH; using {project}/.venv/" in out, out[-4000:]
    assert build.NODE_WHEEL in out
    assert "$ " + str(project / ".venv") in out and "npm-cli.js ci" in out
    assert "EBADENGINE" not in out, "the wheel's Node must satisfy every engines field"
    lock = json.loads((project / "package-lock.json").read_text())
    for name, entry in lock["packages"].items():
        if name:
            installed = json.loads((project / name / "package.json").read_text())
            assert installed["version"] == entry["version"], name

    wheel = tiny_wheel(tmp_path / "demo-0-py3-none-any.whl")
    code = f"import build, pathlib; build.add_bytecode(pathlib.Path({str(wheel)!r}))"
    out = run_in(project, path, "-c", code)
    assert f"node: no node on PATH; using {project}/.venv/" in out, out[-4000:]
    minor = build.PYODIDE_PYTHON_VERSION.replace(".", "")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        record = zf.read("demo-0.dist-info/RECORD").decode()
    pyc = f"demo/__pycache__/__init__.cpython-{minor}.pyc"
    assert pyc in names, sorted(names)
    assert pyc in record


def fake_program(bin_dir: Path, name: str, version: str) -> None:
    """A program that prints ``version`` for ``--version``."""
    bin_dir.mkdir(exist_ok=True)
    program = bin_dir / name
    program.write_text(f"#!/bin/sh\necho {version}\n")
    program.chmod(0o755)


@pytest.mark.parametrize(
    ("programs", "problem"),
    [
        ({}, "no node on PATH"),
        ({"node": "v20.20.2", "npm": "10.8.2"}, "is v20.20.2, older than the v22"),
        ({"node": "v22.0.0"}, "is v22.0.0 but there is no npm on PATH"),
        ({"node": "garbage", "npm": "10.8.2"}, "--version failed"),
        ({"node": "v22.0.0", "npm": "10.9.0"}, None),
        ({"node": "v24.19.0", "npm": "11.6.0"}, None),
    ],
)
def test_which_node_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, programs: dict[str, str], problem: str | None
) -> None:
    build = load_build()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, version in programs.items():
        fake_program(bin_dir, name, version)
    monkeypatch.setenv("PATH", str(bin_dir))
    got = build.system_node_problem()
    if problem is None:
        assert got is None
    else:
        assert got is not None and problem in got, got


def test_the_pinned_node_satisfies_every_engines_field() -> None:
    build = load_build()
    wheel_version = tuple(int(p) for p in build.NODE_WHEEL.split("==")[1].split("."))
    assert wheel_version[0] >= build.NODE_MAJOR
    lock = json.loads((ROOT / "package-lock.json").read_text())
    for name, entry in lock["packages"].items():
        wanted = entry.get("engines", {}).get("node")
        if wanted is None:
            continue
        assert _node_satisfies(wanted, build.NODE_MAJOR), (name, wanted)


def _node_satisfies(wanted: str, major: int) -> bool:
    """Whether Node ``major``.0.0 meets an ``engines.node`` range.

    Only these forms are understood, alone or joined by ``||``: ``*``, ``>=X[.Y.Z]``
    (marked writes ">= 20") and ``N.x``; another form fails, for a look by hand.
    """
    for alternative in (part.strip() for part in wanted.split("||")):
        if alternative == "*":
            return True
        lower = re.fullmatch(r">=\s*(\d+(?:\.\d+){0,2})", alternative)
        exact = re.fullmatch(r"(\d+)\.x", alternative)
        if lower:
            floor = [int(p) for p in lower[1].split(".")]
            if floor + [0] * (3 - len(floor)) <= [major, 0, 0]:
                return True
        elif exact:
            if int(exact[1]) == major:
                return True
        else:
            raise AssertionError(f"engines.node {wanted!r}: {alternative!r} is not understood")
    return False
