"""End-to-end: the list's search box over message text (issue 38; extension/panel_search.mjs).

* A word that only a message holds (not a title) is found: the result shows the thread's
  title, a snippet with the word in ``<mark>`` and the message's date; Enter opens the
  thread AT that message, also when it lies above the panel's window of 50 (the window
  grows until it holds it), and the message is highlighted (``.msg.search-hit``).
* A hit on another version (``onVisibleBranch`` false): a click switches to its branch
  (``branch.switch``), then shows and highlights it.
* Arrow keys move through the results (``aria-selected``, ``aria-activedescendant``).
* A text nothing holds says "No results"; a message appended afterwards that holds it
  shows up without typing again (the results are a live query).
* The snippet is built from DOM nodes: markup in a message stays text.
* The panel's side alone, against a stand-in for ``search.messages`` installed in one
  page (a plain JS search over ``thread.snapshot``): results, keys, opening a thread at a
  message 120 messages up, "No results", and the title list back when the box is cleared.
  It runs whatever the runtime has; it says nothing about the index.

Every test but the last two needs the runtime's ``search.messages`` (the ``search_runtime``
fixture asks it once): a runtime without search FAILS them, it never skips them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from panelot.testing import PageStore, to_list, wait_ready, wait_thread_shown
from panelot.testing.panel import PANEL_VIEWPORT, ExtensionContext

RESULTS = "#search-results li.search-result"


@pytest.fixture
def search_runtime(store: PageStore) -> PageStore:
    """The store, once the runtime has answered ``search.messages`` (a missing query fails)."""
    assert store.query("search.messages", {"text": "probe"})["hits"] == []
    return store


def search(page: Page, text: str) -> None:
    """Type ``text`` into the list's search box (from the list)."""
    to_list(page)
    page.fill("#thread-search", text)


def wait_hit(page: Page, node_id: str, timeout_ms: float = 30_000) -> None:
    """Wait until the results list a hit on ``node_id`` (the index may lag a little)."""
    page.wait_for_selector(
        f"{RESULTS}[data-node-id='{node_id}']", state="visible", timeout=timeout_ms
    )


def wait_highlighted(page: Page, thread_id: str, node_id: str) -> None:
    wait_thread_shown(page, thread_id)
    page.wait_for_function(
        "(id) => document.querySelector('#messages').dataset.searchHit === id"
        " && document.querySelector('#messages .msg.search-hit')?.dataset.nodeId === id",
        arg=node_id,
    )


def test_a_word_only_a_message_holds_opens_the_thread_at_it(
    panel: Page, search_runtime: PageStore
) -> None:
    store = search_runtime
    page = panel
    store.seed_thread("Weeknight dinners", title="Dinner ideas")
    target = store.seed_thread(title="Cooking notes")
    store.seed_turn(target, "What goes into the recipe with sumac and lemon?")
    for i in range(60):  # the message ends up far above the panel's window of 50
        store.seed_turn(target, f"Follow-up question {i}")
    user_id = target.user_ids[0]

    search(page, "sumac")
    wait_hit(page, user_id)
    hit = page.locator(f"{RESULTS}[data-node-id='{user_id}']")
    assert hit.locator(".search-title").inner_text() == "Cooking notes"
    assert [m.lower() for m in hit.locator(".search-snippet mark").all_inner_texts()] == ["sumac"]
    assert hit.locator(".search-date").inner_text() != ""

    index = int(hit.get_attribute("data-index") or "0")
    for _ in range(index + 1):
        page.press("#thread-search", "ArrowDown")
    assert hit.get_attribute("aria-selected") == "true"
    page.press("#thread-search", "Enter")
    wait_highlighted(page, target.thread_id, user_id)
    assert page.locator(f"#messages .msg[data-node-id='{user_id}']").is_visible()


def test_a_hit_on_another_version_switches_to_its_branch(
    panel: Page, search_runtime: PageStore
) -> None:
    store = search_runtime
    page = panel
    thread = store.seed_thread("How do I toast walnuts?", title="Nuts")
    original = thread.user_ids[0]
    store.seed_edit(thread.thread_id, original, "How do I toast almonds?")

    search(page, "walnuts")
    wait_hit(page, original)
    hit = page.locator(f"{RESULTS}[data-node-id='{original}']")
    assert hit.locator(".search-branch").count() == 1  # onVisibleBranch is false
    hit.click()
    wait_highlighted(page, thread.thread_id, original)
    leaf = store.query("thread.get", {"threadId": thread.thread_id})["leafId"]
    path = [
        n["id"] for n in store.query("thread.snapshot", {"threadId": thread.thread_id})["nodes"]
    ]
    assert original in path and leaf == path[-1]


def test_arrow_keys_move_through_the_results(panel: Page, search_runtime: PageStore) -> None:
    store = search_runtime
    page = panel
    ids = [store.seed_thread(f"Saffron rice, version {i}").user_ids[0] for i in range(3)]
    search(page, "saffron")
    for node_id in ids:
        wait_hit(page, node_id)
    count = page.locator(RESULTS).count()
    selected = []
    for _ in range(count + 1):
        page.press("#thread-search", "ArrowDown")
        selected.append(
            page.locator(f"{RESULTS}[aria-selected='true']").get_attribute("data-index")
        )
    assert selected == [*(str(i) for i in range(count)), "0"]  # wraps round
    assert page.get_attribute("#thread-search", "aria-activedescendant") == "search-result-0"
    page.press("#thread-search", "ArrowUp")
    assert (
        page.get_attribute("#thread-search", "aria-activedescendant")
        == f"search-result-{count - 1}"
    )


def test_no_results_then_a_new_message_shows_up_live(
    panel: Page, search_runtime: PageStore
) -> None:
    store = search_runtime
    page = panel
    thread = store.seed_thread("Plain buns", title="Baking")
    search(page, "cardamom")
    page.wait_for_selector("#search-none:not([hidden])")
    assert "No results" in page.inner_text("#search-none")
    assert page.locator(RESULTS).count() == 0

    reply = store.seed_turn(thread, "And with cardamom?", reply="Cardamom buns: knead, roll, bake.")
    wait_hit(page, reply)  # no typing: the live query delivered it
    assert page.is_hidden("#search-none")


def test_the_snippet_is_text_never_markup(panel: Page) -> None:
    """snippetNodes: highlights become <mark> elements, markup in the text stays text."""
    out = panel.evaluate(
        """async () => {
          const { snippetNodes } = await import(new URL("panel_search.mjs", location.href).href);
          const box = document.createElement("p");
          const text = "a <img src=x onerror=alert(1)> sumac <b>bold</b> sumac";
          box.append(...snippetNodes(text, [[31, 36], [49, 54], [50, 52], [-3, 1], [60, 70], "x"]));
          return {
            marks: [...box.querySelectorAll("mark")].map((m) => m.textContent),
            elements: [...box.querySelectorAll("*")].map((e) => e.tagName),
            text: box.textContent,
          };
        }"""
    )
    assert out["text"] == "a <img src=x onerror=alert(1)> sumac <b>bold</b> sumac"
    assert out["elements"] == ["MARK", "MARK", "MARK"]
    assert out["marks"] == ["a", "sumac", "sumac"]


#: A stand-in for ``search.messages`` in one page: a case-insensitive substring search of
#: the visible path of every thread, newest thread first; its live form answers once.
STAND_IN = r"""
(() => {
  let real;
  const search = async ({ text = "" } = {}) => {
    const needle = text.trim().toLowerCase();
    if (!needle) throw { name: "ValidationError", message: "text: empty", field: "text" };
    const hits = [];
    for (const t of await real.query("thread.list", { archived: null })) {
      for (const n of (await real.query("thread.snapshot", { threadId: t.id })).nodes) {
        const body = (n.payload.content ?? []).filter((b) => b.type === "text")
          .map((b) => b.text).join(" ");
        const at = body.toLowerCase().indexOf(needle);
        if (at >= 0) hits.push({ threadId: t.id, nodeId: n.id, title: t.title, snippet: body,
          highlights: [[at, at + needle.length]], onVisibleBranch: true, ts: t.updatedAt });
      }
    }
    return { hits, total: hits.length };
  };
  Object.defineProperty(window, "panelot", {
    configurable: true,
    get: () => real,
    set(value) {
      real = value;
      const query = value.query.bind(value);
      const live = value.live.bind(value);
      value.query = (name, args) => (name === "search.messages" ? search(args) : query(name, args));
      value.live = (name, args, onResult, onError) => {
        if (name !== "search.messages") return live(name, args, onResult, onError);
        search(args).then(onResult, onError);
        return () => {};
      };
    },
  });
})();
"""


@pytest.fixture
def stand_in_panel(panelot_context: ExtensionContext) -> Iterator[Page]:
    """A side panel (own profile) whose runtime answers search.messages by STAND_IN."""
    page = panelot_context.context.new_page()
    page.set_viewport_size(PANEL_VIEWPORT)  # type: ignore[arg-type]
    page.add_init_script(STAND_IN)
    page.goto(panelot_context.url("sidepanel.html"))
    wait_ready(page, panel=True)
    yield page
    page.close()


def test_the_panel_s_side_against_a_stand_in(stand_in_panel: Page) -> None:
    page = stand_in_panel
    store = PageStore(page, client_id="stand-in")
    store.seed_thread("Weeknight dinners", title="Dinner ideas")
    target = store.seed_thread(title="Cooking notes")
    store.seed_turn(target, "What goes into the recipe with sumac and lemon?")
    for i in range(60):
        store.seed_turn(target, f"Follow-up question {i}")
    user_id = target.user_ids[0]
    assert page.get_attribute("#thread-search", "placeholder") == "Search conversations"

    search(page, "SUMAC")
    wait_hit(page, user_id)
    assert page.locator(RESULTS).count() == 2  # the question and its reply
    first = page.locator(RESULTS).first
    assert first.get_attribute("data-node-id") == user_id
    assert first.locator(".search-title").inner_text() == "Cooking notes"
    assert first.locator(".search-snippet mark").all_inner_texts() == ["sumac"]
    assert first.locator(".search-snippet").inner_text() == (
        "What goes into the recipe with sumac and lemon?"
    )
    assert page.locator("#thread-list li").count() == 0  # no title holds it
    assert page.is_hidden("#search-none") and page.is_hidden("#thread-empty")

    page.press("#thread-search", "ArrowDown")
    assert first.get_attribute("aria-selected") == "true"
    page.press("#thread-search", "Enter")
    wait_highlighted(page, target.thread_id, user_id)
    assert page.evaluate("() => window.panelotApp.chat.limit") > 100  # the window grew to it
    assert page.locator(f"#messages .msg[data-node-id='{user_id}']").is_visible()

    search(page, "no such words")
    page.wait_for_selector("#search-none:not([hidden])")
    assert page.inner_text("#search-none") == "No results for “no such words”."
    search(page, "dinner")  # a title holds it: the list shows it, no "No results"
    page.wait_for_selector("#search-none", state="hidden")
    assert page.locator("#thread-list li").count() == 1
    search(page, "")
    page.wait_for_selector("#search-results", state="hidden")
    assert page.locator("#thread-list li").count() == 2
    assert page.is_hidden("#search-none")
