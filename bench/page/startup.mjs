// Startup baselines, copied with data.mjs into a temporary copy of dist/extension (at
// bench/ inside it) by bench/run.py, so that they load from the extension's origin like
// the side panel does. `?mode=pyodide` loads bare Pyodide (no packages, no database);
// `?mode=dexie` opens panelot_v1 with Dexie; `?mode=raw` opens it with plain IndexedDB.
// Each sets window.__benchReadyAt (ms since navigation) when done. Dexie's page then
// paints the stored conversation list as the side panel's first paint does (active
// threads, pinned first, newest first: a title and a time per row) and sets
// window.__benchFirstPaintAt in the next frame, or __benchNothingToPaint.
import { STORES, openNative } from "./data.mjs";

const mode = new URLSearchParams(location.search).get("mode");
const state = document.getElementById("state");

try {
  if (mode === "pyodide") {
    const { loadPyodide } = await import("../pyodide/pyodide.mjs");
    await loadPyodide({ indexURL: new URL("../pyodide/", import.meta.url).href });
  } else if (mode === "dexie") {
    const { default: Dexie } = await import("../vendor/dexie.mjs");
    const db = new Dexie("panelot_v1");
    db.version(1).stores(STORES);
    await db.open();
    window.__benchReadyAt = performance.now();
    await paintList(db);
  } else if (mode === "raw") {
    await openNative("panelot_v1");
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  window.__benchReadyAt ??= performance.now();
  state.textContent = "ready";
} catch (error) {
  window.__benchError = String(error?.stack ?? error);
  state.textContent = `error: ${window.__benchError}`;
}

/** The conversation list from Dexie, drawn as a side panel would draw it. */
async function paintList(db) {
  const rows = await db.table("threads").orderBy("updatedAt").reverse().toArray();
  const active = rows.filter((t) => !t.archived);
  const listed = [...active.filter((t) => t.pinned), ...active.filter((t) => !t.pinned)];
  if (!listed.length) {
    window.__benchNothingToPaint = true;
    return;
  }
  const list = document.createElement("ul");
  for (const t of listed) {
    const item = document.createElement("li");
    const title = document.createElement("span");
    title.textContent = t.title || "Untitled";
    const time = document.createElement("span");
    time.textContent = new Date(t.updatedAt).toLocaleString();
    item.append(title, " · ", time);
    list.append(item);
  }
  document.body.append(list);
  await new Promise((resolve) => requestAnimationFrame(resolve));
  window.__benchFirstPaintAt = performance.now();
}
