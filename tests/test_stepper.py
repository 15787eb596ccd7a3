"""The transaction driver ends a body outside any exception handler (panelot.idb.driver).

The browser core's ``_finish`` resumes the task waiting for a readonly transaction at
once (a Waiter): if it ran while the driver handled the body's ``StopIteration``, every
error that task raised next would carry it as its context, and with it the query's whole
result (the console once printed the entire thread list under ``tree('zzzz')``).
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from panelot.idb.driver import Stepper
from panelot.idb.errors import PanelotError


async def _returns() -> list[str]:
    return ["a whole query result"] * 3


async def _raises() -> None:
    raise PanelotError("the body's own error")


@pytest.mark.parametrize("body", [_returns, _raises])
def test_finish_runs_outside_any_exception_handler(body: Any) -> None:
    seen: list[object] = []

    def finish(result: Any, error: BaseException | None) -> None:
        seen.append(sys.exc_info()[1])
        try:
            raise LookupError("raised by whoever resumed")
        except LookupError as exc:
            seen.append(exc.__context__)

    Stepper(body(), lambda request: None, finish).start()
    assert seen == [None, None]
