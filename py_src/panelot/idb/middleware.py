"""Middleware over the core protocol, in the shape of Dexie's DBCore middleware.

A middleware is a function from the handler below it to a handler: a handler takes
one :class:`~panelot.idb.core.Request` (a ``GetMany``, ``Query``, ``Count`` or
``Mutate``) and returns its result. The bottom handler hands the request to the
core. ``db.use(create, name=..., level=...)`` adds one; higher levels see requests
first. A handler runs inside the transaction, so it may only await requests (by
calling the handler below, or awaiting a request of its own, such as a read before a
write): anything else would let IndexedDB commit, and is refused as any body's is.

:func:`through` runs a transaction body with every request it awaits passed down the
handlers. A :class:`~panelot.idb.core.Batch` (from :func:`~panelot.idb.driver.gather`)
is passed as its parts, which still reach the core together. Without middleware a
body runs as it is, at no cost. The change feed's tracking
(:mod:`panelot.idb.observe.track`) is the layer under all of them: it sees what the
middleware finally asks of the core.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Generator
from dataclasses import dataclass
from typing import Any, TypeAlias

from panelot.idb.core import Batch, Request
from panelot.idb.driver import gather
from panelot.idb.errors import PanelotError

__all__ = ["Create", "Handler", "Middleware", "build", "through"]

Handler: TypeAlias = Callable[[Request], Awaitable[Any]]
"""What answers a request: a middleware's handler, or the core at the bottom."""

Create: TypeAlias = Callable[[Handler], Handler]
"""A middleware: given the handler below, return the handler above it."""


@dataclass(frozen=True, slots=True)
class Middleware:
    """One registered middleware."""

    create: Create
    name: str
    level: int


async def _core(req: Request) -> Any:
    """The bottom handler: the request goes to the transaction's core."""
    return await req


def build(stack: list[Middleware]) -> Handler:
    """The handler chain of ``stack``: lowest level nearest the core."""
    handler: Handler = _core
    for mw in sorted(stack, key=lambda m: m.level):
        handler = mw.create(handler)
    return handler


class _Pass:
    """Hand something that is not a request up to the driver (which refuses it)."""

    __slots__ = ("thing",)

    def __init__(self, thing: Any) -> None:
        self.thing = thing

    def __await__(self) -> Generator[Any, Any, Any]:
        return (yield self.thing)


async def _settled(handler: Handler, req: Request) -> Any:
    try:
        return await handler(req)
    except PanelotError as exc:
        return exc


async def _handle(handler: Handler, req: Request) -> Any:
    if isinstance(req, Batch):
        if req.settled:
            return await gather(*(_settled(handler, r) for r in req.requests))
        return await gather(*(handler(r) for r in req.requests))
    return await handler(req)


async def through(handler: Handler, body: Coroutine[Any, Any, Any]) -> Any:
    """Run ``body``, passing each request it awaits through ``handler``."""
    value: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                yielded = body.throw(error) if error is not None else body.send(value)
            except StopIteration as stop:
                return stop.value
            try:
                if isinstance(yielded, Request):
                    value, error = await _handle(handler, yielded), None
                else:
                    value, error = await _Pass(yielded), None
            except GeneratorExit:
                raise
            except BaseException as exc:  # the body sees its request's error
                value, error = None, exc
    finally:
        body.close()
