"""``backup.export`` and ``backup.restore``: everything into one file, and back.

Every case here that exports or restores isolates the settings (a memory backend of its
own), since a backup carries them and a restore applies them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from behavior import Ctx
from behavior.backup.fill import attachment_bytes, dump, fill_everything
from behavior.payloads import answer, b64, text
from panelot.backup.section import PENDING_KEY
from panelot.bus.receipts import receipt_id
from panelot.host import Host
from panelot.idb.blobs import blob_bytes, is_blob
from panelot.idb.transfer import ImportProgress
from panelot.schema import PANELOT_V1_STORES
from panelot.settings import MemoryStorageBackend
from panelot.settings.credentials import MemoryKeyStore
from panelot.store import PanelotStore


def isolate(ctx: Ctx) -> Host:
    """The case's host with settings and credentials of this case only."""
    return ctx.host.with_settings(MemoryStorageBackend(), MemoryKeyStore())


async def other_data(store: PanelotStore) -> dict[str, Any]:
    """Records of a store's own, some under ids the filled store uses too."""
    tid = await store.create_thread("Mine")
    await store.append(tid, "user_message", text("mine"))
    await store.append(tid, "assistant_message", answer("also mine"))
    put = await store.command(
        "attachment.put",
        {"threadId": tid, "kind": "file", "mime": "text/plain", "dataBase64": b64(b"mine")},
    )
    await store.command("skill.put", {"skill": {"id": "s-mine", "name": "m", "body": "b"}})
    await store.command("memory.write", {"key": "home", "value": "Oslo"})
    await store.command(
        "plugin.install",
        {
            "plugin": {"id": "acme", "name": "Old", "version": "0.1.0"},
            "assets": [{"path": "old.js", "kind": "script", "mime": "text/javascript",
                        "dataBase64": b64(b"old()")}],
        },
    )  # fmt: skip
    return {"threadId": tid, "attachmentId": put["attachmentId"]}


def without_receipt(tables: dict[str, list[Any]], rid: str) -> dict[str, list[Any]]:
    """``tables`` with the receipt ``rid`` left out."""
    receipts = [r for r in tables["commandReceipts"] if r["id"] != rid]
    return {**tables, "commandReceipts": receipts}


async def case_backup_round_trip_replaces_everything(ctx: Ctx) -> None:
    host = isolate(ctx)
    a = await ctx.store(host)
    filled = await fill_everything(a, attachments=7)
    expected = await dump(a)
    assert all(expected[name] for name in PANELOT_V1_STORES), {
        k: len(v) for k, v in expected.items()
    }
    backup = await a.export_backup()
    data = await blob_bytes(backup.file)
    assert is_blob(backup.file) and backup.size == len(data)
    assert backup.tables == {name: len(rows) for name, rows in expected.items()}
    assert isinstance(backup.exported_at, int) and backup.exported_at <= ctx.now
    doc = json.loads(data)
    assert doc["formatName"] == "dexie" and doc["panelotBackup"]["exportedAt"] == backup.exported_at
    assert await dump(a) == expected  # exporting wrote nothing

    b = await ctx.store(host)
    mine = await other_data(b)
    envelope = await b.restore_backup(backup.file, submission_id="restore-1")
    assert envelope["status"] == "completed", envelope
    response = envelope["response"]
    assert response["restored"] == backup.tables
    assert response["rows"] == sum(backup.tables.values())
    assert response["size"] == len(data)
    assert response["sha256"] == hashlib.sha256(data).hexdigest()
    assert response["settings"] is True and response["credentials"] == []
    assert envelope["settingsApplied"] is True and envelope["missingCredentials"] == []

    rid = receipt_id(b.client_id, "restore-1")
    got = await dump(b)
    assert without_receipt(got, rid) == expected  # identical, Blobs byte for byte
    (receipt,) = [r for r in got["commandReceipts"] if r["id"] == rid]
    assert receipt["commandType"] == "backup.restore" and receipt["response"] == response
    # what B had before is gone
    assert await b.db.table("threads").get(mine["threadId"]) is None
    assert await b.db.table("attachments").get(mine["attachmentId"]) is None
    assert await b.db.table("pluginAssets").get("acme:old.js") is None
    # and the restored store works: Blobs, verified assets, the tree, runs
    for attachment_id, content in filled["attachments"].items():
        got_one = await b.query("attachment.get", {"attachmentId": attachment_id})
        assert got_one["dataBase64"] == b64(content) and got_one["size"] == len(content)
    asset = await b.query("plugin.asset", {"pluginId": "acme", "path": "main.js"})
    assert asset["dataBase64"] == b64(b"run()\x00\xff")
    for tid in filled["threads"]:
        assert (await b.query("thread.check", {"threadId": tid}))["ok"]
        assert await b.context(tid) == await a.context(tid)
    assert await b.query("run.get", {"runId": filled["runId"]}) == await a.query(
        "run.get", {"runId": filled["runId"]}
    )
    pending = await b.query("approvals.pending", {"threadId": filled["threads"][1]})
    assert [i["id"] for i in pending["interactions"]] == filled["interactions"][1:]
    # and takes commands on the restored data
    more = await b.append(filled["threads"][0], "user_message", text("after the restore"))
    assert more["seq"] > max(n["seq"] for n in expected["nodes"])


async def case_backup_named_query_and_command(ctx: Ctx) -> None:
    host = isolate(ctx)
    a = await ctx.store(host)
    await fill_everything(a, attachments=2)
    out = await a.query("backup.export", {"settings": False})
    data = await blob_bytes(out["file"])
    assert out["size"] == len(data) and out["tables"]["attachments"] == 2
    assert isinstance(out["exportedAt"], int)
    assert "panelotSettings" not in json.loads(data)
    with_settings = await a.query("backup.export", {})
    assert "panelotSettings" in json.loads(await blob_bytes(with_settings["file"]))
    # the command alone names a file no one read in this context: refused, nothing written
    b = await ctx.store(host)
    await other_data(b)
    before = await dump(b)
    sent = await b.send(
        {
            "type": "backup.restore",
            "clientId": "ui",
            "submissionId": "direct",
            "payload": {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)},
        }
    )
    assert sent["status"] == "failed" and sent["error"]["field"] == "payload.sha256", sent
    bad = await b.send(
        {
            "type": "backup.restore",
            "clientId": "ui",
            "submissionId": "direct-2",
            "payload": {"sha256": "NOT-HEX", "size": 1},
        }
    )
    assert bad["status"] == "failed" and bad["error"]["field"] == "payload.sha256", bad
    assert await dump(b) == before
    # restore_backup takes bytes too; settings=False leaves them out of the restore
    envelope = await b.restore_backup(data, submission_id="from-bytes", settings=False)
    assert envelope["status"] == "completed" and envelope["response"]["settings"] is False
    assert envelope["settingsApplied"] is False
    rid = receipt_id(b.client_id, "from-bytes")
    assert without_receipt(await dump(b), rid) == await dump(a)


async def case_backup_restore_replay_and_conflict(ctx: Ctx) -> None:
    host = isolate(ctx)
    a = await ctx.store(host)
    await fill_everything(a, attachments=3)
    backup = await a.export_backup()
    b = await ctx.store(host)
    first = await b.restore_backup(backup.file, submission_id="restore-1", client_id="panel")
    assert first["status"] == "completed", first
    # a write after the restore: a replay that ran again would clear it
    await b.command("memory.write", {"key": "after", "value": 1})
    after = await dump(b)
    again = await b.restore_backup(backup.file, submission_id="restore-1", client_id="panel")
    assert again["status"] == "completed" and again["response"] == first["response"]
    assert await dump(b) == after
    # the same submission with another file: a conflict, nothing written
    await a.command("memory.write", {"key": "changed", "value": 2})
    other = await a.export_backup()
    conflict = await b.restore_backup(other.file, submission_id="restore-1", client_id="panel")
    assert conflict["status"] == "failed", conflict
    assert conflict["error"]["name"] == "ConflictError"
    assert await dump(b) == after
    # another client with that submission id is another submission
    fresh = await b.restore_backup(other.file, submission_id="restore-1", client_id="popup")
    assert fresh["status"] == "completed"
    rid = receipt_id("popup", "restore-1")
    assert without_receipt(await dump(b), rid) == await dump(a)


def rows_of(doc: dict[str, Any], table: str) -> list[Any]:
    return next(t["rows"] for t in doc["data"]["data"] if t["tableName"] == table)


Mutation = Callable[[dict[str, Any]], Any]


async def case_backup_refusals_name_the_row_and_write_nothing(ctx: Ctx) -> None:
    host = isolate(ctx)
    services = host.services
    await services.settings.set("ui", {"theme": "light"})
    a = await ctx.store(host)
    filled = await fill_everything(a, attachments=5)
    data = await blob_bytes((await a.export_backup()).file)
    doc = json.loads(data)
    nodes = rows_of(doc, "nodes")
    last_user = max(i for i, n in enumerate(nodes) if n["type"] == "user_message")
    moved = next(i for i, n in enumerate(nodes) if n["threadId"] == filled["threads"][0])
    outsider = next(n["id"] for n in nodes if n["threadId"] == filled["threads"][1])
    moved_id = nodes[moved]["id"]
    assert rows_of(doc, "attachments")[3]["$types"] == {"bytes": "blob2"}

    def bad_payload(d: dict[str, Any]) -> Any:
        rows_of(d, "nodes")[last_user]["payload"]["content"] = 5

    def outside_parent(d: dict[str, Any]) -> Any:
        rows_of(d, "nodes")[moved]["parentId"] = outsider

    def wrong_size(d: dict[str, Any]) -> Any:
        rows_of(d, "attachments")[2]["size"] += 1

    def no_blob(d: dict[str, Any]) -> Any:
        del rows_of(d, "attachments")[1]["$types"]

    def wrong_digest(d: dict[str, Any]) -> Any:
        rows_of(d, "runs")[0]["snapshot"]["digest"] = "0" * 64

    def unknown_table(d: dict[str, Any]) -> Any:
        d["data"]["tables"].append({"name": "bogus", "schema": "id", "rowCount": 1})
        d["data"]["data"].append({"tableName": "bogus", "inbound": True, "rows": [{"id": 1}]})

    def missing_path(d: dict[str, Any]) -> Any:
        rows_of(d, "attachments")[3]["$types"]["nope"] = "blob2"

    def foreign_receipt(d: dict[str, Any]) -> Any:
        rows_of(d, "commandReceipts")[4]["submissionId"] = "someone-else"

    def orphans(d: dict[str, Any]) -> Any:
        threads = rows_of(d, "threads")
        threads[:] = [t for t in threads if t["id"] != filled["threads"][0]]

    def bad_status(d: dict[str, Any]) -> Any:
        rows_of(d, "interactions")[1]["status"] = "maybe"

    def bad_skill(d: dict[str, Any]) -> Any:
        rows_of(d, "skills")[1]["name"] = 7

    def bad_settings(d: dict[str, Any]) -> Any:
        d["panelotSettings"]["groups"]["ui"]["value"]["fontSize"] = 99

    def huge_cost(d: dict[str, Any]) -> Any:  # JSON's integers have no size limit
        rows_of(d, "threads")[0]["stats"]["costUsd"] = 10**400

    def huge_seq(d: dict[str, Any]) -> Any:
        rows_of(d, "nodes")[moved]["seq"] = 10**400

    def secret_in_settings(d: dict[str, Any]) -> Any:
        d["panelotSettings"]["credentials"] = [{"ref": "cred:x", "secret": "sk-1"}]

    mutations: list[tuple[Mutation, str, str, str]] = [
        (bad_payload, "ValidationError", f"nodes[{last_user}].payload.content", ""),
        (outside_parent, "ValidationError", f"nodes[{moved}].parentId", moved_id),
        (wrong_size, "ValidationError", "attachments[2].size", "Blob"),
        (no_blob, "ValidationError", "attachments[1].bytes", "Blob"),
        (wrong_digest, "SnapshotIntegrityError", "runs[0].snapshot.digest", ""),
        (unknown_table, "ValidationError", "data.tables", "'bogus'"),
        (missing_path, "ValidationError", "attachments[3].$types", "'nope'"),
        (foreign_receipt, "ValidationError", "commandReceipts[4].id", ""),
        (orphans, "ValidationError", "nodes", filled["threads"][0]),
        (bad_status, "ValidationError", "interactions[1].status", ""),
        (bad_skill, "ValidationError", "skills[1]", ""),
        (bad_settings, "ValidationError", "panelotSettings.groups.ui.fontSize", ""),
        (secret_in_settings, "ValidationError", "panelotSettings.credentials[0]", "secret"),
        (huge_cost, "ValidationError", "threads[0].stats.costUsd", "finite number"),
        (huge_seq, "ValidationError", f"nodes[{moved}].seq", ""),
    ]
    files: list[tuple[str, bytes, str, str, str]] = []
    for mutate, name, field, text_ in mutations:
        changed = json.loads(data)
        mutate(changed)
        files.append((mutate.__name__, json.dumps(changed).encode(), name, field, text_))
    files += [
        ("truncated", data[: len(data) // 2], "ValidationError", "data.data[", ""),
        ("cut at the end", data[:-2], "ValidationError", "data", "the end of the file"),
        ("empty", b"", "ValidationError", "", "the end of the file"),
        ("not utf-8", b"\xff" + data, "ValidationError", "file", "UTF-8"),
    ]

    b = await ctx.store(host)
    await other_data(b)
    before = await dump(b)
    for label, file, name, field, text_ in files:
        envelope = await b.restore_backup(file, submission_id=f"bad-{label}")
        assert envelope["status"] == "failed", (label, envelope)
        error = envelope["error"]
        assert error["name"] == name, (label, error)
        if label in ("bad_skill", "truncated", "empty"):
            assert (error.get("field") or "").startswith(field), (label, error)
        else:
            assert error["field"] == field, (label, error)
        assert text_ in error["message"], (label, error)
        assert await dump(b) == before, label
        assert (await services.backend.get([PENDING_KEY])) == {}, label
        assert (await services.settings.get("ui")).theme == "light", label
    # the unchanged file restores
    ok = await b.restore_backup(data, submission_id="good")
    assert ok["status"] == "completed", ok


async def case_backup_restore_progress_reads_then_writes(ctx: Ctx) -> None:
    host = isolate(ctx)
    a = await ctx.store(host)
    await fill_everything(a, attachments=4)
    exported: list[Any] = []
    backup = await a.export_backup(progress=exported.append)
    assert exported[-1].done and exported[-1].completed_rows == exported[-1].total_rows
    assert exported[-1].bytes == backup.size
    b = await ctx.store(host)
    reports: list[ImportProgress] = []
    envelope = await b.restore_backup(
        backup.file, progress=reports.append, chunk_size_bytes=1024, submission_id="p"
    )
    assert envelope["status"] == "completed", envelope
    stages = [p.stage for p in reports]
    assert stages == sorted(stages)  # "reading" then "writing"
    for stage in ("reading", "writing"):
        end = [p for p in reports if p.stage == stage][-1]
        assert end.done and end.completed_rows == end.total_rows == sum(backup.tables.values())
        assert end.total_bytes == backup.size
    assert len([p for p in reports if p.stage == "reading"]) > 2
    rid = receipt_id(b.client_id, "p")
    assert without_receipt(await dump(b), rid) == await dump(a)


async def case_backup_distinct_attachment_bytes_survive(ctx: Ctx) -> None:
    """Each attachment keeps its own bytes (no Blob swapped for another's)."""
    host = isolate(ctx)
    a = await ctx.store(host)
    filled = await fill_everything(a, attachments=12)
    assert len(set(filled["attachments"].values())) == 12
    assert attachment_bytes(0) != attachment_bytes(5)
    backup = await a.export_backup()
    b = await ctx.store(host)
    assert (await b.restore_backup(backup.file))["status"] == "completed"
    for record in await b.db.table("attachments").to_list():
        content = await blob_bytes(record["bytes"])
        assert content == filled["attachments"][record["id"]], record["id"]
        assert record["size"] == len(content)


async def case_backup_large_attachment_streams_through(ctx: Ctx) -> None:
    """A 5 MiB attachment: larger than a read chunk, a file part and a batch of rows."""
    host = isolate(ctx)
    a = await ctx.store(host)
    tid = await a.create_thread("big")
    big = hashlib.sha256(b"seed").digest() * (5 * 1024 * 1024 // 32) + b"tail"
    put = await a.command(
        "attachment.put",
        {"threadId": tid, "kind": "file", "mime": "application/zip", "dataBase64": b64(big)},
    )
    small = await a.command(
        "attachment.put",
        {"threadId": tid, "kind": "image", "mime": "image/png", "dataBase64": b64(b"\x89PNG")},
    )
    backup = await a.export_backup()
    assert backup.size > len(big) * 4 // 3
    b = await ctx.store(host)
    await other_data(b)
    envelope = await b.restore_backup(backup.file, chunk_size_bytes=64 * 1024)
    assert envelope["status"] == "completed", envelope
    record = await b.db.table("attachments").get(put["attachmentId"])
    content = await blob_bytes(record["bytes"])
    assert len(content) == len(big) and content == big
    assert record["bytes"].type == "application/zip" and record["size"] == len(big)
    other = await b.db.table("attachments").get(small["attachmentId"])
    assert await blob_bytes(other["bytes"]) == b"\x89PNG"
    assert await b.db.table("attachments").count() == 2


async def case_backup_of_an_empty_store_empties_the_target(ctx: Ctx) -> None:
    host = isolate(ctx)
    empty = await ctx.store(host)
    backup = await empty.export_backup()
    assert backup.tables == {name: 0 for name in PANELOT_V1_STORES}
    b = await ctx.store(host)
    await fill_everything(b, attachments=2)
    envelope = await b.restore_backup(backup.file, submission_id="wipe")
    assert envelope["status"] == "completed", envelope
    assert envelope["response"]["rows"] == 0
    got = await dump(b)
    (receipt,) = got.pop("commandReceipts")
    assert receipt["id"] == receipt_id(b.client_id, "wipe")
    assert got == {name: [] for name in PANELOT_V1_STORES if name != "commandReceipts"}
