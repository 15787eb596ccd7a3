"""The browser runtime: what the JS loader calls after installing the package.

``start(db_name, spared_json)`` opens the store through the browser core, on the page's
host (:func:`panelot.host.browser_host`, built here once), with start-up retention per
the ``retention`` setting; ``run_retention(spared_json)`` runs a
retention pass (the service worker's daily alarm); ``run_sync()`` one background sync
(its sync alarm, under the Web Lock it took). ``spared_json`` is a JSON list of
the thread ids retention and the attachment budget leave alone: what open panels show
and what a panel will reopen (``web/presence.mjs`` gathers them; Python does not ask).
``query(name, args_json)`` answers a read query with a JSON envelope ``{"ok": true,
"result": ...}`` or ``{"ok": false, "error": {name, message, field?}}``;
``send(command_json)`` runs a bus command and returns its terminal response,
``{"status": "completed", "response"}`` or ``{"status": "failed", "error"}``, as JSON.
Neither ever raises into JavaScript.

The host's ``search_lock`` is chosen here: :func:`web_lock`, so one context of the
origin (the first to open the store) indexes search for all (docs/search.md).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
from collections.abc import Callable
from typing import Any

from panelot.backup.files import peek_backup as peek
from panelot.codec import camel
from panelot.host import browser_host
from panelot.idb import PanelotError
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.idb.observe import LiveQuery
from panelot.lifecycle.retention import configured_days, run_configured
from panelot.schema import DB_NAME
from panelot.store import PanelotStore
from panelot.sync.background import sync_once

__all__ = [
    "export_backup",
    "live",
    "live_count",
    "peek_backup",
    "query",
    "restore_backup",
    "run_retention",
    "run_sync",
    "send",
    "start",
    "store",
    "unlive",
    "web_lock",
]

_store: PanelotStore | None = None
_lives: dict[int, tuple[LiveQuery[Any], Any]] = {}
_next_live = 0


def _spared(spared_json: str | None) -> list[str]:
    """The thread ids of ``spared_json`` (a JSON list of strings; ``None``: none)."""
    ids = _loads(spared_json or "[]", "sparedThreadIds")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValidationError(
            "sparedThreadIds: must be a JSON list of thread ids", field="sparedThreadIds"
        )
    return ids


async def start(
    db_name: str = DB_NAME,
    spared_json: str | None = None,
    retention: bool = True,
    memory_settings: bool = False,
) -> None:
    """Open the store in the page (idempotent).

    Start-up retention follows the ``retention`` setting (``retention=False`` skips it)
    and, like the budget, spares the thread ids of ``spared_json``. In an extension
    context without ``chrome.storage`` the start fails with a ``MissingAPIError``
    unless ``memory_settings`` accepts settings kept in memory
    (:func:`panelot.host.browser.settings_backend`).
    """
    global _store
    if _store is not None and _store.db.name == db_name:
        return
    from panelot.idb.browser.core import BrowserFactory

    host = dataclasses.replace(  # one indexer per origin
        browser_host(memory_settings=memory_settings), search_lock=web_lock
    )
    days = await configured_days(host.services.settings) if retention else None
    _store = await PanelotStore.open(
        BrowserFactory(),
        host,
        db_name,
        retention_days=days,
        spared_thread_ids=_spared(spared_json),
    )
    # Everything alive now (modules, classes, the store) lives as long as the page: move
    # it out of the collector's generations, so collections during large reads do not
    # rescan it.
    gc.freeze()


async def run_retention(spared_json: str | None = None) -> str:
    """One retention pass with the configured setting (the service worker's daily alarm).

    Spares the thread ids of ``spared_json``. Returns JSON ``{days, archived:
    [threadId...]}`` (``days: null``: the setting is off).
    """
    opened = store()
    days, archived = await run_configured(
        opened.db, opened.services.settings, frozenset(_spared(spared_json))
    )
    return json.dumps({"days": days, "archived": [r["threadId"] for r in archived]})


async def run_sync() -> str:
    """One background sync (:func:`panelot.sync.background.sync_once`): the worker's alarm.

    The worker calls it holding the profile's ``panelot-sync`` Web Lock (no panel's
    continuous loop syncs meanwhile). Returns JSON ``{configured: false}`` when sync is
    not configured, else ``{configured: true, ok: true, pull, push}`` (``sync.now``'s
    report) or ``{configured: true, ok: false, error}``; never raises into JavaScript.
    """
    try:
        result = await sync_once(store())
    except Exception as exc:  # an envelope, never a JS throw
        result = {"configured": True, "ok": False, "error": _error(exc)}
    return _json(result)


async def web_lock(name: str) -> Callable[[], None]:
    """The Web Lock ``name`` once granted, and the function that releases it.

    Every page and the worker of the origin queue for it; a page that goes away loses it.
    """
    import panelot_js  # registered by web/runtime.mjs

    release = await panelot_js.holdLock(name)
    held = [True]

    def done() -> None:
        if held[0]:
            held[0] = False
            release()

    return done


def store() -> PanelotStore:
    """Return the open store (after :func:`start`)."""
    if _store is None:
        raise NotFoundError("the store is not started; call start() first")
    return _store


def _error(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, PanelotError):
        return exc.to_json()
    return {"name": type(exc).__name__, "message": str(exc)}


def _json(value: Any) -> str:
    """``value`` as JSON that ``JSON.parse`` accepts.

    A non-finite float, which only a corrupt stored record holds (IndexedDB keeps NaN
    and Infinity; JSON has neither), becomes ``null``, as ``JSON.stringify`` writes it.
    """
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _loads(text: str, what: str) -> Any:
    try:
        return json.loads(text or "{}")
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{what}: not valid JSON ({exc})", field=what) from None


async def query(name: str, args_json: str = "{}") -> str:
    """Run read query ``name`` with JSON arguments; return the JSON envelope."""
    try:
        result = await store().query(name, _loads(args_json, "args"))
    except Exception as exc:  # every failure becomes an error envelope, never a JS throw
        return _json({"ok": False, "error": _error(exc)})
    return _json({"ok": True, "result": result})


async def send(command_json: str) -> str:
    """Run a bus command given as JSON; return the terminal response as JSON."""
    try:
        response = await store().send(_loads(command_json, "command"))
    except Exception as exc:  # defensive: the bus itself reports domain errors
        response = {"status": "failed", "error": _error(exc)}
    return _json(response)


def live(name: str, args_json: str, callback: Any) -> str:
    """Start named query ``name`` as a live query; return ``{"ok": true, "id"}`` as JSON.

    ``callback`` (a JS function) is called with the query's envelope JSON, as
    :func:`query` returns it, first at once and then after each change from any
    context that alters the result (an unchanged result is not sent again). Bad
    arguments or an unknown name give ``{"ok": false, "error"}`` and call nothing.
    :func:`unlive` stops it and releases the callback.
    """
    global _next_live
    last: list[str] = []

    def deliver(envelope: dict[str, Any]) -> None:
        text = _json(envelope)
        if last and last[0] == text:
            return  # nothing changed for this view: no re-render, no flicker
        last[:] = [text]
        callback(text)

    try:
        running = store().live(
            name,
            _loads(args_json, "args"),
            on_result=lambda result: deliver({"ok": True, "result": result}),
            on_error=lambda exc: deliver({"ok": False, "error": _error(exc)}),
        )
    except Exception as exc:  # an envelope, never a JS throw
        if hasattr(callback, "destroy"):
            callback.destroy()
        return json.dumps({"ok": False, "error": _error(exc)})
    _next_live += 1
    _lives[_next_live] = (running, callback)
    return json.dumps({"ok": True, "id": _next_live})


def unlive(live_id: int) -> bool:
    """Stop a live query started by :func:`live`; False if it was not running."""
    entry = _lives.pop(int(live_id), None)
    if entry is None:
        return False
    running, callback = entry
    running.close()
    if hasattr(callback, "destroy"):
        callback.destroy()
    return True


def live_count() -> int:
    """How many live queries :func:`live` has running (for leak checks)."""
    return len(_lives)


async def reveal_secret(ref: str) -> str:
    """The decrypted secret of a credential reference, for the one request that needs it.

    The envelope JSON ``{"ok": true, "result": secret}`` or ``{"ok": false, "error"}``
    (a reference whose credential is gone: ``NotFoundError`` on ``ref``), never a raise
    into JS. No query returns a secret; this is the runtime's only way to one, and
    ``panelot.revealSecret`` in ``web/runtime.mjs`` is its only caller.
    """
    try:
        secret = await store().services.credentials.reveal(ref)
    except Exception as exc:  # an envelope, never a JS throw
        return _json({"ok": False, "error": _error(exc)})
    return _json({"ok": True, "result": secret})


# -- backup and restore: a file crosses as a JS Blob, everything else as JSON ------------


def _progress(callback: Any) -> Callable[[Any], None] | None:
    """Progress reports as JSON text for a JS callback (``None`` stays ``None``)."""
    if callback is None:
        return None

    def report(progress: Any) -> None:
        fields = dataclasses.asdict(progress)
        callback(json.dumps({camel(k): v for k, v in fields.items()}))

    return report


async def export_backup(settings: bool = True, on_progress: Any = None) -> Any:
    """Back up everything; return a JS array ``[Blob | null, envelope JSON]``.

    The envelope is ``{"ok": true, "result": {size, tables, exportedAt}}`` or
    ``{"ok": false, "error"}``; ``on_progress`` (a JS function) gets each report as JSON.
    """
    from pyodide.ffi import to_js

    try:
        backup = await store().export_backup(
            settings=bool(settings), progress=_progress(on_progress)
        )
    except Exception as exc:  # an envelope, never a JS throw
        return to_js([None, _json({"ok": False, "error": _error(exc)})])
    return to_js([backup.file, _json({"ok": True, "result": backup.summary()})])


async def peek_backup(file: Any) -> str:
    """What a backup file holds, from its header: the envelope JSON.

    The result is :func:`panelot.backup.files.peek_backup`'s: ``{databaseName,
    databaseVersion, tables: {name: rows}, exportedAt, settings, size}``.
    """
    try:
        # The page's Blobs are the browser core's: load it (it registers them) even when
        # no store has started here yet.
        import panelot.idb.browser.blobs  # noqa: F401

        result = await peek(file)
    except Exception as exc:  # an envelope, never a JS throw
        return _json({"ok": False, "error": _error(exc)})
    return _json({"ok": True, "result": result})


async def restore_backup(options_json: str, file: Any, on_progress: Any = None) -> str:
    """Replace everything with the backup in ``file`` (a JS Blob): the envelope JSON.

    ``options_json`` is ``{clientId?, submissionId?, settings?}``; the result is
    :meth:`panelot.store.PanelotStore.restore_backup`'s envelope.
    """
    try:
        options = _loads(options_json, "options")
        if not isinstance(options, dict):
            raise ValidationError("options: must be an object", field="options")
        envelope = await store().restore_backup(
            file,  # a Blob, else the restore fails naming the field "file"
            client_id=options.get("clientId"),
            submission_id=options.get("submissionId"),
            settings=options.get("settings", True) is not False,
            progress=_progress(on_progress),
        )
    except Exception as exc:  # an envelope, never a JS throw
        envelope = {"status": "failed", "error": _error(exc)}
    return _json(envelope)
