"""Differential conformance: random data, queries and writes on Dexie 4.4.7 and panelot.idb.

Each example is a seed. From it come the records of three tables (unicode strings that
are prefixes and case variants of each other, numbers at the edges, dates, binary,
arrays, missing fields, duplicates), about sixty read specs and a few write sequences,
all in the JSON DSL of ``differential``. In the harness page, Dexie seeds a query
database and runs the reads on it; panelot (the browser core, in Pyodide) runs the same
reads on the same database. Each write sequence runs on two databases Dexie seeded
alike, one per side, and both the outcome and every table after each write are
compared; at the end Dexie reads back what each side stored, and what panelot's own
``bulk_add`` of the data stored. The memory core then runs the same specs in CPython
and is compared with the same Dexie results.

A difference fails the test unless ``DELIBERATE_DIFFERENCES`` recognises it. Kinds
whose Python method does not exist yet are not generated; the report lists them. The
report (per kind: matches, mismatches, deliberate differences) is printed and written
to ``dexie_differential_report.json`` in the pytest base temporary directory.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import example as pin
from hypothesis import strategies as st
from playwright.sync_api import Page

from browser_harness import run_py
from differential import SCHEMA, Gen, Report
from differential import pyrun as pyrun_module
from differential.compare import nan_safe
from differential.jsrun import JS_INSTALL, JS_PHASE1, JS_PHASE2
from hypothesis_support import examples
from loops import run_async
from panelot.idb import MemoryFactory

#: Examples in ``ci`` (times FUZZ_FACTOR under ``build.py fuzz``).
EXAMPLES = 8


def pinned(seeds: tuple[int, ...]) -> Any:
    """Hypothesis @example for each seed."""

    def wrap(fn: Any) -> Any:
        for seed in reversed(seeds):
            fn = pin(seed=seed)(fn)
        return fn

    return wrap


# Seeds whose examples found a difference under `build.py fuzz` (each fixed, or listed
# in DELIBERATE_DIFFERENCES): they run in every build.
PINNED = (42, 140, 185, 717, 16090, 297, 464, 576, 1055, 1187, 1935, 4096, 4523, 5648, 13421, 23000, 96531, 550969, 960558,
          647499, 1584366, 2168224, 4581904, 22736173, 189627406, 953509424, 337721, 2087349,
          584403, 277968, 628394823, 110269, 8294, 8285, 345159)  # fmt: skip
QUERIES_PER_EXAMPLE = 60
WRITE_SEQUENCES = 3
WRITES_PER_SEQUENCE = 4

#: Set DIFFERENTIAL_KEEP_GOING=1 to run every example and fail only at the end, with
#: the whole report (Hypothesis otherwise stops at the first failing seed).
KEEP_GOING = os.environ.get("DIFFERENTIAL_KEEP_GOING") == "1"

PYRUN_SOURCE = Path(pyrun_module.__file__).read_text()

SETUP_PY = """
import importlib, json, os, sys
os.makedirs("/home/pyodide/differential", exist_ok=True)
with open("/home/pyodide/differential/diffrun.py", "w") as f:
    f.write(json.loads({source}))
if "/home/pyodide/differential" not in sys.path:
    sys.path.insert(0, "/home/pyodide/differential")
import diffrun
importlib.reload(diffrun)
json.dumps(await diffrun.probe(json.loads({schema})))
"""

SESSION_PY = """
import json
import diffrun
from panelot.idb.browser import BrowserFactory
json.dumps(await diffrun.session(BrowserFactory(), json.loads({schema}), json.loads({job})))
"""


def _lit(value: Any) -> str:
    """``value`` as a Python literal of its JSON text."""
    return repr(json.dumps(value))


def _job(gen: Gen, tag: str) -> dict[str, Any]:
    queries = [gen.query() for _ in range(QUERIES_PER_EXAMPLE)]
    writes = [[gen.write() for _ in range(WRITES_PER_SEQUENCE)] for _ in range(WRITE_SEQUENCES)]
    return {
        "query_db": f"{tag}-q",
        "seed_db": f"{tag}-p",
        "write_dbs": [f"{tag}-wj{i}" for i in range(WRITE_SEQUENCES)],
        "py_write_dbs": [f"{tag}-wp{i}" for i in range(WRITE_SEQUENCES)],
        "data": gen.data,
        "queries": queries,
        "writes": writes,
    }


def _compare(
    report: Report,
    seed: int,
    job: dict[str, Any],
    dexie: dict[str, Any],
    stored: dict[str, Any],
    panelot: dict[str, Any],
    browser: bool,
) -> None:
    """Compare one example's outcomes of one core with Dexie's; tally them in ``report``."""
    seed_state = stored[job["query_db"]]
    base = {"seed": seed, "seed_state": seed_state, "data": job["data"], "before": None}
    if browser:
        report.check(
            {**base, "phase": "seed", "spec": {"op": "seed", "table": "*"},
             "dexie": {"ok": seed_state}, "panelot": {"ok": stored[job["seed_db"]]}},
            ["seed.bulkAdd (stored, read by Dexie)"],
        )  # fmt: skip
        report.check(
            {**base, "phase": "seed", "spec": {"op": "dump", "table": "*"},
             "dexie": {"ok": stored[job["seed_db"]]}, "panelot": {"ok": panelot["seeded"]}},
            ["read.dump (panelot reads what it stored)"],
        )  # fmt: skip
    else:
        report.check(
            {**base, "phase": "seed", "spec": {"op": "seed", "table": "*"},
             "dexie": {"ok": seed_state}, "panelot": {"ok": panelot["seeded"]}},
            ["seed.bulkAdd (stored, read by Dexie)"],
        )  # fmt: skip
    for spec, d, p in zip(job["queries"], dexie["queries"], panelot["queries"], strict=True):
        report.check(
            {**base, "phase": "query", "spec": spec, "dexie": d, "panelot": p}, spec["features"]
        )
    for i, ops in enumerate(job["writes"]):
        before = seed_state
        together = True
        for op, d, p in zip(ops, dexie["writes"][i], panelot["writes"][i], strict=True):
            if not together:
                report.diverged += 1
                continue
            case = {
                **base,
                "phase": "write",
                "spec": op,
                "dexie": d,
                "panelot": p,
                "before": before,
            }
            together = report.check(case, op["features"])
            before = {**before, **d["state"]}
        if together and browser:
            report.check(
                {**base, "phase": "stored", "spec": {"op": "stored", "sequence": ops},
                 "dexie": {"ok": stored[job["write_dbs"][i]]},
                 "panelot": {"ok": stored[job["py_write_dbs"][i]]}},
                ["stored.after_writes (read by Dexie)"],
            )  # fmt: skip


@pytest.fixture(scope="module")
def features(harness_page: Page) -> dict[str, bool]:
    """What this panelot has, probed in Pyodide; the page gets both runners."""
    assert harness_page.evaluate(JS_INSTALL) is True
    found: dict[str, bool] = run_py(
        harness_page, SETUP_PY.format(source=_lit(PYRUN_SOURCE), schema=_lit(SCHEMA))
    )
    return found


def _failure(report: Report, seed: int) -> str:
    mine = [m for m in report.mismatches if m["seed"] == seed]
    brief = [{k: m[k] for k in ("phase", "spec", "first_difference")} for m in mine[:6]]
    shown = "\n".join(json.dumps(nan_safe(b), ensure_ascii=False)[:1500] for b in brief)
    return f"{report.core}: {len(mine)} unlisted mismatches for seed {seed}:\n{shown}"


def test_dexie_differential(
    harness_page: Page,
    features: dict[str, bool],
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    reports = {"browser": Report("browser"), "memory": Report("memory")}
    missing = sorted(k for k, v in features.items() if not v)
    for report in reports.values():
        report.not_implemented = missing
    done: dict[int, str] = {}

    @settings(max_examples=examples(EXAMPLES), phases=[Phase.explicit, Phase.reuse, Phase.generate])
    @given(seed=st.integers(min_value=0, max_value=2**32 - 1))
    @pinned(PINNED)
    def example(seed: int) -> None:
        if seed not in done:  # Hypothesis replays a failing example: count it once
            done[seed] = _run_example(harness_page, features, seed, reports)
        if not KEEP_GOING:
            assert not done[seed], done[seed]

    try:
        example()
    finally:
        out = {name: nan_safe(r.to_json()) for name, r in reports.items()}
        path = tmp_path_factory.getbasetemp() / "dexie_differential_report.json"
        path.write_text(json.dumps(out, indent=1, ensure_ascii=False))
        with capsys.disabled():
            print()
            for report in reports.values():
                print(report.table())
            print(f"report: {path}")
    for report in reports.values():
        assert report.examples > 0
        assert not report.mismatches


def _run_example(
    page: Page, features: dict[str, bool], seed: int, reports: dict[str, Report]
) -> str:
    gen = Gen(seed, features)
    tag = f"diff-{seed}-{uuid.uuid4().hex[:6]}"
    job = _job(gen, tag)
    names = [job["query_db"], job["seed_db"], *job["write_dbs"], *job["py_write_dbs"]]
    browser = reports["browser"]
    started = time.perf_counter()
    dexie = json.loads(page.evaluate(JS_PHASE1, json.dumps({"schema": SCHEMA, "job": job})))
    browser.seconds["dexie"] += time.perf_counter() - started
    try:
        started = time.perf_counter()
        py_job = {**job, "write_dbs": job["py_write_dbs"]}
        panelot = run_py(page, SESSION_PY.format(schema=_lit(SCHEMA), job=_lit(py_job)))
        browser.seconds["panelot"] += time.perf_counter() - started
    finally:
        phase2 = {"schema": SCHEMA, "names": names, "remove": names}
        stored = json.loads(page.evaluate(JS_PHASE2, json.dumps(phase2)))
    before = len(browser.mismatches)
    browser.examples += 1
    _compare(browser, seed, job, dexie, stored, panelot, browser=True)
    memory = reports["memory"]
    before_memory = len(memory.mismatches)
    memory.examples += 1
    mem_job = {**job, "query_db": None, "write_dbs": job["py_write_dbs"]}
    started = time.perf_counter()
    in_memory = run_async(pyrun_module.session(MemoryFactory(), SCHEMA, mem_job))
    memory.seconds["panelot"] += time.perf_counter() - started
    _compare(memory, seed, job, dexie, stored, in_memory, browser=False)
    problems = []
    if len(browser.mismatches) > before:
        problems.append(_failure(browser, seed))
    if len(memory.mismatches) > before_memory:
        problems.append(_failure(memory, seed))
    return "\n".join(problems)
