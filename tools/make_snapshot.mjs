// Makes the start-up memory snapshot: the bundled Pyodide (node_modules/pyodide, run in
// Node) with the given wheels unpacked and every module of their packages imported, frozen
// with Pyodide's (private) makeMemorySnapshot. web/runtime.mjs restores it in ~0.3 s
// instead of booting Python and importing the package (~3-4 s), and falls back to a normal
// load whenever the snapshot is missing, stale or fails to restore.
//
//   node tools/make_snapshot.mjs OUT.bin WHEEL...
//
// Prints one JSON line: {"bytes", "heap", "modules"}. Exits non-zero when the snapshot
// cannot be made or would not restore (a heap grown past Pyodide's initial 30 MiB: see
// pyodide issue #6254).
//
// The names in JS_MODULES must match the modules web/runtime.mjs registers: Python may
// hold references to them, and the snapshot records those by name (see SNAPSHOT_REFS
// in web/runtime.mjs) so the restoring page can hand back its own module objects.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const JS_MODULES = ["panelot_js", "panelot_crypto", "panelot_images"];

const here = path.dirname(fileURLToPath(import.meta.url));
const indexURL = path.join(here, "..", "node_modules", "pyodide") + path.sep;
const { loadPyodide } = await import(path.join(indexURL, "pyodide.mjs"));

const [out, ...wheels] = process.argv.slice(2);
if (!out || wheels.length === 0) {
  console.error("usage: node tools/make_snapshot.mjs OUT.bin WHEEL...");
  process.exit(2);
}

// Browser globals that modules read at import time (e.g. js.IDBKeyRange) are stand-ins
// here. The snapshot records how each was reached (its path from globalThis), so the
// restoring page resolves the real one; calling a stand-in at import time fails the build.
const standIn = (name) =>
  function missing() {
    throw new Error(`${String(name)} is a browser global; it cannot be used while snapshotting`);
  };
const jsglobals = new Proxy(globalThis, {
  get: (target, key) => (key in target ? target[key] : standIn(key)),
});
// The browser's defaults, so nothing about this machine (paths, argv) is frozen in.
const py = await loadPyodide({
  indexURL,
  jsglobals,
  _makeSnapshot: true,
  _sysExecutable: "./this.program",
});
const initialHeap = py._module.HEAP8.length;
const placeholders = Object.fromEntries(JS_MODULES.map((name) => [name, {}]));
for (const [name, module] of Object.entries(placeholders)) py.registerJsModule(name, module);

for (const wheel of wheels) {
  py.FS.writeFile(`/tmp/${path.basename(wheel)}`, fs.readFileSync(wheel));
}
py.globals.set("WHEELS", py.toPy(wheels.map((w) => `/tmp/${path.basename(w)}`)));
const modules = py.runPython(`
import importlib, os, pkgutil, site, sys, zipfile

site_packages = site.getsitepackages()[0]
tops = set()
for wheel in WHEELS:
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site_packages)
        tops |= {n.split("/")[0] for n in zf.namelist() if n.endswith(".py") and "/" in n}
    os.remove(wheel)
importlib.invalidate_caches()
# Import every module: after a restore the unpacked files are gone, so a module first
# imported later would not be found.
for top in sorted(tops):
    package = importlib.import_module(top)
    for info in pkgutil.walk_packages(package.__path__, top + "."):
        importlib.import_module(info.name)
del WHEELS
len([m for m in sys.modules if m.split(".")[0] in tops])
`);

const heap = py._module.HEAP8.length;
if (heap !== initialHeap) {
  console.error(
    `[make_snapshot] the heap grew from ${initialHeap} to ${heap} bytes; Pyodide cannot restore ` +
      "a snapshot larger than its initial heap (pyodide issue #6254)",
  );
  process.exit(1);
}
const names = new Map(Object.entries(placeholders).map(([name, module]) => [module, name]));
const snapshot = py.makeMemorySnapshot({
  serializer: (value) => {
    const name = names.get(value);
    if (name === undefined) {
      throw new Error(`the heap refers to a JS object the page cannot supply: ${String(value)}`);
    }
    return { jsModule: name };
  },
});
const packed = pack(snapshot);
fs.writeFileSync(out, packed);
console.log(JSON.stringify({ bytes: snapshot.length, packed: packed.length, heap, modules }));

/**
 * Half of the heap is zero pages. The file holds: "PSNP", then (u32 little-endian) the
 * snapshot's length and the page size, a bitmap with one bit per page (set: the page is
 * stored), then the stored pages in order. unpack() in web/snapshot.mjs reverses it.
 */
function pack(bytes) {
  const PAGE = 4096;
  const pages = Math.ceil(bytes.length / PAGE);
  const bitmap = new Uint8Array(Math.ceil(pages / 8));
  const kept = [];
  for (let i = 0; i < pages; i++) {
    const page = bytes.subarray(i * PAGE, (i + 1) * PAGE);
    if (page.some((b) => b !== 0)) {
      bitmap[i >> 3] |= 1 << (i & 7);
      kept.push(page);
    }
  }
  const head = new Uint8Array(12);
  head.set(new TextEncoder().encode("PSNP"));
  new DataView(head.buffer).setUint32(4, bytes.length, true);
  new DataView(head.buffer).setUint32(8, PAGE, true);
  return Buffer.concat([head, bitmap, ...kept]);
}
