"""The command bus: every write arrives as a command and leaves a receipt.

``await bus.send({type, clientId, submissionId, payload})`` resolves to
``{"status": "completed", "response": ...}`` or
``{"status": "failed", "error": {name, message, field?}}``; it never raises for a
domain error. The handler's effect and the receipt are written in one transaction:
both land or neither. Replaying a completed submission returns the stored response
and writes nothing; replaying it with a different request fails with ConflictError.

The bus knows no command: it is given the registry (:mod:`panelot.api.registry`).
Errors name a payload's fields by their path in the command: a section's function
that names its own parameter (``nodeId``, ``patch.title``) is reported as
``payload.nodeId``, ``payload.patch.title``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from panelot.bus.admission import check_admission
from panelot.bus.env import Env
from panelot.bus.handler import Call, Handler, Staged
from panelot.bus.receipts import find_receipt, fingerprint, write_receipt
from panelot.codec import camel, decode
from panelot.errors import UnknownCommandError
from panelot.idb import Database, Transaction
from panelot.idb.errors import (
    AbortError,
    DatabaseClosedError,
    PanelotError,
    TransactionInactiveError,
    ValidationError,
)
from panelot.surrogates import check_well_formed

__all__ = ["CommandBus"]


def _envelope(
    command: Any, commands: Mapping[str, Handler[Any]]
) -> tuple[dict[str, Any], Handler[Any]]:
    if not isinstance(command, dict):
        raise ValidationError("command: must be an object", field="command")
    kind = command.get("type")
    handler = commands.get(kind) if isinstance(kind, str) else None
    if handler is None:
        raise UnknownCommandError(
            f"type: unknown command {kind!r}; known: {sorted(commands)}", field="type"
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


def _in_payload(exc: PanelotError, fields: frozenset[str]) -> PanelotError:
    """``exc`` with a field named by a section in its own terms renamed into the payload."""
    field = exc.field
    if not field or field.startswith("payload") or field.split(".")[0].split("[")[0] not in fields:
        return exc
    exc.field = f"payload.{field}"
    if exc.message.startswith(f"{field}:"):
        exc.message = f"payload.{exc.message}"
    return exc


_LOST = (DatabaseClosedError, AbortError, TransactionInactiveError)
"""What a transaction raises when its connection was closed under it."""


def _connection_lost(db: Database, exc: PanelotError, reopened: int) -> bool:
    """Whether ``exc`` came from a connection another context closed (``versionchange``)."""
    if not isinstance(exc, _LOST):
        return False
    try:
        return db.reopened != reopened or db.core.versionchanged
    except PanelotError:  # closed on purpose (db.close()): not for a retry
        return False


def _wire_fields(cls: type) -> frozenset[str]:
    return frozenset(camel(f.name) for f in dataclasses.fields(cls))


class CommandBus:
    """Runs commands of a registry against a store, each with its receipt, in one transaction."""

    def __init__(self, env: Env, commands: Mapping[str, Handler[Any]]) -> None:
        self.env = env
        self.commands = commands

    async def send(self, command: Any) -> dict[str, Any]:
        """Run a command; return its terminal response envelope (never raises domain errors)."""
        try:
            return {"status": "completed", "response": await self.execute(command)}
        except PanelotError as exc:
            return {"status": "failed", "error": exc.to_json()}

    async def execute(self, command: Any) -> Any:
        """Run a command and return its response; raise the domain error on failure."""
        cmd, handler = _envelope(command, self.commands)
        raw = cmd.get("payload", {})
        payload = decode(handler.payload, raw, "payload")
        fp = fingerprint(cmd)
        db = self.env.db
        reopened = db.reopened
        try:
            try:
                return await self._run(cmd, handler, payload, fp)
            except PanelotError as exc:
                if not _connection_lost(db, exc, reopened):
                    raise
            # Another context's upgrade closed the connection under the command: the
            # database reopens on the next transaction, and the command runs once more.
            # Its receipt makes this safe: if the first attempt committed, the retry
            # finds the receipt and returns the stored response, writing nothing.
            return await self._run(cmd, handler, payload, fp)
        except PanelotError as exc:
            raise _in_payload(exc, _wire_fields(handler.payload)) from None

    async def _run(self, cmd: dict[str, Any], handler: Handler[Any], payload: Any, fp: str) -> Any:
        env, clock = self.env, self.env.clock
        thread_id = getattr(payload, "thread_id", None)
        guard = isinstance(thread_id, str) and "threads" in handler.tables
        guard = guard and not handler.admits_deleting
        prepared: Any = None

        async def body(tx: Transaction) -> Any:
            lookup = find_receipt(tx, cmd["clientId"], cmd["submissionId"], fp)
            if guard:  # one round trip for the receipt and the admission check
                receipt, thread = await tx.gather(lookup, tx.table("threads").get(thread_id))
            else:
                receipt, thread = await lookup, None
            if receipt is not None:
                return receipt["response"]
            check_admission(thread)
            call = Call(payload, env, prepared, thread, guard)
            response = await handler.run(tx, call)
            if isinstance(response, Staged):
                record = write_receipt(tx, cmd, fp, response.response, clock(), handler.status)
                await tx.gather(*response.writes, record)
                return response.response
            await write_receipt(tx, cmd, fp, response, clock(), handler.status)
            return response

        tables = ("commandReceipts", *handler.tables)
        if handler.extra_tables is not None:
            tables += handler.extra_tables(payload)
        if handler.prepare is None:
            return await env.db.transaction("rw", tables, body, durability=handler.durability)
        replay = await env.db.transaction(
            "r",
            ["commandReceipts"],
            lambda tx: find_receipt(tx, cmd["clientId"], cmd["submissionId"], fp),
        )
        if replay is not None:
            return replay["response"]
        prepared = await handler.prepare(env, payload)
        try:
            return await env.db.transaction("rw", tables, body, durability=handler.durability)
        except PanelotError:
            if handler.undo is not None:
                await handler.undo(env, payload)
            raise
