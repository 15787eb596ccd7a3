"""Plugin assets (``pluginAssets: 'id, pluginId, [pluginId+path], kind, createdAt'``).

A stored asset is ``{id, pluginId, path, kind, mime, bytes, sha256, size, createdAt}``
with ``id = pluginId + ":" + path`` (plugin ids may not contain ``:``, so ids never
collide), ``bytes`` the content as Python ``bytes`` (a ``Uint8Array`` in IndexedDB),
``sha256`` its lowercase hex digest and ``size`` its length, both computed here.

Assets are read-only once written. :func:`panelot.library.plugins.install_plugin` writes all
of a plugin's assets and replaces those of a previous install; that is the only way to
overwrite one. :func:`put_asset` adds an asset at a new path and refuses an existing
``(pluginId, path)`` with :class:`~panelot.errors.ReadOnlyAssetError`.
:func:`read_asset` looks assets up through ``[pluginId+path]`` and checks the SHA-256
of the stored bytes on every read, raising :class:`~panelot.errors.AssetIntegrityError`
when they do not match.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from panelot.clock import Clock, now_ms
from panelot.errors import AssetIntegrityError, ReadOnlyAssetError
from panelot.idb import Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.library.common import Target, check_id, check_text, within
from panelot.surrogates import check_well_formed

__all__ = [
    "MAX_ASSETS_PER_PLUGIN",
    "MAX_ASSET_BYTES",
    "MAX_ASSET_PATH_CHARS",
    "MAX_PLUGIN_TOTAL_BYTES",
    "PLUGIN_TABLES",
    "AssetInput",
    "PluginAsset",
    "asset_from_record",
    "asset_id",
    "asset_meta",
    "check_asset_input",
    "check_asset_path",
    "check_plugin_id",
    "list_assets",
    "new_asset_record",
    "put_asset",
    "read_asset",
]

PLUGIN_TABLES = ("plugins", "pluginAssets")
"""The tables a plugin transaction needs."""

MAX_ASSET_BYTES = 10 * 1024 * 1024
"""Largest single asset: 10 MiB."""
MAX_ASSETS_PER_PLUGIN = 500
"""Most assets one plugin may have."""
MAX_PLUGIN_TOTAL_BYTES = 100 * 1024 * 1024
"""Largest total size of one install's assets: 100 MiB."""
MAX_ASSET_PATH_CHARS = 1_024
"""Longest asset path."""

_KIND = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
_MIME = re.compile(r"[A-Za-z0-9][\w.+-]*/[A-Za-z0-9][\w.+-]*(\s*;[\x20-\x7e]*)?")


@dataclass(slots=True)
class AssetInput:
    """An asset to write: where, what kind, its MIME type and content."""

    path: str
    kind: str
    mime: str
    data: bytes


@dataclass(slots=True)
class PluginAsset:
    """A stored asset; ``data`` is what the record calls ``bytes``."""

    id: str
    plugin_id: str
    path: str
    kind: str
    mime: str
    data: bytes
    sha256: str
    size: int
    created_at: int


def _fail(path: str, message: str) -> ValidationError:
    return ValidationError(f"{path}: {message}", field=path)


def check_plugin_id(value: Any, path: str = "pluginId") -> str:
    """Return ``value`` if it is a plugin id: an id (see ``check_id``) without ``:``."""
    plugin_id = check_id(value, path)
    if ":" in plugin_id:
        raise _fail(path, "must not contain ':' (asset ids are pluginId + ':' + path)")
    return plugin_id


def check_asset_path(value: Any, path: str = "path") -> str:
    """Return ``value`` if it is a relative POSIX path without empty, ``.`` or ``..`` parts.

    A path names a file, so it may hold no lone surrogate (no file system or URL has one).
    """
    text = check_well_formed(check_text(value, path, MAX_ASSET_PATH_CHARS), path)
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text) or "\\" in text:
        raise _fail(path, "must not contain control characters or backslashes")
    if text.startswith("/") or any(part in ("", ".", "..") for part in text.split("/")):
        raise _fail(path, "must be a relative path without empty, '.' or '..' segments")
    return text


def check_asset_input(asset: AssetInput, path: str = "asset") -> AssetInput:
    """Check an asset's path, kind, MIME type and size; return it."""
    check_asset_path(asset.path, f"{path}.path")
    if not isinstance(asset.kind, str) or not _KIND.fullmatch(asset.kind):
        raise _fail(f"{path}.kind", "must be 1 to 64 of a-z, 0-9, '_', '.', '-'")
    if not isinstance(asset.mime, str) or len(asset.mime) > 255 or not _MIME.fullmatch(asset.mime):
        raise _fail(f"{path}.mime", "must be a MIME type such as 'text/css' (at most 255)")
    if not isinstance(asset.data, bytes):
        raise _fail(f"{path}.data", "must be bytes")
    if len(asset.data) > MAX_ASSET_BYTES:
        raise _fail(f"{path}.data", f"is {len(asset.data)} bytes, more than {MAX_ASSET_BYTES}")
    return asset


def asset_id(plugin_id: str, path: str) -> str:
    """The primary key of an asset: ``pluginId + ":" + path``."""
    return f"{plugin_id}:{path}"


def new_asset_record(plugin_id: str, asset: AssetInput, now: int) -> dict[str, Any]:
    """The stored record of a checked asset, with its SHA-256 and size computed."""
    return {
        "id": asset_id(plugin_id, asset.path),
        "pluginId": plugin_id,
        "path": asset.path,
        "kind": asset.kind,
        "mime": asset.mime,
        "bytes": asset.data,
        "sha256": hashlib.sha256(asset.data).hexdigest(),
        "size": len(asset.data),
        "createdAt": now,
    }


def asset_from_record(record: Any) -> PluginAsset:
    """Return a stored asset after checking its bytes against its SHA-256 and size.

    Raises AssetIntegrityError if the record is malformed or the bytes do not match.
    """
    rid = record.get("id") if isinstance(record, dict) else None
    where = f"pluginAssets[{rid!r}]"
    if not isinstance(record, dict):
        raise AssetIntegrityError(f"{where}: the stored record is not an object", field="bytes")
    data = record.get("bytes")
    if not isinstance(data, bytes):
        raise AssetIntegrityError(f"{where}: the stored bytes are missing", field="bytes")
    digest = hashlib.sha256(data).hexdigest()
    if digest != record.get("sha256") or len(data) != record.get("size"):
        raise AssetIntegrityError(
            f"{where}: the stored bytes do not match their SHA-256 "
            f"(recorded {record.get('sha256')!r}, computed {digest!r})",
            field="sha256",
        )
    try:
        return PluginAsset(
            id=str(record["id"]),
            plugin_id=str(record["pluginId"]),
            path=str(record["path"]),
            kind=str(record["kind"]),
            mime=str(record["mime"]),
            data=data,
            sha256=digest,
            size=len(data),
            created_at=int(record["createdAt"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise AssetIntegrityError(f"{where}: malformed record ({exc!r})", field="bytes") from None


def asset_meta(record: dict[str, Any]) -> dict[str, Any]:
    """The wire form of an asset record without its bytes."""
    return {k: record.get(k) for k in ("path", "kind", "mime", "sha256", "size", "createdAt")}


async def put_asset(
    target: Target, plugin_id: str, asset: AssetInput, clock: Clock = now_ms
) -> PluginAsset:
    """Add an asset at a new path of an installed plugin; return it.

    Raises ReadOnlyAssetError if ``(plugin_id, path)`` exists (reinstall to replace
    assets), NotFoundError if the plugin is not installed, ValidationError if it
    already has MAX_ASSETS_PER_PLUGIN assets.
    """
    check_plugin_id(plugin_id)
    check_asset_input(asset)

    async def body(tx: Transaction) -> PluginAsset:
        if await tx.table("plugins").get(plugin_id) is None:
            raise NotFoundError(f"pluginId: no plugin {plugin_id!r}", field="pluginId")
        assets = tx.table("pluginAssets")
        existing = await assets.where("[pluginId+path]").equals([plugin_id, asset.path]).count()
        if existing or await assets.get(asset_id(plugin_id, asset.path)) is not None:
            raise ReadOnlyAssetError(
                f"path: plugin {plugin_id!r} already has an asset at {asset.path!r}; "
                "assets are read-only (reinstall the plugin to replace them)",
                field="path",
            )
        if await assets.where("pluginId").equals(plugin_id).count() >= MAX_ASSETS_PER_PLUGIN:
            raise _fail("path", f"plugin already has {MAX_ASSETS_PER_PLUGIN} assets")
        record = new_asset_record(plugin_id, asset, clock())
        await assets.add(record)
        return asset_from_record(record)

    return await within(target, "rw", PLUGIN_TABLES, body)


async def read_asset(target: Target, plugin_id: str, path: str) -> PluginAsset:
    """Return the asset at ``path`` of ``plugin_id``, its SHA-256 verified on this read.

    Raises NotFoundError if there is none, AssetIntegrityError if its bytes changed.
    """
    check_plugin_id(plugin_id)
    check_text(path, "path", MAX_ASSET_PATH_CHARS)

    async def body(tx: Transaction) -> Any:
        table = tx.table("pluginAssets")
        return await table.where("[pluginId+path]").equals([plugin_id, path]).first()

    record = await within(target, "r", PLUGIN_TABLES, body)
    if record is None:
        raise NotFoundError(f"path: plugin {plugin_id!r} has no asset {path!r}", field="path")
    return asset_from_record(record)


async def list_assets(target: Target, plugin_id: str) -> list[dict[str, Any]]:
    """Metadata (no bytes, not verified) of a plugin's assets, in path order."""
    check_plugin_id(plugin_id)

    async def body(tx: Transaction) -> list[Any]:
        return await tx.table("pluginAssets").where("pluginId").equals(plugin_id).to_list()

    rows = await within(target, "r", PLUGIN_TABLES, body)
    return sorted((asset_meta(r) for r in rows), key=lambda m: str(m["path"]))
