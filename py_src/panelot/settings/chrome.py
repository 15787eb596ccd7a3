"""``chrome.storage.local`` as a :class:`~panelot.settings.backend.StorageBackend` (Pyodide).

Values cross the FFI as JSON text (``JSON.parse`` / ``JSON.stringify`` on the JS side),
which is what ``chrome.storage`` holds anyway and avoids walking JS proxies. ``get``
always passes an explicit array of keys; ``chrome.storage.local.get`` is looked up on
every call (never cached), so a test that wraps it in the page sees every read.

``subscribe`` registers one ``chrome.storage.onChanged`` listener (a ``create_proxy``)
per subscription, filtered to the ``"local"`` area; the returned function removes the
listener and destroys its proxy.

``exclusive`` holds the Web Lock :data:`~panelot.settings.backend.SETTINGS_LOCK`
(``navigator.locks``: one queue for every page and the service worker of the
extension), through the ``holdLock`` helper of ``panelot_js`` (``web/wiring.mjs``).

A call that Chrome rejects (a full area: "QUOTA_BYTES quota exceeded"; a disk error)
raises the project's error instead of a bare ``JsException``: QuotaExceededError when
the message names the quota, UnknownError otherwise. A rejected ``set`` writes none of
its items (Chrome applies a ``set`` as a whole), so the previous values stay readable.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from panelot.idb.errors import PanelotError, QuotaExceededError, UnknownError, ValidationError
from panelot.settings.backend import (
    ABSENT,
    SETTINGS_LOCK,
    Change,
    Listener,
    Unsubscribe,
    check_keys,
)

__all__ = [
    "ChromeStorageBackend",
    "chrome_storage_available",
    "extension_context",
    "storage_error",
]


def _chrome(*path: str) -> Any:
    """``chrome`` of this page followed along ``path``; ``None`` where a step is missing.

    ``None`` outside a page (no ``js`` module) too.
    """
    try:
        import js
    except ImportError:
        return None
    found = getattr(js, "chrome", None)
    for name in path:
        if found is None:
            return None
        found = getattr(found, name, None)
    return found


def chrome_storage_available() -> bool:
    """Whether this page can reach ``chrome.storage.local`` (an extension page)."""
    return _chrome("storage", "local") is not None


def extension_context() -> bool:
    """Whether this page belongs to an extension (``chrome.runtime.id`` is set).

    An extension context without ``chrome.storage`` (an offscreen document, a worker)
    must not keep settings in memory unnoticed: see :func:`panelot.host.browser_host`.
    """
    return bool(_chrome("runtime", "id"))


def _local() -> Any:
    import js

    return js.chrome.storage.local


def storage_error(action: str, exc: BaseException) -> PanelotError:
    """The project's error for a rejected ``chrome.storage.local.<action>`` call."""
    message = str(getattr(exc, "message", "") or exc)
    if "quota" in message.lower():
        return QuotaExceededError(
            f"settings storage is full (chrome.storage.local.{action}: {message}); "
            "nothing was written, the previous values are kept"
        )
    written = "" if action == "get" else "; nothing was written"
    return UnknownError(f"chrome.storage.local.{action} failed ({message}){written}")


async def _call(action: str, start: Callable[[], Any]) -> Any:
    """Await the promise ``start()`` returns, mapping a JS failure to the project's errors."""
    from pyodide.ffi import JsException

    try:
        return await start()
    except JsException as exc:
        raise storage_error(action, exc) from None


class ChromeStorageBackend:
    """The extension's ``chrome.storage.local`` area."""

    def __init__(self) -> None:
        self.active_listeners = 0
        """How many onChanged listeners this backend has registered and not removed."""

    async def get(self, keys: Iterable[str]) -> dict[str, Any]:
        """Return ``{key: value}`` for the listed keys that exist."""
        import js

        wanted = check_keys(keys)
        keys_js = js.JSON.parse(json.dumps(wanted))
        result = await _call("get", lambda: _local().get(keys_js))
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
        items_js = js.JSON.parse(text)
        await _call("set", lambda: _local().set(items_js))

    async def remove(self, keys: Iterable[str]) -> None:
        """Delete the listed keys."""
        import js

        keys_js = js.JSON.parse(json.dumps(check_keys(keys)))
        await _call("remove", lambda: _local().remove(keys_js))

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Hold the Web Lock ``panelot-settings`` (every context of the extension waits)."""
        import panelot_js  # registered by web/runtime.mjs
        from pyodide.ffi import JsException

        try:
            release = await panelot_js.holdLock(SETTINGS_LOCK)
        except JsException as exc:
            message = str(getattr(exc, "message", "") or exc)
            raise UnknownError(f"the settings lock was refused ({message})") from None
        try:
            yield
        finally:
            release()

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
