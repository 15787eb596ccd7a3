"""The search benchmark (bench/search.py, issue 38): its result shape and its table.

``summarize_search`` and ``search_markdown`` are checked on made-up figures, with the
runtime's search present and absent (then every Python figure is "not available", never
a number); a quick run (``--quick --only search``) checks that the page and MiniSearch
run and write that shape.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from browser_harness import DIST_EXTENSION, DIST_WEB, ROOT, require_dist

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.search import NOT_AVAILABLE, search_markdown, summarize_search  # noqa: E402

CORPUS = {"threads": 50, "messages": 2000, "chars": 690_000, "langs": {"en": 1, "zh": 1, "ru": 1}}
SECTIONS = {"corpus", "search_build", "search_query", "search_catch_up"}


def measured(python: bool) -> dict[str, Any]:
    py_build = (
        {"available": True, "ms": 300.0, "response": {"threads": 50, "docs": 2050}}
        | {"wasm_before": 40 * 2**20, "wasm_after": 50 * 2**20}
        if python
        else {"available": False, "reason": "the runtime has no search.messages"}
    )
    return {
        "corpus": CORPUS,
        "queries": 60,
        "python": python,
        "build": {"minisearch": {"ms": 200.0, "docs": 2050, "bytes": 10}, "python": py_build},
        "cold": {"minisearch": [100.0, 120.0], "python": [110.0, 150.0] if python else []},
        "warm": {"minisearch": [1.0, 2.0, 3.0], "python": [2.0, 4.0, 6.0] if python else []},
        "totals": {},
        "catch_up": {"appends": 100, "python_ms": 80.0, "found": 100}
        if python
        else {"appends": 100, "python_ms": None, "python": NOT_AVAILABLE},
    }


def test_with_the_runtime_s_search_every_figure_has_its_ratio() -> None:
    doc = summarize_search(measured(python=True))
    assert set(doc) == SECTIONS
    build = doc["search_build"]
    assert build["python_ms"] == 300.0 and build["ratio"] == 1.5
    assert build["wasm_growth_bytes"] == 10 * 2**20
    assert "python" not in build
    cold, warm = doc["search_query"]["cold"], doc["search_query"]["warm"]
    assert cold["python"] == {"median_ms": 130.0, "p95_ms": 150.0}
    assert cold["ratio_median"] == round(130 / 110, 3)
    assert warm["python"] == {"median_ms": 4.0, "p95_ms": 6.0}
    assert doc["search_catch_up"]["python_ms"] == 80.0
    table = search_markdown(doc)
    assert "| `search_build` | 300.0 ms | 200.0 ms | 1.5 |" in table
    assert NOT_AVAILABLE not in table
    assert "Wasm heap growth during `search_build`: 10.0 MB (target ≤64 MB)." in table


def test_without_it_python_is_not_available_never_a_number() -> None:
    doc = summarize_search(measured(python=False))
    build, query = doc["search_build"], doc["search_query"]
    assert build["python"] == query["python"] == NOT_AVAILABLE
    assert build["python_ms"] is None and build["ratio"] is None
    for phase in ("cold", "warm"):
        assert query[phase]["python"] is None and query[phase]["ratio_median"] is None
        assert query[phase]["minisearch"] is not None
    assert doc["search_catch_up"]["python_ms"] is None
    table = search_markdown(doc)
    assert table.count(NOT_AVAILABLE) == 4


def test_a_quick_run_writes_the_search_section(tmp_path: Path) -> None:
    require_dist(DIST_WEB)
    require_dist(DIST_EXTENSION)
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--quick", "--only", "search", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    search = json.loads(out.read_text())["search"]
    assert set(search) == SECTIONS
    assert search["corpus"]["threads"] == 50 and search["corpus"]["messages"] == 2000
    assert set(search["corpus"]["langs"]) == {"en", "zh", "ru"}
    assert search["search_build"]["minisearch_ms"] > 0
    assert search["search_build"]["minisearch_docs"] == 2050
    query = search["search_query"]
    assert query["queries"] == 60
    assert query["warm"]["samples"] == 60 and query["cold"]["samples"] == 1
    python = search["search_build"]["python_ms"]
    assert python is None or python > 0
    if python is None:
        assert search["search_build"]["python"] == NOT_AVAILABLE
    assert "`search_query` warm" in out.with_suffix(".md").read_text()
