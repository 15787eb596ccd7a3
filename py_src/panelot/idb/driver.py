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

from collections.abc import Callable, Coroutine
from typing import Any

from .core import Request
from .errors import PrematureCommitError

__all__ = ["Stepper", "in_body"]

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
        self._pending = (value, error)
        if self._running:
            return
        self._running = True
        try:
            while self._pending is not None and not self.done:
                value, error = self._pending
                self._pending = None
                self._step(value, error)
        finally:
            self._running = False

    def _step(self, value: Any, error: BaseException | None) -> None:
        global _depth
        _depth += 1
        try:
            yielded = self._coro.throw(error) if error is not None else self._coro.send(value)
        except StopIteration as stop:
            _depth -= 1
            self._end(stop.value, self._premature)
            return
        except BaseException as exc:  # the body's own error aborts the transaction
            _depth -= 1
            self._end(None, self._premature or exc)
            return
        _depth -= 1
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
