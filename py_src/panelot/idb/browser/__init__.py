"""The browser core: the only code that runs IndexedDB transactions, through Pyodide's proxies.

``core`` holds the connection, the issuing of requests and the transaction lifecycle;
``ops`` the per-request bookkeeping; ``convert`` the values crossing the boundary;
``pack`` a write's values captured as marshal data; ``opening`` opening and upgrading;
``blobs`` and ``files`` the core's JS Blobs and files; ``channel`` its change channel.
:class:`BrowserFactory` exists only under Pyodide (the JS proxies do not exist
elsewhere), so the package itself imports under plain CPython.
"""

import sys

__all__: list[str] = []

if sys.platform == "emscripten":  # pragma: no cover - Pyodide only
    from panelot.idb.browser.core import BrowserFactory

    __all__ = ["BrowserFactory"]
