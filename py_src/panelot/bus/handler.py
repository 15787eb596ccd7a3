"""What a command type and a query are: their payload, their tables and what they do.

A section's API module (:mod:`panelot.api`) declares each command as a
:class:`Handler` and each query as a :class:`Query`. The bus decodes the payload once,
strictly, into the handler's payload dataclass (:func:`panelot.codec.decode`), so a
field is named the same way in every error: by its path in the command
(``payload.threadId``, ``payload.patch.title``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from panelot.bus.env import Env
from panelot.clock import Clock
from panelot.idb import Durability, Transaction

__all__ = ["Call", "Handler", "Query", "Staged"]

P = TypeVar("P")
A = TypeVar("A")


@dataclass(frozen=True, slots=True)
class Staged:
    """A handler's response with the writes it has not awaited yet.

    The bus issues them together with the receipt, in one round trip of the same
    transaction; if any fails, the transaction aborts and nothing is written.
    """

    response: Any
    writes: tuple[Awaitable[Any], ...]


@dataclass(frozen=True, slots=True)
class Call(Generic[P]):
    """What a handler's ``run`` gets besides its transaction.

    ``prepared`` is what the handler's ``prepare`` returned (``None`` without one).
    ``found`` is what the bus's layers read ahead in this transaction, by layer name
    (the admission layer's ``"admission"``: the record of the payload's thread), so
    the handler need not read it again.
    """

    payload: P
    env: Env
    prepared: Any = None
    found: Mapping[str, Any] = field(default_factory=dict)

    @property
    def clock(self) -> Clock:
        """The store's clock."""
        return self.env.clock


@dataclass(frozen=True, slots=True, kw_only=True)
class Handler(Generic[P]):
    """One command type.

    ``payload`` is the dataclass its payload decodes into; ``tables`` the tables its
    transaction needs (``extra_tables`` adds those a given payload needs); ``run`` its
    work inside the transaction with the receipt. ``prepare``, when given, runs first,
    outside that transaction (steps that must finish before it, like stopping a
    thread's executions, or work in ``chrome.storage.local``); what it returns is
    handed to ``run`` as ``call.prepared``, and ``undo`` reverses it if the transaction
    then fails. ``status`` is what the receipt records. ``skips`` names the layers
    the command passes by (``thread.delete`` skips ``"admission"``, which refuses a
    command for a thread being deleted).
    ``durability`` is its transaction's (``"strict"`` where the caller goes on to do
    something irreversible once the command has answered; see docs/reliability.md).
    ``finish``, when given, runs after the transaction, on its response (a replayed
    one's too), for reads that must not happen inside it (a Blob's bytes, a foreign
    await in the browser): what it returns is the command's answer, while the receipt
    keeps the transaction's response.
    """

    payload: type[P]
    tables: tuple[str, ...]
    run: Callable[[Transaction, Call[P]], Awaitable[Any]]
    prepare: Callable[[Env, P], Awaitable[Any]] | None = None
    undo: Callable[[Env, P], Awaitable[None]] | None = None
    status: str = "completed"
    extra_tables: Callable[[P], tuple[str, ...]] | None = None
    skips: frozenset[str] = frozenset()
    durability: Durability = "default"
    finish: Callable[[Env, P, Any], Awaitable[Any]] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Query(Generic[A]):
    """One named read: ``args`` is the dataclass its arguments decode into."""

    args: type[A]
    run: Callable[[Env, A], Awaitable[Any]]
