"""Benchmark the Panelot runtime (Python in Pyodide) against Dexie 4 and plain IndexedDB.

Serves ``dist/web`` (built by ``python3 build.py build``) with ``bench/page`` mapped to
``/bench/``, opens ``/bench/index.html`` in headless Chromium and measures every workload
of ``bench/page/workloads.mjs`` (JS: Dexie and raw IndexedDB) and
``bench/page/workloads.py`` (Python: the real panelot API) in its three implementations,
interleaved: each run measures every workload once per implementation, in an order
rotated from run to run. Every measurement uses a fresh database, created and seeded
with plain IndexedDB before the implementation opens it; only the operation is timed,
and all three implementations must return the same check value.

The ``observe_*`` workloads run one Python workload in four variants instead (observe
off, on, on with a live query open on another thread, on the written thread): their
ratios are against observe off. ``observe_append`` also runs ``interleaved``: off and on
in one measurement, alternating in blocks of 50 appends, so that the machine's drift
from one measurement to the next (often larger than the cost measured) falls on both.
``live_notify`` opens a second bench page in the same browser context: page A appends
nodes one at a time, page B's live query (Python's, and Dexie's ``liveQuery``) stamps
when each new node arrives.

``backup`` and ``restore`` (whole-database export and import in dexie-export-import's
format, against the addon's ``exportDB`` and ``importInto``) have no raw IndexedDB
implementation; they also record the JS heap around the operation for both sides and
Python's wasm heap (``heap`` in their entries; see :func:`summarize_heap`).

Then, in the same Chromium: the live PyProxy count across the workloads and the wasm
heap around 10,000 appends (``"memory"``), and startup of the extension's side-panel
page, cold and warm, against bare ``loadPyodide`` (see bench/startup.py), and a turn
in the side panel on a 10-node and a 10,000-node thread (``panel_turn``, see
bench/panel_turn.py). ``search`` (issue 38): the runtime's full-text search against
MiniSearch on one corpus, ``search_build``, ``search_query`` cold and warm and
``search_catch_up`` (see bench/search.py; Python's figures are "not available" while the
runtime has no ``search.messages``).
``sync`` (issue 39): the store's ``sync.push`` and ``sync.pull`` against PouchDB's
replication with the test server (tests/support/couch_server.cjs, started with node),
``sync_push``, ``sync_pull`` and ``sync_latency`` (see bench/sync.py).

Usage::

    .venv/bin/python -m bench.run              # 5 runs (+1 warm-up), writes bench/results/
    .venv/bin/python -m bench.run --runs 9
    .venv/bin/python -m bench.run --only append --only startup   # partial, writes nothing
    .venv/bin/python -m bench.run --quick      # smoke test: small sizes, 1 run, no files
    .venv/bin/python -m bench.run --profile context   # cProfile of the Python side
    .venv/bin/python -m bench.run --profile observe_append:live_same   # one observe variant
    .venv/bin/python -m bench.run --only live_notify --only observe_append --live-gap 100

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
from typing import Any, NoReturn
from urllib.parse import unquote, urlsplit

from bench.panel_turn import measure_panel_turn, summarize_panel_turn
from bench.report import chart, markdown
from bench.search import measure_search, search_markdown, summarize_search
from bench.startup import measure_startup, summarize_startup
from bench.sync import measure_sync, summarize_sync, sync_markdown
from panelot.testing.panel import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parent.parent
DIST_WEB = ROOT / "dist" / "web"
PAGE_DIR = ROOT / "bench" / "page"
RESULTS_DIR = ROOT / "bench" / "results"
#: Bench page only: lets each implementation start from a collected JS heap, and makes
#: ``performance.memory`` exact (else it is bucketed and refreshed every 20 minutes).
PAGE_ARGS = ["--js-flags=--expose-gc", "--enable-precise-memory-info"]
IMPLS = ("python", "dexie", "raw")
#: --only names that are not page workloads.
SPECIAL = ["startup", "memory", "live_notify", "panel_turn", "search", "sync"]
#: live_notify's readers: Python's live query at its default interval and at 0, and Dexie's.
LIVE_IMPLS = ("python", "python_i0", "dexie")
LIVE_INTERVALS = {"python": 0.05, "python_i0": 0.0, "dexie": 0.0}
LIVE_TIMEOUT_MS = 10_000
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
    """A booted bench page in ``browser`` (a browser context)."""
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


def _profile(page: Any, workloads: list[dict[str, Any]], spec: str, quick: bool) -> NoReturn:
    """Run ``WORKLOAD`` (or ``WORKLOAD:VARIANT``, for ``observe_*``) once under cProfile."""
    name, _, variant = spec.partition(":")
    impls = {w["name"]: list(w.get("impls") or IMPLS) for w in workloads}
    if name not in impls:
        sys.exit(f"[bench] unknown workload {name!r}; known: {sorted(impls)}")
    python_impls = [i for i in impls[name] if i not in ("dexie", "raw")]
    impl = variant or ("python" if "python" in python_impls else python_impls[-1])
    if impl not in python_impls:
        sys.exit(f"[bench] {name} has no Python variant {impl!r}; known: {python_impls}")
    out = page.evaluate(
        "([w, impl, quick]) => window.bench.measure(w, impl, 0, quick, true)",
        [name, impl, quick],
    )
    print(f"{name} ({impl}): {out['ms']:.1f} ms\n{out['profile']}")
    sys.exit(0)


def measure_live_notify(
    page_a: Any, page_b: Any, runs: int, warmup: int, quick: bool, gap_ms: float
) -> dict[str, dict[str, list[float]]]:
    """Commit-to-result latencies: ``{impl: {"notify": [...], "write": [...]}}`` in ms.

    ``notify`` runs from the commit in page A to the result holding the new node in
    page B, with A's time moved into B's clock (the pages' clocks may disagree by as much
    as the latency: see ``clockOffset`` in bench.mjs). The commit is stamped where each
    side takes it up, before announcing it: Python's feed receiving it, before the set
    is encoded; Dexie's event in page A. (The write's promise resolves only after the
    announcement, which a pause of page A, a collection, can hold up while page B already
    reads the node.) ``write`` is the write itself. Each sample waits for its own node before
    the next write, then ``gap_ms`` more.
    """
    out: dict[str, dict[str, list[float]]] = {i: {"notify": [], "write": []} for i in LIVE_IMPLS}
    for run in range(warmup + runs):
        order = LIVE_IMPLS[run % len(LIVE_IMPLS) :] + LIVE_IMPLS[: run % len(LIVE_IMPLS)]
        counts = {}
        for impl in order:
            setup = page_a.evaluate(
                "([impl, run, quick]) => window.bench.liveSetup(impl, run, quick)",
                [impl, run, quick],
            )
            db_name, args = setup["dbName"], setup["args"]
            tid = args["threadId"]
            first = page_b.evaluate(
                "([impl, db, tid, interval]) => window.bench.liveOpen(impl, db, tid, interval)",
                [impl, db_name, tid, LIVE_INTERVALS[impl]],
            )
            page_a.evaluate("([i, db]) => window.bench.liveWriterOpen(i, db)", [impl, db_name])
            # Page A's clock minus page B's: A's times move into B's clock by subtracting it.
            skew = page_b.evaluate("() => window.bench.clockOffset()")
            notify, write = [], []
            try:
                for message in args["messages"]:
                    w = page_a.evaluate(
                        "([i, tid, m]) => window.bench.liveWrite(i, tid, m)", [impl, tid, message]
                    )
                    arrived = page_b.evaluate(
                        "([id, ms]) => window.bench.liveWait(id, ms)", [w["id"], LIVE_TIMEOUT_MS]
                    )
                    notify.append(arrived - (w["tc"] - skew["offset"]))
                    write.append(w["t1"] - w["t0"])
                    if gap_ms > 0:
                        time.sleep(gap_ms / 1000)
            finally:
                closed = page_b.evaluate("() => window.bench.liveClose()")
                page_a.evaluate("([i, db]) => window.bench.liveWriterClose(i, db)", [impl, db_name])
            counts[impl] = [first, closed["count"]]
            if closed["count"] != args["seeded"] + len(args["messages"]):
                sys.exit(f"[bench] live_notify {impl}: the last result had {closed['count']} nodes")
            if run >= warmup:
                out[impl]["notify"] += notify
                out[impl]["write"] += write
            label = f"warm-up {run + 1}/{warmup}" if run < warmup else f"run {run - warmup + 1}"
            progress(
                f"{label} live_notify    {impl:<9} median {statistics.median(notify):6.1f} ms, "
                f"max {max(notify):6.1f} ms over {len(notify)} commits, "
                f"{closed['results']} results (page clocks {skew['offset']:+.2f} ms apart, "
                f"round trip {skew['rtt']:.2f} ms)"
            )
        if len({_canonical(c) for c in counts.values()}) != 1:
            sys.exit(f"[bench] live_notify: readers disagree: {counts}")
    return out


def measure_all(
    base_url: str,
    runs: int,
    warmup: int,
    quick: bool,
    only: list[str] | None,
    profile: str | None = None,
    live_gap_ms: float = 0.0,
) -> dict[str, Any]:
    """Drive the bench page (and the extension, for startup); return machine info and timings."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=[*CHROMIUM_ARGS, *PAGE_ARGS]
        )
        try:
            # A context of its own (as browser.new_page() makes), which live_notify's
            # second page joins.
            context = browser.new_context()
            page = _launch_bench_page(context, base_url)
            info = page.evaluate("() => window.bench.info()")
            known = [w["name"] for w in info["workloads"]]
            if profile is not None:
                _profile(page, info["workloads"], profile, quick)
            workloads = known
            if only:
                unknown = sorted(set(only) - set(known) - set(SPECIAL))
                if unknown:
                    sys.exit(f"[bench] unknown workloads {unknown}; known: {known + SPECIAL}")
                workloads = [w for w in known if w in only]
            impls_of = {w["name"]: tuple(w.get("impls") or IMPLS) for w in info["workloads"]}
            timings: dict[str, dict[str, list[float]]] = {
                w: {impl: [] for impl in impls_of[w]} for w in workloads
            }
            # Heap marks of the workloads that ask for them, warm-up included (the wasm
            # heap only grows: its first measurement is the telling one).
            heaps: dict[str, dict[str, list[dict[str, Any]]]] = {}
            live_runs: dict[str, dict[str, list[int]]] = {}
            interleaved: dict[str, list[dict[str, float]]] = {}
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
                    impls = impls_of[name]
                    order = impls[run % len(impls) :] + impls[: run % len(impls)]
                    checks: dict[str, Any] = {}
                    for impl in order:
                        before = page.evaluate("() => window.bench.proxies()")
                        out = page.evaluate(
                            "([w, impl, run, quick]) => window.bench.measure(w, impl, run, quick)",
                            [name, impl, run, quick],
                        )
                        checks[impl] = out["check"]
                        if "heap" in out:
                            mark = {**out["heap"], "measured": run >= warmup}
                            heaps.setdefault(name, {}).setdefault(impl, []).append(mark)
                        if "proxies" in out:  # a Python measurement
                            growth[name] = max(growth.get(name, 0), out["proxies"] - before)
                        if run >= warmup:
                            timings[name][impl].append(out["ms"])
                            if impl == "interleaved":
                                interleaved.setdefault(name, []).append(
                                    {k: out[k] for k in ("off_ms", "on_ms", "ratio")}
                                )
                            if "live_runs" in out:
                                runs_of = live_runs.setdefault(name, {})
                                runs_of.setdefault(impl, []).append(out["live_runs"])
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
            live = None
            if not only or "live_notify" in only:
                progress("live_notify: a second bench page in the same browser context")
                page_b = _launch_bench_page(context, base_url)
                try:
                    live = measure_live_notify(page, page_b, runs, warmup, quick, live_gap_ms)
                finally:
                    page_b.close()
            page.close()
            search = None
            if not only or "search" in only:
                progress("search: the runtime's full-text search against MiniSearch")
                search = measure_search(context, base_url, runs, quick, progress)
            sync = None
            if not only or "sync" in only:
                progress("sync: the store's push and pull against PouchDB's replication")
                sync = measure_sync(context, base_url, runs, warmup, quick, progress)
            context.close()
            startup = None
            if not only or "startup" in only:
                startup = measure_startup(
                    pw,
                    runs=runs,
                    warm_navs=1 if quick else 2,
                    progress=progress,
                )
            turn = None
            if not only or "panel_turn" in only:
                turn = measure_panel_turn(pw, runs, warmup, quick, progress=progress)
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
    scale = "quick" if quick else "full"
    sizes = {
        w["name"]: w["labels"][scale]
        if w.get("labels")
        else f"{w['sizes'][scale]:,} {w.get('unit', '')}".strip()
        for w in [*info["workloads"], info["live"]]
    }
    sizes["live_notify_i0"] = sizes[info["live"]["name"]]
    if live is not None:
        machine["live_gap_ms"] = live_gap_ms
    return {
        "machine": machine,
        "timings": timings,
        "heaps": heaps,
        "live_runs": live_runs,
        "interleaved": interleaved,
        "live": live,
        "sizes": sizes,
        "memory": memory,
        "startup": startup,
        "panel_turn": turn,
        "search": search,
        "sync": sync,
    }


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def summarize_live(live: dict[str, dict[str, list[float]]], runs: int) -> dict[str, Any]:
    """The ``live_notify`` entries: commit-to-result latency, median and p95.

    ``live_notify`` is Python at the default interval, ``live_notify_i0`` at interval 0,
    each against the same Dexie samples.
    """
    dexie = live["dexie"]["notify"]
    out: dict[str, Any] = {}
    for name, impl in (("live_notify", "python"), ("live_notify_i0", "python_i0")):
        python = live[impl]["notify"]
        med_p, med_d = statistics.median(python), statistics.median(dexie)
        p95_p, p95_d = _p95(python), _p95(dexie)
        out[name] = {
            "python_ms": round(med_p, 2),
            "dexie_ms": round(med_d, 2),
            "raw_ms": None,
            "ratio_dexie": round(med_p / med_d, 3),
            "ratio_raw": None,
            "runs": runs,
            "spread": {
                "python": [round(min(python), 2), round(max(python), 2)],
                "dexie": [round(min(dexie), 2), round(max(dexie), 2)],
            },
            "samples": len(python),
            "python_p95_ms": round(p95_p, 2),
            "dexie_p95_ms": round(p95_d, 2),
            "ratio_p95": round(p95_p / p95_d, 3),
            "interval_ms": LIVE_INTERVALS[impl] * 1000,
            "python_write_ms": round(statistics.median(live[impl]["write"]), 2),
            "dexie_write_ms": round(statistics.median(live["dexie"]["write"]), 2),
        }
    return out


def summarize_observe(
    timings: dict[str, list[float]],
    live_runs: dict[str, list[int]],
    interleaved: list[dict[str, float]] | None = None,
) -> dict[str, Any]:
    """One ``observe_*`` workload: the median of each variant and its ratio to ``off``.

    ``interleaved`` (``observe_append``): each run's off and on time from one
    measurement that alternates them in blocks, and its ratio (the median over pairs of
    blocks of on / off); ``interleaved["ratio"]`` is the median of the runs' ratios,
    with their spread.
    """
    timings = {v: ms for v, ms in timings.items() if v != "interleaved"}
    med = {variant: statistics.median(ms) for variant, ms in timings.items()}
    entry: dict[str, Any] = {f"{v}_ms": round(m, 2) for v, m in med.items()}
    for variant, m in med.items():
        if variant != "off":
            entry[f"ratio_{variant}"] = round(m / med["off"], 3)
    entry["runs"] = len(timings["off"])
    entry["spread"] = {v: [round(min(ms), 2), round(max(ms), 2)] for v, ms in timings.items()}
    entry["live_runs"] = {v: round(statistics.median(r), 1) for v, r in live_runs.items()}
    if interleaved:
        ratios = [run["ratio"] for run in interleaved]
        entry["interleaved"] = {
            "ratio": round(statistics.median(ratios), 3),
            "spread": [round(min(ratios), 3), round(max(ratios), 3)],
            "off_ms": round(statistics.median(run["off_ms"] for run in interleaved), 2),
            "on_ms": round(statistics.median(run["on_ms"] for run in interleaved), 2),
            "runs": len(ratios),
        }
    return entry


def summarize_heap(marks: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """One workload's heap figures by implementation (bytes).

    ``js_growth_bytes``: the JS heap in use when ``run`` resolved, less before it (after
    a full GC), median of the measured runs; ``js_retained_bytes`` the same after a full
    GC. Python's ``wasm_growth_bytes`` is the largest growth of the wasm heap across one
    measurement, warm-up included (it never shrinks, so only the first measurements
    grow it), ``wasm_first_growth_bytes`` the first measurement's, ``wasm_total_growth_bytes``
    the sum over the workload's measurements (other workloads' in between not counted),
    ``wasm_before_bytes`` its size before the first.
    """
    out: dict[str, Any] = {}
    for impl, all_marks in marks.items():
        measured = [m for m in all_marks if m["measured"]] or all_marks
        entry: dict[str, Any] = {
            "js_growth_bytes": round(
                statistics.median(m["js_end"] - m["js_before"] for m in measured)
            ),
            "js_retained_bytes": round(
                statistics.median(m["js_retained"] - m["js_before"] for m in measured)
            ),
        }
        if impl == "python":
            growth = [m["wasm_end"] - m["wasm_before"] for m in all_marks]
            entry.update(
                {
                    "wasm_growth_bytes": max(growth),
                    "wasm_first_growth_bytes": growth[0],
                    "wasm_total_growth_bytes": sum(growth),
                    "wasm_before_bytes": all_marks[0]["wasm_before"],
                }
            )
        out[impl] = entry
    return out


def summarize(
    machine: dict[str, Any],
    timings: dict[str, dict[str, list[float]]],
    live: dict[str, dict[str, list[float]]] | None = None,
    live_runs: dict[str, dict[str, list[int]]] | None = None,
    heaps: dict[str, dict[str, list[dict[str, Any]]]] | None = None,
    interleaved: dict[str, list[dict[str, float]]] | None = None,
) -> dict[str, Any]:
    """Build the results document (the shape of bench/results/latest.json).

    A workload without a raw IndexedDB implementation has ``raw_ms`` and ``ratio_raw``
    None; one measured for memory has ``heap`` (:func:`summarize_heap`).
    """
    workloads: dict[str, Any] = {}
    observe: dict[str, Any] = {}
    for name, by_impl in timings.items():
        if "off" in by_impl:
            observe[name] = summarize_observe(
                by_impl, (live_runs or {}).get(name, {}), (interleaved or {}).get(name)
            )
            continue
        impls = [impl for impl in IMPLS if by_impl.get(impl)]
        med = {impl: statistics.median(by_impl[impl]) for impl in impls}
        raw = med.get("raw")
        workloads[name] = {
            "python_ms": round(med["python"], 2),
            "dexie_ms": round(med["dexie"], 2),
            "raw_ms": None if raw is None else round(raw, 2),
            "ratio_dexie": round(med["python"] / med["dexie"], 3),
            "ratio_raw": None if raw is None else round(med["python"] / raw, 3),
            "runs": len(by_impl["python"]),
            "spread": {
                impl: [round(min(by_impl[impl]), 2), round(max(by_impl[impl]), 2)] for impl in impls
            },
        }
        if heaps and name in heaps:
            workloads[name]["heap"] = summarize_heap(heaps[name])
    if live is not None:
        workloads.update(summarize_live(live, machine["runs"]))
    doc: dict[str, Any] = {"machine": machine, "workloads": workloads}
    if observe:
        doc["observe"] = observe
    return doc


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
        help=(
            "run only this workload (repeatable; also 'startup', 'memory', 'panel_turn',"
            " 'search', 'sync')"
        ),
    )
    parser.add_argument(
        "--out", type=Path, help="write the results JSON to this file only (plus .md next to it)"
    )
    parser.add_argument(
        "--profile",
        metavar="WORKLOAD[:VARIANT]",
        help=(
            "run WORKLOAD's Python implementation (an observe_* workload: VARIANT, by default"
            " its last) once under cProfile and print the stats"
        ),
    )
    parser.add_argument(
        "--live-gap",
        type=float,
        default=0.0,
        metavar="MS",
        help="live_notify: pause this long after each result before the next write (default 0)",
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
        or not (DIST_WEB / "vendor" / "minisearch.mjs").is_file()
        or not (DIST_WEB / "vendor" / "pouchdb.min.js").is_file()
        or not (ROOT / "dist" / "extension" / "sidepanel.html").is_file()
    ):
        sys.exit("[bench] dist/ is missing or incomplete: run `python3 build.py build` first")

    started = time.monotonic()
    with serve() as base_url:
        measured = measure_all(
            base_url, runs, warmup, args.quick, args.only, args.profile, args.live_gap
        )
    results = summarize(
        measured["machine"],
        measured["timings"],
        measured["live"],
        measured["live_runs"],
        measured["heaps"],
        measured["interleaved"],
    )
    if measured["startup"] is not None:
        results["workloads"].update(summarize_startup(measured["startup"]))
    if measured["panel_turn"] is not None:
        results["workloads"].update(summarize_panel_turn(measured["panel_turn"]))
    results["memory"] = measured["memory"]
    sizes = dict(measured["sizes"])
    sizes.update(
        {
            "startup_cold": "new profile",
            "startup_warm": "reload",
            "startup_first_paint": "reload, 300 threads stored",
        }
    )
    if measured["panel_turn"] is not None:
        short, long = measured["panel_turn"]["sizes"]
        sizes["panel_turn"] = f"{long:,} vs {short:,} nodes"
    table = markdown(results, sizes)
    if measured["search"] is not None:
        results["search"] = summarize_search(measured["search"])
        table += search_markdown(results["search"])
    if measured["sync"] is not None:
        results["sync"] = summarize_sync(measured["sync"])
        table += sync_markdown(results["sync"])
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
