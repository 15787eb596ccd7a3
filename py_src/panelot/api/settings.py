"""Bus commands and read queries of settings and credentials.

Their effects live in ``chrome.storage.local``, which an IndexedDB transaction must
never wait on, so each command does its work in the handler's ``prepare`` step
(outside the receipt's transaction) and the transaction then writes the receipt with
the response. A replayed submission returns the stored response without redoing the
work. :data:`SETTINGS_COMMANDS` maps a type to ``(tables, run, prepare, status,
undo_prepare)`` for :class:`panelot.bus.bus.Handler`.

Commands (payload → response)::

    settings.set      {group, value, expect?} → {group, version}   (expect: the value read
                      before; ConflictError if the stored one differs)
    settings.reset    {group} → {group}
    credential.set    {secret, ref?} → {ref}          (the secret is never echoed)
    credential.rotate {ref, secret} → {ref}           NotFoundError if absent
    credential.delete {ref} → {}                      NotFoundError if absent

Queries (args → result)::

    settings.get   {group} → {group, version, value, problems: [{group, field, message}]}
    settings.all   {} → {groups: {name: value}, problems}   (one read of SETTINGS_KEYS)
    credential.list   {} → [{ref, createdAt, updatedAt}]
    credential.status {ref} → {ref, exists, keyId?, updatedAt?}
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from panelot.clock import Clock
from panelot.codec import encode
from panelot.errors import ConflictError
from panelot.idb import Transaction
from panelot.idb.errors import PanelotError, ValidationError
from panelot.settings.active import services
from panelot.settings.service import group_named

if TYPE_CHECKING:
    from panelot.bus.bus import CommandBus
    from panelot.store import PanelotStore

__all__ = ["SETTINGS_COMMANDS", "SETTINGS_QUERIES", "external"]

Run = Callable[[Transaction, dict[str, Any], Clock], Awaitable[Any]]
Prepare = Callable[["CommandBus", dict[str, Any]], Awaitable[None]]
Action = Callable[["CommandBus", dict[str, Any]], Awaitable[Any]]
Spec = tuple[tuple[str, ...], Run, Prepare, str, Prepare]
QueryFn = Callable[["PanelotStore", dict[str, Any]], Awaitable[Any]]

_pending: dict[int, Any] = {}


def external(action: Action, tables: tuple[str, ...] = (), finish: Run | None = None) -> Spec:
    r"""A command whose work runs in ``prepare``; ``finish`` (or nothing) runs in the tx.

    The value ``action`` returns is handed to the transaction step (keyed by the payload
    object, which the bus passes to both): it becomes the response, or ``finish`` gets it
    as ``payload["\0prepared"]`` and returns the response.
    """

    async def prepare(bus: CommandBus, payload: dict[str, Any]) -> None:
        _pending[id(payload)] = await action(bus, payload)

    async def undo(bus: CommandBus, payload: dict[str, Any]) -> None:
        _pending.pop(id(payload), None)

    async def run(tx: Transaction, payload: dict[str, Any], clock: Clock) -> Any:
        if id(payload) not in _pending:
            raise PanelotError("internal: the command's prepare step did not run")
        prepared = _pending.pop(id(payload))
        if finish is None:
            return prepared
        return await finish(tx, {**payload, "\0prepared": prepared}, clock)

    return (tables, run, prepare, "completed", undo)


def _payload_str(p: dict[str, Any], name: str, required: bool = True) -> Any:
    value = p.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"payload.{name}: must be a string", field=f"payload.{name}")
    return value


async def _settings_set(bus: CommandBus, p: dict[str, Any]) -> Any:
    group = group_named(p.get("group"))
    if not isinstance(p.get("value"), dict):
        raise ValidationError("payload.value: must be an object", field="payload.value")
    if "expect" in p:  # the value the caller read and changed: refuse if it moved since
        current, _ = await services().settings.read(group.name)
        if encode(current) != p["expect"]:
            raise ConflictError(
                f"payload.expect: the {group.name} settings changed since they were read",
                field="payload.expect",
            )
    await services().settings.set(group.name, p["value"])
    return {"group": group.name, "version": group.version}


async def _settings_reset(bus: CommandBus, p: dict[str, Any]) -> Any:
    group = group_named(p.get("group"))
    await services().settings.reset(group.name)
    return {"group": group.name}


async def _credential_set(bus: CommandBus, p: dict[str, Any]) -> Any:
    ref = await services().credentials.set(_payload_str(p, "secret"), _payload_str(p, "ref", False))
    return {"ref": ref}


async def _credential_rotate(bus: CommandBus, p: dict[str, Any]) -> Any:
    ref = await services().credentials.rotate(_payload_str(p, "ref"), _payload_str(p, "secret"))
    return {"ref": ref}


async def _credential_delete(bus: CommandBus, p: dict[str, Any]) -> Any:
    await services().credentials.delete(_payload_str(p, "ref"))
    return {}


SETTINGS_COMMANDS: dict[str, Spec] = {
    "settings.set": external(_settings_set),
    "settings.reset": external(_settings_reset),
    "credential.set": external(_credential_set),
    "credential.rotate": external(_credential_rotate),
    "credential.delete": external(_credential_delete),
}
"""Command type -> Handler arguments; merged into :data:`panelot.bus.bus.COMMANDS`."""


async def _q_get(s: PanelotStore, a: dict[str, Any]) -> Any:
    group = group_named(a.get("group"))
    value, problems = await services().settings.read(group.name)
    return {
        "group": group.name,
        "version": group.version,
        "value": encode(value),
        "problems": [p.to_json() for p in problems],
    }


async def _q_all(s: PanelotStore, a: dict[str, Any]) -> Any:
    groups, problems = await services().settings.get_all()
    return {
        "groups": {name: encode(v) for name, v in groups.items()},
        "problems": [p.to_json() for p in problems],
    }


async def _q_cred_list(s: PanelotStore, a: dict[str, Any]) -> Any:
    return await services().credentials.list()


async def _q_cred_status(s: PanelotStore, a: dict[str, Any]) -> Any:
    ref = a.get("ref")
    if not isinstance(ref, str):
        raise ValidationError("ref: must be a string", field="ref")
    return await services().credentials.status(ref)


SETTINGS_QUERIES: dict[str, QueryFn] = {
    "settings.get": _q_get,
    "settings.all": _q_all,
    "credential.list": _q_cred_list,
    "credential.status": _q_cred_status,
}
"""Read queries by name, merged into :data:`panelot.store.QUERIES`."""
