"""Smoke test of the benchmark: `bench.run --quick` still runs and writes its documented shape.

It asserts nothing about speed: only that every page workload runs through all three
implementations (Python and Dexie only for backup and restore), which must agree (a domain rule the JS twins do not follow, such as
the pairing of tool calls, fails here rather than in the first full run), and that the
result JSON keeps the shape tools read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from browser_harness import DIST_EXTENSION, DIST_WEB, ROOT, require_dist

WORKLOADS = (
    "append",
    "append_bus",
    "bulk",
    "append_strict",
    "bulk_strict",
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
#: Python only, each in four variants against observe off (a section of their own).
OBSERVE = ("observe_append", "observe_bulk_put")
OBSERVE_KEYS = {"off_ms", "on_ms", "live_other_ms", "live_same_ms", "ratio_on", "runs", "spread"}
#: Two pages: a commit in one, the live query's result in the other (no raw baseline).
LIVE = ("live_notify", "live_notify_i0")
LIVE_KEYS = {"samples", "python_p95_ms", "dexie_p95_ms", "ratio_p95", "interval_ms"}
#: Whole-database export and import against the addon (no raw baseline), with heap figures.
BACKUP = ("backup", "restore")
HEAP_KEYS = {"js_growth_bytes", "js_retained_bytes"}
WASM_KEYS = {
    "wasm_growth_bytes",
    "wasm_first_growth_bytes",
    "wasm_before_bytes",
    "wasm_total_growth_bytes",
}


#: Chromium's stderr lines worth keeping in a failure message (not the dbus chatter).
_TELLING = ("FATAL", "Check failed", "signal", "crash", "OOM", "out of memory", "Traceback")


def _failure(stderr: str) -> str:
    """The bench's own output, with Chromium's telling lines, for a failed run."""
    ours = [line for line in stderr.splitlines() if " pw:browser " not in line]
    browser = [
        line
        for line in stderr.splitlines()
        if " pw:browser " in line and any(word in line for word in _TELLING)
    ]
    return "\n".join([*ours[-60:], "-- Chromium:", *browser[-40:]])


def test_bench_quick_writes_the_result_shape(tmp_path: Path) -> None:
    require_dist(DIST_WEB)
    require_dist(DIST_EXTENSION)
    out = tmp_path / "bench.json"
    names = (*WORKLOADS, *BACKUP, *OBSERVE, "live_notify", "memory")
    only = [arg for name in names for arg in ("--only", name)]
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--quick", *only, "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        # Playwright then relays Chromium's own stderr: a renderer that crashes
        # ("Target crashed") says why there (signal, failed check, out of memory).
        env={**os.environ, "DEBUG": "pw:browser"},
    )
    assert proc.returncode == 0, _failure(proc.stderr)

    doc = json.loads(out.read_text())
    assert set(doc) == {"machine", "workloads", "observe", "memory"}
    assert {"cpu", "cores", "chromium", "pyodide", "dexie", "date"} <= set(doc["machine"])
    assert set(doc["workloads"]) == {*WORKLOADS, *BACKUP, *LIVE}
    for name, entry in doc["workloads"].items():
        assert ENTRY_KEYS <= set(entry)
        assert entry["runs"] == 1
        no_raw = name in LIVE or name in BACKUP
        for key in ("python_ms", "dexie_ms", "ratio_dexie", *(() if no_raw else ("raw_ms",))):
            assert isinstance(entry[key], int | float) and entry[key] > 0
        if no_raw:
            assert entry["raw_ms"] is None and set(entry["spread"]) == {"python", "dexie"}
        else:
            assert set(entry["spread"]) == {"python", "dexie", "raw"}
        if name in LIVE:
            assert LIVE_KEYS <= set(entry) and entry["samples"] >= 5
        if name in BACKUP:
            heap = entry["heap"]
            assert set(heap) == {"python", "dexie"}
            assert HEAP_KEYS | WASM_KEYS <= set(heap["python"]) and HEAP_KEYS <= set(heap["dexie"])
            assert heap["python"]["wasm_before_bytes"] > 0
            assert heap["python"]["wasm_total_growth_bytes"] >= 0
    assert set(doc["observe"]) == set(OBSERVE)
    for entry in doc["observe"].values():
        assert OBSERVE_KEYS <= set(entry) and entry["runs"] == 1
        assert all(entry[f"ratio_{v}"] > 0 for v in ("on", "live_other", "live_same"))
    pair = doc["observe"]["observe_append"]["interleaved"]
    assert pair["runs"] == 1 and pair["ratio"] > 0 and pair["off_ms"] > 0 and pair["on_ms"] > 0
    assert "interleaved" not in doc["observe"]["observe_bulk_put"]
    proxies = doc["memory"]["pyproxies"]
    assert {"before", "after", "growth_by_workload", "max_growth"} <= set(proxies)
    assert set(proxies["growth_by_workload"]) == {*WORKLOADS, *BACKUP, *OBSERVE}

    table = out.with_suffix(".md").read_text()
    assert "| workload |" in table
    assert "observe_append, interleaved" in table
    for name in (*WORKLOADS, *BACKUP, *LIVE, *OBSERVE):
        assert f"| {name} |" in table
    assert "`backup` (no raw IndexedDB implementation): Python wasm heap" in table


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
        "breakdown": {"modules": 80.0, "first_paint": 120.0, "pyodide": 400.0, "live": 700.0},
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
        "workloads": {
            "append": entry,
            "list": entry,
            "startup_warm": startup,
            "startup_first_paint": {**entry, "raw_ms": None, "ratio_raw": None, "threads": 300},
            "live_notify": {
                **entry,
                "raw_ms": None,
                "ratio_raw": None,
                "spread": {"python": [1.0, 9.0], "dexie": [1.0, 8.0]},
                "samples": 200,
                "python_p95_ms": 20.0,
                "dexie_p95_ms": 15.0,
                "ratio_p95": 1.33,
                "interval_ms": 50.0,
            },
            "backup": {
                **entry,
                "raw_ms": None,
                "ratio_raw": None,
                "spread": {"python": [11.0, 13.0], "dexie": [9.0, 11.0]},
                "heap": {
                    "python": {
                        "js_growth_bytes": 2**20,
                        "js_retained_bytes": 0,
                        "wasm_growth_bytes": 3 * 2**20,
                        "wasm_first_growth_bytes": 3 * 2**20,
                        "wasm_total_growth_bytes": 3 * 2**20,
                        "wasm_before_bytes": 30 * 2**20,
                    },
                    "dexie": {"js_growth_bytes": 5 * 2**20, "js_retained_bytes": 2**20},
                },
            },
            "panel_turn": {
                **entry,
                "python_ms": 130.0,
                "dexie_ms": None,
                "raw_ms": None,
                "ratio_dexie": None,
                "ratio_raw": None,
                "spread": {"python": [120.0, 150.0], "short": [100.0, 110.0]},
                "short_ms": 104.0,
                "ratio_short": 1.25,
                "nodes": {"short": 10, "long": 10_000},
                "turn_ms": {"short": [104.0], "long": [130.0]},
            },
        },
        "observe": {
            "observe_append": {
                "off_ms": 10.0,
                "on_ms": 10.4,
                "live_other_ms": 10.6,
                "live_same_ms": 12.0,
                "ratio_on": 1.04,
                "ratio_live_other": 1.06,
                "ratio_live_same": 1.2,
                "runs": 5,
                "spread": {v: [9.0, 13.0] for v in ("off", "on", "live_other", "live_same")},
                "live_runs": {"live_other": 1, "live_same": 40},
                "interleaved": {
                    "ratio": 1.07,
                    "spread": [1.05, 1.09],
                    "off_ms": 500.0,
                    "on_ms": 535.0,
                    "runs": 5,
                },
            }
        },
        "memory": {
            "pyproxies": {"before": 0, "after": 0, "growth_by_workload": {}, "max_growth": 0}
        },
    }
    table = markdown(doc, {"append": "1,000 appends"})
    assert "| append | 1,000 appends | 5 |" in table and "+20.0%" in table
    assert "| live_notify |" in table and "12.0 (p95 20.0)" in table and "| — |" in table
    assert "| observe_append |" in table and "1.04×" in table
    assert "**1.07× ⚠**" in table and "(runs 1.05–1.09×" in table
    assert "| panel_turn |" in table and "130.0 (120.0–150.0)" in table
    assert "| backup |" in table and "Python wasm heap +3.0 MiB in the first" in table
    assert "from 30.0 MiB" in table and "Dexie JS heap +5.0 MiB (+1.0 MiB after GC)" in table
    assert "10,000-node thread 130 ms" in table and "ratio 1.25× (target" in table
    assert "- warm: modules 80 · first_paint 120 · pyodide 400 · live 700" in table
    assert "First paint of the stored list (300 conversations stored, warm): 12 ms" in table
    png = tmp_path / "chart.png"
    chart(doc, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
