"""Benchmark the Panelot runtime (Python in Pyodide) against Dexie 4 and plain IndexedDB.

Serves ``dist/web`` (built by ``python3 build.py build``) with ``bench/page`` mapped to
``/bench/``, opens ``/bench/index.html`` in headless Chromium and measures every workload
of ``bench/page/workloads.mjs`` (JS: Dexie and raw IndexedDB) and
``bench/page/workloads.py`` (Python: the real panelot API) in its three implementations,
interleaved: each run measures every workload once per implementation, in an order
rotated from run to run. Every measurement uses a fresh database, created and seeded
with plain IndexedDB before the implementation opens it; only the operation is timed,
and all three implementations must return the same check value.

Then, in the same Chromium: the live PyProxy count across the workloads and the wasm
heap around 10,000 appends (``"memory"``), and startup of the extension's side-panel
page, cold and warm, against bare ``loadPyodide`` (see bench/startup.py).

Usage::

    .venv/bin/python -m bench.run              # 5 runs (+1 warm-up), writes bench/results/
    .venv/bin/python -m bench.run --runs 9
    .venv/bin/python -m bench.run --only append --only startup   # partial, writes nothing
    .venv/bin/python -m bench.run --quick      # smoke test: small sizes, 1 run, no files
    .venv/bin/python -m bench.run --profile context   # cProfile of the Python side

Results go to ``bench/results/latest.json``, ``bench/results/<YYYY-MM-DD>.json``,
``bench/results/latest.md`` (the table) and ``bench/results/latest.png`` (the chart);
``--out PATH`` writes PATH and its ``.md`` instead. The table is also printed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.server
import json
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from bench.report import chart, markdown
from bench.startup import measure_startup, summarize_startup

ROOT = Path(__file__).resolve().parent.parent
DIST_WEB = ROOT / "dist" / "web"
PAGE_DIR = ROOT / "bench" / "page"
RESULTS_DIR = ROOT / "bench" / "results"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
#: Bench page only: lets each implementation start from a collected JS heap.
PAGE_ARGS = ["--js-flags=--expose-gc"]
IMPLS = ("python", "dexie", "raw")
#: --only names that are not page workloads.
SPECIAL = ["startup", "memory"]
BOOT_TIMEOUT_MS = 180_000
MEMORY_APPENDS = 10_000


class BenchHandler(http.server.SimpleHTTPRequestHandler):
    """Serves ``/bench/...`` from bench/page and everything else from dist/web."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".wasm": "application/wasm",
    }

    def translate_path(self, path: str) -> str:
        url_path = unquote(urlsplit(path).path)
        if url_path == "/bench" or url_path.startswith("/bench/"):
            self.directory = str(PAGE_DIR)
            path = path[len("/bench") :] or "/"
        else:
            self.directory = str(DIST_WEB)
        return super().translate_path(path)

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet."""


@contextmanager
def serve() -> Iterator[str]:
    """Serve dist/web and bench/page on a free 127.0.0.1 port; yield the base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), BenchHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def cpu_model() -> str:
    """The CPU model name, as well as the platform lets us tell."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _launch_bench_page(browser: Any, base_url: str) -> Any:
    page = browser.new_page()
    page.on(
        "console",
        lambda msg: (
            progress(f"console.{msg.type}: {msg.text}")
            if msg.type in ("error", "warning")
            else None
        ),
    )
    page.on("pageerror", lambda exc: progress(f"page error: {exc}"))
    page.goto(f"{base_url}/bench/index.html")
    page.wait_for_function(
        "() => ['ready', 'error'].includes(window.bench?.state)", timeout=BOOT_TIMEOUT_MS
    )
    if page.evaluate("() => window.bench.state") != "ready":
        sys.exit(f"[bench] the bench page failed: {page.evaluate('() => window.bench.error')}")
    return page


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def measure_all(
    base_url: str,
    runs: int,
    warmup: int,
    quick: bool,
    only: list[str] | None,
    profile: str | None = None,
) -> dict[str, Any]:
    """Drive the bench page (and the extension, for startup); return machine info and timings."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=[*CHROMIUM_ARGS, *PAGE_ARGS]
        )
        try:
            page = _launch_bench_page(browser, base_url)
            info = page.evaluate("() => window.bench.info()")
            known = [w["name"] for w in info["workloads"]]
            if profile is not None:
                if profile not in known:
                    sys.exit(f"[bench] unknown workload {profile!r}; known: {known}")
                out = page.evaluate(
                    "([w, quick]) => window.bench.measure(w, 'python', 0, quick, true)",
                    [profile, quick],
                )
                print(f"{profile}: {out['ms']:.1f} ms\n{out['profile']}")
                sys.exit(0)
            workloads = known
            if only:
                unknown = sorted(set(only) - set(known) - set(SPECIAL))
                if unknown:
                    sys.exit(f"[bench] unknown workloads {unknown}; known: {known + SPECIAL}")
                workloads = [w for w in known if w in only]
            timings: dict[str, dict[str, list[float]]] = {
                w: {impl: [] for impl in IMPLS} for w in workloads
            }
            appends = None
            if not only or "memory" in only:
                # First, on a fresh heap: later workloads raise its high-water mark.
                count = 200 if quick else MEMORY_APPENDS
                progress(f"memory: {count} appends, one per transaction")
                appends = page.evaluate("(n) => window.bench.memory(n)", count)
            proxies_before = page.evaluate("() => window.bench.proxies()")
            growth: dict[str, int] = {}
            total = warmup + runs
            for run in range(total):
                label = (
                    f"warm-up {run + 1}/{warmup}"
                    if run < warmup
                    else f"run {run - warmup + 1}/{runs}"
                )
                for name in workloads:
                    order = IMPLS[run % len(IMPLS) :] + IMPLS[: run % len(IMPLS)]
                    checks: dict[str, Any] = {}
                    for impl in order:
                        before = page.evaluate("() => window.bench.proxies()")
                        out = page.evaluate(
                            "([w, impl, run, quick]) => window.bench.measure(w, impl, run, quick)",
                            [name, impl, run, quick],
                        )
                        checks[impl] = out["check"]
                        if impl == "python":
                            growth[name] = max(growth.get(name, 0), out["proxies"] - before)
                        if run >= warmup:
                            timings[name][impl].append(out["ms"])
                        progress(f"{label} {name:<14} {impl:<6} {out['ms']:9.1f} ms")
                    if len({_canonical(c) for c in checks.values()}) != 1:
                        sys.exit(f"[bench] {name}: implementations disagree: {checks}")
            memory: dict[str, Any] = {
                "pyproxies": {
                    "before": proxies_before,
                    "after": page.evaluate("() => window.bench.proxies()"),
                    "growth_by_workload": growth,
                    "max_growth": max(growth.values(), default=0),
                }
            }
            if appends is not None:
                memory["appends"] = appends
            page.close()
            startup = None
            if not only or "startup" in only:
                startup = measure_startup(
                    pw,
                    CHROMIUM,
                    CHROMIUM_ARGS,
                    runs=runs,
                    warm_navs=1 if quick else 2,
                    progress=progress,
                )
            machine = {
                "cpu": cpu_model(),
                "cores": os.cpu_count(),
                "chromium": browser.version,
                "pyodide": info["pyodide"],
                "dexie": info["dexie"],
                "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "runs": runs,
                "warmup": warmup,
                "quick": quick,
            }
        finally:
            browser.close()
    sizes = {
        w["name"]: f"{w['sizes']['quick' if quick else 'full']:,} {w.get('unit', '')}".strip()
        for w in info["workloads"]
    }
    return {
        "machine": machine,
        "timings": timings,
        "sizes": sizes,
        "memory": memory,
        "startup": startup,
    }


def summarize(
    machine: dict[str, Any], timings: dict[str, dict[str, list[float]]]
) -> dict[str, Any]:
    """Build the results document (the shape of bench/results/latest.json)."""
    workloads: dict[str, Any] = {}
    for name, by_impl in timings.items():
        med = {impl: statistics.median(by_impl[impl]) for impl in IMPLS}
        workloads[name] = {
            "python_ms": round(med["python"], 2),
            "dexie_ms": round(med["dexie"], 2),
            "raw_ms": round(med["raw"], 2),
            "ratio_dexie": round(med["python"] / med["dexie"], 3),
            "ratio_raw": round(med["python"] / med["raw"], 3),
            "runs": len(by_impl["python"]),
            "spread": {
                impl: [round(min(by_impl[impl]), 2), round(max(by_impl[impl]), 2)] for impl in IMPLS
            },
        }
    return {"machine": machine, "workloads": workloads}


def write_file(path: Path, text: str | bytes | None = None, doc: Any = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if doc is not None:
        text = json.dumps(doc, indent=2) + "\n"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text or "")
    progress(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="measured runs (default 5)")
    parser.add_argument("--warmup", type=int, default=None, help="warm-up runs (default 1)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: small sizes, 1 run, no warm-up; writes no file unless --out",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="WORKLOAD",
        help="run only this workload (repeatable; also 'startup' and 'memory')",
    )
    parser.add_argument(
        "--out", type=Path, help="write the results JSON to this file only (plus .md next to it)"
    )
    parser.add_argument(
        "--profile",
        metavar="WORKLOAD",
        help="run WORKLOAD's Python implementation once under cProfile and print the stats",
    )
    parser.add_argument("--no-chart", action="store_true", help="do not draw the PNG chart")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else args.runs
    warmup = args.warmup if args.warmup is not None else (0 if args.quick else 1)
    if runs < 1 or warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")
    if (
        not (DIST_WEB / "runtime.mjs").is_file()
        or not (DIST_WEB / "vendor" / "dexie.mjs").is_file()
        or not (ROOT / "dist" / "extension" / "sidepanel.html").is_file()
    ):
        sys.exit("[bench] dist/ is missing or incomplete: run `python3 build.py build` first")

    started = time.monotonic()
    with serve() as base_url:
        measured = measure_all(base_url, runs, warmup, args.quick, args.only, args.profile)
    results = summarize(measured["machine"], measured["timings"])
    if measured["startup"] is not None:
        results["workloads"].update(summarize_startup(measured["startup"]))
    results["memory"] = measured["memory"]
    sizes = dict(measured["sizes"])
    sizes.update({"startup_cold": "new profile", "startup_warm": "reload"})
    table = markdown(results, sizes)
    progress(f"done in {time.monotonic() - started:.0f} s")

    if args.out is not None:
        write_file(args.out, doc=results)
        write_file(args.out.with_suffix(".md"), table)
    elif args.quick or args.only:
        progress("quick or partial run: bench/results/ left untouched (use --out to save)")
    else:
        write_file(RESULTS_DIR / "latest.json", doc=results)
        write_file(RESULTS_DIR / f"{dt.date.today().isoformat()}.json", doc=results)
        write_file(RESULTS_DIR / "latest.md", table)
        if not args.no_chart:
            chart(results, RESULTS_DIR / "latest.png")
            progress(f"wrote {(RESULTS_DIR / 'latest.png').relative_to(ROOT)}")
    print(table)


if __name__ == "__main__":
    main()
