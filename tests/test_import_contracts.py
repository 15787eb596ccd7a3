"""Each import-linter contract bites: one planted import breaks it, and only it.

``build.py test`` runs import-linter over the real tree, where every contract is kept.
A contract that is kept whatever the code does would prove nothing, so each case here
copies the package into a temporary folder, plants one import that the contract
forbids, and checks that import-linter reports exactly that contract broken.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).parent / "lint-imports"

#: (the contract's name as pyproject.toml spells its start, the module to edit, the import
#: planted in it)
PLANTS: list[tuple[str, str, str]] = [
    ("Imports run downward", "tree/nodes.py", "import panelot.runs"),
    (
        "The console: its session over its helpers",
        "console/views.py",
        "import panelot.console.session",
    ),
    (
        "Only the registry names every section's API module",
        "api/messages.py",
        "import panelot.api.threads",
    ),
    (
        "The domain uses the idb layer's public modules",
        "tree/nodes.py",
        "import panelot.idb.browser.convert",
    ),
    (
        "The generic idb layer imports no browser module",
        "idb/keys.py",
        "import panelot.idb.browser",
    ),
    (
        "Only the browser core, the runtime and the settings/crypto boundary",
        "tree/nodes.py",
        "import js",
    ),
]

_VERDICT = re.compile(r"^(.*?) (KEPT|BROKEN)$")


def _verdicts(tmp: Path) -> dict[str, str]:
    """Run import-linter over the copy in ``tmp``: each contract's name -> KEPT or BROKEN."""
    # A wide console, so that no contract's name is folded over two lines.
    env = {**os.environ, "PYTHONPATH": str(tmp / "py_src"), "COLUMNS": "1000"}
    done = subprocess.run(
        [str(LINT), "--no-cache", str(tmp / "pyproject.toml")],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    verdicts: dict[str, str] = {}
    for line in done.stdout.splitlines():
        match = _VERDICT.match(line.strip())
        if match:
            verdicts[match.group(1)] = match.group(2)
    assert verdicts, f"import-linter printed no verdict:\n{done.stdout}\n{done.stderr}"
    return verdicts


def _copy(tmp: Path) -> Path:
    """Copy the package and pyproject.toml into ``tmp``; the package's folder."""
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    package = tmp / "py_src" / "panelot"
    shutil.copytree(
        ROOT / "py_src" / "panelot", package, ignore=shutil.ignore_patterns("__pycache__")
    )
    return package


def _verdict_of(verdicts: dict[str, str], start: str) -> str:
    named = [v for name, v in verdicts.items() if name.startswith(start)]
    assert len(named) == 1, f"no single contract starts with {start!r}: {sorted(verdicts)}"
    return named[0]


def test_every_contract_is_kept_on_the_tree(tmp_path: Path) -> None:
    """The unmodified copy keeps every contract (so a plant's BROKEN is the plant's)."""
    _copy(tmp_path)
    verdicts = _verdicts(tmp_path)
    assert len(verdicts) == len(PLANTS)
    assert set(verdicts.values()) == {"KEPT"}


@pytest.mark.parametrize(("contract", "module", "line"), PLANTS, ids=[p[0] for p in PLANTS])
def test_a_planted_import_breaks_its_contract(
    tmp_path: Path, contract: str, module: str, line: str
) -> None:
    """One forbidden import, planted, breaks the contract that forbids it and no other."""
    package = _copy(tmp_path)
    target = package / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}  # planted\n", "utf-8")
    verdicts = _verdicts(tmp_path)
    assert _verdict_of(verdicts, contract) == "BROKEN"
    others = {name: v for name, v in verdicts.items() if not name.startswith(contract)}
    assert set(others.values()) == {"KEPT"}, others
