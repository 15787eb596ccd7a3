"""The command bus: every write arrives as a command and leaves a receipt.

``await bus.send({type, clientId, submissionId, payload})`` resolves to
``{"status": "completed", "response": ...}`` or
``{"status": "failed", "error": {name, message, field?}}``; it never raises for a
domain error. The handler's effect and the receipt are written in one transaction:
both land or neither. Replaying a completed submission returns the stored response
and writes nothing; replaying it with a different request fails with ConflictError.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from panelot.api.attachments import ATTACHMENT_COMMANDS
from panelot.api.library import LIBRARY_COMMANDS
from panelot.api.messages import SEND_COMMANDS
from panelot.api.runs import RUN_COMMANDS
from panelot.api.settings import SETTINGS_COMMANDS
from panelot.attachments.tool_details import details_tables, split_details, store_details
from panelot.bus.admission import check_admission
from panelot.bus.executions import ExecutionRegistry
from panelot.bus.receipts import find_receipt, fingerprint, write_receipt
from panelot.clock import Clock, now_ms
from panelot.errors import ConflictError, UnknownCommandError
from panelot.idb import Database, Transaction
from panelot.idb.errors import PanelotError, ValidationError
from panelot.legacy.importer import LEGACY_COMMANDS
from panelot.lifecycle.thread_delete import CASCADE_TABLES, cascade_delete, stop_thread, unmark
from panelot.surrogates import check_well_formed
from panelot.tree.nodes import (
    LEAF,
    PATCHABLE,
    TREE_TABLES,
    append_node,
    create_thread,
    edit_message,
    regenerate,
    switch_branch,
    updated_thread,
)
from panelot.tree.records import thread_to_wire
from panelot.tree.tombstones import delete_message
from panelot.tree.transfer import import_thread

__all__ = ["COMMANDS", "CommandBus", "Handler", "Staged"]

Run = Callable[[Transaction, dict[str, Any], Clock], Awaitable[Any]]
ThreadRun = Callable[[Transaction, dict[str, Any], Clock, Any], Awaitable[Any]]
Prepare = Callable[["CommandBus", dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Staged:
    """A handler's response with the writes it has not awaited yet.

    The bus issues them together with the receipt, in one round trip of the same
    transaction; if any fails, the transaction aborts and nothing is written.
    """

    response: Any
    writes: tuple[Awaitable[Any], ...]


@dataclass(frozen=True, slots=True)
class Handler:
    """One command type: the tables its transaction needs and what it does.

    ``prepare``, when given, runs first, outside the receipt's transaction (for steps
    that must finish before it, like stopping a thread's executions), and
    ``undo_prepare`` reverses it if the main transaction then fails; ``status`` is the
    status its receipt records.
    """

    tables: tuple[str, ...]
    run: Run
    prepare: Prepare | None = None
    status: str = "completed"
    undo_prepare: Prepare | None = None
    extra_tables: Callable[[dict[str, Any]], tuple[str, ...]] | None = None
    """Tables a given payload needs beyond ``tables`` (a tool result's details attachment)."""
    run_on_thread: ThreadRun | None = None
    """Used instead of ``run`` when the bus has read the payload's thread record for its
    admission check: it gets that record (or ``None``) and need not read it again."""
    admits_deleting: bool = False
    """Whether the command runs for a thread marked ``deleting`` (only ``thread.delete``,
    whose own prepare set the mark); every other command is refused for it."""


def arg(
    payload: dict[str, Any], name: str, kind: type | tuple[type, ...], required: bool = True
) -> Any:
    """Return ``payload[name]`` checked against ``kind``; ValidationError names the field."""
    if name not in payload or payload[name] is None:
        if required:
            raise ValidationError(f"payload.{name}: is required", field=f"payload.{name}")
        return None
    value = payload[name]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ValidationError(f"payload.{name}: has the wrong type", field=f"payload.{name}")
    if isinstance(value, str) and len(value) > 100_000:
        raise ValidationError(f"payload.{name}: is too long", field=f"payload.{name}")
    return value


def _node_result(node: Any) -> dict[str, Any]:
    return {"nodeId": node.id, "seq": node.seq, "leafId": node.id}


async def _empty_thread(tx: Transaction, title: str) -> str | None:
    """The newest thread with no message yet, titled ``title`` and otherwise plain."""
    plain = [
        t
        for t in await tx.table("threads").to_list()
        if t.get("leafId") is None
        and t.get("title") == title
        and not (t.get("archived") or t.get("pinned") or t.get("deleting"))
        and not (t.get("folderId") or t.get("tags") or t.get("preset"))
    ]
    if not plain:
        return None
    return str(max(plain, key=lambda t: (t.get("createdAt") or 0, str(t["id"])))["id"])


async def _thread_create(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    title = arg(p, "title", str, False) or ""
    if arg(p, "reuseEmpty", bool, False) and not {"folderId", "tags", "preset"} & set(p):
        reused = await _empty_thread(tx, title)
        if reused is not None:
            return {"threadId": reused, "reused": True}
    thread = await create_thread(
        tx,
        title=title,
        folder_id=arg(p, "folderId", str, False),
        tags=arg(p, "tags", list, False),
        preset=arg(p, "preset", str, False),
        clock=clock,
    )
    return {"threadId": thread.id}


async def _thread_update(tx: Transaction, p: dict[str, Any], clock: Clock) -> Staged:
    raw_thread = await tx.table("threads").get(arg(p, "threadId", str))
    return await _thread_update_on(tx, p, clock, raw_thread)


def _check_expected(raw_thread: Any, expect: dict[str, Any] | None) -> None:
    """Refuse an update made on a view that is out of date (``payload.expect``).

    ``expect`` holds the values the caller saw (say ``{"title": "New chat"}``); when the
    stored thread no longer has one of them, the update is refused with a ConflictError
    naming that field, and nothing is written.
    """
    if not expect or not isinstance(raw_thread, dict):
        return
    for name, seen in expect.items():
        if name not in PATCHABLE:
            raise ValidationError(
                f"payload.expect.{name}: cannot be expected", field=f"payload.expect.{name}"
            )
        current = raw_thread.get(name)
        if current != seen or type(current) is not type(seen):
            raise ConflictError(
                f"payload.expect.{name}: the thread's {name} changed since it was read",
                field=f"payload.expect.{name}",
            )


async def _thread_update_on(
    tx: Transaction, p: dict[str, Any], clock: Clock, raw_thread: Any
) -> Staged:
    _check_expected(raw_thread, arg(p, "expect", dict, False))
    merged = updated_thread(raw_thread, arg(p, "threadId", str), arg(p, "patch", dict), clock)
    wire = thread_to_wire(merged)
    return Staged({"thread": wire}, (tx.table("threads").put(wire),))


async def _append(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    parent = p["parentId"] if "parentId" in p else LEAF
    if parent is not None and parent != LEAF and not isinstance(parent, str):
        raise ValidationError(
            "payload.parentId: must be a node id or null", field="payload.parentId"
        )
    thread_id, node_type = arg(p, "threadId", str), arg(p, "type", str)
    payload, offload = arg(p, "payload", dict), None
    if node_type == "tool_result":  # large UI details go to an attachment
        payload, offload = split_details(payload)
    node = await append_node(tx, thread_id, node_type, payload, parent, clock)
    if offload is not None:
        await store_details(tx, offload, node, clock)
    return _node_result(node)


async def _edit(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    node = await edit_message(
        tx, arg(p, "threadId", str), arg(p, "nodeId", str), arg(p, "payload", dict), clock
    )
    return _node_result(node)


async def _regenerate(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    node = await regenerate(
        tx, arg(p, "threadId", str), arg(p, "userNodeId", str), arg(p, "payload", dict), clock
    )
    return _node_result(node)


async def _delete(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    return await delete_message(tx, arg(p, "threadId", str), arg(p, "nodeId", str))


async def _switch(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    return {
        "leafId": await switch_branch(tx, arg(p, "threadId", str), arg(p, "nodeId", str), clock)
    }


async def _import(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    return await import_thread(tx, arg(p, "data", dict), clock)


async def _delete_prepare(bus: CommandBus, p: dict[str, Any]) -> None:
    await stop_thread(bus.db, bus.executions, arg(p, "threadId", str), bus.clock())


async def _delete_undo(bus: CommandBus, p: dict[str, Any]) -> None:
    await unmark(bus.db, arg(p, "threadId", str), bus.clock())


async def _delete_thread(tx: Transaction, p: dict[str, Any], clock: Clock) -> Any:
    return await cascade_delete(tx, arg(p, "threadId", str))


COMMANDS: dict[str, Handler] = {
    "thread.create": Handler(("threads",), _thread_create),
    "thread.update": Handler(("threads",), _thread_update, run_on_thread=_thread_update_on),
    "message.append": Handler(TREE_TABLES, _append, extra_tables=details_tables),
    "message.edit": Handler(TREE_TABLES, _edit),
    "message.regenerate": Handler(TREE_TABLES, _regenerate),
    "message.delete": Handler(TREE_TABLES, _delete),
    "branch.switch": Handler(TREE_TABLES, _switch),
    "thread.import": Handler(TREE_TABLES, _import),
    "thread.delete": Handler(
        CASCADE_TABLES,
        _delete_thread,
        _delete_prepare,
        "acknowledged",
        _delete_undo,
        admits_deleting=True,
    ),
    **{name: Handler(*spec) for name, spec in LIBRARY_COMMANDS.items()},
    **{name: Handler(*spec) for name, spec in RUN_COMMANDS.items()},
    **{name: Handler(*spec) for name, spec in ATTACHMENT_COMMANDS.items()},
    **{name: Handler(*spec) for name, spec in SEND_COMMANDS.items()},
    **{name: Handler(*spec) for name, spec in SETTINGS_COMMANDS.items()},
    **{name: Handler(*spec) for name, spec in LEGACY_COMMANDS.items()},
}
"""Every command type and its handler."""


def _envelope(command: Any) -> tuple[dict[str, Any], Handler]:
    if not isinstance(command, dict):
        raise ValidationError("command: must be an object", field="command")
    kind = command.get("type")
    handler = COMMANDS.get(kind) if isinstance(kind, str) else None
    if handler is None:
        raise UnknownCommandError(
            f"type: unknown command {kind!r}; known: {sorted(COMMANDS)}", field="type"
        )
    for name in ("clientId", "submissionId"):
        value = command.get(name)
        if not isinstance(value, str) or not 0 < len(value) <= 200:
            raise ValidationError(f"{name}: must be a string of 1 to 200 characters", field=name)
        check_well_formed(value, name)  # a receipt's key: no lone surrogates
    payload = command.get("payload", {})
    if not isinstance(payload, dict):
        raise ValidationError("payload: must be an object", field="payload")
    return command, handler


class CommandBus:
    """Runs commands against a database, each with its receipt, in one transaction."""

    def __init__(
        self, db: Database, clock: Clock = now_ms, executions: ExecutionRegistry | None = None
    ) -> None:
        self.db = db
        self.clock = clock
        self.executions = executions or ExecutionRegistry()

    async def send(self, command: Any) -> dict[str, Any]:
        """Run a command; return its terminal response envelope (never raises domain errors)."""
        try:
            return {"status": "completed", "response": await self.execute(command)}
        except PanelotError as exc:
            return {"status": "failed", "error": exc.to_json()}

    async def execute(self, command: Any) -> Any:
        """Run a command and return its response; raise the domain error on failure."""
        cmd, handler = _envelope(command)
        fp = fingerprint(cmd)
        payload = cmd.get("payload", {})
        thread_id = payload.get("threadId")
        guard = (
            isinstance(thread_id, str)
            and "threads" in handler.tables
            and not handler.admits_deleting
        )

        async def body(tx: Transaction) -> Any:
            lookup = find_receipt(tx, cmd["clientId"], cmd["submissionId"], fp)
            if guard:  # one round trip for the receipt and the admission check
                receipt, thread = await tx.gather(lookup, tx.table("threads").get(thread_id))
            else:
                receipt, thread = await lookup, None
            if receipt is not None:
                return receipt["response"]
            check_admission(thread)
            if guard and handler.run_on_thread is not None:
                response = await handler.run_on_thread(tx, payload, self.clock, thread)
            else:
                response = await handler.run(tx, payload, self.clock)
            if isinstance(response, Staged):
                now, status = self.clock(), handler.status
                record = write_receipt(tx, cmd, fp, response.response, now, status)
                await tx.gather(*response.writes, record)
                return response.response
            await write_receipt(tx, cmd, fp, response, self.clock(), handler.status)
            return response

        tables = ("commandReceipts", *handler.tables)
        if handler.extra_tables is not None:
            tables += handler.extra_tables(payload)
        if handler.prepare is None:
            return await self.db.transaction("rw", tables, body)
        replay = await self.db.transaction(
            "r",
            ["commandReceipts"],
            lambda tx: find_receipt(tx, cmd["clientId"], cmd["submissionId"], fp),
        )
        if replay is not None:
            return replay["response"]
        await handler.prepare(self, payload)
        try:
            return await self.db.transaction("rw", tables, body)
        except PanelotError:
            if handler.undo_prepare is not None:
                await handler.undo_prepare(self, payload)
            raise
