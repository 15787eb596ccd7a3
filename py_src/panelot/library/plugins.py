"""The plugins repository (``plugins: 'id, name, enabled, updatedAt'``).

A stored plugin is ``{id, name, version, enabled, manifest, installedAt, updatedAt}``.
``enabled`` is stored as the number 1 or 0 so that the ``enabled`` index works
(IndexedDB cannot index booleans; see :mod:`panelot.library.common`); :class:`Plugin` and
the wire form use ``bool``. ``manifest`` is plain JSON of at most
:data:`MAX_MANIFEST_BYTES`.

:func:`install_plugin` writes the plugin and all its assets in one transaction and
deletes the assets of a previous install first, so after a reinstall exactly the new
assets exist; a reinstall keeps the first ``installedAt`` and moves ``updatedAt``.
:func:`uninstall_plugin` deletes the plugin and its assets in one transaction. The
asset rules (read-only, verified on read) are in :mod:`panelot.library.plugin_assets`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from panelot.clock import Clock, now_ms
from panelot.codec import Id, decode, encode
from panelot.idb import Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.library.common import Target, check_json, check_text, flag_from_db, flag_to_db, within
from panelot.library.plugin_assets import (
    MAX_ASSETS_PER_PLUGIN,
    MAX_PLUGIN_TOTAL_BYTES,
    PLUGIN_TABLES,
    AssetInput,
    check_asset_input,
    check_plugin_id,
    new_asset_record,
)

__all__ = [
    "MAX_MANIFEST_BYTES",
    "MAX_PLUGIN_NAME_CHARS",
    "MAX_PLUGIN_VERSION_CHARS",
    "Plugin",
    "PluginInput",
    "check_assets",
    "check_plugin_input",
    "install_plugin",
    "list_plugins",
    "plugin_from_record",
    "plugin_to_wire",
    "uninstall_plugin",
]

MAX_PLUGIN_NAME_CHARS = 200
"""Longest plugin name."""
MAX_PLUGIN_VERSION_CHARS = 100
"""Longest plugin version string."""
MAX_MANIFEST_BYTES = 256 * 1024
"""Largest manifest: 256 KiB of compact UTF-8 JSON."""


@dataclass(slots=True)
class PluginInput:
    """What an install names: the plugin without its timestamps."""

    id: str
    name: str
    version: str
    manifest: dict[str, Any] = field(default_factory=dict)
    enabled: bool = True


@dataclass(slots=True)
class Plugin:
    """A stored plugin, as the Python API sees it (``enabled`` is a real ``bool``)."""

    id: Id
    name: str
    version: str
    enabled: bool
    manifest: dict[str, Any]
    installed_at: int
    updated_at: int


def plugin_to_wire(plugin: Plugin) -> dict[str, Any]:
    """The wire form of a plugin (camelCase, ``enabled`` as a boolean)."""
    out: dict[str, Any] = encode(plugin)
    return out


def plugin_from_record(record: Any) -> Plugin:
    """Validate a stored plugin record and return it as a :class:`Plugin`."""
    if not isinstance(record, dict):
        raise ValidationError("plugin: the stored record is not an object", field="plugin")
    wire = {**record, "enabled": flag_from_db(record.get("enabled"))}
    return decode(Plugin, wire, f"plugins[{record.get('id')!r}]")


def check_plugin_input(plugin: PluginInput, path: str = "plugin") -> dict[str, Any]:
    """Check a plugin's fields and sizes; return a checked copy of its manifest."""
    check_plugin_id(plugin.id, f"{path}.id")
    check_text(plugin.name, f"{path}.name", MAX_PLUGIN_NAME_CHARS)
    check_text(plugin.version, f"{path}.version", MAX_PLUGIN_VERSION_CHARS)
    if not isinstance(plugin.enabled, bool):
        raise ValidationError(f"{path}.enabled: must be true or false", field=f"{path}.enabled")
    if not isinstance(plugin.manifest, dict):
        raise ValidationError(f"{path}.manifest: must be an object", field=f"{path}.manifest")
    manifest: dict[str, Any] = check_json(plugin.manifest, f"{path}.manifest", MAX_MANIFEST_BYTES)
    return manifest


def check_assets(assets: Sequence[AssetInput], path: str = "assets") -> None:
    """Check an install's assets: each one, their count, total size and distinct paths."""
    if len(assets) > MAX_ASSETS_PER_PLUGIN:
        raise ValidationError(
            f"{path}: {len(assets)} assets, more than {MAX_ASSETS_PER_PLUGIN}", field=path
        )
    seen: set[str] = set()
    total = 0
    for i, asset in enumerate(assets):
        check_asset_input(asset, f"{path}[{i}]")
        if asset.path in seen:
            raise ValidationError(
                f"{path}[{i}].path: {asset.path!r} appears twice", field=f"{path}[{i}].path"
            )
        seen.add(asset.path)
        total += len(asset.data)
    if total > MAX_PLUGIN_TOTAL_BYTES:
        raise ValidationError(
            f"{path}: {total} bytes in all, more than {MAX_PLUGIN_TOTAL_BYTES}", field=path
        )


async def install_plugin(
    target: Target,
    plugin: PluginInput,
    assets: Sequence[AssetInput],
    clock: Clock = now_ms,
    *,
    path: str = "",
) -> Plugin:
    """Install (or reinstall) a plugin with exactly ``assets``, in one transaction.

    Everything is checked before anything is written; ``path`` prefixes the field
    names of validation errors (``"payload."`` on the bus).
    """
    manifest = check_plugin_input(plugin, f"{path}plugin")
    check_assets(assets, f"{path}assets")

    async def body(tx: Transaction) -> Plugin:
        plugins, asset_table = tx.table("plugins"), tx.table("pluginAssets")
        previous = await plugins.get(plugin.id)
        now = clock()
        installed = previous.get("installedAt") if isinstance(previous, dict) else None
        stored = Plugin(
            id=plugin.id,
            name=plugin.name,
            version=plugin.version,
            enabled=plugin.enabled,
            manifest=manifest,
            installed_at=installed if isinstance(installed, int) else now,
            updated_at=now,
        )
        await asset_table.where("pluginId").equals(plugin.id).delete()
        if assets:
            await asset_table.bulk_add([new_asset_record(plugin.id, a, now) for a in assets])
        await plugins.put({**plugin_to_wire(stored), "enabled": flag_to_db(stored.enabled)})
        return stored

    return await within(target, "rw", PLUGIN_TABLES, body)


async def uninstall_plugin(target: Target, plugin_id: str) -> int:
    """Delete a plugin and all its assets in one transaction; return how many assets.

    Raises NotFoundError (field ``pluginId``) if no such plugin is installed.
    """
    check_plugin_id(plugin_id)

    async def body(tx: Transaction) -> int:
        plugins = tx.table("plugins")
        if await plugins.get(plugin_id) is None:
            raise NotFoundError(f"pluginId: no plugin {plugin_id!r}", field="pluginId")
        removed = await tx.table("pluginAssets").where("pluginId").equals(plugin_id).delete()
        await plugins.delete(plugin_id)
        return removed

    return await within(target, "rw", PLUGIN_TABLES, body)


async def list_plugins(target: Target, *, enabled: bool | None = None) -> list[Plugin]:
    """Installed plugins sorted by name (then id); ``enabled`` goes through its index."""

    async def body(tx: Transaction) -> list[Any]:
        table = tx.table("plugins")
        if enabled is not None:
            return await table.where("enabled").equals(flag_to_db(enabled)).to_list()
        return await table.to_list()

    plugins = [plugin_from_record(r) for r in await within(target, "r", PLUGIN_TABLES, body)]
    return sorted(plugins, key=lambda p: (p.name, p.id))
