"""An experiment: the side panel's warm start with the runtime in an offscreen document.

Issue 40's warm target (a ready store within 4× Dexie's) is out of reach while each
panel starts its own Pyodide (docs/performance.md, start-up). This measures the other
design before anyone builds it: a copy of the extension gets an offscreen document
(``bench/page/remote_host.html``, reason ``WORKERS``) that starts the runtime once and
serves ``window.panelot`` over a BroadcastChannel, and a second panel page,
``sidepanel_remote.html``, which is the side panel's own page and modules with
``bootRuntime`` taken from ``bench/page/remote_runtime.mjs`` (no Pyodide in the panel).

In one profile, with 300 conversations stored and the host started, it interleaves
warm navigations of the panel as it is (``panel``), the panel served by the host
(``remote``) and Dexie's page (``dexie``), and prints each one's medians: the ready
store, the first paint, the page's modules in and the live list (ms since navigation),
the median round trip of a ``thread.list`` of 50 rows from each live panel (and that
both list the same), and the wasm heap the host holds. Then the browser's memory as the
host starts, a panel served by it opens, and a panel as it is opens beside it
(:func:`measure_memory`); and, cold, the first panel of a new profile whose host was
started at install, against Dexie's page in a new profile (:func:`measure_cold`).

    .venv/bin/python -m bench.offscreen [NAVIGATIONS [COLD_PROFILES]]

It is a tool for a decision, not a figure the project reports.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from bench.startup import (
    PAGE_DIR,
    PANEL_INIT_SCRIPT,
    SEED,
    SEEDED_THREADS,
    _navigate,
    _prepare_extension,
    _wait_installed,
)
from panelot.testing.panel import launch_extension

KINDS = ("panel", "remote", "dexie")
QUERIES = 40
#: The median ms of ``count`` ``thread.list`` queries one after another, and the ids listed.
ROUND_TRIPS = """async (count) => {
  const times = [];
  let rows = [];
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    rows = await window.panelot.query("thread.list", {limit: 50});
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return {ms: times[Math.floor(count / 2)], ids: rows.map((t) => t.id)};
}"""
HOST_FILES = ("remote_host.html", "remote_host.mjs", "remote_runtime.mjs")
CREATE_HOST = """() => chrome.offscreen.createDocument({
  url: "bench/remote_host.html", reasons: ["WORKERS"], justification: "bench: runtime host",
})"""


def _prepare(dest: Path) -> Path:
    """The start-up benchmark's extension copy, with the host and the remote panel added."""
    ext = _prepare_extension(dest)
    for name in HOST_FILES:
        (ext / "bench" / name).write_bytes((PAGE_DIR / name).read_bytes())
    manifest = json.loads((ext / "manifest.json").read_text())
    manifest["permissions"].append("offscreen")
    (ext / "manifest.json").write_text(json.dumps(manifest))
    html = (ext / "sidepanel.html").read_text()
    preload = '<link rel="modulepreload" href="pyodide/pyodide.asm.mjs">'
    if preload not in html or 'src="sidepanel.mjs"' not in html:
        raise RuntimeError("sidepanel.html changed: update bench/offscreen.py")
    html = html.replace(preload, "").replace('src="sidepanel.mjs"', 'src="sidepanel_remote.mjs"')
    (ext / "sidepanel_remote.html").write_text(html)
    script = (ext / "sidepanel.mjs").read_text()
    if 'from "./runtime.mjs"' not in script:
        raise RuntimeError("sidepanel.mjs changed: update bench/offscreen.py")
    script = script.replace('from "./runtime.mjs"', 'from "./bench/remote_runtime.mjs"')
    (ext / "sidepanel_remote.mjs").write_text(script)
    return ext


def measure(navigations: int) -> dict[str, dict[str, list[Any]]]:
    """Each kind's ready store, first paint and live list over interleaved warm starts."""
    found: dict[str, dict[str, list[Any]]] = {
        k: {"ready": [], "first_paint": [], "modules": [], "live": []} for k in KINDS
    }
    with (
        tempfile.TemporaryDirectory(prefix="panelot-offscreen-") as tmp,
        sync_playwright() as playwright,
    ):
        ext = _prepare(Path(tmp))
        with launch_extension(playwright, ext, prefix="panelot-offscreen-") as (context, ext_id):
            base = f"chrome-extension://{ext_id}"
            urls = {
                "panel": f"{base}/sidepanel.html",
                "remote": f"{base}/sidepanel_remote.html",
                "dexie": f"{base}/bench/startup.html?mode=dexie",
            }
            _wait_installed(context, ext)
            context.add_init_script(PANEL_INIT_SCRIPT)
            page = context.new_page()
            _navigate(page, urls["panel"], "panel")
            page.evaluate(SEED, SEEDED_THREADS)
            context.service_workers[0].evaluate(CREATE_HOST)
            # The remote panel pings until the host's store is ready (its first start).
            _navigate(page, urls["remote"], "panel")
            order = list(KINDS)
            for nav in range(navigations):
                for kind in order if nav % 2 == 0 else reversed(order):
                    out = _navigate(page, urls[kind], "dexie" if kind == "dexie" else "panel")
                    found[kind]["ready"].append(float(out["ready"]))
                    if out["first_paint"] is not None:
                        found[kind]["first_paint"].append(float(out["first_paint"]))
                    for mark in ("modules", "live"):
                        value = (out["marks"] or {}).get(mark)
                        if isinstance(value, int | float):
                            found[kind][mark].append(float(value))
            for kind in ("panel", "remote"):  # a query's round trip, once each page is live
                _navigate(page, urls[kind], "panel")
                timed = page.evaluate(ROUND_TRIPS, QUERIES)
                found[kind]["query"] = [timed["ms"]]
                found[kind]["ids"] = timed["ids"]
            if found["panel"]["ids"] != found["remote"]["ids"]:
                raise RuntimeError("the remote panel's thread.list differs from the panel's")
            memory = page.evaluate("() => window.panelot.hostMemory()")
            found["host_mib"] = {"wasm": [memory["wasm"] / 2**20]}
    return found


def measure_cold(profiles: int) -> dict[str, list[float]]:
    """The first panel of a new profile whose host was started at install, and Dexie's.

    Each run launches a fresh profile per kind (alternating which goes first); for
    ``remote`` the host is created as soon as the service worker runs, as the
    extension's ``onInstalled`` would, and the panel opens once the install's copies are
    stored (as the start-up benchmark's cold navigations do).
    """
    found: dict[str, list[float]] = {"remote": [], "dexie": [], "remote_modules": []}
    with (
        tempfile.TemporaryDirectory(prefix="panelot-offscreen-") as tmp,
        sync_playwright() as playwright,
    ):
        ext = _prepare(Path(tmp))
        for run in range(profiles):
            for kind in ("remote", "dexie") if run % 2 == 0 else ("dexie", "remote"):
                with launch_extension(playwright, ext, prefix="panelot-offscreen-") as (
                    context,
                    ext_id,
                ):
                    if kind == "remote":
                        context.service_workers[0].evaluate(CREATE_HOST)
                    _wait_installed(context, ext)
                    context.add_init_script(PANEL_INIT_SCRIPT)
                    page = context.new_page()
                    base = f"chrome-extension://{ext_id}"
                    url = (
                        f"{base}/sidepanel_remote.html"
                        if kind == "remote"
                        else f"{base}/bench/startup.html?mode=dexie"
                    )
                    out = _navigate(page, url, "panel" if kind == "remote" else "dexie")
                    found[kind].append(float(out["ready"]))
                    if kind == "remote":
                        found["remote_modules"].append(float(out["marks"]["modules"]))
    return found


HOST_READY = """async () => {
  const channel = new BroadcastChannel("panelot-remote");
  const me = crypto.randomUUID();
  try {
    await new Promise((resolve) => {
      channel.onmessage = ({data}) => { if (data.to === me) resolve(); };
      const ping = () => { channel.postMessage({from: me, id: 0, op: "ping"}); };
      ping();
      const timer = setInterval(ping, 50);
      channel.addEventListener("message", () => clearInterval(timer), {once: true});
    });
  } finally {
    channel.close();
  }
}"""
SETTLE_S = 5.0


def _tree_pss_mib(profile_marker: str) -> float:
    """The summed PSS (MiB) of a browser and of every process below it (Linux ``/proc``).

    The browser is the process without ``--type=`` whose command line holds
    ``profile_marker`` (its profile's directory).
    """
    parents: dict[int, int] = {}
    root = None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        if profile_marker in cmdline and "--type=" not in cmdline:
            root = int(entry.name)
    if root is None:
        raise RuntimeError("the browser's process was not found")
    tree = {root}
    grown = True
    while grown:
        below = {pid for pid, parent in parents.items() if parent in tree} - tree
        grown = bool(below)
        tree |= below
    total_kib = 0
    for pid in tree:
        try:
            rollup = (Path("/proc") / str(pid) / "smaps_rollup").read_text()
        except OSError:
            continue
        for line in rollup.splitlines():
            if line.startswith("Pss:"):
                total_kib += int(line.split()[1])
    return total_kib / 1024


def measure_memory() -> dict[str, float]:
    """The browser's memory (PSS, MiB) as the host starts, then a remote panel, then a panel.

    ``none``: no page of the extension open (only the context's blank tab), once the
    install's copies are stored; ``host``: the host's store ready; ``remote``: and a
    panel served by it, live; ``panel``: and a panel as it is (its own runtime), live.
    Each figure is taken :data:`SETTLE_S` after its step.
    """
    found: dict[str, float] = {}
    with (
        tempfile.TemporaryDirectory(prefix="panelot-offscreen-") as tmp,
        sync_playwright() as playwright,
    ):
        ext = _prepare(Path(tmp))
        marker = "panelot-offscreen-mem-"
        with launch_extension(playwright, ext, prefix=marker) as (context, ext_id):
            _wait_installed(context, ext)
            context.add_init_script(PANEL_INIT_SCRIPT)
            worker = context.service_workers[0]
            time.sleep(SETTLE_S)
            found["none"] = _tree_pss_mib(marker)
            worker.evaluate(CREATE_HOST)
            worker.evaluate(HOST_READY)
            time.sleep(SETTLE_S)
            found["host"] = _tree_pss_mib(marker)
            for kind, page_name in (("remote", "sidepanel_remote"), ("panel", "sidepanel")):
                page = context.new_page()
                _navigate(page, f"chrome-extension://{ext_id}/{page_name}.html", "panel")
                time.sleep(SETTLE_S)
                found[kind] = _tree_pss_mib(marker)
    return found


def main(argv: list[str]) -> int:
    """Run the measurements and print the medians; 2 on bad arguments."""
    if len(argv) > 2:
        print(__doc__)
        return 2
    navigations = int(argv[0]) if argv else 12
    profiles = int(argv[1]) if len(argv) > 1 else 5
    found = measure(navigations)
    dexie = statistics.median(found["dexie"]["ready"])
    print(f"warm, {navigations} navigations each (ms since navigation, medians):")
    print(f"  the host's wasm heap: {found['host_mib']['wasm'][0]:.1f} MiB")
    for kind in KINDS:
        row = {k: statistics.median(v) for k, v in found[kind].items() if v and k != "ids"}
        text = "  ".join(f"{k} {v:7.1f}" for k, v in row.items())
        print(f"  {kind:7} {text}  ready/dexie {row['ready'] / dexie:5.2f}×")
    memory = measure_memory()
    steps = list(memory)
    print("  the browser's PSS: " + ", ".join(f"{k} {v:.0f} MiB" for k, v in memory.items()))
    print("    each step's cost: ", end="")
    print(", ".join(f"{b} +{memory[b] - memory[a]:.0f}" for a, b in pairwise(steps)))
    if profiles:
        cold = measure_cold(profiles)
        remote, dexie = statistics.median(cold["remote"]), statistics.median(cold["dexie"])
        print(f"cold, {profiles} new profiles each: remote ready {remote:7.1f}  ", end="")
        print(f"dexie ready {dexie:7.1f}  ready/dexie {remote / dexie:5.2f}×", end="")
        print(f"  (remote modules {statistics.median(cold['remote_modules']):7.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
