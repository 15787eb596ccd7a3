"""What a layer of the bus is: a named wrapper around the run of a command.

The bus runs a command through a stack of layers, in the shape of Dexie's middleware
(``{stack, name, create(down) => up}``): each layer is small and named, and ``create``
takes the run below it and returns the run it puts in its place. A layer wraps either
stack, or both:

- ``command``: the run of a command outside its transaction (the retry after a
  version change, the ``prepare``/``undo`` steps);
- ``transaction``: the run inside the command's read-write transaction (the receipt,
  admission), down to the handler.

A layer may also ``read`` ahead: the bus issues every layer's read together, in one
round trip at the start of the transaction, and hands each layer (and the handler, as
``call.found``) what was read under the layer's name. ``tables`` are the tables the
layer adds to the transaction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from panelot.bus.env import Env
from panelot.bus.handler import Handler
from panelot.idb import Transaction

__all__ = ["Layer", "Run", "Submission", "TxRun"]


@dataclass(frozen=True, slots=True)
class Submission:
    """One command on its way through the layers.

    ``command`` is its envelope (``type``, ``clientId``, ``submissionId``,
    ``payload``), ``payload`` the decoded payload, ``fingerprint`` the receipt's
    fingerprint of the request. A layer hands the layers below it a copy with what it
    learned: ``prepared`` (the handler's ``prepare`` result) and ``found`` (what the
    layers read ahead in the transaction, by layer name).
    """

    command: dict[str, Any]
    handler: Handler[Any]
    payload: Any
    fingerprint: str
    env: Env
    prepared: Any = None
    found: Mapping[str, Any] = field(default_factory=dict)


Run = Callable[[Submission], Awaitable[Any]]
"""The run of a command outside its transaction; returns the command's response."""

TxRun = Callable[[Transaction, Submission], Awaitable[Any]]
"""The run of a command inside its transaction; returns the response (or a Staged one)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Layer:
    """One named layer: what it wraps in each stack, what it reads ahead, its tables."""

    name: str
    command: Callable[[Run], Run] | None = None
    transaction: Callable[[TxRun], TxRun] | None = None
    read: Callable[[Transaction, Submission], Awaitable[Any] | None] | None = None
    tables: tuple[str, ...] = ()
