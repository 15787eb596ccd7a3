"""Panelot Store: conversation storage for a Pyodide side-panel extension.

The :mod:`panelot.idb` layer is a Dexie-compatible IndexedDB layer; the domain modules
build on it. :mod:`panelot.schema` declares the ``panelot_v1`` database.
"""

__version__ = "0.1.0"
