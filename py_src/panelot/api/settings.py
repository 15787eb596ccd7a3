"""Bus commands and read queries of settings and credentials.

Their effects live in ``chrome.storage.local``, which an IndexedDB transaction must
never wait on, so each command does its work in the handler's ``prepare`` step
(outside the receipt's transaction) and the transaction then writes the receipt with
the response ``prepare`` handed over. A replayed submission returns the stored
response without redoing the work.

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
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar

from panelot.bus import Call, Env, Handler, Query
from panelot.codec import Raw, encode
from panelot.errors import ConflictError
from panelot.faults import FAULTS
from panelot.idb import Transaction
from panelot.idb.errors import ValidationError
from panelot.settings.service import Settings, group_named

__all__ = ["COMMANDS", "QUERIES", "external"]

P = TypeVar("P")


async def _handed_over(tx: Transaction, call: Call[Any]) -> Any:
    """The response its ``prepare`` made: the transaction writes only the receipt."""
    return call.prepared


def external(payload: type[P], action: Callable[[Env, P], Awaitable[Any]]) -> Handler[P]:
    """A command whose work is ``action``, run before the receipt's transaction."""
    return Handler(payload=payload, tables=(), run=_handed_over, prepare=action)


class GroupSaved(TypedDict):
    """The group written and the version of its shape."""

    group: str
    version: int


class GroupReset(TypedDict):
    """The group reset to its defaults."""

    group: str


class CredentialStored(TypedDict):
    """The credential's reference (never its secret)."""

    ref: str


class Done(TypedDict):
    """A command with nothing to report but its success."""


@dataclass(frozen=True, slots=True)
class SettingsSet:
    """``settings.set``: ``expect`` is the value read before the change."""

    group: str
    value: dict[str, Raw]
    expect: dict[str, Raw] | None = None


@dataclass(frozen=True, slots=True)
class SettingsReset:
    """``settings.reset``."""

    group: str


@dataclass(frozen=True, slots=True)
class CredentialSet:
    """``credential.set``: the secret is encrypted, never echoed."""

    secret: str
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class CredentialRotate:
    """``credential.rotate``: the same reference, new ciphertext."""

    ref: str
    secret: str


@dataclass(frozen=True, slots=True)
class CredentialRef:
    """``credential.delete``."""

    ref: str


async def _settings_set(env: Env, p: SettingsSet) -> GroupSaved:
    group = group_named(p.group)
    settings = env.host.services.settings
    async with settings.backend.exclusive():  # no other context reads or writes meanwhile
        await _check_and_set(settings, group.name, p)
    return {"group": group.name, "version": group.version}


async def _check_and_set(settings: Settings, name: str, p: SettingsSet) -> None:
    if p.expect is not None:  # the value the caller read and changed: refuse if it moved
        current, _ = await settings.read(name)
        if encode(current) != p.expect:
            raise ConflictError(
                f"payload.expect: the {name} settings changed since they were read",
                field="payload.expect",
            )
    await FAULTS.gate("settings.set.checked")  # a test holds a writer here (a race)
    try:
        await settings.set(name, p.value)
    except ValidationError as exc:  # the service names a field in its group: name it here
        inner = exc.field or ""
        if inner.startswith(f"{name}."):
            exc.field = f"payload.value.{inner[len(name) + 1 :]}"
            exc.message = exc.message.replace(inner, exc.field, 1)
        raise


async def _settings_reset(env: Env, p: SettingsReset) -> GroupReset:
    group = group_named(p.group)
    settings = env.host.services.settings
    async with settings.backend.exclusive():
        await settings.reset(group.name)
    return {"group": group.name}


async def _credential_set(env: Env, p: CredentialSet) -> CredentialStored:
    return {"ref": await env.host.services.credentials.set(p.secret, p.ref)}


async def _credential_rotate(env: Env, p: CredentialRotate) -> CredentialStored:
    return {"ref": await env.host.services.credentials.rotate(p.ref, p.secret)}


async def _credential_delete(env: Env, p: CredentialRef) -> Done:
    await env.host.services.credentials.delete(p.ref)
    return {}


COMMANDS: dict[str, Handler[Any]] = {
    "settings.set": external(SettingsSet, _settings_set),
    "settings.reset": external(SettingsReset, _settings_reset),
    "credential.set": external(CredentialSet, _credential_set),
    "credential.rotate": external(CredentialRotate, _credential_rotate),
    "credential.delete": external(CredentialRef, _credential_delete),
}
"""The settings and credential commands."""


@dataclass(frozen=True, slots=True)
class GroupArgs:
    """``settings.get``."""

    group: str


@dataclass(frozen=True, slots=True)
class NoArgs:
    """A query without arguments."""


@dataclass(frozen=True, slots=True)
class RefArgs:
    """``credential.status``."""

    ref: str


async def _q_get(env: Env, a: GroupArgs) -> dict[str, Any]:
    group = group_named(a.group)
    value, problems = await env.host.services.settings.read(group.name)
    return {
        "group": group.name,
        "version": group.version,
        "value": encode(value),
        "problems": [p.to_json() for p in problems],
    }


async def _q_all(env: Env, a: NoArgs) -> dict[str, Any]:
    groups, problems = await env.host.services.settings.get_all()
    return {
        "groups": {name: encode(v) for name, v in groups.items()},
        "problems": [p.to_json() for p in problems],
    }


async def _q_cred_list(env: Env, a: NoArgs) -> list[dict[str, Any]]:
    return await env.host.services.credentials.list()


async def _q_cred_status(env: Env, a: RefArgs) -> dict[str, Any]:
    return await env.host.services.credentials.status(a.ref)


QUERIES: dict[str, Query[Any]] = {
    "settings.get": Query(args=GroupArgs, run=_q_get),
    "settings.all": Query(args=NoArgs, run=_q_all),
    "credential.list": Query(args=NoArgs, run=_q_cred_list),
    "credential.status": Query(args=RefArgs, run=_q_cred_status),
}
"""The settings and credential queries."""
