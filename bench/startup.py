"""Startup timing: navigation to a ready store in the extension's side-panel page.

A temporary copy of ``dist/extension`` gets the baseline page ``bench/page/startup.html``
(with data.mjs and Dexie) at ``bench/``, so the baselines load from the same
``chrome-extension://`` origin, Pyodide files and CSP as the side panel. Every run
launches fresh persistent profiles:

* ``panel``: ``sidepanel.html`` (our runtime: Pyodide, the panelot wheel, the database);
* ``pyodide``: ``bench/startup.html?mode=pyodide``, bare ``loadPyodide`` in the same origin;
* ``dexie`` / ``raw``: the same page opening ``panelot_v1`` with Dexie / plain IndexedDB.

The first navigation of a profile is *cold* (nothing cached, database created); the
following navigations in the same browser are *warm*. A cold navigation starts once the
extension's install work has finished (the service worker stores the local copies of the
memory snapshot and the wasm when the extension is installed: :func:`_wait_installed`),
in every profile, so no kind is measured beside it. The time is ``performance.now()``
at readiness, i.e. milliseconds since the navigation started.

After the cold navigation, :data:`SEEDED_THREADS` conversations are written into the
profile's ``panelot_v1`` (plain records, the same for every kind), so each warm
navigation has a stored list to paint: the panel's **first paint** (the stored list drawn
before Python is ready, ``extension/panel_firstpaint.mjs``; the live list when the store
was ready first) against Dexie's page painting the same list. The panel's start-up
**breakdown** is ``window.panelot.marks``: each step's end in ms since navigation.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from panelot.testing.panel import launch_extension

ROOT = Path(__file__).resolve().parent.parent
DIST_EXTENSION = ROOT / "dist" / "extension"
DEXIE = ROOT / "dist" / "web" / "vendor" / "dexie.mjs"
PAGE_DIR = ROOT / "bench" / "page"
READY_TIMEOUT_MS = 180_000

#: Records when the runtime enters "ready" (web/runtime.mjs sets window.__panelotState).
PANEL_INIT_SCRIPT = """(() => {
  let state;
  Object.defineProperty(window, "__panelotState", {
    configurable: true,
    get() { return state; },
    set(value) {
      state = value;
      if (value === "ready" && window.__benchReadyAt === undefined) {
        window.__benchReadyAt = performance.now();
      }
      if (value === "error") window.__benchError = "the runtime failed to start";
    },
  });
})();"""

#: Function-form predicates only: the extension CSP forbids string evaluation.
SETTLED = "() => window.__benchReadyAt !== undefined || window.__benchError !== undefined"
READ = "() => ({ready: window.__benchReadyAt, error: window.__benchError ?? null,"
READ += " timings: window.panelot ? window.panelot.timings : null})"

KINDS = ("panel", "pyodide", "dexie", "raw")

SEEDED_THREADS = 300
"""Conversations stored before the warm navigations (the list the first paint draws)."""

#: The side panel is settled once its live list is shown (the breakdown's last mark).
PANEL_SETTLED = "() => document.body?.dataset.ready === '1' || window.__benchError !== undefined"
#: Dexie's page: its list painted (or nothing to paint).
PAINTED = (
    "() => window.__benchError !== undefined || window.__benchFirstPaintAt !== undefined"
    " || window.__benchNothingToPaint === true"
)
MARKS = "() => window.panelot ? {...window.panelot.marks} : null"
PAINT_AT = "() => window.__benchFirstPaintAt ?? null"

#: Plain thread records, as the store writes them, put straight into panelot_v1.
SEED = """async (count) => {
  const db = await new Promise((resolve, reject) => {
    const request = indexedDB.open("panelot_v1");
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const tx = db.transaction("threads", "readwrite");
  const now = Date.now();
  for (let i = 0; i < count; i += 1) {
    tx.objectStore("threads").put({
      id: `bench-thread-${String(i).padStart(4, "0")}`,
      title: `Conversation ${i}: a trip, a recipe`,
      createdAt: now - 86_400_000, updatedAt: now - i * 60_000, leafId: null,
      tags: i % 7 ? [] : ["work"],
      pinned: i % 50 === 0, archived: i % 10 === 9, folderId: null, preset: null,
      parentThreadId: null, stats: {turns: 0, totalTokens: 0, costUsd: 0}, scopeOrigins: [],
    });
  }
  await new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
}"""


def _prepare_extension(dest: Path) -> Path:
    ext = dest / "extension"
    shutil.copytree(DIST_EXTENSION, ext)
    (ext / "bench").mkdir()
    for name in ("startup.html", "startup.mjs", "data.mjs"):
        shutil.copy2(PAGE_DIR / name, ext / "bench" / name)
    (ext / "vendor").mkdir(exist_ok=True)
    shutil.copy2(DEXIE, ext / "vendor" / "dexie.mjs")
    return ext


#: Whether the service worker's install work is done: the local copies stored.
COPIES_STORED = """async (keys) => {
  const cache = await caches.open("panelot-runtime");
  for (const key of keys) if ((await cache.match(key)) === undefined) return false;
  return true;
}"""
INSTALL_TIMEOUT_S = 120


def _wait_installed(context: Any, ext: Path) -> None:
    """Wait until the service worker has stored the snapshot's and the wasm's copies."""
    manifest = json.loads((ext / "snapshot" / "manifest.json").read_text())
    root = "https://panelot.invalid/runtime"
    wasm = manifest["wasm"]
    keys = [
        f"{root}/{manifest['sha256']}/{manifest['file']}",
        f"{root}/{wasm['sha256']}/{Path(wasm['file']).name}",
    ]
    worker = context.service_workers[0]
    deadline = time.monotonic() + INSTALL_TIMEOUT_S
    while not worker.evaluate(COPIES_STORED, keys):
        if time.monotonic() > deadline:
            raise RuntimeError("the service worker stored no local copies at install")
        time.sleep(0.05)


def _navigate(page: Any, url: str, kind: str) -> dict[str, Any]:
    page.goto(url)
    page.wait_for_function(SETTLED, timeout=READY_TIMEOUT_MS)
    if kind in ("panel", "dexie"):
        settled = PANEL_SETTLED if kind == "panel" else PAINTED
        page.wait_for_function(settled, timeout=READY_TIMEOUT_MS)
    out: dict[str, Any] = page.evaluate(READ)
    if out["error"]:
        raise RuntimeError(f"{url}: {out['error']}")
    marks = page.evaluate(MARKS) if kind == "panel" else None
    out["marks"] = marks
    if kind == "panel" and marks:
        out["first_paint"] = marks.get("first_paint", marks.get("live"))
    else:
        out["first_paint"] = page.evaluate(PAINT_AT)
    return out


def measure_startup(
    playwright: Any,
    runs: int,
    warm_navs: int,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """Return ``{"times", "panel_timings", "marks", "first_paint"}``, each by kind or phase."""
    times: dict[str, dict[str, list[float]]] = {k: {"cold": [], "warm": []} for k in KINDS}
    panel_timings: dict[str, dict[str, list[float]]] = {"cold": {}, "warm": {}}
    marks: dict[str, dict[str, list[float]]] = {"cold": {}, "warm": {}}
    first_paint: dict[str, list[float]] = {"panel": [], "dexie": []}
    with tempfile.TemporaryDirectory(prefix="panelot-bench-ext-") as tmp:
        ext = _prepare_extension(Path(tmp))
        for run in range(runs):
            # One fresh profile per page kind and run, so that each cold load is a first load.
            groups = (("panel",), ("pyodide",), ("dexie", "raw"))
            for group in groups if run % 2 == 0 else reversed(groups):
                with launch_extension(playwright, ext, prefix=f"panelot-bench-{group[0]}-") as (
                    context,
                    extension_id,
                ):
                    base = f"chrome-extension://{extension_id}"
                    _wait_installed(context, ext)
                    context.add_init_script(PANEL_INIT_SCRIPT)
                    page = context.new_page()
                    urls = {
                        "panel": f"{base}/sidepanel.html",
                        "pyodide": f"{base}/bench/startup.html?mode=pyodide",
                        "dexie": f"{base}/bench/startup.html?mode=dexie",
                        "raw": f"{base}/bench/startup.html?mode=raw",
                    }
                    for nav in range(1 + warm_navs):
                        phase = "cold" if nav == 0 else "warm"
                        for kind in group:
                            out = _navigate(page, urls[kind], kind)
                            times[kind][phase].append(float(out["ready"]))
                            if kind == "panel" and out["timings"]:
                                for key, value in out["timings"].items():
                                    panel_timings[phase].setdefault(key, []).append(float(value))
                            if kind == "panel" and out["marks"]:
                                for key, value in out["marks"].items():
                                    marks[phase].setdefault(key, []).append(float(value))
                            if phase == "warm" and kind in first_paint:
                                if out["first_paint"] is None:
                                    raise RuntimeError(f"{kind}: no first paint of the list")
                                first_paint[kind].append(float(out["first_paint"]))
                            progress(
                                f"startup run {run + 1}/{runs} {kind:<8} {phase} "
                                f"{out['ready']:8.1f} ms"
                            )
                        if nav == 0 and group[0] != "pyodide":
                            page.evaluate(SEED, SEEDED_THREADS)  # a list for the warm paints
    return {
        "times": times,
        "panel_timings": panel_timings,
        "marks": marks,
        "first_paint": first_paint,
    }


def summarize_startup(measured: dict[str, Any]) -> dict[str, Any]:
    """Workload entries: ``startup_cold``, ``startup_warm``, ``startup_first_paint``.

    The first two carry the panel's ``breakdown``; the last is the warm first paint of the
    stored list against Dexie's page painting the same list.
    """
    times, panel_timings = measured["times"], measured["panel_timings"]
    out: dict[str, Any] = {}
    for phase in ("cold", "warm"):
        med = {k: statistics.median(times[k][phase]) for k in KINDS}
        timing_med = {k: round(statistics.median(v), 1) for k, v in panel_timings[phase].items()}
        runtime = timing_med.get("runtime_ms") or 0.0
        own = timing_med.get("package_ms", 0.0) + timing_med.get("database_ms", 0.0)
        out[f"startup_{phase}"] = {
            "python_ms": round(med["panel"], 2),
            "dexie_ms": round(med["dexie"], 2),
            "raw_ms": round(med["raw"], 2),
            "ratio_dexie": round(med["panel"] / med["dexie"], 3),
            "ratio_raw": round(med["panel"] / med["raw"], 3),
            "runs": len(times["panel"][phase]),
            "spread": {
                impl: [round(min(times[k][phase]), 2), round(max(times[k][phase]), 2)]
                for impl, k in (("python", "panel"), ("dexie", "dexie"), ("raw", "raw"))
            },
            "pyodide_ms": round(med["pyodide"], 2),
            "pyodide_spread": [
                round(min(times["pyodide"][phase]), 2),
                round(max(times["pyodide"][phase]), 2),
            ],
            "overhead_pct": round((med["panel"] - med["pyodide"]) / med["pyodide"] * 100, 1),
            "panel_timings": timing_med,
            "package_database_pct_of_runtime": round(own / runtime * 100, 1) if runtime else None,
            "breakdown": {
                k: round(statistics.median(v), 1)
                for k, v in sorted(measured.get("marks", {}).get(phase, {}).items(), key=_by_median)
            },
        }
    paints = measured.get("first_paint") or {}
    if paints.get("panel") and paints.get("dexie"):
        panel, dexie = statistics.median(paints["panel"]), statistics.median(paints["dexie"])
        out["startup_first_paint"] = {
            "python_ms": round(panel, 2),
            "dexie_ms": round(dexie, 2),
            "raw_ms": None,
            "ratio_dexie": round(panel / dexie, 3),
            "ratio_raw": None,
            "runs": len(paints["panel"]),
            "threads": SEEDED_THREADS,
            "spread": {
                "python": [round(min(paints["panel"]), 2), round(max(paints["panel"]), 2)],
                "dexie": [round(min(paints["dexie"]), 2), round(max(paints["dexie"]), 2)],
            },
        }
    return out


def _by_median(item: tuple[str, list[float]]) -> float:
    return statistics.median(item[1])
