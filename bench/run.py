"""Benchmark panelot.idb (Python in Pyodide) against Dexie 4 and plain IndexedDB.

Serves ``dist/web`` (built by ``python3 build.py build``) with ``bench/page`` mapped to
``/bench/``, opens ``/bench/index.html`` in headless Chromium and measures every workload
of ``bench/page/workloads.mjs`` in its three implementations, interleaved: each run
measures every workload once per implementation, in an order rotated from run to run.
Every measurement uses a fresh database.

Usage::

    .venv/bin/python -m bench.run              # 5 runs (+1 warm-up), writes bench/results/
    .venv/bin/python -m bench.run --runs 9
    .venv/bin/python -m bench.run --quick      # smoke test: small sizes, 1 run, no files

Results go to ``bench/results/latest.json`` and ``bench/results/<YYYY-MM-DD>.json``
(``--out PATH`` writes one given file instead), and a Markdown table is printed.
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
IMPLS = ("python", "dexie", "raw")
BOOT_TIMEOUT_MS = 180_000


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


def measure_all(
    base_url: str, runs: int, warmup: int, quick: bool, only: list[str] | None
) -> dict[str, Any]:
    """Drive the bench page; return machine info and raw timings per workload and impl."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
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
                sys.exit(
                    f"[bench] the bench page failed: {page.evaluate('() => window.bench.error')}"
                )
            info = page.evaluate("() => window.bench.info()")
            workloads = [w["name"] for w in info["workloads"]]
            if only:
                unknown = sorted(set(only) - set(workloads))
                if unknown:
                    sys.exit(f"[bench] unknown workloads {unknown}; known: {workloads}")
                workloads = [w for w in workloads if w in only]
            timings: dict[str, dict[str, list[float]]] = {
                w: {impl: [] for impl in IMPLS} for w in workloads
            }
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
                        out = page.evaluate(
                            "([w, impl, run, quick]) => window.bench.measure(w, impl, run, quick)",
                            [name, impl, run, quick],
                        )
                        checks[impl] = out["check"]
                        if run >= warmup:
                            timings[name][impl].append(out["ms"])
                        progress(f"{label} {name:<14} {impl:<6} {out['ms']:9.1f} ms")
                    if len({json.dumps(c) for c in checks.values()}) != 1:
                        sys.exit(f"[bench] {name}: implementations disagree: {checks}")
            machine = {
                "cpu": cpu_model(),
                "cores": os.cpu_count(),
                "chromium": browser.version,
                "pyodide": info["pyodide"],
                "dexie": info["dexie"],
                "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            }
        finally:
            browser.close()
    return {"machine": machine, "timings": timings, "sizes": info["workloads"]}


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


def markdown(results: dict[str, Any], sizes: dict[str, int]) -> str:
    """Render the results as a Markdown table."""
    m = results["machine"]
    lines = [
        f"Chromium {m['chromium']}, Pyodide {m['pyodide']}, Dexie {m['dexie']}, "
        f"{m['cpu']} ({m['cores']} cores), {m['date']}",
        "",
        "| workload | size | runs | Python ms (min–max) | Dexie ms (min–max) "
        "| raw IDB ms (min–max) | Python/Dexie | Python/raw |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def cell(w: dict[str, Any], impl: str) -> str:
        lo, hi = w["spread"][impl]
        return f"{w[f'{impl}_ms']:.1f} ({lo:.1f}–{hi:.1f})"

    for name, w in results["workloads"].items():
        lines.append(
            f"| {name} | {sizes.get(name, '')} | {w['runs']} | {cell(w, 'python')} "
            f"| {cell(w, 'dexie')} | {cell(w, 'raw')} | {w['ratio_dexie']:.2f}× "
            f"| {w['ratio_raw']:.2f}× |"
        )
    return "\n".join(lines)


def write_json(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
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
        "--only", action="append", metavar="WORKLOAD", help="run only this workload (repeatable)"
    )
    parser.add_argument("--out", type=Path, help="write the results to this file only")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else args.runs
    warmup = args.warmup if args.warmup is not None else (0 if args.quick else 1)
    if runs < 1 or warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")
    if (
        not (DIST_WEB / "runtime.mjs").is_file()
        or not (DIST_WEB / "vendor" / "dexie.mjs").is_file()
    ):
        sys.exit("[bench] dist/web is missing or incomplete: run `python3 build.py build` first")

    started = time.monotonic()
    with serve() as base_url:
        measured = measure_all(base_url, runs, warmup, args.quick, args.only)
    results = summarize(measured["machine"], measured["timings"])
    sizes = {w["name"]: w["sizes"]["quick" if args.quick else "full"] for w in measured["sizes"]}
    progress(f"done in {time.monotonic() - started:.0f} s")

    if args.out is not None:
        write_json(args.out, results)
    elif args.quick or args.only:
        progress("quick or partial run: bench/results/ left untouched (use --out to save)")
    else:
        write_json(RESULTS_DIR / "latest.json", results)
        write_json(RESULTS_DIR / f"{dt.date.today().isoformat()}.json", results)
    print(markdown(results, sizes))


if __name__ == "__main__":
    main()
