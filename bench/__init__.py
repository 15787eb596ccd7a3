"""Benchmarks: panelot.idb (Python in Pyodide) against Dexie 4 and plain IndexedDB.

The host side drives Chromium with :mod:`panelot.testing`'s launcher (one set of
Chromium flags for tests, tools and benchmarks), so ``py_src`` goes on the path here.
"""

import sys
from pathlib import Path

_PY_SRC = str(Path(__file__).resolve().parent.parent / "py_src")
if _PY_SRC not in sys.path:
    sys.path.insert(0, _PY_SRC)
