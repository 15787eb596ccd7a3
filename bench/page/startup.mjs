// Startup baselines, copied with data.mjs into a temporary copy of dist/extension (at
// bench/ inside it) by bench/run.py, so that they load from the extension's origin like
// the side panel does. `?mode=pyodide` loads bare Pyodide (no packages, no database);
// `?mode=dexie` opens panelot_v1 with Dexie; `?mode=raw` opens it with plain IndexedDB.
// Each sets window.__benchReadyAt (ms since navigation) when done.
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
  } else if (mode === "raw") {
    await openNative("panelot_v1");
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  window.__benchReadyAt = performance.now();
  state.textContent = "ready";
} catch (error) {
  window.__benchError = String(error?.stack ?? error);
  state.textContent = `error: ${window.__benchError}`;
}
