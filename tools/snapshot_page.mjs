// The page that makes the start-up memory snapshot, in the same Chromium the extension
// runs in (see tools/make_snapshot.py, which serves it). Pyodide records facts about its
// host at start-up (whether WebAssembly stack switching exists, which call trampolines to
// use) and a snapshot keeps them, so it is made where it will be restored.
//
// Boots Pyodide with `_makeSnapshot`, unpacks the wheels named in ?wheels=a.whl,b.whl
// (served next to this page), imports every module of their packages, and POSTs the
// packed snapshot to ./snapshot, or the error text to ./error.
import { loadPyodide } from "./pyodide/pyodide.mjs";
import { hideStackSwitching } from "./stack_switching.mjs";

// Must match the modules web/runtime.mjs registers (JS_MODULES there): Python may hold
// references to them, and the snapshot names each so the restoring page supplies its own.
const JS_MODULES = ["panelot_js", "panelot_crypto", "panelot_images"];

const IMPORT_ALL = `
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
`;

/**
 * Half of the heap is zero pages. The file holds: "PSNP", then (u32 little-endian) the
 * snapshot's length and the page size, a bitmap with one bit per page (set: the page is
 * stored), then the stored pages in order. unpack() in web/snapshot.mjs reverses it.
 */
function pack(bytes, pageSize = 4096) {
  const pages = Math.ceil(bytes.length / pageSize);
  const bitmap = new Uint8Array(Math.ceil(pages / 8));
  const kept = [];
  for (let i = 0; i < pages; i++) {
    const page = bytes.subarray(i * pageSize, (i + 1) * pageSize);
    if (page.some((b) => b !== 0)) {
      bitmap[i >> 3] |= 1 << (i & 7);
      kept.push(page);
    }
  }
  const head = new Uint8Array(12);
  head.set(new TextEncoder().encode("PSNP"));
  new DataView(head.buffer).setUint32(4, bytes.length, true);
  new DataView(head.buffer).setUint32(8, pageSize, true);
  return new Blob([head, bitmap, ...kept]);
}

async function make() {
  const wheels = new URLSearchParams(location.search).get("wheels").split(",");
  hideStackSwitching();
  const py = await loadPyodide({
    indexURL: new URL("./pyodide/", location.href).href,
    _makeSnapshot: true,
  });
  if (py._module.jspiSupported) throw new Error("stack switching (JSPI) was not hidden");
  const initialHeap = py._module.HEAP8.length;
  const placeholders = Object.fromEntries(JS_MODULES.map((name) => [name, {}]));
  for (const [name, module] of Object.entries(placeholders)) py.registerJsModule(name, module);
  for (const wheel of wheels) {
    const response = await fetch(wheel);
    if (!response.ok) throw new Error(`${wheel}: HTTP ${response.status}`);
    py.FS.writeFile(`/tmp/${wheel}`, new Uint8Array(await response.arrayBuffer()));
  }
  py.globals.set("WHEELS", py.toPy(wheels.map((w) => `/tmp/${w}`)));
  const modules = py.runPython(IMPORT_ALL);
  // The heap may have grown while importing: the restoring page grows its heap to the
  // snapshot's length first (web/snapshot.mjs), which Pyodide itself does not (#6254).
  const heap = py._module.HEAP8.length;
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
  const stats = { bytes: snapshot.length, packed: packed.size, heap, initialHeap, modules };
  const sent = await fetch(`snapshot?stats=${encodeURIComponent(JSON.stringify(stats))}`, {
    method: "POST",
    body: packed,
  });
  if (!sent.ok) throw new Error(`POST snapshot: HTTP ${sent.status}`);
}

make().catch((error) =>
  fetch("error", { method: "POST", body: String(error?.stack ?? error) }),
);
