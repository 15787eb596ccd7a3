"""``chrome.storage.local`` as a :class:`~panelot.settings.backend.StorageBackend` (Pyodide).

Values cross the FFI as JSON text (``JSON.parse`` / ``JSON.stringify`` on the JS side),
which is what ``chrome.storage`` holds anyway and avoids walking JS proxies. ``get``
always passes an explicit array of keys; ``chrome.storage.local.get`` is looked up on
every call (never cached), so a test that wraps it in the page sees every read.

``subscribe`` registers one ``chrome.storage.onChanged`` listener (a ``create_proxy``)
per subscription, filtered to the ``"local"`` area; the returned function removes the
listener and destroys its proxy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..idb.errors import ValidationError
from .backend import ABSENT, Change, Listener, Unsubscribe, check_keys

__all__ = ["ChromeStorageBackend", "chrome_storage_available"]


def chrome_storage_available() -> bool:
    """Whether this page can reach ``chrome.storage.local`` (an extension page)."""
    try:
        import js
    except ImportError:
        return False
    chrome = getattr(js, "chrome", None)
    storage = getattr(chrome, "storage", None) if chrome is not None else None
    return storage is not None and getattr(storage, "local", None) is not None


def _local() -> Any:
    import js

    return js.chrome.storage.local


class ChromeStorageBackend:
    """The extension's ``chrome.storage.local`` area."""

    def __init__(self) -> None:
        self.active_listeners = 0
        """How many onChanged listeners this backend has registered and not removed."""

    async def get(self, keys: Iterable[str]) -> dict[str, Any]:
        """Return ``{key: value}`` for the listed keys that exist."""
        import js

        wanted = check_keys(keys)
        result = await _local().get(js.JSON.parse(json.dumps(wanted)))
        text = js.JSON.stringify(result)
        out: dict[str, Any] = json.loads(text) if isinstance(text, str) else {}
        return out

    async def set(self, items: Mapping[str, Any]) -> None:
        """Write every item (JSON values)."""
        import js

        if not items:
            return
        try:
            text = json.dumps(dict(items), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"items: not JSON data ({exc})", field="items") from None
        await _local().set(js.JSON.parse(text))

    async def remove(self, keys: Iterable[str]) -> None:
        """Delete the listed keys."""
        import js

        await _local().remove(js.JSON.parse(json.dumps(check_keys(keys))))

    def subscribe(self, listener: Listener) -> Unsubscribe:
        """Add an ``onChanged`` listener for the local area; return its remover."""
        import js
        from pyodide.ffi import create_proxy

        def on_changed(changes: Any, area: Any) -> None:
            if str(area) != "local":
                return
            raw = json.loads(js.JSON.stringify(changes))
            parsed = {
                key: Change(c.get("oldValue", ABSENT), c.get("newValue", ABSENT))
                for key, c in raw.items()
            }
            try:
                listener(parsed)
            except Exception as exc:  # never let a Python error escape into Chrome's dispatch
                js.console.error(f"panelot settings listener failed: {exc!r}")

        proxy = create_proxy(on_changed)
        js.chrome.storage.onChanged.addListener(proxy)
        self.active_listeners += 1
        done = False

        def unsubscribe() -> None:
            nonlocal done
            if done:
                return
            done = True
            js.chrome.storage.onChanged.removeListener(proxy)
            proxy.destroy()
            self.active_listeners -= 1

        return unsubscribe
