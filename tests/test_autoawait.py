"""The console's rewriting of helper calls into awaited calls (panelot.autoawait)."""

from __future__ import annotations

import pytest

from loops import run_async
from panelot.autoawait import await_helpers

NAMES = {"threads", "tree", "context"}


@pytest.mark.parametrize(
    ("typed", "runs"),
    [
        ('threads()[0]["id"]', "(await threads())[0]['id']"),
        ("x = [m for m in context(t)['m']]", "x = [m for m in (await context(t))['m']]"),
        (
            "for t in threads():\n    print(tree(t))\n",
            "for t in await threads():\n    print(await tree(t))\n",
        ),
        ("await threads()", "await threads()"),  # awaited already
        ("def f():\n    return threads()\n", "def f():\n    return threads()\n"),  # not at top
        ("g = lambda: tree(1)", "g = lambda: tree(1)"),
        ("store.query('x')", "store.query('x')"),  # not a helper
        ("for t in threads():", "for t in threads():"),  # incomplete: as typed
        ("threads(", "threads("),
        ("x = 1  # threads()", "x = 1  # threads()"),  # no call: untouched, comment kept
    ],
)
def test_helper_calls_are_awaited_at_the_top_level_only(typed: str, runs: str) -> None:
    assert await_helpers(typed, NAMES) == runs


def test_the_rewritten_statement_runs_with_top_level_await() -> None:
    async def threads() -> list[dict[str, str]]:
        return [{"id": "t1"}]

    code = compile(
        await_helpers('result = threads()[0]["id"]', NAMES),
        "<console>",
        "exec",
        flags=__import__("ast").PyCF_ALLOW_TOP_LEVEL_AWAIT,
    )
    scope: dict[str, object] = {"threads": threads}

    async def main() -> None:
        outcome = eval(code, scope)  # noqa: S307 - the test's own source
        if outcome is not None:
            await outcome

    run_async(main())  # Playwright's loop may run on this thread
    assert scope["result"] == "t1"
