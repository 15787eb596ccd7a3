"""The transaction driver: steps a transaction body from the core's callbacks.

A body's ``await`` of a :class:`~panelot.idb.core.Request` suspends the coroutine and
hands the request to :class:`Stepper`, which gives it to the core. The core calls
:meth:`Stepper.resume` with the result, synchronously (memory core) or from inside
the IndexedDB request's success callback (browser core). Either way the next request
is issued before control returns to the event loop, so the native transaction stays
active for as many sequential awaits as the body needs.

Anything else the body awaits (an asyncio future, ``asyncio.sleep``, a JS promise)
would hand control to the event loop and let IndexedDB commit half the body. The
stepper refuses it: it throws :class:`PrematureCommitError` into the body and fails
the transaction, which the core then aborts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

from panelot.idb.core import Batch, Request
from panelot.idb.errors import PanelotError, PrematureCommitError

__all__ = ["Stepper", "gather", "in_body"]

_depth = 0


def in_body() -> bool:
    """True while a transaction body is running (between two of its requests)."""
    return _depth > 0


Issue = Callable[[Request], None]
"""Give a request to the core; the core later calls ``Stepper.resume`` with its outcome."""

Finish = Callable[[Any, BaseException | None], None]
"""Called once, with the body's return value or the error that ends the transaction."""


class Stepper:
    """Drives one transaction body coroutine, one request at a time."""

    __slots__ = ("_coro", "_finish", "_issue", "_pending", "_premature", "_running", "done")

    def __init__(self, coro: Coroutine[Any, Any, Any], issue: Issue, finish: Finish) -> None:
        self._coro = coro
        self._issue = issue
        self._finish = finish
        self._pending: tuple[Any, BaseException | None] | None = None
        self._running = False
        self._premature: PrematureCommitError | None = None
        self.done = False

    def start(self) -> None:
        """Run the body up to its first request."""
        self.resume(None, None)

    def resume(self, value: Any, error: BaseException | None = None) -> None:
        """Continue the body with a request's result, or throw the request's error into it.

        Re-entrant calls (a core that answers synchronously) are queued and picked up by
        the loop below, so a long body never deepens the Python stack.
        """
        if self.done:
            return
        if self._running:
            self._pending = (value, error)
            return
        self._running = True
        try:
            self._step(value, error)
            while self._pending is not None and not self.done:
                value, error = self._pending
                self._pending = None
                self._step(value, error)
        finally:
            self._running = False

    def _step(self, value: Any, error: BaseException | None) -> None:
        global _depth
        _depth += 1
        ended: tuple[Any, BaseException | None] | None = None
        try:
            yielded = self._coro.throw(error) if error is not None else self._coro.send(value)
        except StopIteration as stop:
            ended = (stop.value, self._premature)
        except BaseException as exc:  # the body's own error aborts the transaction
            ended = (None, self._premature or exc)
        _depth -= 1
        if ended is not None:
            # Ended outside the except clauses: a caller resumed from ``_finish`` at once
            # (the browser core's Waiter) must not run "during handling" of the body's
            # StopIteration, or its own errors would chain to it, and keep the result alive.
            self._end(*ended)
            return
        if self._premature is not None:
            # The body caught the premature-commit error and went on: stop it here.
            self._coro.close()
            self._end(None, self._premature)
        elif isinstance(yielded, Request):
            self._issue(yielded)
        else:
            self._premature = PrematureCommitError(
                "a transaction body awaited something that is not an operation of its "
                f"transaction ({type(yielded).__name__}); IndexedDB would have committed "
                "half of the body, so the transaction was aborted and nothing was written"
            )
            self._pending = (None, self._premature)

    def _end(self, result: Any, error: BaseException | None) -> None:
        self.done = True
        self._finish(result, error)


def _advance(step: Generator[Any, Any, Any], value: Any, error: BaseException | None) -> Any:
    """Run one awaitable to its next request; a :class:`_Done` wraps its return value."""
    try:
        yielded = step.throw(error) if error is not None else step.send(value)
    except StopIteration as stop:
        return _Done(stop.value)
    if not isinstance(yielded, Request):
        step.close()
        raise PrematureCommitError(
            "an operation gathered in a transaction awaited something that is not an "
            f"operation of its transaction ({type(yielded).__name__})"
        )
    return yielded


class _Done:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


async def gather(*operations: Awaitable[Any]) -> list[Any]:
    """Run several operations of one transaction at once; return their results in order.

    Each operation (``table.get(...)``, ``collection.last()``, ``table.put(...)``, or a
    coroutine awaiting such operations) runs up to its next request; the pending
    requests are issued together as one :class:`~panelot.idb.core.Batch`, so the body
    waits for one IndexedDB round trip instead of one per operation. IndexedDB still
    runs the requests in the order given. The first error raised by an operation is
    raised here, after the others are closed, like ``asyncio.gather``.
    """
    steps = [op.__await__() for op in operations]
    results: list[Any] = [None] * len(steps)
    pending: dict[int, Request] = {}
    try:
        for i, step in enumerate(steps):
            out = _advance(step, None, None)
            if isinstance(out, _Done):
                results[i] = out.value
            else:
                pending[i] = out
        while pending:
            order = list(pending)
            requests = [pending.pop(i) for i in order]
            if len(requests) == 1 or any(isinstance(r, Batch) for r in requests):
                outcomes = [await _settle(r) for r in requests]
            else:
                outcomes = await Batch(requests, settled=True)
            for i, outcome in zip(order, outcomes, strict=True):
                failed = isinstance(outcome, PanelotError)
                out = _advance(steps[i], None if failed else outcome, outcome if failed else None)
                if isinstance(out, _Done):
                    results[i] = out.value
                else:
                    pending[i] = out
    except BaseException:
        for step in steps:
            step.close()
        raise
    return results


async def _settle(req: Request) -> Any:
    """Await ``req``; its error, if any, is returned instead of raised."""
    try:
        return await req
    except PanelotError as exc:
        return exc
