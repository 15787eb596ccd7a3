"""The command bus: every write arrives as a command and leaves a receipt.

``await bus.send({type, clientId, submissionId, payload})`` resolves to
``{"status": "completed", "response": ...}`` or
``{"status": "failed", "error": {name, message, field?}}``; it never raises for a
domain error. The handler's effect and the receipt are written in one transaction:
both land or neither. Replaying a completed submission returns the stored response
and writes nothing; replaying it with a different request fails with ConflictError.

The bus knows no command and no domain rule: it is given the registry
(:mod:`panelot.api.registry`) and a stack of layers (:mod:`panelot.bus.layer`): its
own (:mod:`panelot.bus.layers`: the retry after a version change, receipts,
prepare/undo) and the domain's (admission, :mod:`panelot.tree.admission`). It checks
the envelope, decodes the payload, and runs the command through the layers down to
its handler, in one read-write transaction over the tables the handler and the layers
name. Errors name a payload's fields by their path in the command: a section's
function that names its own parameter (``nodeId``, ``patch.title``) is reported as
``payload.nodeId``, ``payload.patch.title``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from panelot.bus.env import Env
from panelot.bus.handler import Call, Handler
from panelot.bus.layer import Layer, Run, Submission, TxRun
from panelot.bus.receipts import fingerprint
from panelot.codec import camel, decode
from panelot.errors import UnknownCommandError
from panelot.idb import Transaction
from panelot.idb.errors import PanelotError, ValidationError
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


def _wire_fields(cls: type) -> frozenset[str]:
    return frozenset(camel(f.name) for f in dataclasses.fields(cls))


async def _handle(tx: Transaction, sub: Submission) -> Any:
    """The bottom of the transaction stack: the handler itself."""
    return await sub.handler.run(tx, Call(sub.payload, sub.env, sub.prepared, sub.found))


def _stack(layers: Sequence[Layer]) -> Run:
    """The run of a command through ``layers`` (top first), down to its handler."""
    in_tx: TxRun = _handle
    for layer in reversed(layers):
        if layer.transaction is not None:
            in_tx = layer.transaction(in_tx)
    readers = tuple((layer.name, layer.read) for layer in layers if layer.read is not None)
    layer_tables = tuple(t for layer in layers for t in layer.tables)

    async def transaction(sub: Submission) -> Any:
        async def body(tx: Transaction) -> Any:
            reads = [(name, r) for name, read in readers if (r := read(tx, sub)) is not None]
            if len(reads) == 1:
                values = [await reads[0][1]]
            else:  # one round trip for every layer's read
                values = list(await tx.gather(*(r for _, r in reads))) if reads else []
            found = {name: value for (name, _), value in zip(reads, values, strict=True)}
            return await in_tx(tx, dataclasses.replace(sub, found=found))

        handler = sub.handler
        tables = (*layer_tables, *handler.tables)
        if handler.extra_tables is not None:
            tables += handler.extra_tables(sub.payload)
        return await sub.env.db.transaction("rw", tables, body, durability=handler.durability)

    run: Run = transaction
    for layer in reversed(layers):
        if layer.command is not None:
            run = layer.command(run)
    return run


class CommandBus:
    """Runs commands of a registry against a store through a stack of layers."""

    def __init__(
        self, env: Env, commands: Mapping[str, Handler[Any]], layers: Sequence[Layer]
    ) -> None:
        self.env = env
        self.commands = commands
        self.layers = tuple(layers)
        self._run = _stack(self.layers)

    async def send(self, command: Any) -> dict[str, Any]:
        """Run a command; return its terminal response envelope (never raises domain errors)."""
        try:
            return {"status": "completed", "response": await self.execute(command)}
        except PanelotError as exc:
            return {"status": "failed", "error": exc.to_json()}

    async def execute(self, command: Any) -> Any:
        """Run a command and return its response; raise the domain error on failure."""
        cmd, handler = _envelope(command, self.commands)
        payload = decode(handler.payload, cmd.get("payload", {}), "payload")
        sub = Submission(cmd, handler, payload, fingerprint(cmd), self.env)
        try:
            response = await self._run(sub)
            if handler.finish is not None:
                response = await handler.finish(self.env, payload, response)
            return response
        except PanelotError as exc:
            raise _in_payload(exc, _wire_fields(handler.payload)) from None
