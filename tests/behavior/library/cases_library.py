"""The library repositories: skills and memories; plugins are in cases_library_plugins."""

from __future__ import annotations

from typing import Any

from behavior import Ctx, raises
from behavior.payloads import b64
from panelot.bus.receipts import receipt_id
from panelot.idb import ValidationError
from panelot.library.memories import memory_list, memory_read, memory_write
from panelot.library.skills import SkillInput, enabled_skills, put_skill, skills_by_name
from panelot.store import PanelotStore


def wire_asset(path: str, data: bytes, kind: str = "script", mime: str = "text/javascript"):
    return {"path": path, "kind": kind, "mime": mime, "dataBase64": b64(data)}


def plugin_wire(pid: str = "acme", version: str = "1.0.0", enabled: bool = True) -> dict:
    return {
        "id": pid,
        "name": pid.title(),
        "version": version,
        "enabled": enabled,
        "manifest": {"entry": "main.js", "permissions": ["tabs"]},
    }


async def submit(store: PanelotStore, kind: str, payload: dict[str, Any], sub: str) -> dict:
    return await store.send(
        {"type": kind, "clientId": "cli", "submissionId": sub, "payload": payload}
    )


async def asset_rows(store: PanelotStore, pid: str) -> list[dict]:
    return await store.db.table("pluginAssets").where("pluginId").equals(pid).to_list()


async def case_skills_by_name_and_enabled_index(ctx: Ctx) -> None:
    store = await ctx.store()
    a = await store.command("skill.put", {"skill": {"name": "summarize", "body": "Sum it up."}})
    b = await store.command(
        "skill.put",
        {"skill": {"name": "translate", "body": "To French.", "enabled": False, "sourceRef": "u"}},
    )
    c = await store.command(
        "skill.put",
        {"skill": {"id": "s-c", "name": "summarize", "body": "Shorter.", "description": "v2"}},
    )
    assert c == {"skillId": "s-c"}
    # enabled is stored as 1/0, so the seed's `enabled` index really finds records
    raw = await store.db.table("skills").get(b["skillId"])
    assert raw["enabled"] == 0 and not isinstance(raw["enabled"], bool)
    assert await store.db.table("skills").where("enabled").equals(1).count() == 2
    named = await skills_by_name(store.db, "summarize")
    assert sorted(s.id for s in named) == sorted([a["skillId"], "s-c"])
    assert all(s.enabled is True for s in named)
    assert sorted(s.id for s in await enabled_skills(store.db)) == sorted([a["skillId"], "s-c"])
    listed = await store.query("skill.list", {"enabled": False})
    assert [s["id"] for s in listed] == [b["skillId"]]
    assert listed[0]["enabled"] is False and listed[0]["sourceRef"] == "u"
    assert len(await store.query("skill.list", {"name": "summarize", "enabled": True})) == 2
    assert [s["name"] for s in await store.query("skill.list", {})] == [
        "summarize",
        "summarize",
        "translate",
    ]
    # replacing keeps createdAt and moves updatedAt
    before = await store.query("skill.get", {"skillId": "s-c"})
    await store.command(
        "skill.put", {"skill": {"id": "s-c", "name": "summarize", "body": "x", "enabled": False}}
    )
    after = await store.query("skill.get", {"skillId": "s-c"})
    assert after["createdAt"] == before["createdAt"] and after["updatedAt"] > before["updatedAt"]
    assert after["enabled"] is False and "description" not in after
    assert await store.command("skill.delete", {"skillId": "s-c"}) == {}
    assert await skills_by_name(store.db, "summarize") != []
    out = await submit(store, "skill.delete", {"skillId": "s-c"}, "del-again")
    assert out["status"] == "failed" and out["error"]["name"] == "NotFoundError"
    # the Python API uses the same repository
    direct = await put_skill(store.db, SkillInput(name="py", body="b", enabled=False), ctx.clock)
    assert (await store.query("skill.get", {"skillId": direct.id}))["enabled"] is False


async def case_skill_inputs_are_validated(ctx: Ctx) -> None:
    store = await ctx.store()
    bad = [
        ({"skill": {"name": "n", "body": "x" * (1024 * 1024 + 1)}}, "payload.skill.body"),
        ({"skill": {"name": "", "body": "b"}}, "payload.skill.name"),
        ({"skill": {"name": "n", "body": "b", "createdAt": 5}}, "payload.skill.createdAt"),
        ({"skill": {"name": "n", "body": "b", "enabled": 1}}, "payload.skill.enabled"),
        ({"skill": {"name": "n"}}, "payload.skill.body"),
        ({}, "payload.skill"),
    ]
    for i, (payload, field) in enumerate(bad):
        out = await submit(store, "skill.put", payload, f"bad{i}")
        assert out["status"] == "failed" and out["error"]["field"] == field, (out, field)
    assert await store.db.table("skills").count() == 0
    assert await store.db.table("commandReceipts").count() == 0


async def case_memory_write_upserts_by_key(ctx: Ctx) -> None:
    store = await ctx.store()
    first = await store.command("memory.write", {"key": "user.name", "value": "Ada"})
    stored = await store.query("memory.get", {"key": "user.name"})
    assert stored["value"] == "Ada" and stored["id"] == first["memoryId"]
    assert stored["createdAt"] == stored["updatedAt"] == first["updatedAt"]
    second = await store.command("memory.write", {"key": "user.name", "value": {"full": "Ada L."}})
    assert second["memoryId"] == first["memoryId"]
    assert second["updatedAt"] > first["updatedAt"]
    again = await store.query("memory.get", {"key": "user.name"})
    assert again["value"] == {"full": "Ada L."} and again["createdAt"] == stored["createdAt"]
    assert await store.db.table("memories").count() == 1
    assert await store.query("memory.get", {"key": "nope"}) is None
    assert await store.command("memory.delete", {"key": "user.name"}) == {}
    assert await memory_read(store.db, "user.name") is None
    out = await submit(store, "memory.delete", {"key": "user.name"}, "d2")
    assert out["status"] == "failed" and out["error"]["field"] == "payload.key"
    too_big = await submit(store, "memory.write", {"key": "k", "value": "x" * (256 * 1024)}, "big")
    assert too_big["status"] == "failed" and too_big["error"]["field"] == "payload.value"
    no_value = await submit(store, "memory.write", {"key": "k"}, "nv")
    assert no_value["error"]["field"] == "payload.value"
    empty_key = await submit(store, "memory.write", {"key": "", "value": 1}, "ek")
    assert empty_key["error"]["field"] == "payload.key"


async def case_memory_write_heals_duplicate_keys(ctx: Ctx) -> None:
    store = await ctx.store()
    table = store.db.table("memories")
    await table.bulk_add(
        [
            {"id": "m2", "key": "k", "value": 2, "createdAt": 20, "updatedAt": 20},
            {"id": "m1", "key": "k", "value": 1, "createdAt": 10, "updatedAt": 10},
        ]
    )
    memory = await memory_write(store.db, "k", 3, ctx.clock)
    assert memory.id == "m1" and memory.created_at == 10  # the oldest record is kept
    assert [r["id"] for r in await table.to_list()] == ["m1"]


async def case_memory_list_most_recent_first(ctx: Ctx) -> None:
    store = await ctx.store()
    for key in ["a", "b", "c", "d"]:
        await store.command("memory.write", {"key": key, "value": key.upper()})
    await store.command("memory.write", {"key": "b", "value": "B2"})
    listed = await store.query("memory.list", {})
    assert [m["key"] for m in listed] == ["b", "d", "c", "a"]
    assert [m["key"] for m in await store.query("memory.list", {"limit": 2})] == ["b", "d"]
    assert [m.key for m in await memory_list(store.db, 3)] == ["b", "d", "c"]
    await raises(ValidationError, store.query("memory.list", {"limit": -1}))
    await raises(ValidationError, store.query("memory.list", {"limit": 5000}))


async def case_memory_write_replay_returns_stored_response(ctx: Ctx) -> None:
    store = await ctx.store()
    cmd = {
        "type": "memory.write",
        "clientId": "cli",
        "submissionId": "w1",
        "payload": {"key": "k", "value": [1, 2]},
    }
    first = await store.send(cmd)
    assert first["status"] == "completed"
    stamp = (await store.query("memory.get", {"key": "k"}))["updatedAt"]
    again = await store.send(cmd)
    assert again == first
    assert (await store.query("memory.get", {"key": "k"}))["updatedAt"] == stamp  # nothing written
    receipt = await store.db.table("commandReceipts").get(receipt_id("cli", "w1"))
    assert receipt["commandType"] == "memory.write" and receipt["response"] == first["response"]
    drift = await store.send({**cmd, "payload": {"key": "k", "value": "other"}})
    assert drift["status"] == "failed" and drift["error"]["name"] == "ConflictError"
    assert (await store.query("memory.get", {"key": "k"}))["value"] == [1, 2]
