"""Replies rendered as Markdown by the vendored libraries (extension/panel_markdown.mjs).

In the real extension (its own profile, the stub provider):

* tables, nested lists and links render; links open in a new tab with no opener or
  referrer, and a link or image to anything but http(s) or mailto stays literal text;
* a code block has its language label, a Copy button that puts the block's exact text on
  the clipboard, and highlighting; highlight.js is not loaded until such a block shows,
  and nothing the panel loads comes from outside the extension;
* a streaming reply renders as it arrives, its complete code blocks highlighted.

In a light page of the extension, the renderer itself: a corpus of HTML and URL payloads
renders inert, and a code block is highlighted only once its closing fence is in, and
only once however often a streaming reply is rendered again.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, Request

from e2e_support import open_module_page, shot
from panelot.testing import (
    ExtensionContext,
    PageStore,
    StubProvider,
    last_id,
    new_thread,
    open_thread,
    wait_ready,
    wait_reply,
)

#: The stub's reply to a message containing "markdown" (panelot/testing/stub_provider.py).
MARKDOWN_REPLY: str = importlib.import_module(StubProvider.__module__).MARKDOWN_REPLY

RICH_REPLY = """\
| Name | Count |
| :--- | ---: |
| apples | 3 |
| <b>pears</b> | 5 |

1. first
   - nested one
     - deeper
   - nested two
2. second

See [docs](https://example.com/docs "The docs"), <me@example.com> and https://auto.example/path.

Not links: [bad](javascript:window.__xss='md') [data](data:text/html,hi) [rel](/local)

![pic](https://example.com/p.png)
"""

CODE = 'def greet(name):\n    return f"hi {name}"  # <script>window.__xss=1</script>'
CODE_REPLY = f"Run this:\n\n```python\n{CODE}\n```\n\nand plain:\n\n```\nno language here\n```\n"


def loads(requests: list[str], origin: str) -> dict[str, list[str]]:
    """Which vendor files a page requested, and what it requested from elsewhere.

    (Chromium's Resource Timing leaves out chrome-extension:// loads: the test watches the
    context's requests instead.)
    """
    return {
        "vendor": sorted(url.rsplit("/", 1)[-1] for url in requests if "/vendor/" in url),
        "foreign": [url for url in requests if not url.startswith(origin)],
    }


@pytest.fixture(scope="module")
def rich(panel: Page, store: PageStore) -> Page:
    """The panel showing a conversation whose reply is RICH_REPLY."""
    thread_id = store.send("thread.create", {"title": "Rich"})["threadId"]
    store.seed_turn(thread_id, "show me", RICH_REPLY)
    open_thread(panel, thread_id)
    panel.wait_for_selector(".msg.assistant .msg-body table")
    return panel


def test_tables_render(rich: Page) -> None:
    table = rich.locator(".msg.assistant .msg-body table")
    cells = table.evaluate(
        """(t) => [...t.rows].map((r) => [...r.cells].map((c) =>
             [c.tagName, c.textContent, c.getAttribute('align')]))"""
    )
    assert cells == [
        [["TH", "Name", "left"], ["TH", "Count", "right"]],
        [["TD", "apples", "left"], ["TD", "3", "right"]],
        [["TD", "<b>pears</b>", "left"], ["TD", "5", "right"]],  # raw HTML stays text
    ]
    shot(rich, "panel-markdown-rich")


def test_nested_lists_render(rich: Page) -> None:
    body = rich.locator(".msg.assistant .msg-body")
    items = body.evaluate(
        """(b) => [...b.querySelectorAll(':scope > ol > li')].map((li) => ({
             text: li.firstChild.textContent.trim(),
             nested: [...li.querySelectorAll(':scope > ul > li')].map((n) => ({
               text: n.firstChild.textContent.trim(),
               deeper: [...n.querySelectorAll(':scope > ul > li')].map((d) => d.textContent),
             })),
           }))"""
    )
    assert items == [
        {
            "text": "first",
            "nested": [
                {"text": "nested one", "deeper": ["deeper"]},
                {"text": "nested two", "deeper": []},
            ],
        },
        {"text": "second", "nested": []},
    ]


def test_links_open_safely_and_other_schemes_stay_text(rich: Page) -> None:
    body = rich.locator(".msg.assistant .msg-body")
    links = body.evaluate(
        """(b) => [...b.querySelectorAll('a')].map((a) => [a.textContent,
             a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')])"""
    )
    safe = ["_blank", "noopener noreferrer"]
    assert links == [
        ["docs", "https://example.com/docs", *safe],
        ["me@example.com", "mailto:me@example.com", *safe],
        ["https://auto.example/path", "https://auto.example/path", *safe],
        ["pic", "https://example.com/p.png", *safe],  # an image is a link, never loaded
    ]
    assert body.locator("a").first.get_attribute("title") == "The docs"
    text = body.inner_text()
    assert "[bad](javascript:window.__xss='md') [data](data:text/html,hi) [rel](/local)" in text
    assert body.locator("img").count() == 0
    assert rich.evaluate("() => window.__xss") is None


def test_code_blocks_get_a_label_a_copy_button_and_highlighting(
    panelot_module_context: ExtensionContext, panel: Page
) -> None:
    context, extension_id = panelot_module_context.context, panelot_module_context.extension_id
    origin = f"chrome-extension://{extension_id}/"
    requests: list[str] = []

    def watch(request: Request) -> None:
        # The new page's requests only: not the module's panel's, nor the service worker's.
        if not request.service_worker and request.frame.page is not panel:
            requests.append(request.url)

    context.on("request", watch)
    page = panelot_module_context.open_panel()  # a fresh page on the list: no code shown yet
    try:
        assert loads(requests, origin) == {
            "vendor": ["marked.esm.js", "purify.es.mjs"],
            "foreign": [],
        }

        store = PageStore(page)
        thread_id = store.send("thread.create", {"title": "Code"})["threadId"]
        store.seed_turn(thread_id, "code please", CODE_REPLY)
        open_thread(page, thread_id)
        page.wait_for_selector(".code-block code.hljs .hljs-keyword")
        shot(page, "panel-markdown-code")

        assert loads(requests, origin) == {
            "vendor": ["highlight.min.js", "marked.esm.js", "purify.es.mjs"],
            "foreign": [],
        }
        blocks = page.locator(".msg.assistant .code-block")
        assert blocks.locator(".code-lang").all_inner_texts() == ["python", "text"]
        python, plain = blocks.all()
        code = python.locator("pre code")
        assert code.text_content() == CODE
        assert python.locator(".hljs-keyword").first.text_content() == "def"
        assert python.locator(".hljs-string").count() > 0
        assert python.locator(".hljs-comment").text_content() == "# <script>window.__xss=1</script>"
        assert page.locator("#messages script").count() == 0
        assert plain.locator("pre code").text_content() == "no language here"
        assert plain.locator("pre code span").count() == 0  # no language: shown as it is

        # Chromium refuses a grant for the extension's (opaque) origin; a context-wide
        # one applies to it. This context is the module's own.
        context.grant_permissions(["clipboard-read", "clipboard-write"])
        page.evaluate("() => navigator.clipboard.writeText('before')")
        # The button says "Copied" for 1.5 s once the clipboard holds the text: keep what
        # it says, so a slow poll cannot miss it.
        python.locator(".code-copy").evaluate(
            """(button) => { window.__copyLabels = [];
                 new MutationObserver(() => window.__copyLabels.push(button.textContent))
                   .observe(button, {childList: true, characterData: true, subtree: true}); }"""
        )
        python.locator(".code-copy").click()
        page.wait_for_function("() => window.__copyLabels.includes('Copied')")
        assert page.evaluate("() => navigator.clipboard.readText()") == CODE
        assert page.evaluate("() => window.__xss") is None
    finally:
        context.remove_listener("request", watch)
        page.close()


def test_a_streaming_reply_renders_and_highlights_its_complete_blocks(
    panel: Page, panelot_stub: StubProvider
) -> None:
    page = panel
    new_thread(page)
    before_id = last_id(page)
    # The reply's end waits: the test sees it mid-stream, however slow the machine.
    panelot_stub.release = threading.Event()
    try:
        page.fill("#input", "Reply in markdown, please")
        page.press("#input", "Enter")
        streaming = page.locator("[data-streaming] .msg-body")
        # The whole text is in (its last link complete) while the reply is still streaming.
        streaming.locator("a[href='https://example.com/docs']").wait_for()
        streaming.locator(".code-block code.hljs .hljs-built_in").wait_for()
        assert streaming.locator("h4").inner_text() == "Plan"
        assert streaming.locator(".code-lang").inner_text() == "python"
        assert streaming.locator("li").all_inner_texts() == ["first item", "second item"]
        assert streaming.locator("a").all_inner_texts() == ["the docs"]
    finally:
        panelot_stub.release.set()
        panelot_stub.release = None
    wait_reply(page, before_id)
    assert page.locator(".msg.assistant .code-block code.hljs").count() == 1


def open_panel_without(context: ExtensionContext, *files: str) -> Page:
    """A fresh panel on the list whose requests for ``vendor/<file>`` answer 404."""
    page = context.context.new_page()
    page.set_viewport_size({"width": 400, "height": 720})
    page.add_init_script("localStorage.removeItem('panelot.lastThread')")
    for name in files:
        page.route(f"**/vendor/{name}", lambda route: route.fulfill(status=404, body="gone"))
    page.goto(context.url("sidepanel.html"))
    wait_ready(page, panel=True)
    return page


def test_without_the_libraries_replies_show_as_plain_text(
    panelot_module_context: ExtensionContext,
) -> None:
    page = open_panel_without(panelot_module_context, "marked.esm.js")
    try:
        store = PageStore(page)
        thread_id = store.send("thread.create", {"title": "Plain"})["threadId"]
        store.seed_turn(thread_id, "no libraries", RICH_REPLY)
        open_thread(page, thread_id)
        body = page.locator(".msg.assistant .msg-body")
        assert body.locator(".md-plain").text_content() == RICH_REPLY  # as text, whole
        assert body.locator("table, a, img").count() == 0
    finally:
        page.close()


def test_without_highlight_js_code_blocks_show_plain(
    panelot_module_context: ExtensionContext,
) -> None:
    page = open_panel_without(panelot_module_context, "highlight.min.js")
    try:
        store = PageStore(page)
        thread_id = store.send("thread.create", {"title": "No highlighting"})["threadId"]
        store.seed_turn(thread_id, "code, no highlighting", CODE_REPLY)
        with page.expect_console_message(lambda m: "highlight.js did not load" in m.text):
            open_thread(page, thread_id)  # the first code block asks for highlight.js
        blocks = page.locator(".msg.assistant .code-block")
        assert blocks.locator(".code-lang").all_inner_texts() == ["python", "text"]
        assert blocks.first.locator("pre code").text_content() == CODE
        # A reply shown after the failure is plain too.
        store.seed_turn(thread_id, "more code", CODE_REPLY)
        page.locator(".msg.assistant .code-block").nth(2).wait_for()
        assert page.locator(".msg.assistant code.hljs, .msg.assistant code span").count() == 0
    finally:
        page.close()


# ---- the renderer in a light page of the extension -------------------------------------

PAYLOADS = [
    "<img src=x onerror=\"window.__xss='img'\">",
    "<script>window.__xss='script'</script>",
    "<svg onload=\"window.__xss='svg'\"><circle r=5></circle></svg>",
    '<a href="javascript:window.__xss=1">a</a> <iframe src="javascript:alert(1)"></iframe>',
    "<details open ontoggle=\"window.__xss='details'\">x</details>",
    "<style>body{display:none}</style><form><input autofocus onfocus=alert(1)></form>",
    "[click me](javascript:window.__xss='link')",
    "[upper](JaVaScRiPt:window.__xss='upper')",
    "[entity](&#106;avascript:window.__xss='entity')",
    "[spaced](  javascript:window.__xss='spaced')",
    "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[vb](vbscript:msgbox(1))",
    "<javascript:window.__xss='autolink'>",
    "![img](javascript:window.__xss='image')",
    "![remote](https://example.com/track.png)",
    '[quote](https://example.com/" onmouseover="window.__xss=1)',
    '[ref]\n\n[ref]: javascript:window.__xss="ref"',
    "```html\n<img src=x onerror=\"window.__xss='code'\">\n```",
    "`<img src=x onerror=\"window.__xss='span'\">`",
    "| <img src=x onerror=alert(1)> | b |\n|---|---|\n| <script>x</script> | [t](javascript:1) |",
    "- [ ] task <b onclick=alert(1)>x</b>\n- [x] done",
    '<!-- comment --><math><mi xlink:href="javascript:alert(1)">x</mi></math>',
]

RENDER_ALL = """async (payloads) => {
  const { renderMarkdown, markdownReady } = await import('/panel_markdown.mjs');
  await markdownReady();
  window.__xss = undefined;
  const out = document.createElement('div');
  out.id = 'out';
  document.body.append(out);
  return payloads.map((text) => {
    const box = document.createElement('div');
    box.append(renderMarkdown(text));
    out.append(box);
    return box.innerHTML;
  });
}"""

INERT = """() => {
  const all = [...document.querySelectorAll('#out *')];
  return {
    tags: [...new Set(all.map((e) => e.tagName.toLowerCase()))].filter((t) =>
      !['div', 'p', 'br', 'strong', 'em', 'del', 'code', 'pre', 'a', 'ul', 'ol', 'li',
        'blockquote', 'h3', 'h4', 'h5', 'h6', 'hr', 'table', 'thead', 'tbody', 'tr', 'th',
        'td', 'span', 'button'].includes(t)),
    handlers: all.filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
    styles: all.filter((e) => e.hasAttribute('style')).length,
    links: [...document.querySelectorAll('#out a')].map((a) =>
      [a.getAttribute('href'), a.target, a.rel]),
    xss: window.__xss ?? null,
  };
}"""


@pytest.fixture(scope="module")
def module_page(panelot_module_context: ExtensionContext) -> Iterator[Page]:
    """A light page of the extension (no runtime) to import the renderer in."""
    page = open_module_page(panelot_module_context.context, panelot_module_context.extension_id)
    yield page
    page.close()


def test_the_renderer_keeps_every_payload_inert(module_page: Page) -> None:
    page = module_page
    rendered: list[str] = page.evaluate(RENDER_ALL, PAYLOADS)
    # A broken image of our own fires its error event: by then an injected one would have.
    page.evaluate(
        """() => { const probe = new Image();
             probe.addEventListener('error', () => { window.__probe = 1; });
             probe.src = 'x'; }"""
    )
    page.wait_for_function("() => window.__probe === 1")
    inert: dict[str, Any] = page.evaluate(INERT)
    assert inert["tags"] == [] and inert["handlers"] == 0 and inert["styles"] == 0
    assert inert["xss"] is None
    safe = ["_blank", "noopener noreferrer"]
    assert inert["links"] == [
        ["https://example.com/track.png", *safe],  # an image: a link, never loaded
        ["https://example.com/", *safe],  # the autolink in the broken [quote](…)
    ]
    texts = page.evaluate(
        "() => [...document.querySelectorAll('#out > div')].map(d => d.innerText)"
    )
    assert texts[0] == PAYLOADS[0]  # raw HTML shows as its characters
    assert texts[6] == PAYLOADS[6]  # a javascript: link as its Markdown source
    assert "<img" not in "".join(rendered).replace("&lt;img", "")


HIGHLIGHTING = """async () => {
  const { renderMarkdown, markdownReady } = await import('/panel_markdown.mjs');
  await markdownReady();
  const show = (text) => {
    const box = document.createElement('div');
    box.append(renderMarkdown(text));
    document.body.append(box);
    return box.querySelector('code');
  };
  // The first block with a language loads highlight.js; wait until it is highlighted.
  const first = show('```js\\nlet a = 1;\\n```');
  await new Promise((resolve) => {
    const seen = () => first.classList.contains('hljs');
    if (seen()) return resolve();
    new MutationObserver(() => seen() && resolve())
      .observe(first, { attributes: true, childList: true });
  });
  const hljs = (await import('/vendor/highlight.min.js')).default;
  let calls = 0;
  const highlight = hljs.highlight;
  hljs.highlight = (...args) => { calls += 1; return highlight.apply(hljs, args); };
  const open = show('```python\\nx = [1,\\n');
  const result = { open: [open.className, open.dataset.closed, open.children.length] };
  const text = '```python\\nx = [1,\\n  2]\\n```\\nmore text';
  const closed = [];
  for (let i = 0; i < 5; i++) closed.push(show(text));
  result.closed = closed.map((c) => [c.className, c.querySelectorAll('span').length > 0]);
  result.calls = calls;
  hljs.highlight = highlight;
  return result;
}"""


def test_a_block_is_highlighted_once_closed_and_only_once(module_page: Page) -> None:
    result = module_page.evaluate(HIGHLIGHTING)
    assert result["open"] == ["", "0", 0]  # still being written: plain text
    assert result["closed"] == [["hljs", True]] * 5
    assert result["calls"] == 1  # rendered five times (as while streaming), highlighted once


#: Replies streamed a character at a time: every construct that a later line changes.
STREAMED = [
    MARKDOWN_REPLY,
    RICH_REPLY,
    "Title\n===\ntext\n\nSub\n---\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\nafter",
    "- a\n- b\n\n  still b\n\n- c\n\n1. one\n2. two\n   1. deep\n\n> quote\ncontinued\n> more",
    "    indented code\n    more\n\ntext\n***\n<div>\n*html*\n</div>\n\n~~~js\nlet x;\n~~~\nend",
    "See [the ref][r] and [r].\n\n[r]: https://example.com/ref\n\nMore [r] text.",
]

STREAM_EQUALS_WHOLE = """async (texts) => {
  const { renderMarkdown, markdownReady } = await import('/panel_markdown.mjs');
  await markdownReady();
  const html = (text) => {
    const box = document.createElement('div');
    box.append(renderMarkdown(text));
    return box.innerHTML;
  };
  const differ = [];
  for (const text of texts) {
    for (let end = 1; end <= text.length; end += 1) {
      html(text.slice(0, end - 1));
      const streamed = html(text.slice(0, end)); // extends the text rendered last
      html('\\u{FFFF}'); // which nothing extends: the next is rendered from scratch
      const whole = html(text.slice(0, end));
      if (streamed !== whole) differ.push([text.slice(0, end), streamed, whole]);
    }
  }
  return differ.slice(0, 3);
}"""


def test_a_streamed_reply_renders_as_the_same_text_whole(module_page: Page) -> None:
    # Each chunk lexes only from the last block on: every prefix must render the same.
    assert module_page.evaluate(STREAM_EQUALS_WHOLE, STREAMED) == []
