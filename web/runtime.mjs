// Boots Pyodide, installs the bundled wheels and opens the Panelot store.
// Shared by the extension pages and the plain-page harness (dist/web).
// pyodide/ is not in the source tree: build.py copies it from node_modules next to this
// file in dist/extension and dist/web (BUILT_DIRS), with wheels/ and snapshot/.
import { loadPyodide } from "./pyodide/pyodide.mjs";
import * as panelotJs from "./wiring.mjs";
import * as panelotCrypto from "./crypto.mjs";
import * as panelotImages from "./images.mjs";
import { restoreSnapshot } from "./snapshot.mjs";

/** Stores the snapshot as the local copy ahead of any start (the service worker, on install). */
export { prepareSnapshotCopy } from "./snapshot.mjs";
import { backupApi } from "./backup.mjs";
import { hideStackSwitching } from "./stack_switching.mjs";
import { sparedThreadIds } from "./presence.mjs";

/** Stages in boot order; "error" replaces whichever stage failed. */
export const STAGES = ["runtime", "package", "database", "ready"];

/** The JS modules Python imports by name (see JS_MODULES in tools/snapshot_page.mjs). */
const JS_MODULES = {
  panelot_js: panelotJs,
  // Credential encryption plumbing (non-extractable AES-GCM key in IndexedDB panelot_keys).
  panelot_crypto: panelotCrypto,
  // Image thumbnails for request slimming (createImageBitmap + OffscreenCanvas).
  panelot_images: panelotImages,
};

/**
 * Load Pyodide with the panelot package; return
 * `{py, rt, snapshot, source, wasmSource, keepCopy}`
 * with `rt` the (not yet started) `panelot.runtime` module and `snapshot` how the start
 * went: "restored" (from the build's memory snapshot), "off", or why it was not used
 * ("absent", "stale: …", "failed: …"; a normal load followed). `source` names where a
 * restored snapshot's bytes came from, "copy" or "file" (`wasmSource`: the same for the
 * wasm it restored on), and `keepCopy()` stores the files read as the local copies for
 * the next start (local_copy.mjs; nothing to do after copies). Shared by the pages (bootRuntime) and the service worker, which passes `createPyodideModule` (the default export of
 * pyodide/pyodide.asm.mjs, imported statically) because `import()` is banned there.
 *
 * @param {object} options
 * @param {string} options.base URL of the directory holding pyodide/, wheels/, snapshot/.
 * @param {Function} [options.createPyodideModule]
 * @param {boolean} [options.snapshot] Try the memory snapshot first (default true).
 * @param {(stage: string, work: () => Promise<any>) => Promise<any>} [options.stage]
 *   Runs each stage ("runtime", "package"); the default just runs it.
 * @param {(name: string) => void} [options.mark] Called as each step of a snapshot
 *   restore ends ("snapshot_fetched", "pyodide", "after_restore"), for the start-up
 *   breakdown.
 */
export async function loadRuntime({
  base,
  createPyodideModule,
  snapshot = true,
  stage = (_name, work) => work(),
  mark = () => {},
}) {
  hideStackSwitching(); // before Pyodide looks for it: see stack_switching.mjs
  const pyodideOptions = {
    indexURL: `${base}pyodide/`,
    ...(createPyodideModule ? { createPyodideModule } : {}),
  };
  let outcome = "off";
  let keepCopy = async () => {};
  let source = null;
  let wasmSource = null;
  const py = await stage("runtime", async () => {
    if (snapshot) {
      const restored = await restoreSnapshot({ base, pyodideOptions, jsModules: JS_MODULES, mark });
      outcome = restored.outcome;
      if (restored.keep) keepCopy = restored.keep;
      source = restored.source ?? null;
      wasmSource = restored.wasmSource ?? null;
      if (restored.py) return restored.py;
      console.warn(`panelot: starting without the memory snapshot (${outcome})`);
    }
    return loadPyodide(pyodideOptions);
  });
  const rt = await stage("package", async () => {
    if (outcome !== "restored") await installPackage(py, base);
    return py.pyimport("panelot.runtime"); // importing the package is part of this stage
  });
  return { py, rt, snapshot: outcome, source, wasmSource, keepCopy };
}

/** Install the bundled wheels and register the JS modules Python imports. */
async function installPackage(py, base) {
  const response = await fetch(`${base}wheels/manifest.json`);
  if (!response.ok) {
    throw new Error(`wheels/manifest.json: HTTP ${response.status}`);
  }
  const { wheels } = await response.json();
  const errors = [];
  await py.loadPackage(
    wheels.map((file) => `${base}wheels/${file}`),
    { errorCallback: (message) => errors.push(message) },
  );
  if (errors.length > 0) {
    throw new Error(`installing wheels failed: ${errors.join("; ")}`);
  }
  for (const [name, module] of Object.entries(JS_MODULES)) py.registerJsModule(name, module);
}

/**
 * The first thing in `value` that JSON would silently change or refuse (a non-finite
 * number, a function, a symbol, a BigInt, a Date, a Map or other non-plain object, a
 * cycle), as the ValidationError envelope Python would give: `{name, message, field}`
 * with the field's path (e.g. `payload.title`; `whole` names the value itself). `null`
 * when `value` is plain JSON.
 * JSON.stringify would otherwise turn NaN into null and drop functions without a word.
 */
function notJSON(value, whole) {
  const ancestors = new Set();
  const fail = (path, why) => {
    const field = path || whole;
    return { name: "ValidationError", message: `${field}: ${why}`, field };
  };
  const check = (v, path) => {
    const type = typeof v;
    if (v === null || type === "string" || type === "boolean" || type === "undefined") return null;
    if (type === "number") return Number.isFinite(v) ? null : fail(path, `must be a finite number, got ${v}`);
    if (type !== "object") return fail(path, `${type} is not JSON data`);
    if (ancestors.has(v)) return fail(path, "refers back to itself (a cycle)");
    const isArray = Array.isArray(v);
    const proto = Object.getPrototypeOf(v);
    if (!isArray && proto !== Object.prototype && proto !== null) {
      return fail(path, `${Object.prototype.toString.call(v).slice(8, -1)} is not JSON data`);
    }
    ancestors.add(v);
    try {
      if (isArray) {
        for (let i = 0; i < v.length; i++) {
          const bad = check(v[i], `${path}[${i}]`);
          if (bad) return bad;
        }
      } else {
        for (const key of Object.keys(v)) {
          const bad = check(v[key], path ? `${path}.${key}` : key);
          if (bad) return bad;
        }
      }
    } finally {
      ancestors.delete(v);
    }
    return null;
  };
  try {
    return check(value, "");
  } catch (e) {
    return fail("", "is nested too deeply"); // a RangeError from the recursion
  }
}

/**
 * A Python exception raised into JS (Pyodide's PythonError, its message the whole
 * traceback) as the store's own error: `name` its class (`MissingAPIError`, `UpgradeError`),
 * `message` what it says, `traceback` the rest. Anything else is returned as it is.
 */
function fromPython(error) {
  if (error?.name !== "PythonError" || typeof error.type !== "string") return error;
  const traceback = String(error.message).trimEnd();
  const lines = traceback.split("\n");
  // The exception's own text starts at the last line naming its class ("pkg.mod.Class: ").
  const named = (line) => /^[\w.]+(?=:|$)/.exec(line)?.[0].split(".").pop() === error.type;
  const at = lines.findLastIndex(named);
  const text = at < 0 ? lines[lines.length - 1] : lines.slice(at).join("\n");
  const mapped = new Error(at < 0 ? text : text.replace(/^[\w.]+:? ?/, ""));
  mapped.name = error.type;
  mapped.traceback = traceback;
  return mapped;
}

/**
 * Start the runtime and expose it as `window.panelot`.
 *
 * @param {object} [options]
 * @param {string} [options.base] URL of the directory holding pyodide/ and wheels/.
 * @param {string} [options.dbName] IndexedDB database to open.
 * @param {(stage: string) => void} [options.onProgress] Called as each stage starts.
 * @param {boolean} [options.snapshot] Try the build's memory snapshot first (default true).
 * @param {boolean} [options.memorySettings] Accept settings kept in memory in an extension
 *   context without `chrome.storage` (an offscreen document), where the start otherwise
 *   fails with a MissingAPIError (default false; a plain page keeps them in memory anyway).
 * @returns {{ready: Promise<void>, py: object|null, query: Function, state: string,
 *   timings: object, marks: object, snapshot: string|null}} `snapshot` is loadRuntime's
 *   outcome once known; `marks` the start-up breakdown: each step's end in ms since the
 *   navigation started (`performance.now()`), filled in as the steps end (the page adds
 *   its own: see docs/performance.md).
 */
export function bootRuntime({
  base = new URL(".", import.meta.url).href,
  dbName = "panelot_v1",
  onProgress = () => {},
  snapshot = true,
  memorySettings = false,
} = {}) {
  let rt = null;
  const panelot = {
    ready: null,
    py: null,
    state: "starting",
    timings: {},
    marks: {},
    snapshot: null,
    /** Where the snapshot was read from: "copy" (Cache Storage), "file", or null. */
    snapshotSource: null,
    /** Where the wasm a restore ran on was read from: "copy", "file", or null. */
    wasmSource: null,
    /** Settles once the files read (not copies) are kept as the local copies. */
    copyKept: null,
    /** True once `copyKept` has settled (tests wait for it: no write is left running). */
    copySettled: false,
    error: null,
    /**
     * Run a named query. Resolves with its result, or rejects with the plain error object
     * from Python's envelope: `{name, message}` plus any extra fields (e.g. `field`).
     */
    async query(name, args = {}) {
      await panelot.ready;
      const bad = notJSON(args, "args");
      if (bad) throw bad;
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
      const bad = notJSON(command, "command");
      if (bad) return { status: "failed", error: bad };
      return JSON.parse(await rt.send(JSON.stringify(command)));
    },
    /**
     * Run a named query live: `onResult(result)` now and after every change, from any
     * context (other panels, the service worker, Dexie code), that alters the result;
     * `onError(error)` for a failed run (the query stays live). Returns the function
     * that stops it. Bad arguments or an unknown name go to `onError` once.
     */
    live(name, args = {}, onResult = () => {}, onError = (error) => console.error(error)) {
      let id = null;
      let stopped = false;
      const bad = notJSON(args, "args");
      const started = bad
        ? Promise.resolve(onError(bad))
        : panelot.ready.then(() => {
            if (stopped) return;
            const receive = (text) => {
              if (stopped) return;
              const envelope = JSON.parse(text);
              if (envelope.ok) onResult(envelope.result);
              else onError(envelope.error);
            };
            const answer = JSON.parse(rt.live(name, JSON.stringify(args), receive));
            if (answer.ok) id = answer.id;
            else onError(answer.error);
          });
      started.catch(onError);
      return () => {
        stopped = true;
        if (id !== null) rt.unlive(id);
        id = null;
      };
    },
    /**
     * The decrypted secret of a credential reference ("cred:…"), for one provider
     * request; no query returns a secret. Rejects like `query`, with the plain error
     * object (`{name: "NotFoundError", field: "ref"}` when the credential is gone).
     */
    async revealSecret(ref) {
      await panelot.ready;
      const envelope = JSON.parse(await rt.reveal_secret(String(ref)));
      if (!envelope.ok) throw envelope.error;
      return String(envelope.result);
    },
    /** Whole-database backup and restore (see web/backup.mjs). */
    backup: null,
  };
  panelot.backup = backupApi(
    () => rt,
    () => panelot.ready,
  );

  const enter = (stage) => {
    panelot.state = stage;
    window.__panelotState = stage;
    onProgress(stage);
  };

  /** Note that the step `name` of the start-up ends now (ms since navigation). */
  const mark = (name) => {
    panelot.marks[name] = Math.round(performance.now() * 10) / 10;
  };
  panelot.mark = mark;

  const timed = async (key, work) => {
    const started = performance.now();
    const value = await work();
    panelot.timings[key] = Math.round(performance.now() - started);
    return value;
  };

  async function boot() {
    const started = performance.now();
    const stage = async (name, work) => {
      enter(name);
      const value = await timed(`${name}_ms`, work);
      if (name === "runtime") panelot.py = value;
      mark(name);
      return value;
    };
    const loaded = await loadRuntime({ base, stage, snapshot, mark });
    rt = loaded.rt;
    panelot.snapshot = loaded.snapshot;

    // Start-up retention (the `retention` setting) spares what the open pages show and
    // the thread a panel will reopen (presence.mjs).
    const spared = JSON.stringify(await sparedThreadIds());
    await stage("database", async () => rt.start(dbName, spared, true, memorySettings));

    panelot.timings.total_ms = Math.round(performance.now() - started);
    enter("ready");
    // The snapshot and the wasm read from the extension's files are kept as the local
    // copies now that the start-up is over (the next start reads them: local_copy.mjs).
    panelot.snapshotSource = loaded.source;
    panelot.wasmSource = loaded.wasmSource;
    panelot.copyKept = loaded.keepCopy().finally(() => {
      panelot.copySettled = true;
    });
  }

  panelot.ready = boot().catch((raised) => {
    const error = fromPython(raised);
    if (error !== raised) console.error(raised); // the whole traceback, for whoever debugs
    panelot.error = error;
    enter("error");
    throw error;
  });
  window.panelot = panelot;
  return panelot;
}
