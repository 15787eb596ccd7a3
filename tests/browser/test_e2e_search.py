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

Every test but the last needs the runtime's ``search.messages`` (and ``search.rebuild``),
which the other helpers of issue 38 are building on their branches: until that lands,
they SKIP with a reason naming the missing query (the ``search_runtime`` fixture). That
skip is a stopgap for the branch, not for CI: once the Python side is merged it must go,
so that a runtime without search fails these tests instead of skipping them.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from panelot.testing import PageStore, to_list, wait_thread_shown
from panelot.testing.store import StoreError

RESULTS = "#search-results li.search-result"


@pytest.fixture
def search_runtime(store: PageStore) -> PageStore:
    """The store, when the runtime answers ``search.messages``; else skip, naming it."""
    try:
        store.query("search.messages", {"text": "probe"})
    except StoreError as error:
        if error.name == "UnknownCommandError":
            pytest.skip(
                "search.messages is not in this runtime yet (issue 38: the index and the "
                "query are built on other branches); remove this skip when they land"
            )
        raise
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
