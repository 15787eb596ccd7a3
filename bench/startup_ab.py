"""Compare the side panel's warm start-up of two extension builds, navigations interleaved.

On a shared machine the start-up benchmark's figures move with the load more than with a
change. This tool loads two builds (two directories, each a ``dist/extension``) in two
browser profiles at once and alternates their warm navigations (A B, then B A, ...), so
both see the same load; it prints the median of each start-up mark (ms since
navigation) for A and B, and their difference.

    .venv/bin/python -m bench.startup_ab BUILD_A BUILD_B [NAVIGATIONS]

Both profiles hold the same 300 stored conversations (as the start-up benchmark seeds
them), so the first paint has a list to paint. It is a tool for deciding a change; the
figures the project reports come from ``python3 build.py bench``.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from bench.startup import MARKS, PANEL_INIT_SCRIPT, PANEL_SETTLED, SEED, SEEDED_THREADS
from panelot.testing.panel import launch_extension

STEPS = ("first_paint", "modules", "snapshot_fetched", "pyodide", "database", "live")
"""The marks compared (see docs/performance.md, start-up)."""

TIMEOUT_MS = 60_000


def _open(context: Any, extension_id: str) -> tuple[Any, str]:
    """A page of the profile on its side panel, ready, with the conversations stored."""
    context.add_init_script(PANEL_INIT_SCRIPT)
    page = context.new_page()
    url = f"chrome-extension://{extension_id}/sidepanel.html"
    page.goto(url)
    page.wait_for_function(PANEL_SETTLED, timeout=TIMEOUT_MS)
    page.evaluate(SEED, SEEDED_THREADS)
    return page, url


def compare(build_a: Path, build_b: Path, navigations: int) -> dict[str, dict[str, list[float]]]:
    """Each build's marks over ``navigations`` warm navigations, interleaved."""
    found: dict[str, dict[str, list[float]]] = {k: {s: [] for s in STEPS} for k in "AB"}
    with (
        sync_playwright() as playwright,
        launch_extension(playwright, build_a, prefix="panelot-ab-a-") as (context_a, id_a),
        launch_extension(playwright, build_b, prefix="panelot-ab-b-") as (context_b, id_b),
    ):
        pages = {"A": _open(context_a, id_a), "B": _open(context_b, id_b)}
        for nav in range(navigations):
            for build in "AB" if nav % 2 == 0 else "BA":
                page, url = pages[build]
                page.goto(url)
                page.wait_for_function(PANEL_SETTLED, timeout=TIMEOUT_MS)
                page.wait_for_function("() => window.panelot?.marks.live !== undefined")
                marks = page.evaluate(MARKS) or {}
                for step in STEPS:
                    if isinstance(marks.get(step), int | float):
                        found[build][step].append(float(marks[step]))
    return found


def main(argv: list[str]) -> int:
    """Run the comparison and print the medians; 2 on bad arguments."""
    if len(argv) not in (2, 3):
        print(__doc__)
        return 2
    navigations = int(argv[2]) if len(argv) == 3 else 12
    found = compare(Path(argv[0]), Path(argv[1]), navigations)
    for step in STEPS:
        a, b = found["A"][step], found["B"][step]
        if a and b:
            ma, mb = statistics.median(a), statistics.median(b)
            print(f"{step:18} A {ma:7.1f}  B {mb:7.1f}  B-A {mb - ma:+7.1f}  (n={len(a)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
