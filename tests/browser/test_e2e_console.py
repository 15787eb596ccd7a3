"""End-to-end tests of the debugging console (console.html in the real extension).

The console runs in the extension's origin, so it sees the database the side panel
writes: data is made by clicking through the panel, then inspected by typing Python.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from browser_harness import READY_TIMEOUT_MS
from e2e_support import shot
from panelot.testing import (
    API_KEY,
    ExtensionContext,
    PageStore,
    new_thread,
    open_panel,
    send_message,
)


@pytest.fixture(scope="module")
def data(panel: Page) -> dict[str, str]:
    """A thread made through the panel UI: two turns, one regenerated reply, a tombstone."""
    thread_id = new_thread(panel)
    send_message(panel, "Console question one")
    send_message(panel, "Console question two")
    first_reply = panel.locator(".msg.assistant").first
    first_reply.hover()
    first_reply.locator("[data-action=delete]").click()
    panel.click("#dialog-ok")
    panel.wait_for_function("() => document.querySelectorAll('.msg.assistant').length === 1")
    leaf = panel.evaluate("() => window.panelotApp.chat.snapshot.leafId")
    return {"thread_id": thread_id, "leaf": leaf}


@pytest.fixture(scope="module")
def console(panelot_module_context: ExtensionContext, data: dict[str, str]) -> Iterator[Page]:
    page = panelot_module_context.context.new_page()
    page.set_viewport_size({"width": 1000, "height": 700})
    page.goto(panelot_module_context.url("console.html"))
    page.wait_for_function("() => document.body.dataset.ready === '1'", timeout=READY_TIMEOUT_MS)
    assert "(from the memory snapshot) · database panelot_v1" in page.inner_text("#state")
    yield page
    page.close()


def run(page: Page, source: str) -> str:
    """Run source as typed; return the output it added (without the echoed input)."""
    before = page.evaluate("() => document.getElementById('output').children.length")
    page.evaluate("(s) => window.panelotConsole.run(s)", source)
    return str(
        page.evaluate(
            "(n) => [...document.getElementById('output').children].slice(n)"
            ".filter(e => !e.classList.contains('echo')).map(e => e.textContent).join('\\n')",
            before,
        )
    )


def type_line(page: Page, text: str) -> None:
    """Type into the prompt and press Enter, waiting for the run to finish."""
    runs = page.evaluate("() => window.__consoleRuns ?? 0")
    page.fill("#input", text)
    page.press("#input", "Enter")
    if page.text_content("#prompt") == ">>>":
        page.wait_for_function("(n) => (window.__consoleRuns ?? 0) > n", arg=runs)


def test_banner_lists_the_helpers(console: Page) -> None:
    banner = console.inner_text(".banner")
    for helper in (
        "store",
        "threads(",
        "tree(thread_id)",
        "context(thread_id)",
        "check(thread_id)",
        "export(thread_id",
        "receipts(",
        "describe()",
        "settings()",
    ):
        assert helper in banner
    assert "panelot_v1" in banner


def test_helpers_see_the_panels_data(console: Page, data: dict[str, str]) -> None:
    tid = data["thread_id"]
    listed = run(console, "threads()")
    assert tid in listed and "Console question one" in listed

    tree = run(console, f"tree({tid[:8]!r})")  # a unique prefix is enough
    assert f"thread {tid}" in tree
    assert "#1 user_message" in tree and "x deleted" in tree
    assert "<- leaf" in tree and data["leaf"][:8] in tree.split("<- leaf")[0].splitlines()[-1]

    context = run(console, f"[m['role'] for m in context({tid!r})['messages']]")
    assert context == "['user', 'user', 'assistant']"  # the tombstoned reply is skipped
    assert run(console, f"check({tid!r})['ok']") == "True"
    assert run(console, f"export({tid!r})['format']") == "'panelot.thread'"
    assert "# Console question one" in run(console, f"export({tid!r}, 'markdown')")
    receipts = run(console, "receipts('sidepanel', 50)")
    assert "message.delete" in receipts and "message.append" in receipts
    described = run(console, "sorted(s['name'] for s in describe()['stores'])")
    assert "'nodes'" in described and "'commandReceipts'" in described
    shot(console, "console-helpers")


def _first_thread(console: Page) -> str:
    """The id of the first thread ``threads()`` lists."""
    return run(console, "threads()[0]['id']").strip("'")


def test_helper_calls_inside_an_awaited_call_are_awaited(console: Page) -> None:
    """Issue 35, #6: "TypeError: 'coroutine' object is not subscriptable"."""
    first = _first_thread(console)
    query = "(await store.query('thread.get', {'threadId': threads()[0]['id']}))['id']"
    assert run(console, query) == repr(first)
    assert run(console, "await tree(threads()[0]['id'])").startswith(f"thread {first}")
    # Inside another helper's call, and inside a plain call of the result.
    assert run(console, "len(tree(threads()[0]['id']).splitlines()) > 2") == "True"
    assert run(console, "await_me = lambda value: value") == ""
    assert run(console, "len(await_me(threads())[0]['id'])") == str(len(first))
    # In a comprehension: its iterable and its element; a generator expression too.
    assert run(console, "[tree(t['id']).startswith('thread ') for t in threads()][:1]") == "[True]"
    total = run(console, "sum(len(tree(t['id'])) for t in threads())")
    assert total == run(console, "sum([len(tree(t['id'])) for t in threads()])")
    assert int(total) > 0


def test_statements_joined_with_semicolons_await_their_helpers(console: Page) -> None:
    """Issue 35, #6: "multiple statements found while compiling a single statement"."""
    first = _first_thread(console)
    out = run(console, "x = threads(); y = tree(x[0]['id']); y.splitlines()[0][:43]")
    assert out == repr(f"thread {first}")
    assert run(console, "x[0]['id'], y.splitlines()[0][:43]") == repr((first, f"thread {first}"))
    shot(console, "console-nested-helpers")


def test_a_thread_not_found_says_so_with_the_typed_line_alone(console: Page) -> None:
    """Issue 35, #6: runtime frames, and a chained StopIteration holding the thread list."""
    assert run(console, "tree('zzzz')") == (
        "Traceback (most recent call last):\n"
        '  File "<console>", line 1, in <module>\n'
        "    tree('zzzz')\n"
        "LookupError: no thread 'zzzz': no thread id is or starts with it"
    )


def test_an_error_from_inside_the_store_shows_only_typed_frames(console: Page) -> None:
    """Issue 35, #6: ~15 frames of the runtime under an error raised deep in the store."""
    out = run(console, "if True:\n    await store.query('thread.get', {'threadId': 'zzzz'})\n")
    assert out == (
        "Traceback (most recent call last):\n"
        '  File "<console>", line 2, in <module>\n'
        "    await store.query('thread.get', {'threadId': 'zzzz'})\n"
        "panelot.idb.errors.NotFoundError: thread 'zzzz' does not exist"
    )


def test_settings_are_shown_with_secrets_masked(console: Page) -> None:
    out = run(console, "settings()")
    assert "providers" in out and "cred:" in out
    assert API_KEY not in out
    masked = run(console, "from panelot.console import mask_secrets; mask_secrets({'apiKey': 'x'})")
    assert masked == "{'apiKey': '••••'}"


def test_store_writes_from_the_console_show_in_queries(console: Page) -> None:
    out = run(console, "tid = await store.create_thread('made in console'); tid")
    thread_id = out.strip().strip("'")
    assert "made in console" in run(console, "threads()")
    assert run(
        console, f"(await store.query('thread.get', {{'threadId': {thread_id!r}}}))['title']"
    ) == ("'made in console'")
    run(console, f"await store.command('thread.delete', {{'threadId': {thread_id!r}}})")


def test_typing_multiline_history_completion_and_tracebacks(console: Page) -> None:
    # A block: Enter after a colon (or inside an indented block) adds a newline;
    # Enter on the empty line after it runs the whole block.
    console.fill("#input", "")
    console.type("#input", "def double(x):")
    console.press("#input", "Enter")
    assert console.input_value("#input") == "def double(x):\n"
    console.type("#input", "    return x * 2")
    console.press("#input", "Enter")
    runs = console.evaluate("() => window.__consoleRuns ?? 0")
    console.press("#input", "Enter")
    console.wait_for_function("(n) => window.__consoleRuns > n", arg=runs)
    type_line(console, "double(21)")
    assert console.locator(".line.result").last.text_content() == "42"
    # An incomplete expression continues at the "..." prompt.
    type_line(console, "total = (1 +")
    assert console.text_content("#prompt") == "..."
    type_line(console, "2)")
    assert console.text_content("#prompt") == ">>>"
    type_line(console, "total")
    assert console.locator(".line.result").last.text_content() == "3"
    type_line(console, "double(21)")

    console.press("#input", "ArrowUp")
    assert console.input_value("#input") == "double(21)"
    console.fill("#input", "")

    console.fill("#input", "dou")
    console.press("#input", "Tab")
    assert console.input_value("#input") == "double("
    console.fill("#input", "")

    type_line(console, "print('to stdout'); 1/0")
    assert "to stdout" in console.locator(".line.stdout").last.text_content()
    error = console.locator(".line.error").last.text_content() or ""
    assert "Traceback" in error and "ZeroDivisionError: division by zero" in error

    type_line(console, "tree('no-such-thread')")
    assert "LookupError" in (console.locator(".line.error").last.text_content() or "")
    type_line(console, "x = )")
    assert "SyntaxError" in (console.locator(".line.error").last.text_content() or "")
    shot(console, "console-typing")


# ---- hostile content renders inert in the console and the panel ------------------------

HOSTILE = [
    "<img src=x onerror=\"window.__pwned='img'\">",
    "<script>window.__pwned='script'</script>",
    "<a href=\"javascript:window.__pwned='link'\">x</a>",
    "<svg onload=\"window.__pwned='svg'\"><circle r=5></circle></svg>",
    '<iframe src="javascript:alert(1)"></iframe>',
]
HOSTILE_TEXT = " ".join(HOSTILE)

#: A thread.export holding the payloads in a title, text, a tool call and result, a
#: system notice and a file name: the shape of hostile imported data.
_HOSTILE_EXPORT = {
    "format": "panelot.thread",
    "version": 1,
    "exportedAt": 1,
    "thread": {
        "id": "t",
        "title": HOSTILE[0] + HOSTILE[1],
        "createdAt": 1,
        "updatedAt": 1,
        "leafId": "n5",
        "tags": [HOSTILE[3]],
    },
    "nodes": [
        {
            "id": "n1",
            "threadId": "t",
            "parentId": None,
            "seq": 1,
            "ts": 1,
            "type": "user_message",
            "payload": {
                "content": [
                    {"type": "text", "text": HOSTILE_TEXT},
                    {
                        "type": "file",
                        "attachmentId": "a1",
                        "name": HOSTILE[0] + ".txt",
                        "evicted": True,
                    },
                ]
            },
        },
        {
            "id": "n2",
            "threadId": "t",
            "parentId": "n1",
            "seq": 2,
            "ts": 1,
            "type": "assistant_message",
            "payload": {
                "content": [{"type": "text", "text": HOSTILE_TEXT}],
                "model": HOSTILE[1],
                "connectionId": "c",
            },
        },
        {
            "id": "n3",
            "threadId": "t",
            "parentId": "n2",
            "seq": 3,
            "ts": 1,
            "type": "tool_call",
            "payload": {
                "itemId": "i",
                "toolName": HOSTILE[3],
                "params": {HOSTILE[0]: HOSTILE[2]},
                "level": "L1",
            },
        },
        {
            "id": "n4",
            "threadId": "t",
            "parentId": "n3",
            "seq": 4,
            "ts": 1,
            "type": "tool_result",
            "payload": {
                "itemId": "i",
                "ok": True,
                "contentForLlm": [{"type": "text", "text": HOSTILE_TEXT}],
                "details": {"html": HOSTILE_TEXT},
            },
        },
        {
            "id": "n5",
            "threadId": "t",
            "parentId": "n4",
            "seq": 5,
            "ts": 1,
            "type": "system_notice",
            "payload": {"text": HOSTILE_TEXT, "level": "warning"},
        },
    ],
}

_INERT = """(root) => {
  const scope = document.querySelector(root);
  return {
    pwned: window.__pwned ?? null,
    scripts: scope.querySelectorAll('script').length,
    imgs: [...scope.querySelectorAll('img')].filter(i => !i.src.startsWith('blob:')).length,
    svgs: scope.querySelectorAll('svg:not(.ico)').length,
    iframes: document.querySelectorAll('iframe').length,
    jsLinks: [...scope.querySelectorAll('a')].filter(a => a.href.startsWith('javascript')).length,
    handlers: [...scope.querySelectorAll('*')].filter(e =>
      [...e.attributes].some(a => a.name.startsWith('on'))).length,
  };
}"""
_CLEAN = {
    "pwned": None,
    "scripts": 0,
    "imgs": 0,
    "svgs": 0,
    "iframes": 0,
    "jsLinks": 0,
    "handlers": 0,
}


def _import_hostile(page: Page) -> str:
    imported = PageStore(page, client_id="xss").send("thread.import", {"data": _HOSTILE_EXPORT})
    return str(imported["threadId"])


def test_hostile_content_is_inert_in_the_console(console: Page) -> None:
    dialogs: list[str] = []
    console.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    thread_id = _import_hostile(console)
    printed = "\n".join(
        run(console, source)
        for source in (
            "threads()",
            f"tree({thread_id!r})",
            f"context({thread_id!r})",
            f"export({thread_id!r}, 'markdown')",
            f"export({thread_id!r})",
            f"print({HOSTILE_TEXT!r})",
            f"{HOSTILE_TEXT!r}",
        )
    )
    console.wait_for_timeout(300)
    assert console.evaluate(_INERT, "#output") == _CLEAN
    assert dialogs == []
    for payload in HOSTILE:
        assert payload in printed  # shown literally, as text
    run(console, f"await store.command('thread.delete', {{'threadId': {thread_id!r}}})")


def test_hostile_imported_data_is_inert_in_the_panel(
    panelot_module_context: ExtensionContext,
) -> None:
    context, extension_id = panelot_module_context.context, panelot_module_context.extension_id
    panel = open_panel(context, extension_id)
    dialogs: list[str] = []
    errors: list[str] = []
    panel.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    panel.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        thread_id = _import_hostile(panel)
        panel.evaluate("() => window.panelotApp.refreshThreads()")
        panel.wait_for_selector(f"[data-thread-id='{thread_id}'] .thread-open")
        assert panel.evaluate(_INERT, "#thread-list") == _CLEAN
        panel.click(f"[data-thread-id='{thread_id}'] .thread-open")
        panel.wait_for_function("(id) => window.panelotApp.chat.threadId === id", arg=thread_id)
        panel.wait_for_selector("#messages .msg")
        panel.wait_for_timeout(300)
        shot(panel, "panel-hostile-import")
        assert panel.evaluate(_INERT, "#app") == _CLEAN
        assert dialogs == [] and errors == []
        shown = panel.inner_text("#messages")
        assert HOSTILE[0] in shown and HOSTILE[1] in shown  # text, literally
        assert panel.inner_text("#view-title") == HOSTILE[0] + HOSTILE[1]
        PageStore(panel, client_id="xss").envelope("thread.delete", {"threadId": thread_id})
    finally:
        panel.close()
