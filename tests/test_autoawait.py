"""The console's rewriting of helper calls into awaited calls (panelot.console.autoawait)."""

from __future__ import annotations

import ast

import pytest

from loops import run_async
from panelot.console import autoawait
from panelot.console.autoawait import await_helpers

NAMES = {"threads", "tree", "context"}


@pytest.mark.parametrize(
    ("typed", "runs"),
    [
        ('threads()[0]["id"]', '(await threads())[0]["id"]'),
        ("x = [m for m in context(t)['m']]", "x = [m for m in (await context(t))['m']]"),
        (
            "for t in threads():\n    print(tree(t))\n",
            "for t in (await threads()):\n    print((await tree(t)))\n",
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


@pytest.mark.parametrize(
    ("typed", "runs"),
    [
        # A helper call inside another call, and inside that call's result.
        ("len(await_me(threads())[0])", "len(await_me((await threads()))[0])"),
        ('tree(threads()[0]["id"])', '(await tree((await threads())[0]["id"]))'),
        # Inside the argument of an ``await`` typed by the user (issue 35, #6).
        (
            "(await store.query('thread.get', {'threadId': threads()[0]['id']}))['title']",
            "(await store.query('thread.get', {'threadId': (await threads())[0]['id']}))['title']",
        ),
        ('await tree(threads()[0]["id"])', 'await tree((await threads())[0]["id"])'),
        # Statements joined with ``;`` stay one line (the console compiles one statement).
        (
            'x = threads(); y = tree(x[0]["id"])',
            'x = (await threads()); y = (await tree(x[0]["id"]))',
        ),
        ("threads();  # quiet", "(await threads());  # quiet"),  # ``;`` and comment kept
        # Comprehensions: their elements and their iterables.
        (
            '{t["id"]: tree(t["id"]) for t in threads()}',
            '{t["id"]: (await tree(t["id"])) for t in (await threads())}',
        ),
        ("print(*threads(), sep=tree('é'))", "print(*(await threads()), sep=(await tree('é')))"),
        # A generator expression that would await becomes a list comprehension (``[``/``]``
        # inside its parentheses); one awaiting only its first iterable stays.
        (
            'sum(len(tree(t["id"])) for t in threads())',
            'sum([len((await tree(t["id"]))) for t in (await threads())])',
        ),
        ("list(t for t in threads())", "list(t for t in (await threads()))"),
        ("f((tree(a) for a in b), 1)", "f(([(await tree(a)) for a in b]), 1)"),
        ("any(x for y in ys for x in tree(y))", "any([x for y in ys for x in (await tree(y))])"),
        (
            "sum(\n  len(tree(t)) for t in threads() if t\n)",
            "sum([\n  len((await tree(t))) for t in (await threads()) if t\n])",
        ),
        # Lines and columns stay where they were typed (non-ASCII text before a call too).
        (
            'x = ("é",\n  threads()[0]); tree("é")[0]',
            'x = ("é",\n  (await threads())[0]); (await tree("é"))[0]',
        ),
    ],
)
def test_helper_calls_are_awaited_at_any_depth(typed: str, runs: str) -> None:
    assert await_helpers(typed, NAMES) == runs


def test_no_call_is_awaited_twice() -> None:
    once = await_helpers('tree(threads()[0]["id"])', NAMES)
    assert await_helpers(once, NAMES) == once
    assert await_helpers("await (await threads())", NAMES) == "await (await threads())"


def test_if_the_inserted_text_ever_parsed_otherwise_the_tree_is_unparsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(autoawait, "_insert", lambda source, calls, listed: source)
    assert await_helpers('x = threads(); y = tree(x[0]["id"])\n', NAMES) == (
        "x = await threads(); y = await tree(x[0]['id'])\n"
    )


async def _threads() -> list[dict[str, str]]:
    return [{"id": "t1"}, {"id": "t2"}]


async def _tree(thread_id: str) -> str:
    return f"tree of {thread_id}"


class _Store:
    async def query(self, name: str, args: dict[str, str]) -> dict[str, str]:
        return {"title": f"{name} {args['threadId']}"}


def _run(source: str) -> dict[str, object]:
    """Run the rewritten ``source`` as the console does (top-level await); its globals."""
    code = compile(
        await_helpers(source, NAMES),
        "<console>",
        "exec",
        flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
    )
    scope: dict[str, object] = {"threads": _threads, "tree": _tree, "store": _Store()}

    async def main() -> None:
        outcome = eval(code, scope)  # noqa: S307 - the test's own source
        if outcome is not None:
            await outcome

    run_async(main())  # Playwright's loop may run on this thread
    return scope


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('r = threads()[0]["id"]', "t1"),
        ('r = len(tree(threads()[1]["id"]))', len("tree of t2")),
        ('x = threads(); r = tree(x[0]["id"])', "tree of t1"),
        (
            "r = (await store.query('thread.get', {'threadId': threads()[0]['id']}))['title']",
            "thread.get t1",
        ),
        ('r = [tree(t["id"]) for t in threads()]', ["tree of t1", "tree of t2"]),
        ('r = await tree(threads()[0]["id"])', "tree of t1"),
        ('r = sum(len(tree(t["id"])) for t in threads())', 2 * len("tree of t1")),
        ('r = list(t["id"] for t in threads())', ["t1", "t2"]),
    ],
)
def test_the_rewritten_statement_runs_with_top_level_await(source: str, expected: object) -> None:
    assert _run(source)["r"] == expected
