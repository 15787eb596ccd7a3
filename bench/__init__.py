"""Benchmarks: panelot.idb (Python in Pyodide) against Dexie 4 and plain IndexedDB."""
