"""Key-value storage backends: ``chrome.storage.local`` and an in-memory stand-in.

The contract (:class:`StorageBackend`), shared by both implementations:

* ``get(keys)`` takes an explicit, non-empty list of string keys and returns the
  stored values of those present (absent keys are left out). There is no "get
  everything": ``get(None)`` / ``get([])`` raise :class:`ValidationError`, so a
  ``chrome.storage.local.get(null)`` can never be issued through this layer (the
  fixed-key-list contract of the storage layout).
* ``set(items)`` writes JSON values; ``remove(keys)`` deletes keys.
* ``subscribe(listener)`` calls ``listener(changes)`` after every change made by
  *any* context on the same area, with ``changes = {key: Change(old, new)}`` (``ABSENT``
  for a missing side). Writing a value identical to the stored one fires nothing, as
  ``chrome.storage.onChanged`` does. It returns an unsubscribe function.
* ``exclusive()`` is an async context manager holding the area's settings lock
  (:data:`SETTINGS_LOCK`) across every context: ``chrome.storage.local`` has no
  transactions, so a read-check-write (``settings.set`` with ``expect``) runs inside it.
  The Chrome backend takes the Web Lock of that name (``navigator.locks``, shared by the
  extension's pages and its service worker); the memory backend an asyncio lock of its
  area. It is not re-entrant.

:class:`MemoryStorageBackend` keeps the values in a :class:`MemoryArea` (JSON text,
so values are copied like structured clone and must be JSON). Like Chrome's
``storage.local`` (measured in Chromium), ``set`` stores every lone surrogate of a key
or a value as U+FFFD; ``get`` and ``remove`` take keys as given, so a key written with
one is found only under its U+FFFD spelling. Several backends over
one area stand for several extension contexts: a write through one notifies the
listeners of all. It serves CPython tests and pages without ``chrome.storage`` (the
plain-page harness); events are delivered on the next loop turn, asynchronously as
in Chrome. The browser implementation is :mod:`panelot.settings.chrome`.

A :class:`MemoryArea` may be given a ``quota_bytes`` (``chrome.storage.local`` has
10 MB without ``unlimitedStorage``): a ``set`` that would take the area over it raises
:class:`~panelot.idb.errors.QuotaExceededError` and writes none of its items, as
Chrome does, so the previous values stay readable and no change event fires.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from panelot.idb.errors import QuotaExceededError, ValidationError
from panelot.surrogates import replace_lone_surrogates, well_formed

__all__ = [
    "ABSENT",
    "Change",
    "Listener",
    "MemoryArea",
    "MemoryStorageBackend",
    "SETTINGS_LOCK",
    "StorageBackend",
    "Unsubscribe",
    "check_keys",
]


class _Absent:
    """The type of :data:`ABSENT`."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()
"""Marks the missing side of a change (a key created or removed)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One key's change: its old and new value (``ABSENT`` when missing)."""

    old: Any
    new: Any


Listener = Callable[[dict[str, Change]], None]
Unsubscribe = Callable[[], None]

SETTINGS_LOCK = "panelot-settings"
"""The name of the Web Lock that serializes settings writes across the extension's contexts."""


class StorageBackend(Protocol):
    """An async key-value area with change events (see the module docstring)."""

    async def get(self, keys: Iterable[str]) -> dict[str, Any]:
        """Return ``{key: value}`` for the listed keys that exist."""
        ...

    async def set(self, items: Mapping[str, Any]) -> None:
        """Write every item."""
        ...

    async def remove(self, keys: Iterable[str]) -> None:
        """Delete the listed keys."""
        ...

    def subscribe(self, listener: Listener) -> Unsubscribe:
        """Call ``listener`` on every change; return the function that stops it."""
        ...

    def exclusive(self) -> AbstractAsyncContextManager[None]:
        """Hold the settings lock of the area, in every context, for the ``async with``."""
        ...


def check_keys(keys: Any) -> list[str]:
    """Return ``keys`` as a list of strings; refuse ``None``, a bare string or an empty list."""
    if keys is None or isinstance(keys, str | bytes) or not isinstance(keys, Iterable):
        raise ValidationError(
            "keys: an explicit list of keys is required (never get(null))", field="keys"
        )
    out = list(keys)
    if not out or not all(isinstance(k, str) and k for k in out):
        raise ValidationError("keys: must be a non-empty list of non-empty strings", field="keys")
    return out


def _dump(value: Any, key: str) -> str:
    """The stored JSON text of ``value``: lone surrogates become U+FFFD, as in Chrome."""
    try:
        text = json.dumps(value, allow_nan=False, sort_keys=True, ensure_ascii=False)
        if not well_formed(text):
            value = json.loads(replace_lone_surrogates(text))
        return json.dumps(value, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{key}: not JSON data ({exc})", field=key) from None


class MemoryArea:
    """Shared storage of :class:`MemoryStorageBackend` instances (one ``storage.local``)."""

    def __init__(self, quota_bytes: int | None = None) -> None:
        self.data: dict[str, str] = {}
        self.listeners: list[Listener] = []
        self.quota_bytes = quota_bytes
        """The most the area may hold (keys plus JSON values), or None for no limit."""
        self.waiting = 0
        """How many ``exclusive()`` callers wait for the lock now (tests watch it)."""
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    def lock(self) -> asyncio.Lock:
        """The area's settings lock (one per event loop: tests run several loops)."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        return self._lock[1]

    def bytes_in_use(self, data: Mapping[str, str] | None = None) -> int:
        """What the area (or ``data``) holds: the length of every key and JSON value."""
        held = self.data if data is None else data
        return sum(len(k) + len(v) for k, v in held.items())

    def emit(self, changes: dict[str, Change]) -> None:
        """Deliver ``changes`` to every listener on the next loop turn."""
        if not changes:
            return
        listeners = list(self.listeners)

        def deliver() -> None:
            for listener in listeners:
                if listener in self.listeners:
                    listener(changes)

        try:
            asyncio.get_running_loop().call_soon(deliver)
        except RuntimeError:  # no loop: deliver now
            deliver()


class MemoryStorageBackend:
    """:class:`StorageBackend` in memory, over a (possibly shared) :class:`MemoryArea`."""

    def __init__(self, area: MemoryArea | None = None) -> None:
        self.area = area if area is not None else MemoryArea()
        self.get_calls: list[list[str]] = []
        """Every key list passed to :meth:`get`, for tests of the fixed-key-list contract."""

    async def get(self, keys: Iterable[str]) -> dict[str, Any]:
        """Return ``{key: value}`` for the listed keys that exist."""
        wanted = check_keys(keys)
        self.get_calls.append(wanted)
        data = self.area.data
        return {k: json.loads(data[k]) for k in wanted if k in data}

    async def set(self, items: Mapping[str, Any]) -> None:
        """Write every item, or none (QuotaExceededError); identical values fire no change."""
        changes: dict[str, Change] = {}
        data = self.area.data
        texts = {replace_lone_surrogates(k): _dump(v, k) for k, v in items.items()}
        quota = self.area.quota_bytes
        if quota is not None and self.area.bytes_in_use({**data, **texts}) > quota:
            raise QuotaExceededError(
                f"settings storage is full (over its {quota} bytes); "
                "nothing was written, the previous values are kept"
            )
        for key, text in texts.items():
            old = data.get(key)
            if old == text:
                continue
            data[key] = text
            changes[key] = Change(ABSENT if old is None else json.loads(old), json.loads(text))
        self.area.emit(changes)

    async def remove(self, keys: Iterable[str]) -> None:
        """Delete the listed keys."""
        changes: dict[str, Change] = {}
        for key in check_keys(keys):
            old = self.area.data.pop(key, None)
            if old is not None:
                changes[key] = Change(json.loads(old), ABSENT)
        self.area.emit(changes)

    def subscribe(self, listener: Listener) -> Unsubscribe:
        """Call ``listener`` on every change of the area; return the unsubscriber."""
        self.area.listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self.area.listeners:
                self.area.listeners.remove(listener)

        return unsubscribe

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Hold the area's lock: every backend over this area waits for it."""
        lock = self.area.lock()
        self.area.waiting += 1
        try:
            await lock.acquire()
        finally:
            self.area.waiting -= 1
        try:
            yield
        finally:
            lock.release()

    def dump(self) -> dict[str, Any]:
        """Every stored value (tests only: a real area offers no such read)."""
        return {k: json.loads(v) for k, v in self.area.data.items()}
