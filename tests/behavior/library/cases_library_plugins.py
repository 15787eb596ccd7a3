"""The library repositories: plugins and their read-only, verified assets."""

from __future__ import annotations

import base64
import hashlib

from behavior import Ctx, raises
from behavior.library.cases_library import asset_rows, plugin_wire, submit, wire_asset
from panelot.bus.receipts import receipt_id
from panelot.errors import AssetIntegrityError, ReadOnlyAssetError
from panelot.idb import NotFoundError
from panelot.library.plugin_assets import AssetInput, asset_id, put_asset, read_asset
from panelot.library.plugins import PluginInput, install_plugin, list_plugins, uninstall_plugin


async def case_plugin_install_reinstall_uninstall(ctx: Ctx) -> None:
    store = await ctx.store()
    out = await store.command(
        "plugin.install",
        {
            "plugin": plugin_wire(),
            "assets": [
                wire_asset("main.js", b"run()"),
                wire_asset("css/a.css", b"a{}", "style", "text/css"),
            ],
        },
    )
    assert out == {"pluginId": "acme", "assets": 2}
    await store.command("plugin.install", {"plugin": plugin_wire("other", enabled=False)})
    plugins = await store.query("plugin.list", {})
    assert [p["id"] for p in plugins] == ["acme", "other"]
    assert plugins[0]["enabled"] is True and plugins[0]["manifest"]["entry"] == "main.js"
    assert [p["id"] for p in await store.query("plugin.list", {"enabled": False})] == ["other"]
    assert (await store.db.table("plugins").get("acme"))["enabled"] == 1
    metas = await store.query("plugin.assets", {"pluginId": "acme"})
    assert [m["path"] for m in metas] == ["css/a.css", "main.js"]
    assert metas[1]["sha256"] == hashlib.sha256(b"run()").hexdigest() and metas[1]["size"] == 5
    first = await store.query("plugin.list", {"enabled": True})
    # reinstall: exactly the new assets remain, installedAt is kept
    out = await store.command(
        "plugin.install",
        {
            "plugin": plugin_wire(version="2.0.0"),
            "assets": [wire_asset("main.js", b"run2()"), wire_asset("new.js", b"n")],
        },
    )
    assert out == {"pluginId": "acme", "assets": 2}
    rows = await asset_rows(store, "acme")
    assert sorted(r["path"] for r in rows) == ["main.js", "new.js"]
    main = await store.query("plugin.asset", {"pluginId": "acme", "path": "main.js"})
    assert base64.b64decode(main["dataBase64"]) == b"run2()"
    again = (await store.query("plugin.list", {"enabled": True}))[0]
    assert again["version"] == "2.0.0" and again["installedAt"] == first[0]["installedAt"]
    assert again["updatedAt"] > first[0]["updatedAt"]
    # uninstall removes the plugin and its assets; the other plugin is untouched
    assert await store.command("plugin.uninstall", {"pluginId": "acme"}) == {}
    assert await asset_rows(store, "acme") == []
    assert [p.id for p in await list_plugins(store.db)] == ["other"]
    await raises(NotFoundError, read_asset(store.db, "acme", "main.js"))


async def case_uninstall_of_unknown_plugin_fails_cleanly(ctx: Ctx) -> None:
    store = await ctx.store()
    out = await submit(store, "plugin.uninstall", {"pluginId": "ghost"}, "u1")
    assert out["status"] == "failed"
    assert out["error"]["name"] == "NotFoundError" and out["error"]["field"] == "payload.pluginId"
    assert await store.db.table("commandReceipts").get(receipt_id("cli", "u1")) is None
    await raises(NotFoundError, uninstall_plugin(store.db, "ghost"))


async def case_plugin_writes_are_one_transaction(ctx: Ctx) -> None:
    store = await ctx.store()
    await install_plugin(
        store.db,
        PluginInput(id="p", name="P", version="1"),
        [AssetInput("a.js", "script", "text/javascript", b"1")],
        ctx.clock,
    )

    async def reinstall_then_fail(tx):  # type: ignore[no-untyped-def]
        await install_plugin(tx, PluginInput(id="p", name="P", version="2"), [], ctx.clock)
        raise RuntimeError("boom")

    await raises(
        RuntimeError, store.db.transaction("rw", ["plugins", "pluginAssets"], reinstall_then_fail)
    )

    async def uninstall_then_fail(tx):  # type: ignore[no-untyped-def]
        await uninstall_plugin(tx, "p")
        raise RuntimeError("boom")

    await raises(
        RuntimeError, store.db.transaction("rw", ["plugins", "pluginAssets"], uninstall_then_fail)
    )
    assert (await store.db.table("plugins").get("p"))["version"] == "1"
    assert [r["path"] for r in await asset_rows(store, "p")] == ["a.js"]
    # a refused install (duplicate paths) writes nothing either
    dup = await submit(
        store,
        "plugin.install",
        {
            "plugin": plugin_wire("p", "3"),
            "assets": [wire_asset("x.js", b"1"), wire_asset("x.js", b"2")],
        },
        "dup",
    )
    assert dup["status"] == "failed" and dup["error"]["field"] == "payload.assets[1].path"
    assert (await store.db.table("plugins").get("p"))["version"] == "1"


async def case_plugin_inputs_are_validated(ctx: Ctx) -> None:
    store = await ctx.store()
    bad = [
        ({"plugin": plugin_wire("a:b")}, "payload.plugin.id"),
        (
            {"plugin": {**plugin_wire(), "manifest": [1]}},
            "payload.plugin.manifest",
        ),
        (
            {"plugin": {**plugin_wire(), "manifest": {"x": "y" * (256 * 1024)}}},
            "payload.plugin.manifest",
        ),
        (
            {"plugin": plugin_wire(), "assets": [wire_asset("../up.js", b"")]},
            "payload.assets[0].path",
        ),
        (
            {"plugin": plugin_wire(), "assets": [wire_asset("/abs.js", b"")]},
            "payload.assets[0].path",
        ),
        (
            {"plugin": plugin_wire(), "assets": [wire_asset("a.js", b"", kind="Bad Kind")]},
            "payload.assets[0].kind",
        ),
        (
            {"plugin": plugin_wire(), "assets": [wire_asset("a.js", b"", mime="nonsense")]},
            "payload.assets[0].mime",
        ),
        (
            {"plugin": plugin_wire(), "assets": [{**wire_asset("a.js", b""), "dataBase64": "@@@"}]},
            "payload.assets[0].dataBase64",
        ),
        (
            {"plugin": plugin_wire(), "assets": [wire_asset(f"f{i}", b"") for i in range(501)]},
            "payload.assets",
        ),
        ({"plugin": plugin_wire(), "assets": [{"path": "a.js"}]}, "payload.assets[0].kind"),
    ]
    for i, (payload, field) in enumerate(bad):
        out = await submit(store, "plugin.install", payload, f"bad{i}")
        assert out["status"] == "failed" and out["error"]["field"] == field, (out["error"], field)
    assert await store.db.table("plugins").count() == 0
    assert await store.db.table("pluginAssets").count() == 0


async def case_assets_are_read_only(ctx: Ctx) -> None:
    store = await ctx.store()
    await store.command(
        "plugin.install", {"plugin": plugin_wire(), "assets": [wire_asset("main.js", b"v1")]}
    )
    err = await raises(
        ReadOnlyAssetError,
        put_asset(
            store.db, "acme", AssetInput("main.js", "script", "text/javascript", b"evil"), ctx.clock
        ),
    )
    assert err.field == "path"
    assert (await read_asset(store.db, "acme", "main.js")).data == b"v1"
    added = await put_asset(
        store.db, "acme", AssetInput("extra.txt", "text", "text/plain", b"hi"), ctx.clock
    )
    assert (
        added.id == asset_id("acme", "extra.txt")
        and added.sha256 == hashlib.sha256(b"hi").hexdigest()
    )
    await raises(
        ReadOnlyAssetError,
        put_asset(store.db, "acme", AssetInput("extra.txt", "text", "text/plain", b"x"), ctx.clock),
    )
    await raises(
        NotFoundError,
        put_asset(store.db, "ghost", AssetInput("a", "text", "text/plain", b""), ctx.clock),
    )
    # reinstalling is the way to replace an asset
    await store.command(
        "plugin.install", {"plugin": plugin_wire(), "assets": [wire_asset("main.js", b"v2")]}
    )
    assert (await read_asset(store.db, "acme", "main.js")).data == b"v2"
    await raises(NotFoundError, read_asset(store.db, "acme", "extra.txt"))


async def case_asset_checksum_is_verified_on_read(ctx: Ctx) -> None:
    store = await ctx.store()
    await store.command(
        "plugin.install", {"plugin": plugin_wire(), "assets": [wire_asset("main.js", b"good")]}
    )
    assert (await read_asset(store.db, "acme", "main.js")).data == b"good"
    changed = await store.db.table("pluginAssets").update(
        asset_id("acme", "main.js"), {"bytes": b"bad!"}
    )
    assert changed == 1
    err = await raises(AssetIntegrityError, read_asset(store.db, "acme", "main.js"))
    assert err.field == "sha256"
    await raises(
        AssetIntegrityError, store.query("plugin.asset", {"pluginId": "acme", "path": "main.js"})
    )
    await store.db.table("pluginAssets").update(asset_id("acme", "main.js"), {"bytes": "not bytes"})
    await raises(AssetIntegrityError, read_asset(store.db, "acme", "main.js"))


async def case_asset_bytes_round_trip_exactly(ctx: Ctx) -> None:
    store = await ctx.store()
    every_byte = bytes(range(256)) * 3
    big = bytes((i * 7919 + 13) % 256 for i in range(300_000))
    payloads = {"every.bin": every_byte, "empty.bin": b"", "big.bin": big, "nul.bin": b"\x00\x00"}
    await store.command(
        "plugin.install",
        {
            "plugin": plugin_wire(),
            "assets": [
                wire_asset(p, d, "data", "application/octet-stream") for p, d in payloads.items()
            ],
        },
    )
    for path, data in payloads.items():
        raw = await store.db.table("pluginAssets").get(asset_id("acme", path))
        assert isinstance(raw["bytes"], bytes) and raw["bytes"] == data, path
        asset = await read_asset(store.db, "acme", path)
        assert asset.data == data and asset.size == len(data)
        wire = await store.query("plugin.asset", {"pluginId": "acme", "path": path})
        assert base64.b64decode(wire["dataBase64"]) == data
        assert (
            wire["sha256"] == hashlib.sha256(data).hexdigest()
            and wire["mime"] == "application/octet-stream"
        )
