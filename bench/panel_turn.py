"""Turn timing in the extension's side panel: Enter in the composer to the stored reply shown.

A temporary profile loads ``dist/extension``; the stub provider (panelot/testing/stub_provider.py,
no delay between chunks) answers. Two threads are seeded through ``thread.import``: a
short one and a long one (10 and 10,000 nodes; 10 and 500 with ``--quick``). Each turn
opens one of them (alternating, so both see the same state of the browser), types a
message, presses Enter and waits until the last message is a stored assistant reply
that was not there before: the time is taken in the page, from the Enter keydown to
the render that shows it. The entry ``panel_turn`` reports both medians and their
ratio (long / short): the cost of a turn should not grow with the thread's length. The
turns start once the search index holds the seeded threads: indexing an imported
10,000-node thread is a one-off cost of the import, not of a turn.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from panelot.testing.panel import configure_provider, launch_extension, open_panel
from panelot.testing.stub_provider import StubProvider

ROOT = Path(__file__).resolve().parent.parent
DIST_EXTENSION = ROOT / "dist" / "extension"
READY_TIMEOUT_MS = 180_000
TURN_TIMEOUT_MS = 60_000
SIZES = {"full": (10, 10_000), "quick": (10, 500)}

#: Seeds a thread of ``n`` nodes (user and assistant messages in one chain) by import.
SEED = """async ([title, n]) => {
  const send = async (type, payload) => {
    const submissionId = crypto.randomUUID();
    const out = await window.panelot.send({type, clientId: "bench", submissionId, payload});
    if (out.status !== "completed") throw new Error(JSON.stringify(out));
    return out.response;
  };
  const {threadId} = await send("thread.create", {title});
  const first = await send("message.append", {threadId, type: "user_message",
    payload: {content: [{type: "text", text: "q"}]}});
  await send("message.append", {threadId, type: "assistant_message",
    payload: {content: [{type: "text", text: "a"}], model: "stub-model", connectionId: "c"}});
  const {data} = await window.panelot.query("thread.export", {threadId, format: "json"});
  const [user, reply] = data.nodes;
  const nodes = [];
  let parentId = null;
  for (let i = 0; i < n; i++) {
    const base = i % 2 ? reply : user;
    const id = `seed-${i}`;
    const words = "lorem ipsum dolor sit amet ".repeat(4);
    const text = `${i % 2 ? "answer" : "question"} ${i}: ${words}`;
    nodes.push({...base, id, parentId, seq: i + 1,
      payload: {...base.payload, content: [{type: "text", text}]}});
    parentId = id;
  }
  data.thread = {...data.thread, title, leafId: parentId};
  data.nodes = nodes;
  const out = await send("thread.import", {data});
  await send("thread.delete", {threadId});
  return out.threadId;
}"""

#: Waits until the search index holds the seeded threads (``search.status`` no longer lags).
INDEXED = """async () => {
  for (;;) {
    const status = await window.panelot.query("search.status", {});
    if (!status.lagging) return status;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}"""

#: Opens a thread in the panel and waits until it is shown.
OPEN = """async (threadId) => {
  await window.panelotApp.openThread?.(threadId) ?? window.panelotApp.chat.open(threadId);
  window.panelotApp.show?.("chat");
}"""

#: Arms the clock: Enter's keydown starts it, the render showing a new stored reply stops it.
ARM = """() => {
  const box = document.getElementById("messages");
  const lastId = () => box.querySelector(".msg:last-child")?.dataset.nodeId ?? null;
  const before = lastId();
  const turn = {start: null, end: null};
  window.__benchTurn = turn;
  const input = document.getElementById("input");
  const onKey = (e) => { if (e.key === "Enter") turn.start = performance.now(); };
  input.addEventListener("keydown", onKey, {capture: true, once: true});
  const done = () => {
    const last = box.querySelector(".msg:last-child");
    return !box.querySelector("[data-streaming]") && last?.dataset.type === "assistant_message"
      && last.dataset.nodeId !== before && turn.start !== null;
  };
  const observer = new MutationObserver(() => {
    if (turn.end === null && done()) { turn.end = performance.now(); observer.disconnect(); }
  });
  observer.observe(box, {subtree: true, childList: true, attributes: true});
}"""

ENDED = "() => window.__benchTurn && window.__benchTurn.end !== null"
TAKEN = "() => window.__benchTurn.end - window.__benchTurn.start"


def measure_panel_turn(
    playwright: Any,
    runs: int,
    warmup: int,
    quick: bool,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """Return ``{"sizes": [short, long], "short": [ms...], "long": [ms...]}``."""
    short, long = SIZES["quick" if quick else "full"]
    times: dict[str, list[float]] = {"short": [], "long": []}
    with (
        StubProvider(chunk_delay=0.0) as stub,
        launch_extension(playwright, DIST_EXTENSION, prefix="panelot-bench-turn-") as (
            context,
            extension_id,
        ),
    ):
        page = open_panel(context, extension_id, timeout_ms=READY_TIMEOUT_MS)
        configure_provider(page, stub.base_url, key="sk-bench")
        progress(f"panel_turn: seeding threads of {short:,} and {long:,} nodes")
        threads = {
            "short": page.evaluate(SEED, ["bench short", short]),
            "long": page.evaluate(SEED, ["bench long", long]),
        }
        page.evaluate(INDEXED)  # a turn, not the one-off indexing of the seeded threads
        for run in range(warmup + runs):
            order = ("short", "long") if run % 2 == 0 else ("long", "short")
            for which in order:
                page.evaluate(OPEN, threads[which])
                page.wait_for_function(
                    "(id) => window.panelotApp.chat.thread?.id === id"
                    " && window.panelotApp.chat.snapshot?.threadId === id",
                    arg=threads[which],
                )
                page.fill("#input", f"turn {run} in the {which} thread")
                page.evaluate(ARM)
                page.press("#input", "Enter")
                page.wait_for_function(ENDED, timeout=TURN_TIMEOUT_MS)
                ms = float(page.evaluate(TAKEN))
                label = (
                    f"warm-up {run + 1}/{warmup}"
                    if run < warmup
                    else f"run {run - warmup + 1}/{runs}"
                )
                progress(f"{label} panel_turn {which:<5} {ms:9.1f} ms")
                if run >= warmup:
                    times[which].append(ms)
    return {"sizes": [short, long], **times}


def summarize_panel_turn(measured: dict[str, Any]) -> dict[str, Any]:
    """The ``panel_turn`` entry: the long thread in ``python_ms``, the short in ``short_ms``."""
    short, long = measured["short"], measured["long"]
    med_s, med_l = statistics.median(short), statistics.median(long)
    return {
        "panel_turn": {
            "python_ms": round(med_l, 2),
            "dexie_ms": None,
            "raw_ms": None,
            "ratio_dexie": None,
            "ratio_raw": None,
            "runs": len(long),
            "spread": {
                "python": [round(min(long), 2), round(max(long), 2)],
                "short": [round(min(short), 2), round(max(short), 2)],
            },
            "short_ms": round(med_s, 2),
            "ratio_short": round(med_l / med_s, 3),
            "nodes": {"short": measured["sizes"][0], "long": measured["sizes"][1]},
            "turn_ms": {
                "short": [round(v, 1) for v in short],
                "long": [round(v, 1) for v in long],
            },
        }
    }
