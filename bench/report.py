"""Render benchmark results: a Markdown table and a bar chart of the ratios."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TARGET_RATIO = 1.25
"""Issue 8: every workload except startup at most 1.25× Dexie."""
TURN_TARGET = 1.5
"""A turn in the panel on a 10,000-node thread at most 1.5× one on a 10-node thread."""
PUBLISH_TARGET = 1.05
"""Publishing a commit's changes adds at most 5% to ``append`` (observe on / off)."""
OBSERVE_VARIANTS = (
    ("on", "observe on"),
    ("live_other", "+ live query, other thread"),
    ("live_same", "+ live query, written thread"),
)


def _cell(w: dict[str, Any], impl: str) -> str:
    if w.get(f"{impl}_ms") is None:
        return "—"
    if "samples" in w:  # a latency: median and p95 of the samples
        return f"{w[f'{impl}_ms']:.1f} (p95 {w[f'{impl}_p95_ms']:.1f})"
    lo, hi = w["spread"][impl]
    return f"{w[f'{impl}_ms']:.1f} ({lo:.1f}–{hi:.1f})"


def _ratio(value: float | None, mark: str = "") -> str:
    return "—" if value is None else f"{value:.2f}×{mark}"


def _mib(n: int) -> str:
    return f"{n / 2**20:+.1f} MiB"


def _heap_note(heaps: list[tuple[str, dict[str, Any]]]) -> str:
    """The note on the heap figures of the workloads measured for memory."""
    parts = []
    for name, w in heaps:
        h = w["heap"]
        items = []
        py = h.get("python")
        if py:
            items.append(
                f"Python wasm heap {_mib(py['wasm_first_growth_bytes'])} in the first "
                f"measurement from {py['wasm_before_bytes'] / 2**20:.1f} MiB "
                f"({_mib(py['wasm_total_growth_bytes'])} over all of them), JS heap "
                f"{_mib(py['js_growth_bytes'])} ({_mib(py['js_retained_bytes'])} after GC)"
            )
        dx = h.get("dexie")
        if dx:
            items.append(
                f"Dexie JS heap {_mib(dx['js_growth_bytes'])} "
                f"({_mib(dx['js_retained_bytes'])} after GC)"
            )
        raw = " (no raw IndexedDB implementation)" if w.get("raw_ms") is None else ""
        parts.append(f"`{name}`{raw}: " + "; ".join(items))
    return (
        "Heap around the timed operation: the JS heap in use when it resolved against "
        "before it (after a full GC), median of the runs, and in brackets after a full "
        "GC; the wasm heap never shrinks, so its growth shows at the first measurement, "
        "and depends on what ran before. "
        "Blob contents live outside both heaps. " + ". ".join(parts) + "."
    )


def markdown(results: dict[str, Any], sizes: dict[str, str]) -> str:
    """The results as Markdown: machine line, workload table, startup and memory notes."""
    m = results["machine"]
    lines = [
        f"Chromium {m['chromium']}, Pyodide {m['pyodide']}, Dexie {m['dexie']}, "
        f"{m['cpu']} ({m['cores']} cores), {m['date']}. Medians of {m.get('runs', '?')} runs "
        "(min–max in brackets), ms.",
        "",
        "| workload | size | runs | Python ms | Dexie ms | raw IDB ms "
        "| Python/Dexie | Python/raw |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, w in results["workloads"].items():
        ratio = w["ratio_dexie"]
        mark = " ⚠" if not name.startswith("startup") and (ratio or 0) > TARGET_RATIO else ""
        lines.append(
            f"| {name} | {sizes.get(name, '')} | {w['runs']} | {_cell(w, 'python')} "
            f"| {_cell(w, 'dexie')} | {_cell(w, 'raw')} | {_ratio(w['ratio_dexie'], mark)} "
            f"| {_ratio(w['ratio_raw'])} |"
        )
    heaps = [(n, w) for n, w in results["workloads"].items() if w.get("heap")]
    if heaps:
        lines += ["", _heap_note(heaps)]
    live = [(n, w) for n, w in results["workloads"].items() if "samples" in w]
    if live:
        gap = m.get("live_gap_ms", 0)
        lines += [
            "",
            "Live queries across pages (`live_*`): ms from a commit in page A (stamped "
            "before it is announced: by Python's feed, by Dexie's event) to the live "
            "query's result holding the new node in page B, in page B's clock, median "
            "(p95) of "
            + ", ".join(
                f"{n} {w['samples']} commits (interval {w['interval_ms']:g} ms, "
                f"p95 ratio {w['ratio_p95']:.2f}×)"
                for n, w in live
            )
            + f"; {gap:g} ms between a result and the next write.",
        ]
    observe = results.get("observe") or {}
    if observe:
        lines += [
            "",
            "Publishing cost (`observe_*`, Python only): the same workload with "
            "`Database(observe=False)`, observing, and observing with a live query open "
            "on another thread's nodes or on the written thread's; ratios to observe off.",
            "",
            "| workload | size | runs | observe off ms | "
            + " | ".join(f"{label} ms" for _, label in OBSERVE_VARIANTS)
            + " | "
            + " | ".join(f"{label} / off" for _, label in OBSERVE_VARIANTS)
            + " |",
            "|---|---|---:|---:|" + "---:|" * (2 * len(OBSERVE_VARIANTS)),
        ]
        for name, w in observe.items():

            def cell(variant: str, w: dict[str, Any] = w) -> str:
                lo, hi = w["spread"][variant]
                return f"{w[f'{variant}_ms']:.1f} ({lo:.1f}–{hi:.1f})"

            ratios = [_ratio(w[f"ratio_{v}"]) for v, _ in OBSERVE_VARIANTS]
            lines.append(
                f"| {name} | {sizes.get(name, '')} | {w['runs']} | {cell('off')} | "
                + " | ".join(cell(v) for v, _ in OBSERVE_VARIANTS)
                + " | "
                + " | ".join(ratios)
                + " |"
            )
        for name, w in observe.items():
            pair = w.get("interleaved")
            if pair:
                lo, hi = pair["spread"]
                mark = " ⚠" if name == "observe_append" and pair["ratio"] > PUBLISH_TARGET else ""
                lines += [
                    "",
                    f"{name}, interleaved (off and on in one measurement, alternating in "
                    "blocks of 50 appends; per run, the median over pairs of blocks of "
                    f"on / off): **{_ratio(pair['ratio'], mark)}** (runs {lo:.2f}–{hi:.2f}×; "
                    f"median totals {pair['off_ms']:.1f} ms off, {pair['on_ms']:.1f} ms on, "
                    "for half the appends each). The publishing target is checked on "
                    "this figure.",
                ]
        runs = {n: w["live_runs"] for n, w in observe.items() if w.get("live_runs")}
        if runs:
            lines.append("")
            lines.append(
                "Runs of the open live query per measurement (median, its first run "
                f"included): {runs}."
            )
    startup = [(n, w) for n, w in results["workloads"].items() if "pyodide_ms" in w]
    if startup:
        lines += [
            "",
            "Startup (navigation to a ready store in the extension's side-panel page; "
            "“Dexie”/“raw” open panelot_v1 from a page of the same extension):",
            "",
            "| phase | ready store ms | bare loadPyodide ms | overhead over bare Pyodide "
            "| runtime / package / database ms (panel timings) | package+database vs runtime |",
            "|---|---:|---:|---:|---|---:|",
        ]
        for name, w in startup:
            t = w["panel_timings"]
            lines.append(
                f"| {name.removeprefix('startup_')} | {w['python_ms']:.0f} "
                f"| {w['pyodide_ms']:.0f} | {w['overhead_pct']:+.1f}% "
                f"| {t.get('runtime_ms', 0):.0f} / {t.get('package_ms', 0):.0f} / "
                f"{t.get('database_ms', 0):.0f} | {w['package_database_pct_of_runtime']}% |"
            )
    broken = [(n, w) for n, w in startup if w.get("breakdown")]
    if broken:
        lines += [
            "",
            "Where a start-up's time goes (the panel's marks: each step's end, ms "
            "since navigation, medians):",
            "",
        ]
        for name, w in broken:
            steps = " · ".join(f"{k} {v:.0f}" for k, v in w["breakdown"].items())
            lines.append(f"- {name.removeprefix('startup_')}: {steps}")
    paint = results["workloads"].get("startup_first_paint")
    if paint:
        lines += [
            "",
            f"First paint of the stored list ({paint['threads']} conversations stored, warm): "
            f"{paint['python_ms']:.0f} ms from navigation, Dexie's page painting the same "
            f"list {paint['dexie_ms']:.0f} ms ({paint['ratio_dexie']:.2f}×).",
        ]
    turn = results["workloads"].get("panel_turn")
    if turn:
        nodes = turn["nodes"]
        mark = " ⚠" if turn["ratio_short"] > TURN_TARGET else ""
        lines += [
            "",
            "A turn in the side panel (`panel_turn`: Enter in the composer to the stored "
            "reply shown, stub provider), median (min–max) of "
            f"{turn['runs']} turns each: {nodes['long']:,}-node thread "
            f"{turn['python_ms']:.0f} ms ({turn['spread']['python'][0]:.0f}–"
            f"{turn['spread']['python'][1]:.0f}), {nodes['short']:,}-node thread "
            f"{turn['short_ms']:.0f} ms ({turn['spread']['short'][0]:.0f}–"
            f"{turn['spread']['short'][1]:.0f}); ratio {turn['ratio_short']:.2f}×{mark} "
            f"(target ≤ {TURN_TARGET:g}×).",
        ]
    memory = results.get("memory") or {}
    proxies = memory.get("pyproxies")
    if proxies:
        lines += [
            "",
            f"Live PyProxies: {proxies['before']} before the workloads, {proxies['after']} "
            f"after; largest growth across one workload: {proxies['max_growth']} "
            f"({proxies['growth_by_workload']}).",
        ]
    heap = memory.get("appends")
    if heap:
        lines.append(
            f"Wasm heap around {heap['appends']:,} appends: {heap['wasm_heap_before_bytes']:,} → "
            f"{heap['wasm_heap_after_bytes']:,} bytes (growth "
            f"{heap['wasm_heap_growth_bytes']:,}), for {heap['data_json_bytes']:,} bytes of "
            f"stored node JSON; Python gc objects "
            f"{heap['python_gc_objects_before']:,} → {heap['python_gc_objects_after']:,}."
        )
    return "\n".join(lines) + "\n"


def chart(results: dict[str, Any], path: Path) -> None:
    """A horizontal bar chart of Python/Dexie and Python/raw per workload (startup aside)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [
        (n, w)
        for n, w in results["workloads"].items()
        if not n.startswith("startup") and w["ratio_dexie"] is not None
    ]
    names = [n for n, _ in rows][::-1]
    dexie = [w["ratio_dexie"] for _, w in rows][::-1]
    raw = [w["ratio_raw"] or 0.0 for _, w in rows][::-1]
    height = 0.38
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.8))
    ys = range(len(rows))
    ax.barh([y + height / 2 for y in ys], dexie, height, label="Python / Dexie", color="#4c72b0")
    ax.barh([y - height / 2 for y in ys], raw, height, label="Python / raw IDB", color="#dd8452")
    for y, (d, r) in enumerate(zip(dexie, raw, strict=True)):
        ax.text(d, y + height / 2, f" {d:.2f}×", va="center", fontsize=8)
        if r:
            ax.text(r, y - height / 2, f" {r:.2f}×", va="center", fontsize=8)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(TARGET_RATIO, color="#c44e52", linestyle="--", linewidth=1, label="target 1.25×")
    ax.set_yticks(list(ys), names)
    ax.set_xlabel("time ratio (lower is better; < 1 means Python is faster)")
    m = results["machine"]
    title = f"Panelot Store vs Dexie {m['dexie']} and raw IndexedDB"
    startup = results["workloads"].get("startup_warm")
    if startup:
        title += (
            f"\nstartup: warm {startup['python_ms']:.0f} ms, "
            f"{startup['overhead_pct']:+.0f}% over bare loadPyodide"
        )
    ax.set_title(title, fontsize=10)
    ax.set_xlim(0, max([*dexie, *raw, TARGET_RATIO]) * 1.18)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
