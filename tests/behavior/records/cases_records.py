"""Each table's record is read by its section's reader; every id has one rule.

The stored objects stay what the seed's Dexie code writes (same keys, optional ones left
out while absent); readers of the tables Dexie code shares read past keys they do not
declare; ``threadId``, ``nodeId``, ``runId``, ``attachmentId`` and an attachment's
``nodeIds``, ``runIds`` and ``pluginId`` all refuse the same values.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, get_args

from behavior import Ctx, raises
from behavior.backup.fill import fill_everything
from panelot.attachments.records import AttachmentInput, get_record, put_attachment
from panelot.attachments.stored import Attachment, attachment_from_record
from panelot.backup.checks import READERS
from panelot.codec import decode
from panelot.idb import Transaction
from panelot.idb.errors import ValidationError
from panelot.runs.records import get_run
from panelot.runs.stored import RUN_STATES, RunState, run_from_record
from panelot.schema import PANELOT_V1_STORES
from panelot.tree.nodes import get_node, get_thread

BAD_IDS = ["", "x" * 201, "a\ud800b", 7, None]
"""Values every id refuses: empty, too long, a lone surrogate, not a string."""


async def case_every_table_has_a_reader_that_reads_what_the_store_writes(ctx: Ctx) -> None:
    store = await ctx.store()
    await fill_everything(store, attachments=5)
    assert set(READERS) == set(PANELOT_V1_STORES)
    for table in PANELOT_V1_STORES:
        rows = await store.db.table(table).to_list()
        assert rows, table
        for i, row in enumerate(rows):
            READERS[table](row, f"{table}[{i}]")


async def case_one_id_rule_for_every_id(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("ids")

    reads: list[tuple[str, Callable[[Transaction, Any], Awaitable[Any]]]] = [
        ("threadId", get_thread),
        ("nodeId", get_node),
        ("runId", get_run),
        ("attachmentId", get_record),
    ]
    tables = ["threads", "nodes", "runs", "attachments"]
    for name, read in reads:
        for bad in BAD_IDS:

            def body(tx: Transaction, read: Any = read, bad: Any = bad) -> Awaitable[Any]:
                return read(tx, bad)

            err = await raises(ValidationError, store.db.transaction("r", tables, body))
            assert getattr(err, "field", None) == name, (name, bad, err)

    def put(**ids: Any) -> Callable[[Transaction], Awaitable[Any]]:
        item = AttachmentInput(thread_id=tid, kind="file", mime="text/plain", data=b"x", **ids)
        return lambda tx: put_attachment(tx, item)

    for bad in ["", "a\ud800b", "x" * 201]:
        for ids, field in [
            ({"node_ids": [bad]}, "nodeIds[0]"),
            ({"run_ids": [bad]}, "runIds[0]"),
            ({"plugin_id": bad}, "pluginId"),
        ]:
            tables = ["threads", "nodes", "attachments"]
            err = await raises(ValidationError, store.db.transaction("rw", tables, put(**ids)))
            assert getattr(err, "field", None) == field, (ids, err)
    assert await store.db.table("attachments").count() == 0


async def case_records_are_written_key_for_key(ctx: Ctx) -> None:
    store = await ctx.store()
    filled = await fill_everything(store, attachments=2)
    run = await store.db.table("runs").get(filled["runId"])
    assert list(run) == [
        "id",
        "threadId",
        "createdAt",
        "updatedAt",
        "state",
        "input",
        "snapshot",
        "submissionId",
    ]
    pending = await store.db.table("interactions").get(filled["interactions"][1])
    assert list(pending) == ["id", "threadId", "runId", "status", "requestedAt", "request"]
    tid = filled["threads"][1]
    plain = AttachmentInput(thread_id=tid, kind="file", mime="text/plain", data=b"abc")
    record = await store.db.transaction(
        "rw", ["threads", "nodes", "attachments"], lambda tx: put_attachment(tx, plain)
    )
    stored = await store.db.table("attachments").get(record["id"])
    assert list(stored) == ["id", "threadId", "createdAt", "kind", "mime", "bytes", "size"]


async def case_shared_tables_readers_read_past_keys_other_code_adds(ctx: Ctx) -> None:
    store = await ctx.store()
    filled = await fill_everything(store, attachments=1)
    attachment = (await store.db.table("attachments").to_list())[0]
    read = attachment_from_record({**attachment, "addedByDexieCode": [1, 2]}, "a")
    assert isinstance(read, Attachment) and read.id == attachment["id"]
    run = await store.db.table("runs").get(filled["runId"])
    assert run_from_record({**run, "note": "x"}, "r").id == run["id"]
    # a known field still has its type
    err = await raises(ValidationError, _async(attachment_from_record, {**attachment, "size": -1}))
    assert getattr(err, "field", None) == "attachment.size", err
    err = await raises(ValidationError, _async(run_from_record, {**run, "threadId": ""}))
    assert getattr(err, "field", None) == "run.threadId", err
    # the run states are spelled once
    assert get_args(RunState) == RUN_STATES
    assert decode(Attachment, attachment).size == attachment["size"]


async def _async(read: Callable[[Any], Any], value: Any) -> Any:
    return read(value)
