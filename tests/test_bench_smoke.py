"""Smoke test of the benchmark: `bench.run --quick` still runs and writes its documented shape.

It asserts nothing about speed: only that every page workload runs through all three
implementations, which must agree (a domain rule the JS twins do not follow, such as
the pairing of tool calls, fails here rather than in the first full run), and that the
result JSON keeps the shape tools read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from browser_harness import DIST_EXTENSION, DIST_WEB, ROOT, require_dist

WORKLOADS = (
    "append",
    "append_bus",
    "bulk",
    "context",
    "walk",
    "list",
    "branch",
    "receipt",
    "delete",
    "blob",
    "evict",
    "bulk_put",
    "get_then_put",
    "read_by_index",
)
ENTRY_KEYS = {"python_ms", "dexie_ms", "raw_ms", "ratio_dexie", "ratio_raw", "runs", "spread"}


def test_bench_quick_writes_the_result_shape(tmp_path: Path) -> None:
    require_dist(DIST_WEB)
    require_dist(DIST_EXTENSION)
    out = tmp_path / "bench.json"
    only = [arg for name in (*WORKLOADS, "memory") for arg in ("--only", name)]
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--quick", *only, "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]

    doc = json.loads(out.read_text())
    assert set(doc) == {"machine", "workloads", "memory"}
    assert {"cpu", "cores", "chromium", "pyodide", "dexie", "date"} <= set(doc["machine"])
    assert set(doc["workloads"]) == set(WORKLOADS)
    for entry in doc["workloads"].values():
        assert ENTRY_KEYS <= set(entry)
        assert entry["runs"] == 1
        for key in ("python_ms", "dexie_ms", "raw_ms", "ratio_dexie", "ratio_raw"):
            assert isinstance(entry[key], int | float) and entry[key] > 0
        assert set(entry["spread"]) == {"python", "dexie", "raw"}
    proxies = doc["memory"]["pyproxies"]
    assert {"before", "after", "growth_by_workload", "max_growth"} <= set(proxies)
    assert set(proxies["growth_by_workload"]) == set(WORKLOADS)

    table = out.with_suffix(".md").read_text()
    assert "| workload |" in table
    for name in WORKLOADS:
        assert f"| {name} |" in table


def test_report_renders_table_and_chart(tmp_path: Path) -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench.report import chart, markdown

    entry = {
        "python_ms": 12.0,
        "dexie_ms": 10.0,
        "raw_ms": 8.0,
        "ratio_dexie": 1.2,
        "ratio_raw": 1.5,
        "runs": 5,
        "spread": {"python": [11.0, 13.0], "dexie": [9.0, 11.0], "raw": [7.0, 9.0]},
    }
    startup = {
        **entry,
        "pyodide_ms": 10.0,
        "overhead_pct": 20.0,
        "panel_timings": {"runtime_ms": 9.0, "package_ms": 1.0, "database_ms": 1.0},
        "package_database_pct_of_runtime": 22.2,
    }
    doc = {
        "machine": {
            "chromium": "1",
            "pyodide": "2",
            "dexie": "4.4.7",
            "cpu": "x",
            "cores": 2,
            "date": "d",
        },
        "workloads": {"append": entry, "list": entry, "startup_warm": startup},
        "memory": {
            "pyproxies": {"before": 0, "after": 0, "growth_by_workload": {}, "max_growth": 0}
        },
    }
    table = markdown(doc, {"append": "1,000 appends"})
    assert "| append | 1,000 appends | 5 |" in table and "+20.0%" in table
    png = tmp_path / "chart.png"
    chart(doc, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
