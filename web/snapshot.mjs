// Start-up from the memory snapshot that build.py makes with tools/make_snapshot.py:
// Pyodide with the bundled wheels installed and the panelot package imported, restored in
// a fraction of a normal load. The API is Pyodide's private `_loadSnapshot`, so every step
// is guarded: a missing, stale or failing snapshot yields `py: null` with the reason, and
// the caller loads Pyodide normally.
import { loadPyodide, version as pyodideVersion } from "./pyodide/pyodide.mjs";
import { matchCopy, prepareCopy, readWithCopy } from "./local_copy.mjs";

/** Where build.py puts the snapshot and its manifest, relative to the runtime's base. */
export const SNAPSHOT_MANIFEST = "snapshot/manifest.json";

// Run right after a restore. Every page restoring the same bytes would otherwise share one
// `random` state; the imported package must be there, since its files are not.
const AFTER_RESTORE = `
import random, sys
random.seed()
if "panelot.runtime" not in sys.modules:
    raise ImportError("the snapshot does not hold panelot.runtime")
`;

/** The JSON at `url`, or null when there is no such file (a 404, or a fetch error). */
async function fetchJSON(url) {
  let response;
  try {
    response = await fetch(url);
  } catch {
    return null; // an extension's missing file is a network error, not a 404
  }
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

/**
 * The snapshot from its file (see pack() in tools/snapshot_page.mjs): "PSNP", the
 * snapshot's length and page size (u32 little-endian), a bitmap of the stored pages, then
 * those pages; the pages left out are zero.
 */
export function unpack(buffer) {
  const file = new Uint8Array(buffer);
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  if (file.length < 12 || new TextDecoder().decode(file.subarray(0, 4)) !== "PSNP") {
    throw new Error("not a packed Panelot snapshot");
  }
  const length = view.getUint32(4, true);
  const page = view.getUint32(8, true);
  const pages = Math.ceil(length / page);
  const bitmap = file.subarray(12, 12 + Math.ceil(pages / 8));
  const out = new Uint8Array(length);
  let at = 12 + bitmap.length;
  for (let i = 0; i < pages; i++) {
    if (bitmap[i >> 3] & (1 << (i & 7))) {
      const size = Math.min(page, length - i * page);
      if (at + size > file.length) throw new Error("the packed snapshot is cut short");
      out.set(file.subarray(at, at + size), i * page);
      at += size;
    }
  }
  if (at !== file.length) throw new Error("the packed snapshot has trailing bytes");
  return out;
}

/** Why the snapshot does not match this Pyodide and these wheels, or null when it does. */
export function staleness(snapshot, wheels) {
  if (snapshot.pyodide !== pyodideVersion) {
    return `made for Pyodide ${snapshot.pyodide}, this is ${pyodideVersion}`;
  }
  const want = JSON.stringify(wheels?.sha256 ?? null);
  if (JSON.stringify(snapshot.wheels ?? null) !== want) {
    return "made from other wheels than the bundled ones";
  }
  return null;
}

/**
 * Run `load` with Pyodide's instantiation of its wasm adjusted while it runs: every memory
 * instantiated is grown to at least `memory` bytes, and the streaming compile reads the
 * wasm's local copy when `wasmCopy` (a promise of matchCopy's answer) finds one.
 *
 * Pyodide copies a snapshot into the heap without growing it (pyodide#6254: the heap's
 * size is fixed in the wasm, and the `INITIAL_MEMORY` it sets is never read), so a
 * snapshot taken after the heap grew could not be restored. Pyodide's module declares its
 * memory and exports it; growing it as the instance comes back, before Emscripten builds
 * its views of it, gives the heap the room (pages are committed as they are written).
 *
 * Chromium reads an extension's own files slowly (local_copy.mjs), so a compile streamed
 * from the copy in Cache Storage ends sooner. The extension's response Pyodide fetched is
 * cancelled once the copy has compiled; a copy that does not compile is removed and that
 * response compiled instead. `onCopy()` is called when the copy was used.
 */
async function withInstantiation({ memory, wasmCopy, onCopy }, load) {
  const { instantiate, instantiateStreaming } = WebAssembly;
  const grow = (result) => {
    const heap = (result.instance ?? result).exports?.memory;
    if (memory > 0 && heap instanceof WebAssembly.Memory && heap.buffer.byteLength < memory) {
      heap.grow(Math.ceil((memory - heap.buffer.byteLength) / WASM_PAGE));
    }
    return result;
  };
  const stream = async (source, ...rest) => {
    const copy = await wasmCopy;
    if (copy) {
      // A cached Response has no Content-Type; streaming compilation requires it.
      const headers = { "Content-Type": "application/wasm" };
      try {
        const result = await instantiateStreaming.call(
          WebAssembly,
          new Response(copy.response.body, { headers }),
          ...rest,
        );
        Promise.resolve(source)
          .then((response) => response.body?.cancel())
          .catch(() => {});
        onCopy();
        return result;
      } catch {
        await copy.drop(); // a broken copy: the file is compiled, and kept again later
      }
    }
    return instantiateStreaming.call(WebAssembly, source, ...rest);
  };
  WebAssembly.instantiate = (...args) => instantiate.apply(WebAssembly, args).then(grow);
  WebAssembly.instantiateStreaming = (...args) => stream(...args).then(grow);
  try {
    return await load();
  } finally {
    WebAssembly.instantiate = instantiate;
    WebAssembly.instantiateStreaming = instantiateStreaming;
  }
}

const WASM_PAGE = 65536;

/**
 * Restore the snapshot under `base`. Resolves with `{py, outcome}`: `py` is a ready
 * Pyodide with the package imported (the JS modules registered again) and `outcome` is
 * "restored", or `py` is null and `outcome` says why: "absent", "stale: …" or "failed: …".
 * Never rejects. A restore also says where the snapshot and the wasm were read from
 * (`source` and `wasmSource`: "copy", the local copy in Cache Storage, or "file") and
 * gives `keep()`, which stores the files read as the local copies (local_copy.mjs); call
 * it once the start-up is over.
 *
 * @param {object} options
 * @param {string} options.base URL of the directory holding pyodide/, wheels/, snapshot/.
 * @param {object} options.pyodideOptions Passed on to loadPyodide.
 * @param {Record<string, object>} options.jsModules The JS modules Python imports, by name.
 * @param {(name: string) => void} [options.mark] Called as each step ends: the snapshot
 *   fetched and unpacked ("snapshot_fetched"), Pyodide instantiated on it ("pyodide"),
 *   Python's first steps after it ("after_restore").
 */
export async function restoreSnapshot({ base, pyodideOptions, jsModules, mark = () => {} }) {
  let read = null; // where the snapshot's bytes came from (local_copy.mjs)
  try {
    const snapshot = await fetchJSON(`${base}${SNAPSHOT_MANIFEST}`);
    if (snapshot === null) return { py: null, outcome: "absent" };
    const stale = staleness(snapshot, await fetchJSON(`${base}wheels/manifest.json`));
    if (stale) return { py: null, outcome: `stale: ${stale}` };
    const wasm = wasmOf(snapshot, base);
    const wasmCopy = wasm ? matchCopy(wasm.name, wasm.sha256) : null;
    let wasmSource = "file";
    const url = new URL(snapshot.file, `${base}${SNAPSHOT_MANIFEST}`).href;
    const bytes = (async () => {
      read = await readWithCopy(url, snapshot.file, snapshot.sha256);
      let heap;
      try {
        heap = unpack(read.buffer);
      } catch (error) {
        if (read.source !== "copy") throw error;
        await read.drop(); // a broken local copy: removed, and the file read instead
        read = await readWithCopy(url, snapshot.file, snapshot.sha256);
        heap = unpack(read.buffer);
      }
      read.buffer = null; // the heap is what is needed now; keep() holds its own reference
      mark("snapshot_fetched");
      return heap;
    })();
    // The heap must hold the whole snapshot: `memory` is its length (build.py).
    const instantiation = {
      memory: snapshot.memory,
      wasmCopy,
      onCopy: () => (wasmSource = "copy"),
    };
    const py = await withInstantiation(instantiation, () =>
      loadPyodide({
        ...pyodideOptions,
        _loadSnapshot: bytes,
        _snapshotDeserializer: (ref) => {
          const module = jsModules[ref?.jsModule];
          if (!module) throw new Error(`the snapshot refers to an unknown JS object ${JSON.stringify(ref)}`);
          return module;
        },
      }),
    );
    mark("pyodide");
    for (const [name, module] of Object.entries(jsModules)) py.registerJsModule(name, module);
    py.runPython(AFTER_RESTORE);
    mark("after_restore");
    const keepSnapshot = read.keep;
    const keep = async () => {
      await keepSnapshot();
      if (wasm && wasmSource !== "copy") await prepareCopy(wasm.url, wasm.name, wasm.sha256);
    };
    return { py, outcome: "restored", source: read.source, wasmSource, keep };
  } catch (error) {
    // A local copy that Pyodide could not restore is removed: the next start reads the file.
    if (read?.source === "copy") await read.drop();
    return { py: null, outcome: `failed: ${error?.message ?? error}` };
  }
}

/**
 * The wasm the manifest names (`{file, sha256}`, the file relative to `base`) as
 * `{url, name, sha256}`, or null for a manifest without it.
 */
function wasmOf(snapshot, base) {
  const wasm = snapshot.wasm;
  if (!wasm || typeof wasm.file !== "string" || typeof wasm.sha256 !== "string") return null;
  const url = new URL(wasm.file, base).href;
  return { url, name: url.slice(url.lastIndexOf("/") + 1), sha256: wasm.sha256 };
}

/**
 * Store the snapshot under `base` and the wasm it restores on as local copies
 * (local_copy.mjs) before any start needs them: the service worker runs this when the
 * extension is installed or updated, so the first panel of a build reads the copies
 * instead of the extension's slower files. Resolves with what it did for each,
 * `{snapshot, wasm}`: prepareCopy's outcomes, or for both "absent" (no snapshot in this
 * build), "stale: …" (one no start would restore: nothing stored) or "failed: …"; never
 * rejects.
 */
export async function prepareSnapshotCopy(base) {
  const both = (outcome) => ({ snapshot: outcome, wasm: outcome });
  try {
    const snapshot = await fetchJSON(`${base}${SNAPSHOT_MANIFEST}`);
    if (snapshot === null) return both("absent");
    const stale = staleness(snapshot, await fetchJSON(`${base}wheels/manifest.json`));
    if (stale) return both(`stale: ${stale}`);
    const url = new URL(snapshot.file, `${base}${SNAPSHOT_MANIFEST}`).href;
    const wasm = wasmOf(snapshot, base);
    return {
      snapshot: await prepareCopy(url, snapshot.file, snapshot.sha256),
      wasm: wasm ? await prepareCopy(wasm.url, wasm.name, wasm.sha256) : "absent",
    };
  } catch (error) {
    return both(`failed: ${error?.message ?? error}`);
  }
}
