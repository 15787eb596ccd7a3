"""Settings groups, the fixed-key-list contract, change events and credentials (memory backend)."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

from behavior import Ctx, raises
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.settings import (
    SETTINGS_KEYS,
    MemoryArea,
    MemoryStorageBackend,
    Settings,
)
from panelot.settings.credentials import CredentialError, MemoryKeyStore
from panelot.settings.groups import origin_matches

SECRET = "sk-live-PLANTED-7f3a9c1e5b2d4f6a8c0e"


async def settle() -> None:
    """Let change events queued with call_soon be delivered."""
    for _ in range(5):
        await asyncio.sleep(0)


def forms(secret: str) -> list[str]:
    """The secret as plain text and as base64 at every alignment."""
    out = [secret]
    for shift in range(3):
        b64 = base64.b64encode(b"\0" * shift + secret.encode()).decode()
        out.append(b64[(shift * 4 + 2) // 3 + 2 : -4])
    return out


async def case_settings_defaults_merged_on_read(ctx: Ctx) -> None:
    backend = MemoryStorageBackend()
    settings = Settings(backend)
    ui = await settings.get("ui")
    assert (ui.theme, ui.font_size, ui.send_on_enter) == ("system", 14, True)
    await backend.set({"settings.ui": {"version": 1, "value": {"theme": "dark"}}})
    ui = await settings.get("ui")
    assert (ui.theme, ui.font_size) == ("dark", 14)
    perms = await settings.get("permissions")
    assert perms.rules == [] and perms.default == "ask"
    assert settings.problems == []


async def case_settings_migrate_older_version(ctx: Ctx) -> None:
    backend = MemoryStorageBackend()
    v1 = {
        "version": 1,
        "value": {
            "connections": [
                {"id": "oa", "kind": "openai", "url": "https://api.x.test/v1", "model": "m-1"},
                {"id": "ol", "kind": "ollama", "url": "http://127.0.0.1:11434"},
            ]
        },
    }
    await backend.set({"settings.providers": v1})
    settings = Settings(backend)
    providers, problems = await settings.read("providers")
    assert problems == []
    assert [(c.id, c.base_url, c.models) for c in providers.connections] == [
        ("oa", "https://api.x.test/v1", ["m-1"]),
        ("ol", "http://127.0.0.1:11434", []),
    ]
    # reading never writes; the next set stores the current version
    assert (await backend.get(["settings.providers"]))["settings.providers"] == v1
    await settings.set("providers", providers)
    stored = (await backend.get(["settings.providers"]))["settings.providers"]
    assert stored["version"] == 2 and stored["value"]["connections"][0]["models"] == ["m-1"]


async def case_settings_invalid_values_reported_and_replaced(ctx: Ctx) -> None:
    backend = MemoryStorageBackend()
    good = {"id": "a", "kind": "anthropic", "baseUrl": "https://api.a.test", "models": ["c"]}
    bad = {"id": "b", "kind": "openai", "baseUrl": "ftp://nope", "models": []}
    await backend.set(
        {
            "settings.ui": {"version": 1, "value": {"theme": "neon", "fontSize": 16}},
            "settings.providers": {
                "version": 2,
                "value": {"connections": [bad, good], "defaultConnectionId": "zzz"},
            },
            "settings.permissions": "not an object",
        }
    )
    settings = Settings(backend)
    groups, problems = await settings.get_all()
    assert (groups["ui"].theme, groups["ui"].font_size) == ("system", 16)
    assert [c.id for c in groups["providers"].connections] == ["a"]
    assert groups["providers"].default_connection_id is None
    assert groups["permissions"].rules == []
    fields = sorted(p.field for p in problems)
    assert fields == [
        "permissions",
        "providers.connections[0].baseUrl",
        "providers.defaultConnectionId",
        "ui.theme",
    ], fields
    await backend.set({"settings.ui": {"version": 99, "value": {}}})
    ui, found = await settings.read("ui")
    assert ui.theme == "system" and "newer" in found[0].message


async def case_settings_set_validates_strictly(ctx: Ctx) -> None:
    settings = Settings(MemoryStorageBackend())
    err = await raises(ValidationError, settings.set("ui", {"fontSize": "big"}))
    assert getattr(err, "field", None) == "ui.fontSize"
    err = await raises(ValidationError, settings.set("ui", {"colour": "red"}))
    assert getattr(err, "field", None) == "ui.colour"
    rule = {"origin": "not an origin", "capabilities": {"read_page": "allow"}}
    err = await raises(ValidationError, settings.set("permissions", {"rules": [rule]}))
    assert getattr(err, "field", None) == "permissions.rules[0].origin"
    err = await raises(ValidationError, settings.set("nope", {}))
    assert getattr(err, "field", None) == "group"


async def case_settings_get_all_reads_the_fixed_key_list(ctx: Ctx) -> None:
    backend = MemoryStorageBackend()
    await backend.set({"history": [{"role": "user", "content": "big"}], "session_x": {}})
    await Settings(backend).get_all()
    assert backend.get_calls == [list(SETTINGS_KEYS)]
    await raises(ValidationError, backend.get(None))  # type: ignore[arg-type]
    await raises(ValidationError, backend.get([]))
    await raises(ValidationError, backend.get("history"))


async def case_settings_change_events_across_contexts(ctx: Ctx) -> None:
    area = MemoryArea()
    panel, console = Settings(MemoryStorageBackend(area)), Settings(MemoryStorageBackend(area))
    seen: list[tuple[str, Any, Any]] = []
    stop = panel.subscribe("ui", lambda g, old, new: seen.append((g, old, new)))
    stop_perm = panel.subscribe("permissions", lambda g, o, n: seen.append((g, o, n)))
    assert len(area.listeners) == 1  # one backend listener serves every subscription
    await console.set("ui", {"theme": "dark"})
    await settle()
    assert [(g, o.theme, n.theme) for g, o, n in seen] == [("ui", "system", "dark")]
    await console.set("ui", {"theme": "dark"})  # identical write: no event
    await settle()
    assert len(seen) == 1
    stop()
    stop_perm()
    assert area.listeners == [] and not panel.listening
    await console.set("ui", {"theme": "light"})
    await settle()
    assert len(seen) == 1


async def case_settings_commands_and_queries(ctx: Ctx) -> None:
    host = ctx.host.with_settings(MemoryStorageBackend(), MemoryKeyStore())
    services = host.services
    store = await ctx.store(host)
    value = {"theme": "dark", "fontSize": 18}
    sid = "settings-1"
    out = await store.command("settings.set", {"group": "ui", "value": value}, sid)
    assert out == {"group": "ui", "version": 1}
    await services.settings.set("ui", {"theme": "light"})
    again = await store.command("settings.set", {"group": "ui", "value": value}, sid)
    assert again == out and (await services.settings.get("ui")).theme == "light"
    got = await store.query("settings.get", {"group": "ui"})
    assert got["value"]["theme"] == "light" and got["problems"] == []
    every = await store.query("settings.all")
    assert set(every["groups"]) == {"providers", "permissions", "ui", "retention"}
    failed = await store.send(
        {
            "type": "settings.set",
            "clientId": "c",
            "submissionId": "s2",
            "payload": {"group": "ui", "value": {"fontSize": 3}},
        }
    )
    assert failed["status"] == "failed" and failed["error"]["field"] == "payload.value.fontSize"


async def case_credentials_encrypted_rotated_never_echoed(ctx: Ctx) -> None:
    backend = MemoryStorageBackend()
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    services = host.services
    store = await ctx.store(host)
    out = await store.command("credential.set", {"secret": SECRET, "ref": "cred:openai"})
    assert out == {"ref": "cred:openai"}
    record = (await backend.get(["cred:openai"]))["cred:openai"]
    assert services.credentials and await services.credentials.reveal("cred:openai") == SECRET
    rotated = "sk-live-ROTATED-0000aaaa1111bbbb"
    assert await store.command("credential.rotate", {"ref": "cred:openai", "secret": rotated}) == {
        "ref": "cred:openai"
    }
    after = (await backend.get(["cred:openai"]))["cred:openai"]
    assert after["data"] != record["data"] and after["createdAt"] == record["createdAt"]
    assert await services.credentials.reveal("cred:openai") == rotated
    listed = await store.query("credential.list")
    assert [e["ref"] for e in listed] == ["cred:openai"]
    # nothing stored or answered holds either secret, in any form
    dumped = json.dumps(
        [backend.dump(), listed, await store.query("receipts.list", {"limit": 100})]
    )
    for secret in (SECRET, rotated):
        for form in forms(secret):
            assert form not in dumped, form
    # authenticated: a tampered body or a body moved under another ref does not decrypt
    await backend.set({"cred:other": after})
    await raises(CredentialError, services.credentials.reveal("cred:other"))
    await raises(NotFoundError, services.credentials.reveal("cred:missing"))
    failed = await store.send(
        {
            "type": "credential.rotate",
            "clientId": "c",
            "submissionId": "r",
            "payload": {"ref": "cred:missing", "secret": SECRET},
        }
    )
    assert failed["status"] == "failed" and SECRET not in json.dumps(failed)


async def case_settings_origin_patterns(ctx: Ctx) -> None:
    assert origin_matches("https://*.example.com", "https://a.example.com")
    assert origin_matches("https://*.example.com", "https://example.com")
    assert not origin_matches("https://*.example.com", "https://example.org")
    assert origin_matches("*", "https://anything.test")
    assert not origin_matches("https://a.test", "http://a.test")
