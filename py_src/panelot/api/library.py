"""Bus commands and read queries of the library: skills, memories and plugins.

Commands write their receipt in the same transaction as their effect; the bus decodes
a payload strictly (unknown fields are refused), so a ValidationError names the wire
field (``payload.skill.body``, ``payload.assets[3].dataBase64``).

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
from dataclasses import dataclass, field
from typing import Any, TypedDict

from panelot.bus import Call, Env, Handler, Query
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

__all__ = ["COMMANDS", "QUERIES"]

_MAX_BASE64_CHARS = 4 * ((MAX_ASSET_BYTES + 2) // 3)


# -- payloads -----------------------------------------------------------------------------


@dataclass(slots=True)
class _SkillPut:
    """``skill.put``."""

    skill: SkillInput


@dataclass(slots=True)
class _SkillDelete:
    """``skill.delete``."""

    skill_id: str


@dataclass(slots=True)
class _MemoryWrite:
    """``memory.write``: upsert by key."""

    key: str
    value: Any


@dataclass(slots=True)
class _MemoryDelete:
    """``memory.delete``."""

    key: str


@dataclass(slots=True)
class _AssetWire:
    """An asset of ``plugin.install``, as base64."""

    path: str
    kind: str
    mime: str
    data_base64: str


@dataclass(slots=True)
class _PluginInstall:
    """``plugin.install``."""

    plugin: PluginInput
    assets: list[_AssetWire] = field(default_factory=list)


@dataclass(slots=True)
class _PluginUninstall:
    """``plugin.uninstall``: its assets go with it."""

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


class SkillStored(TypedDict):
    """The stored skill."""

    skillId: str


class MemoryStored(TypedDict):
    """The stored memory and when."""

    memoryId: str
    updatedAt: int


class PluginInstalled(TypedDict):
    """The installed plugin and how many assets it carries."""

    pluginId: str
    assets: int


class Done(TypedDict):
    """A command with nothing to report but its success."""


async def _skill_put(tx: Transaction, call: Call[_SkillPut]) -> SkillStored:
    args, clock = call.payload, call.clock
    skill = await put_skill(tx, check_skill_input(args.skill, "payload.skill"), clock)
    return {"skillId": skill.id}


async def _skill_delete(tx: Transaction, call: Call[_SkillDelete]) -> Done:
    args = call.payload
    if not await delete_skill(tx, args.skill_id):
        raise NotFoundError(f"payload.skillId: no skill {args.skill_id!r}", field="payload.skillId")
    return {}


async def _memory_write(tx: Transaction, call: Call[_MemoryWrite]) -> MemoryStored:
    args, clock = call.payload, call.clock
    memory = await write_memory(tx, args.key, args.value, clock, path="payload.")
    return {"memoryId": memory.id, "updatedAt": memory.updated_at}


async def _memory_delete(tx: Transaction, call: Call[_MemoryDelete]) -> Done:
    args = call.payload
    check_key(args.key, "payload.key")
    if not await memory_delete(tx, args.key):
        raise NotFoundError(f"payload.key: no memory {args.key!r}", field="payload.key")
    return {}


async def _plugin_install(tx: Transaction, call: Call[_PluginInstall]) -> PluginInstalled:
    args, clock = call.payload, call.clock
    if len(args.assets) > MAX_ASSETS_PER_PLUGIN:
        raise ValidationError(
            f"payload.assets: more than {MAX_ASSETS_PER_PLUGIN} assets", field="payload.assets"
        )
    assets = [_asset_from_wire(a, f"payload.assets[{i}]") for i, a in enumerate(args.assets)]
    plugin = await install_plugin(tx, args.plugin, assets, clock, path="payload.")
    return {"pluginId": plugin.id, "assets": len(assets)}


async def _plugin_uninstall(tx: Transaction, call: Call[_PluginUninstall]) -> Done:
    args = call.payload
    check_plugin_id(args.plugin_id, "payload.pluginId")
    try:
        await uninstall_plugin(tx, args.plugin_id)
    except NotFoundError as exc:
        raise NotFoundError(f"payload.{exc.message}", field="payload.pluginId") from None
    return {}


COMMANDS: dict[str, Handler[Any]] = {
    "skill.put": Handler(payload=_SkillPut, tables=SKILL_TABLES, run=_skill_put),
    "skill.delete": Handler(payload=_SkillDelete, tables=SKILL_TABLES, run=_skill_delete),
    "memory.write": Handler(payload=_MemoryWrite, tables=MEMORY_TABLES, run=_memory_write),
    "memory.delete": Handler(payload=_MemoryDelete, tables=MEMORY_TABLES, run=_memory_delete),
    "plugin.install": Handler(payload=_PluginInstall, tables=PLUGIN_TABLES, run=_plugin_install),
    "plugin.uninstall": Handler(
        payload=_PluginUninstall, tables=PLUGIN_TABLES, run=_plugin_uninstall
    ),
}
"""The library commands."""


# -- queries ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SkillListArgs:
    """``skill.list``."""

    enabled: bool | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class SkillArgs:
    """``skill.get``."""

    skill_id: str


@dataclass(frozen=True, slots=True)
class MemoryListArgs:
    """``memory.list``: most recently updated first."""

    limit: Any = None


@dataclass(frozen=True, slots=True)
class KeyArgs:
    """``memory.get``."""

    key: str


@dataclass(frozen=True, slots=True)
class PluginListArgs:
    """``plugin.list``."""

    enabled: bool | None = None


@dataclass(frozen=True, slots=True)
class PluginArgs:
    """``plugin.assets``."""

    plugin_id: str


@dataclass(frozen=True, slots=True)
class AssetArgs:
    """``plugin.asset``."""

    plugin_id: str
    path: str


async def _q_skill_list(env: Env, a: SkillListArgs) -> Any:
    skills = await list_skills(env.db, enabled=a.enabled, name=a.name)
    return [skill_to_wire(x) for x in skills]


async def _q_skill_get(env: Env, a: SkillArgs) -> Any:
    skill = await get_skill(env.db, a.skill_id)
    if skill is None:
        raise NotFoundError(f"skillId: no skill {a.skill_id!r}", field="skillId")
    return skill_to_wire(skill)


async def _q_memory_list(env: Env, a: MemoryListArgs) -> Any:
    return [memory_to_wire(m) for m in await memory_list(env.db, a.limit)]


async def _q_memory_get(env: Env, a: KeyArgs) -> Any:
    memory = await memory_read(env.db, a.key)
    return None if memory is None else memory_to_wire(memory)


async def _q_plugin_list(env: Env, a: PluginListArgs) -> Any:
    return [plugin_to_wire(p) for p in await list_plugins(env.db, enabled=a.enabled)]


async def _q_plugin_assets(env: Env, a: PluginArgs) -> Any:
    return await list_assets(env.db, a.plugin_id)


async def _q_plugin_asset(env: Env, a: AssetArgs) -> Any:
    asset = await read_asset(env.db, a.plugin_id, a.path)
    return {
        "path": asset.path,
        "kind": asset.kind,
        "mime": asset.mime,
        "sha256": asset.sha256,
        "size": asset.size,
        "dataBase64": base64.b64encode(asset.data).decode("ascii"),
    }


QUERIES: dict[str, Query[Any]] = {
    "skill.list": Query(args=SkillListArgs, run=_q_skill_list),
    "skill.get": Query(args=SkillArgs, run=_q_skill_get),
    "memory.list": Query(args=MemoryListArgs, run=_q_memory_list),
    "memory.get": Query(args=KeyArgs, run=_q_memory_get),
    "plugin.list": Query(args=PluginListArgs, run=_q_plugin_list),
    "plugin.assets": Query(args=PluginArgs, run=_q_plugin_assets),
    "plugin.asset": Query(args=AssetArgs, run=_q_plugin_asset),
}
"""The library queries."""
