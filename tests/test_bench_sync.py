"""The sync benchmark (bench/sync.py, issue 39): its result shape and its table.

``summarize_sync`` and ``sync_markdown`` are checked on made-up figures; a quick run
(``--quick --only sync``) checks that the page, the test server and PouchDB run, that
every side ends with the same documents, and that the run writes that shape.
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

from bench.sync import SIZES, summarize_sync, sync_markdown  # noqa: E402

SECTIONS = {"sizes", "sync_push", "sync_pull", "sync_latency"}
CHECK = {"count": 507, "digest": "ab" * 32}


def measured() -> dict[str, Any]:
    checks = {"seeded": {}, "push": CHECK, "pull": CHECK}
    return {
        "sizes": SIZES["quick"],
        "push": {"python": [300.0, 100.0, 200.0], "pouchdb": [100.0, 100.0, 100.0]},
        "pull": {"python": [50.0, 60.0, 70.0], "pouchdb": [100.0, 120.0, 200.0]},
        "checks": [checks, checks, checks],
        "latency": {
            "samples": [{"ms": float(ms)} for ms in range(100, 120)],
            "check": {"count": 21, "digest": "cd" * 32},
        },
    }


def test_the_summary_has_the_ratios_against_pouchdb_and_the_latency() -> None:
    doc = summarize_sync(measured())
    assert set(doc) == SECTIONS
    push, pull, latency = doc["sync_push"], doc["sync_pull"], doc["sync_latency"]
    assert push["python_ms"] == 200.0 and push["pouchdb_ms"] == 100.0 and push["ratio"] == 2.0
    assert push["spread"]["python"] == [100.0, 300.0] and push["runs"] == 3
    assert pull["ratio"] == 0.5 and pull["check"] == CHECK
    assert latency["median_ms"] == 109.5 and latency["p95_ms"] == 118.0
    assert latency["commits"] == 20 and latency["mode"] == "continuous sync on both"
    table = sync_markdown(doc)
    assert "| `sync_push` | 200.0 ms | 100.0 ms | 2.0 |" in table
    assert "| `sync_pull` | 60.0 ms | 120.0 ms | 0.5 |" in table
    assert "109.5 (p95 118.0) ms" in table


def test_a_quick_run_writes_the_sync_section(tmp_path: Path) -> None:
    require_dist(DIST_WEB)
    require_dist(DIST_EXTENSION)
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--quick", "--only", "sync", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    sync = json.loads(out.read_text())["sync"]
    assert set(sync) == SECTIONS
    # 4 threads, 500 nodes, 3 attachments: one document each.
    assert sync["sync_push"]["check"]["count"] == 507
    assert sync["sync_pull"]["check"] == sync["sync_push"]["check"]
    for name in ("sync_push", "sync_pull"):
        assert sync[name]["python_ms"] > 0 and sync[name]["pouchdb_ms"] > 0
    assert sync["sync_latency"]["commits"] == 5
    assert sync["sync_latency"]["median_ms"] > 0
    assert "`sync_latency`" in out.with_suffix(".md").read_text()
