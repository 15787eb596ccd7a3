"""A store with something in every ``panelot_v1`` table, and an exact dump of a store.

:func:`fill_everything` writes only through commands, so every record is what the
store itself writes (and every command leaves a receipt). :func:`dump` reads every
table in primary-key order with each Blob replaced by ``(BLOB, type, bytes)``, so two
stores (on either core) compare exactly with ``==``.
"""

from __future__ import annotations

import math
from typing import Any

from behavior.payloads import answer, b64, text
from behavior.runs.cases_runs import move, snapshot_body
from panelot.idb.blobs import blob_bytes, is_blob
from panelot.schema import PANELOT_V1_STORES
from panelot.store import PanelotStore

__all__ = [
    "BLOB",
    "KINDS",
    "NAN",
    "Filled",
    "attachment_bytes",
    "b64",
    "canon",
    "dump",
    "fill_everything",
]

BLOB = "<blob>"
"""Marks a Blob's ``(BLOB, type, bytes)`` in a dump."""
NAN = "<nan>"
"""Stands for NaN in a dump (NaN is not equal to itself)."""
KINDS = ("image", "file", "page_text", "screenshot", "page_snapshot")
"""The attachment kinds the fill cycles through."""

ASK = {"toolName": "click", "params": {"selector": "#buy"}, "origin": "https://shop.example"}


def attachment_bytes(i: int) -> bytes:
    """Distinct contents for the ``i``-th attachment: every byte value, varied lengths."""
    return bytes([i % 256]) + bytes(range(256)) * (1 + i % 3) + f"#{i}".encode()


Filled = dict[str, Any]
"""What the fill made: ids by name (``threads``, ``attachments``, ``runId``...)."""


async def fill_everything(store: PanelotStore, attachments: int = 6) -> Filled:
    """Put records in every table of ``store`` through commands; return the ids made."""
    out: Filled = {"threads": [], "attachments": {}}
    # A thread with versions: an edit, two regenerations and a tombstone.
    tid = await store.create_thread("Trip planning", tags=["travel", "été"])
    out["threads"].append(tid)
    u1 = (await store.append(tid, "user_message", text("Where to go?")))["nodeId"]
    await store.append(tid, "assistant_message", answer("Lisbon.", 12, 0.25))
    u2 = (await store.append(tid, "user_message", text("And in winter? ☃")))["nodeId"]
    await store.command(
        "message.regenerate",
        {"threadId": tid, "userNodeId": u2, "payload": answer("Madeira.", 5)},
    )
    await store.command(
        "message.regenerate",
        {"threadId": tid, "userNodeId": u2, "payload": answer("The Canaries.", 7)},
    )
    edited = await store.command(
        "message.edit", {"threadId": tid, "nodeId": u1, "payload": text("Where to go, cheaply?")}
    )
    reply = await store.append(tid, "assistant_message", answer("Porto."))
    doomed = await store.append(tid, "user_message", text("never mind"))
    await store.command("message.delete", {"threadId": tid, "nodeId": doomed["nodeId"]})
    await store.command("branch.switch", {"threadId": tid, "nodeId": u2})
    out["edited"] = edited["nodeId"]
    out["reply"] = reply["nodeId"]
    out["tombstone"] = doomed["nodeId"]
    await store.command("thread.update", {"threadId": tid, "patch": {"pinned": True}})

    # A second thread with attachments of every kind, distinct bytes.
    tid2 = await store.create_thread("Files")
    out["threads"].append(tid2)
    user = (await store.append(tid2, "user_message", text("see attached")))["nodeId"]
    for i in range(attachments):
        kind = KINDS[i % len(KINDS)]
        mime = {"image": "image/png", "page_text": "text/plain"}.get(kind, "application/pdf")
        put = await store.command(
            "attachment.put",
            {
                "threadId": tid2,
                "kind": kind,
                "mime": mime,
                "dataBase64": b64(attachment_bytes(i)),
                "meta": {"title": f"file-{i}.bin", "w": i},
                "trust": "untrusted" if i % 2 else "trusted",
                "provenance": "user",
                **({"nodeId": user} if i == 0 else {}),
            },
        )
        out["attachments"][put["attachmentId"]] = attachment_bytes(i)

    # A run through its states, with an approval and two interactions.
    run_id = str(
        (
            await store.command(
                "run.start",
                {
                    "threadId": tid2,
                    "submissionId": "fill-run",
                    "input": "book it",
                    "snapshot": snapshot_body(),
                },
            )
        )["runId"]
    )
    await move(store, run_id, "preparing", "running")
    approval = await store.command(
        "approval.request", {"threadId": tid2, "runId": run_id, "request": ASK}
    )
    await store.command(
        "approval.claim", {"approvalId": approval["approvalId"], "decision": "approved"}
    )
    first = await store.command(
        "interaction.request", {"threadId": tid2, "runId": run_id, "request": ASK}
    )
    await store.command(
        "interaction.claim", {"interactionId": first["interactionId"], "response": {"ok": 1}}
    )
    second = await store.command(
        "interaction.request", {"threadId": tid2, "runId": run_id, "request": ASK}
    )
    out["runId"] = run_id
    out["approvalId"] = approval["approvalId"]
    out["interactions"] = [first["interactionId"], second["interactionId"]]

    # The library: skills, memories, a plugin with assets.
    out["skills"] = [
        (await store.command("skill.put", {"skill": {"name": "summarize", "body": "Sum up."}}))[
            "skillId"
        ],
        (
            await store.command(
                "skill.put",
                {"skill": {"name": "translate", "body": "To French.", "enabled": False}},
            )
        )["skillId"],
    ]
    await store.command("memory.write", {"key": "home", "value": "Lyon"})
    await store.command("memory.write", {"key": "prefs", "value": {"seat": "aisle", "n": 2}})
    await store.command(
        "plugin.install",
        {
            "plugin": {
                "id": "acme",
                "name": "Acme",
                "version": "1.2.3",
                "enabled": True,
                "manifest": {"entry": "main.js", "permissions": ["tabs"]},
            },
            "assets": [
                {
                    "path": "main.js",
                    "kind": "script",
                    "mime": "text/javascript",
                    "dataBase64": b64(b"run()\x00\xff"),
                },
                {"path": "css/a.css", "kind": "style", "mime": "text/css", "dataBase64": b64(b"")},
            ],
        },
    )
    return out


async def canon(value: Any) -> Any:
    """``value`` with each Blob as ``(BLOB, type, bytes)`` and NaN as :data:`NAN`."""
    if is_blob(value):
        return (BLOB, str(value.type), await blob_bytes(value))
    if isinstance(value, float) and math.isnan(value):
        return NAN
    if isinstance(value, dict):
        return {k: await canon(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [await canon(v) for v in value]
    return value


async def dump(store: PanelotStore) -> dict[str, list[Any]]:
    """Every table's records in primary-key order, Blobs read (see :func:`canon`)."""
    out: dict[str, list[Any]] = {}
    for name in PANELOT_V1_STORES:
        rows = await store.db.table(name).to_list()
        out[name] = [await canon(r) for r in rows]
    return out
