"""Bus commands and read queries of the library: skills, memories and plugins.

:data:`LIBRARY_COMMANDS` is merged into :data:`panelot.bus.bus.COMMANDS` and
:data:`LIBRARY_QUERIES` into :data:`panelot.store.QUERIES`. Commands write their
receipt in the same transaction as their effect; a payload is decoded strictly
(unknown fields are refused) and a ValidationError names the wire field
(``payload.skill.body``, ``payload.assets[3].dataBase64``).

Commands (payload → response)::

    skill.put        {skill: {id?, name, body, description?, enabled?, sourceRef?}}
                     → {skillId}
    skill.delete     {skillId} → {}                     NotFoundError if absent
    memory.write     {key, value} → {memoryId, updatedAt}
    memory.delete    {key} → {}                         NotFoundError if absent
    plugin.install   {plugin: {id, name, version, manifest?, enabled?},
                      assets?: [{path, kind, mime, dataBase64}]} → {pluginId, assets: n}
    plugin.uninstall {pluginId} → {}                    NotFoundError if absent

Queries (args → result)::

    skill.list    {enabled?, name?} → [skill]     sorted by name
    skill.get     {skillId} → skill               NotFoundError if absent
    memory.list   {limit?} → [memory]             most recently updated first
    memory.get    {key} → memory | null
    plugin.list   {enabled?} → [plugin]           sorted by name
    plugin.assets {pluginId} → [{path, kind, mime, sha256, size, createdAt}]
    plugin.asset  {pluginId, path} → {path, kind, mime, sha256, size, dataBase64}
                  (SHA-256 verified; AssetIntegrityError when the bytes changed)
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from panelot.clock import Clock
from panelot.codec import decode
from panelot.idb import Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.library.memories import (
    MEMORY_TABLES,
    check_key,
    memory_delete,
    memory_list,
    memory_read,
    memory_to_wire,
)
from panelot.library.memories import memory_write as write_memory
from panelot.library.plugin_assets import (
    MAX_ASSET_BYTES,
    MAX_ASSETS_PER_PLUGIN,
    PLUGIN_TABLES,
    AssetInput,
    check_plugin_id,
    list_assets,
    read_asset,
)
from panelot.library.plugins import (
    PluginInput,
    install_plugin,
    list_plugins,
    plugin_to_wire,
    uninstall_plugin,
)
from panelot.library.skills import (
    SKILL_TABLES,
    SkillInput,
    check_skill_input,
    delete_skill,
    get_skill,
    list_skills,
    put_skill,
    skill_to_wire,
)

if TYPE_CHECKING:
    from panelot.store import PanelotStore

__all__ = ["LIBRARY_COMMANDS", "LIBRARY_QUERIES", "CommandSpec"]

Run = Callable[[Transaction, dict[str, Any], Clock], Awaitable[Any]]
QueryFn = Callable[["PanelotStore", dict[str, Any]], Awaitable[Any]]

_MAX_BASE64_CHARS = 4 * ((MAX_ASSET_BYTES + 2) // 3)


class CommandSpec(NamedTuple):
    """The tables a command's transaction needs and its handler (``Handler(*spec)``)."""

    tables: tuple[str, ...]
    run: Run


# -- payloads -----------------------------------------------------------------------------


@dataclass(slots=True)
class _SkillPut:
    skill: SkillInput


@dataclass(slots=True)
class _SkillDelete:
    skill_id: str


@dataclass(slots=True)
class _MemoryWrite:
    key: str
    value: Any


@dataclass(slots=True)
class _MemoryDelete:
    key: str


@dataclass(slots=True)
class _AssetWire:
    path: str
    kind: str
    mime: str
    data_base64: str


@dataclass(slots=True)
class _PluginInstall:
    plugin: PluginInput
    assets: list[_AssetWire] = field(default_factory=list)


@dataclass(slots=True)
class _PluginUninstall:
    plugin_id: str


def _asset_from_wire(asset: _AssetWire, path: str) -> AssetInput:
    where = f"{path}.dataBase64"
    if len(asset.data_base64) > _MAX_BASE64_CHARS:
        raise ValidationError(f"{where}: encodes more than {MAX_ASSET_BYTES} bytes", field=where)
    try:
        data = base64.b64decode(asset.data_base64, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError(f"{where}: is not valid base64", field=where) from None
    return AssetInput(path=asset.path, kind=asset.kind, mime=asset.mime, data=data)


# -- commands -----------------------------------------------------------------------------


async def _skill_put(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    args = decode(_SkillPut, p, "payload")
    skill = await put_skill(tx, check_skill_input(args.skill, "payload.skill"), clock)
    return {"skillId": skill.id}


async def _skill_delete(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    args = decode(_SkillDelete, p, "payload")
    if not await delete_skill(tx, args.skill_id):
        raise NotFoundError(f"payload.skillId: no skill {args.skill_id!r}", field="payload.skillId")
    return {}


async def _memory_write(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    args = decode(_MemoryWrite, p, "payload")
    memory = await write_memory(tx, args.key, args.value, clock, path="payload.")
    return {"memoryId": memory.id, "updatedAt": memory.updated_at}


async def _memory_delete(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    args = decode(_MemoryDelete, p, "payload")
    check_key(args.key, "payload.key")
    if not await memory_delete(tx, args.key):
        raise NotFoundError(f"payload.key: no memory {args.key!r}", field="payload.key")
    return {}


async def _plugin_install(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    args = decode(_PluginInstall, p, "payload")
    if len(args.assets) > MAX_ASSETS_PER_PLUGIN:
        raise ValidationError(
            f"payload.assets: more than {MAX_ASSETS_PER_PLUGIN} assets", field="payload.assets"
        )
    assets = [_asset_from_wire(a, f"payload.assets[{i}]") for i, a in enumerate(args.assets)]
    plugin = await install_plugin(tx, args.plugin, assets, clock, path="payload.")
    return {"pluginId": plugin.id, "assets": len(assets)}


async def _plugin_uninstall(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    args = decode(_PluginUninstall, p, "payload")
    check_plugin_id(args.plugin_id, "payload.pluginId")
    try:
        await uninstall_plugin(tx, args.plugin_id)
    except NotFoundError as exc:
        raise NotFoundError(f"payload.{exc.message}", field="payload.pluginId") from None
    return {}


LIBRARY_COMMANDS: dict[str, CommandSpec] = {
    "skill.put": CommandSpec(SKILL_TABLES, _skill_put),
    "skill.delete": CommandSpec(SKILL_TABLES, _skill_delete),
    "memory.write": CommandSpec(MEMORY_TABLES, _memory_write),
    "memory.delete": CommandSpec(MEMORY_TABLES, _memory_delete),
    "plugin.install": CommandSpec(PLUGIN_TABLES, _plugin_install),
    "plugin.uninstall": CommandSpec(PLUGIN_TABLES, _plugin_uninstall),
}
"""The library's command types; ``commands.COMMANDS`` wraps each as ``Handler(*spec)``."""


# -- queries ------------------------------------------------------------------------------


def _opt_bool(args: dict[str, Any], name: str) -> bool | None:
    value = args.get(name)
    if value is not None and not isinstance(value, bool):
        raise ValidationError(f"{name}: must be true, false or null", field=name)
    return value


def _req_str(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        raise ValidationError(f"{name}: must be a string", field=name)
    return value


async def _q_skill_list(s: PanelotStore, a: dict[str, Any]) -> Any:
    name = a.get("name")
    if name is not None and not isinstance(name, str):
        raise ValidationError("name: must be a string or null", field="name")
    skills = await list_skills(s.db, enabled=_opt_bool(a, "enabled"), name=name)
    return [skill_to_wire(x) for x in skills]


async def _q_skill_get(s: PanelotStore, a: dict[str, Any]) -> Any:
    skill_id = _req_str(a, "skillId")
    skill = await get_skill(s.db, skill_id)
    if skill is None:
        raise NotFoundError(f"skillId: no skill {skill_id!r}", field="skillId")
    return skill_to_wire(skill)


async def _q_memory_list(s: PanelotStore, a: dict[str, Any]) -> Any:
    return [memory_to_wire(m) for m in await memory_list(s.db, a.get("limit"))]


async def _q_memory_get(s: PanelotStore, a: dict[str, Any]) -> Any:
    memory = await memory_read(s.db, _req_str(a, "key"))
    return None if memory is None else memory_to_wire(memory)


async def _q_plugin_list(s: PanelotStore, a: dict[str, Any]) -> Any:
    return [plugin_to_wire(p) for p in await list_plugins(s.db, enabled=_opt_bool(a, "enabled"))]


async def _q_plugin_assets(s: PanelotStore, a: dict[str, Any]) -> Any:
    return await list_assets(s.db, _req_str(a, "pluginId"))


async def _q_plugin_asset(s: PanelotStore, a: dict[str, Any]) -> Any:
    asset = await read_asset(s.db, _req_str(a, "pluginId"), _req_str(a, "path"))
    return {
        "path": asset.path,
        "kind": asset.kind,
        "mime": asset.mime,
        "sha256": asset.sha256,
        "size": asset.size,
        "dataBase64": base64.b64encode(asset.data).decode("ascii"),
    }


LIBRARY_QUERIES: dict[str, QueryFn] = {
    "skill.list": _q_skill_list,
    "skill.get": _q_skill_get,
    "memory.list": _q_memory_list,
    "memory.get": _q_memory_get,
    "plugin.list": _q_plugin_list,
    "plugin.assets": _q_plugin_assets,
    "plugin.asset": _q_plugin_asset,
}
"""The library's read queries, merged into ``store.QUERIES``."""
