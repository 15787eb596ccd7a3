// Compiles the Python files under a directory to CPython bytecode with the very Pyodide
// the extension bundles (node_modules/pyodide, run in Node), so the .pyc files match its
// interpreter exactly. build.py adds them to the panelot wheel: importing the package in
// the browser then skips compiling ~70 modules on every page load.
//
//   node tools/compile_pyc.mjs DIR      writes DIR/**/__pycache__/*.cpython-3XY.pyc
//
// The files are "unchecked-hash" pycs: valid whatever the source files' mtimes are
// after the wheel is unpacked (both come from the same build).
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const indexURL = path.join(here, "..", "node_modules", "pyodide") + path.sep;
const { loadPyodide } = await import(path.join(indexURL, "pyodide.mjs"));

const dir = path.resolve(process.argv[2] ?? "");
const pyodide = await loadPyodide({ indexURL });
pyodide.FS.mkdir("/src");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: dir }, "/src");
const ok = pyodide.runPython(`
import compileall, py_compile
compileall.compile_dir(
    "/src", quiet=1, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
)
`);
if (!ok) {
  console.error("[compile_pyc] compileall reported errors");
  process.exit(1);
}
