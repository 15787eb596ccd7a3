"""Sync (issue 39): the store's replication against PouchDB's, with the test server.

Starts tests/support/couch_server.cjs (express-pouchdb over PouchDB's memory adapter)
with ``node`` on 127.0.0.1, drives ``bench/page/sync.html`` (see sync.mjs and
sync_workloads.py) in the bench's browser context, and kills the server at the end:

* the data: 10,000 nodes in 40 threads (linear chains) and 50 attachments of 1 MiB
  (``--quick``: 500 nodes, 4 threads, 3 attachments), written into a fresh
  panelot_v1-shaped database each run (plain IndexedDB, then ``attachment.put``);
  the server databases are created empty (untimed) before they are written;
* ``sync_push``: the store's ``sync.configure`` + ``sync.push`` (only the push is timed)
  to an empty server database; then PouchDB's local database, holding the documents
  the store pushed (copied with their revisions, untimed), ``PouchDB.replicate`` to
  another empty server database. Both server databases must hold the same ids and
  revisions;
* ``sync_pull``: the store's ``sync.pull`` from that server database into a fresh store
  database, and ``PouchDB.replicate`` from it into a fresh local PouchDB. The store's
  sync state, PouchDB's database and the server must hold the same ids and revisions,
  and the store a record for each;
* ``sync_latency``: two stores (two database names in the page) with one server
  database, each running the continuous loop (``sync.start``, as an open panel does);
  each of 20 commits on A (an append) is timed from the append's return on A to the
  node in B's live query: A's debounced push from its outbox, B's long-poll waking,
  B's pull and its live query. Python only.

Each run uses fresh databases on both sides and deletes its server databases after
the check. PouchDB's local source is what the store pushed in the same run (the
attachments' records carry their put time, so the revisions differ from run to run):
the store's push goes first; the pull's order alternates from run to run.
"""

from __future__ import annotations

import json
import select
import shutil
import statistics
import subprocess
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER_SCRIPT = ROOT / "tests" / "support" / "couch_server.cjs"
READY_TIMEOUT_MS = 180_000
START_TIMEOUT_S = 60.0
MIB = 2**20
SIZES = {
    "full": {"threads": 40, "nodes": 10_000, "attachments": 50, "size": MIB},
    "quick": {"threads": 4, "nodes": 500, "attachments": 3, "size": MIB},
}
LATENCY_COMMITS = {"full": 20, "quick": 5}
LIVE_INTERVAL_S = 0.05
"""B's live query at the default interval of ``Database.live_query``."""
STORE = "bench_sync_store"
PULLED = "bench_sync_pulled"
POUCH_SOURCE = "bench_sync_pouch_source"
POUCH_PULLED = "bench_sync_pouch_pulled"


@contextmanager
def couch_server() -> Iterator[str]:
    """The test server on 127.0.0.1 and a free port; yields its URL, kills it at the end."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH (the sync bench's server runs on Node.js)")
    proc = subprocess.Popen(
        [node, str(SERVER_SCRIPT)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT_S)
        line = proc.stdout.readline() if ready else ""
        if not line:
            raise RuntimeError(f"the couch server did not start (exit {proc.poll()})")
        yield f"http://127.0.0.1:{int(json.loads(line)['port'])}"
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _create_db(url: str) -> None:
    """An empty server database (the store's push expects it to exist, as on CouchDB)."""
    urllib.request.urlopen(urllib.request.Request(url, method="PUT"), timeout=60).close()


def _delete_db(url: str) -> None:
    request = urllib.request.Request(url, method="DELETE")
    try:
        urllib.request.urlopen(request, timeout=60).close()
    except urllib.error.HTTPError as error:
        if error.code != 404:
            raise


def _open(context: Any, url: str, progress: Callable[[str], None]) -> Any:
    page = context.new_page()
    page.on("pageerror", lambda exc: progress(f"sync page error: {exc}"))
    page.goto(url)
    page.wait_for_function(
        "() => ['ready', 'error'].includes(window.syncBench?.state)", timeout=READY_TIMEOUT_MS
    )
    error = page.evaluate("() => window.syncBench.error")
    if error:
        raise RuntimeError(f"{url}: {error}")
    page.set_default_timeout(READY_TIMEOUT_MS * 5)
    return page


def _same(label: str, *holds: dict[str, Any]) -> dict[str, Any]:
    """The check: every side holds the same ids and revisions (count and digest)."""
    pairs = {(h["count"], h["digest"]) for h in holds}
    if len(pairs) != 1:
        raise RuntimeError(f"{label}: the sides disagree: {holds}")
    return {"count": holds[0]["count"], "digest": holds[0]["digest"]}


def measure_sync(
    context: Any,
    base_url: str,
    runs: int,
    warmup: int,
    quick: bool,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """Measure the three workloads; return the raw figures (see :func:`summarize_sync`)."""
    scale = "quick" if quick else "full"
    sizes = SIZES[scale]
    out: dict[str, Any] = {
        "sizes": sizes,
        "push": {"python": [], "pouchdb": []},
        "pull": {"python": [], "pouchdb": []},
        "checks": [],
    }
    with couch_server() as server:
        page = _open(context, f"{base_url}/bench/sync.html", progress)
        try:
            for run in range(warmup + runs):
                label = f"warm-up {run + 1}/{warmup}" if run < warmup else f"run {run - warmup + 1}"
                seeded = page.evaluate("([n, s]) => window.syncBench.seed(n, s)", [STORE, sizes])
                py_db, pouch_db = f"bench_push_py_{run}", f"bench_push_pouch_{run}"
                for db in (py_db, pouch_db):
                    _create_db(f"{server}/{db}")

                def py_push(db: str = py_db) -> Any:
                    return page.evaluate(
                        "([n, s, d]) => window.syncBench.pyPush(n, s, d)", [STORE, server, db]
                    )

                def pouch_push_(db: str = pouch_db) -> Any:
                    return page.evaluate(
                        "([s, t]) => window.syncBench.pouchReplicate(s, t)",
                        [POUCH_SOURCE, f"{server}/{db}"],
                    )

                python_first = run % 2 == 0  # the pull's order
                # PouchDB's source: what the store pushed (its attachments' records carry
                # their put time, so each run's revisions differ): the store goes first.
                push = py_push()
                page.evaluate(
                    "([u, l]) => window.syncBench.pouchSource(u, l)",
                    [f"{server}/{py_db}", POUCH_SOURCE],
                )
                pouch_push = pouch_push_()
                push_check = _same(
                    "sync_push",
                    page.evaluate("(u) => window.syncBench.serverHolds(u)", f"{server}/{py_db}"),
                    page.evaluate("(u) => window.syncBench.serverHolds(u)", f"{server}/{pouch_db}"),
                    page.evaluate("(l) => window.syncBench.pouchHolds(l)", POUCH_SOURCE),
                    page.evaluate("(n) => window.syncBench.pyHolds(n)", STORE),
                )
                progress(
                    f"{label} sync_push  python {push['ms']:9.1f} ms, pouchdb "
                    f"{pouch_push['ms']:9.1f} ms ({push_check['count']:,} documents)"
                )

                def py_pull(db: str = py_db) -> Any:
                    return page.evaluate(
                        "([n, s, d]) => window.syncBench.pyPull(n, s, d)", [PULLED, server, db]
                    )

                def pouch_pull_(db: str = py_db) -> Any:
                    page.evaluate("(l) => window.syncBench.pouchDestroy(l)", POUCH_PULLED)
                    return page.evaluate(
                        "([s, t]) => window.syncBench.pouchReplicate(s, t)",
                        [f"{server}/{db}", POUCH_PULLED],
                    )

                if python_first:
                    pull, pouch_pull = py_pull(), pouch_pull_()
                else:
                    pouch_pull = pouch_pull_()
                    pull = py_pull()
                pulled = page.evaluate("(n) => window.syncBench.pyHolds(n)", PULLED)
                pull_check = _same(
                    "sync_pull",
                    pulled,
                    page.evaluate("(l) => window.syncBench.pouchHolds(l)", POUCH_PULLED),
                    page.evaluate("(u) => window.syncBench.serverHolds(u)", f"{server}/{py_db}"),
                )
                if sum(pulled["records"].values()) != pull_check["count"]:
                    raise RuntimeError(f"sync_pull: the store holds {pulled['records']}")
                if pull["report"].get("refused") or pull["report"].get("onServer"):
                    raise RuntimeError(f"sync_pull: not all pulled: {pull['report']}")
                progress(
                    f"{label} sync_pull  python {pull['ms']:9.1f} ms, pouchdb "
                    f"{pouch_pull['ms']:9.1f} ms ({pull_check['count']:,} documents, "
                    f"{'python' if python_first else 'pouchdb'} first)"
                )
                if run >= warmup:
                    out["push"]["python"].append(push["ms"])
                    out["push"]["pouchdb"].append(pouch_push["ms"])
                    out["pull"]["python"].append(pull["ms"])
                    out["pull"]["pouchdb"].append(pouch_pull["ms"])
                    out["checks"].append({"seeded": seeded, "push": push_check, "pull": pull_check})
                for name in (STORE, PULLED):
                    page.evaluate("(n) => window.syncBench.deleteStore(n)", name)
                for local in (POUCH_SOURCE, POUCH_PULLED):
                    page.evaluate("(l) => window.syncBench.pouchDestroy(l)", local)
                for db in (py_db, pouch_db):
                    _delete_db(f"{server}/{db}")
            commits = LATENCY_COMMITS[scale]
            _create_db(f"{server}/bench_latency")
            latency = page.evaluate(
                "([s, d, n, i]) => window.syncBench.latency(s, d, n, i)",
                [server, "bench_latency", commits, LIVE_INTERVAL_S],
            )
            latency["check"] = _same(
                "sync_latency",
                latency.pop("a"),
                latency.pop("b"),
                page.evaluate("(u) => window.syncBench.serverHolds(u)", f"{server}/bench_latency"),
            )
            ms = [s["ms"] for s in latency["samples"]]
            progress(
                f"sync_latency median {statistics.median(ms):7.1f} ms, max {max(ms):7.1f} ms "
                f"over {len(ms)} commits"
            )
            out["latency"] = latency
        finally:
            page.close()
    return out


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _pair(by_impl: dict[str, list[float]]) -> dict[str, Any]:
    python, pouch = statistics.median(by_impl["python"]), statistics.median(by_impl["pouchdb"])
    return {
        "python_ms": round(python, 2),
        "pouchdb_ms": round(pouch, 2),
        "ratio": round(python / pouch, 3),
        "runs": len(by_impl["python"]),
        "spread": {i: [round(min(v), 2), round(max(v), 2)] for i, v in by_impl.items()},
    }


def summarize_sync(measured: dict[str, Any]) -> dict[str, Any]:
    """The ``sync`` section of the results: each workload's medians, ratio and check."""
    checks = measured["checks"]
    samples = measured["latency"]["samples"]
    ms = [s["ms"] for s in samples]
    return {
        "sizes": measured["sizes"],
        "sync_push": {**_pair(measured["push"]), "check": checks[-1]["push"]},
        "sync_pull": {**_pair(measured["pull"]), "check": checks[-1]["pull"]},
        "sync_latency": {
            "median_ms": round(statistics.median(ms), 2),
            "p95_ms": round(_p95(ms), 2),
            "max_ms": round(max(ms), 2),
            "commits": len(ms),
            "live_interval_ms": LIVE_INTERVAL_S * 1000,
            "mode": "continuous sync on both",
            "check": measured["latency"]["check"],
        },
    }


def sync_markdown(sync: dict[str, Any]) -> str:
    """The sync section of the results table (Markdown)."""
    s = sync["sizes"]
    push, pull, lat = sync["sync_push"], sync["sync_pull"], sync["sync_latency"]
    lines = [
        "",
        f"Sync (issue 39), {s['nodes']:,} nodes in {s['threads']} threads and "
        f"{s['attachments']} attachments of {s['size'] / MIB:g} MiB "
        f"({push['check']['count']:,} documents), against PouchDB's replication:",
        "",
        "| workload | Python | PouchDB | ratio |",
        "|---|---|---|---|",
        f"| `sync_push` | {push['python_ms']:.1f} ms | {push['pouchdb_ms']:.1f} ms | "
        f"{push['ratio']} |",
        f"| `sync_pull` | {pull['python_ms']:.1f} ms | {pull['pouchdb_ms']:.1f} ms | "
        f"{pull['ratio']} |",
        f"| `sync_latency` ({lat['commits']} commits, {lat['mode']}) | "
        f"{lat['median_ms']:.1f} (p95 {lat['p95_ms']:.1f}) ms | — | — |",
    ]
    return "\n".join(lines) + "\n"
