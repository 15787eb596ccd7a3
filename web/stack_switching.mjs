// Pyodide runs here without WebAssembly stack switching (JSPI).
//
// With JSPI, Pyodide runs every call into Python on a stack of its own that V8
// allocates, and Chromium's renderer has crashed on such stacks (SIGSEGV at the top of a
// V8-allocated stack; three minidumps, see docs/platform.md). Nothing in panelot needs
// stack switching, so every page, the service worker and the build's snapshot page hide
// it before Pyodide starts; Pyodide then calls Python on the thread's own stack, as it
// does in browsers without JSPI. The snapshot keeps that choice, so both must agree.

const NAMES = ["Suspending", "promising", "Suspender"];

/** Remove JSPI from `WebAssembly` (idempotent); throws if it cannot be removed. */
export function hideStackSwitching(scope = globalThis) {
  const wasm = scope.WebAssembly;
  for (const name of NAMES) {
    if (name in wasm && !delete wasm[name]) {
      throw new Error(`cannot hide WebAssembly.${name}: Pyodide would use stack switching`);
    }
  }
}
