"""``Settings``: typed reads and writes of the setting groups, and typed change events.

Reads merge defaults, migrate and repair (see :mod:`panelot.settings.groups`); writes
validate strictly and store ``{version, value}``. :meth:`Settings.get_all` reads the
fixed key list :data:`~panelot.settings.groups.SETTINGS_KEYS` in one call.

:meth:`Settings.subscribe` delivers ``callback(group, old, new)`` (typed values, old
and new read the same lenient way) for changes made by any context: the events come
from the backend (``chrome.storage.onChanged`` in an extension). One backend listener
serves every subscription of a ``Settings``; it is removed, and its proxy destroyed,
when the last subscription ends.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from panelot.codec import encode
from panelot.idb.errors import ValidationError
from panelot.settings.backend import ABSENT, Change, StorageBackend, Unsubscribe
from panelot.settings.groups import (
    GROUPS,
    SETTINGS_KEYS,
    Group,
    Problem,
    read_group,
    validate_group,
)

__all__ = ["Callback", "Settings", "group_named"]

log = logging.getLogger("panelot.settings")

Callback = Callable[[str, Any, Any], None]


def group_named(name: Any) -> Group:
    """Return the group called ``name``; ValidationError otherwise."""
    group = GROUPS.get(name) if isinstance(name, str) else None
    if group is None:
        raise ValidationError(f"group: must be one of {sorted(GROUPS)}", field="group")
    return group


class Settings:
    """The setting groups over one storage backend."""

    def __init__(self, backend: StorageBackend) -> None:
        self.backend = backend
        self.problems: list[Problem] = []
        """Problems found by the reads so far (also logged)."""
        self._subs: dict[int, tuple[str, Callback]] = {}
        self._next = 0
        self._unsubscribe: Unsubscribe | None = None

    def _report(self, problems: list[Problem]) -> None:
        for p in problems:
            log.warning("settings %s: %s", p.field, p.message)
        self.problems.extend(problems)

    async def read(self, name: str) -> tuple[Any, list[Problem]]:
        """The typed value of group ``name`` and the problems found reading it."""
        group = group_named(name)
        stored = (await self.backend.get([group.key])).get(group.key)
        value, problems = read_group(group, stored)
        self._report(problems)
        return value, problems

    async def get(self, name: str) -> Any:
        """The typed value of group ``name`` (defaults merged; never raises on bad data)."""
        return (await self.read(name))[0]

    async def get_all(self) -> tuple[dict[str, Any], list[Problem]]:
        """Every group, read with one ``get`` of the fixed key list."""
        stored = await self.backend.get(list(SETTINGS_KEYS))
        out: dict[str, Any] = {}
        problems: list[Problem] = []
        for group in GROUPS.values():
            out[group.name], found = read_group(group, stored.get(group.key))
            problems += found
        self._report(problems)
        return out, problems

    async def set(self, name: str, value: Any) -> Any:
        """Validate and store a group (a dataclass or its wire dict); return the typed value."""
        group = group_named(name)
        wire = encode(value) if not isinstance(value, dict) else value
        typed = validate_group(group, wire)
        await self.backend.set({group.key: {"version": group.version, "value": encode(typed)}})
        return typed

    async def reset(self, name: str) -> None:
        """Remove a group's stored value (reads give the defaults again)."""
        await self.backend.remove([group_named(name).key])

    # -- change events ---------------------------------------------------------------

    def subscribe(self, name: str, callback: Callback) -> Unsubscribe:
        """Call ``callback(group, old, new)`` when group ``name`` changes; return the stopper."""
        group_named(name)
        token = self._next
        self._next += 1
        self._subs[token] = (name, callback)
        if self._unsubscribe is None:
            self._unsubscribe = self.backend.subscribe(self._on_change)

        def unsubscribe() -> None:
            if self._subs.pop(token, None) is not None and not self._subs and self._unsubscribe:
                stop, self._unsubscribe = self._unsubscribe, None
                stop()

        return unsubscribe

    def close(self) -> None:
        """End every subscription and remove the backend listener."""
        self._subs.clear()
        stop, self._unsubscribe = self._unsubscribe, None
        if stop is not None:
            stop()

    @property
    def listening(self) -> bool:
        """Whether a backend listener is registered."""
        return self._unsubscribe is not None

    def _on_change(self, changes: dict[str, Change]) -> None:
        for group in GROUPS.values():
            change = changes.get(group.key)
            if change is None:
                continue
            old, _ = read_group(group, None if change.old is ABSENT else change.old)
            new, problems = read_group(group, None if change.new is ABSENT else change.new)
            self._report(problems)
            for name, callback in list(self._subs.values()):
                if name != group.name:
                    continue
                try:
                    callback(group.name, old, new)
                except Exception:  # one subscriber's bug must not stop the others
                    log.exception("settings subscriber for %s failed", group.name)
