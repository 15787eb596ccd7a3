"""The receipt layer: a replay returns the stored response; a first run writes its receipt.

Inside the transaction, the receipt is read ahead (with the other layers' reads, in one
round trip): a completed submission returns its stored response and writes nothing;
otherwise the handler runs and the receipt is written in the same transaction, with
the handler's staged writes when it hands them over (:class:`~panelot.bus.Staged`).
A command with a ``prepare`` step first looks its receipt up in a read-only
transaction, so a replay does not prepare again.
"""

from __future__ import annotations

from typing import Any

from panelot.bus.handler import Staged
from panelot.bus.layer import Layer, Run, Submission, TxRun
from panelot.bus.receipts import Receipt, find_receipt, write_receipt
from panelot.idb import Transaction

__all__ = ["RECEIPTS"]

_NAME = "receipts"


def _find(tx: Transaction, sub: Submission) -> Any:
    command = sub.command
    return find_receipt(tx, command["clientId"], command["submissionId"], sub.fingerprint)


def _before_prepare(down: Run) -> Run:
    async def replay(sub: Submission) -> Any:
        if sub.handler.prepare is None:
            return await down(sub)
        found: Receipt | None = await sub.env.db.transaction(
            "r", ["commandReceipts"], lambda tx: _find(tx, sub)
        )
        if found is not None:
            return found.response
        return await down(sub)

    return replay


def _in_transaction(down: TxRun) -> TxRun:
    async def receipt(tx: Transaction, sub: Submission) -> Any:
        found: Receipt | None = sub.found[_NAME]
        if found is not None:
            return found.response
        response = await down(tx, sub)
        handler, now = sub.handler, sub.env.clock()
        if isinstance(response, Staged):
            record = write_receipt(
                tx, sub.command, sub.fingerprint, response.response, now, handler.status
            )
            await tx.gather(*response.writes, record)
            return response.response
        await write_receipt(tx, sub.command, sub.fingerprint, response, now, handler.status)
        return response

    return receipt


RECEIPTS = Layer(
    name=_NAME,
    command=_before_prepare,
    transaction=_in_transaction,
    read=_find,
    tables=("commandReceipts",),
)
"""Writes each command's receipt with its effect, and answers a replay from it."""
