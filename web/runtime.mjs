// Boots Pyodide, installs the bundled wheels and opens the Panelot store.
// Shared by the extension pages and the plain-page harness (dist/web).
import { loadPyodide } from "./pyodide/pyodide.mjs";
import * as panelotJs from "./panelot_js.mjs";
import * as panelotCrypto from "./panelot_crypto.mjs";

/** Stages in boot order; "error" replaces whichever stage failed. */
export const STAGES = ["runtime", "package", "database", "ready"];

/**
 * Start the runtime and expose it as `window.panelot`.
 *
 * @param {object} [options]
 * @param {string} [options.base] URL of the directory holding pyodide/ and wheels/.
 * @param {string} [options.dbName] IndexedDB database to open.
 * @param {(stage: string) => void} [options.onProgress] Called as each stage starts.
 * @returns {{ready: Promise<void>, py: object|null, query: Function, state: string, timings: object}}
 */
export function bootRuntime({
  base = new URL(".", import.meta.url).href,
  dbName = "panelot_v1",
  onProgress = () => {},
} = {}) {
  let rt = null;
  const panelot = {
    ready: null,
    py: null,
    state: "starting",
    timings: {},
    error: null,
    /**
     * Run a named query. Resolves with its result, or rejects with the plain error object
     * from Python's envelope: `{name, message}` plus any extra fields (e.g. `field`).
     */
    async query(name, args = {}) {
      await panelot.ready;
      const envelope = JSON.parse(await rt.query(name, JSON.stringify(args)));
      if (!envelope.ok) {
        throw envelope.error;
      }
      return envelope.result;
    },
    /**
     * Send a command `{type, clientId, submissionId, payload}`. Resolves with its terminal
     * response, `{status: "completed", response}` or `{status: "failed", error}`; it never
     * rejects for a domain error.
     */
    async send(command) {
      await panelot.ready;
      return JSON.parse(await rt.send(JSON.stringify(command)));
    },
  };

  const enter = (stage) => {
    panelot.state = stage;
    window.__panelotState = stage;
    onProgress(stage);
  };

  const timed = async (key, work) => {
    const started = performance.now();
    const value = await work();
    panelot.timings[key] = Math.round(performance.now() - started);
    return value;
  };

  async function boot() {
    const started = performance.now();
    enter("runtime");
    panelot.py = await timed("runtime_ms", () =>
      loadPyodide({ indexURL: `${base}pyodide/` }),
    );

    enter("package");
    await timed("package_ms", async () => {
      const response = await fetch(`${base}wheels/manifest.json`);
      if (!response.ok) {
        throw new Error(`wheels/manifest.json: HTTP ${response.status}`);
      }
      const { wheels } = await response.json();
      const errors = [];
      await panelot.py.loadPackage(
        wheels.map((file) => `${base}wheels/${file}`),
        { errorCallback: (message) => errors.push(message) },
      );
      if (errors.length > 0) {
        throw new Error(`installing wheels failed: ${errors.join("; ")}`);
      }
    });

    enter("database");
    await timed("database_ms", async () => {
      panelot.py.registerJsModule("panelot_js", panelotJs);
      // Credential encryption plumbing (non-extractable AES-GCM key in IndexedDB panelot_keys).
      panelot.py.registerJsModule("panelot_crypto", panelotCrypto);
      rt = panelot.py.pyimport("panelot.runtime");
      await rt.start(dbName);
    });

    panelot.timings.total_ms = Math.round(performance.now() - started);
    enter("ready");
  }

  panelot.ready = boot().catch((error) => {
    panelot.error = error;
    enter("error");
    throw error;
  });
  window.panelot = panelot;
  return panelot;
}
